"""The message for a TOML integer longer than Python reads costs time in proportion to the file.

`common.tomlfile.long_integer` names the line (and key) of the first run of more than 4,300 digits. It once
searched for one with `[0-9](?:_?[0-9]){4300,}`, unanchored: the search tried the pattern again from every
digit of every run, so a run of L digits cost about L*L/2 steps, and a prices file of 200 values of 4,290 digits
(each just short of the limit) and one of 4,400 took 86 s of CPU before its one-line error. Now a run is read
from its first digit only (`DIGIT_RUN`), once. Checked by counting what the search reads, not by timing it; the
results are those of the old pattern on every input below.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from common import tomlfile
from common.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
LIMIT = sys.get_int_max_str_digits()  # 4,300 unless configured otherwise


def prices_text(values: int = 200, short: int = 4_290, long: int = 4_400) -> str:
    """The review's prices file: `values` tables whose price has `short` digits, then one of `long` digits."""
    tables = [f"[m{i}]\ninput_per_mtok = {'9' * short}\noutput_per_mtok = 1\n" for i in range(values)]
    return "".join(tables) + f"[late]\ninput_per_mtok = 1\noutput_per_mtok = {'8' * long}\n"


@pytest.fixture
def read(monkeypatch):
    """What the search read: the runs of digits it was handed, and their characters in all."""
    seen = {"runs": 0, "chars": 0}
    pattern = tomlfile.DIGIT_RUN

    class Counted:
        def finditer(self, text, *args):
            for run in pattern.finditer(text, *args):
                seen["runs"] += 1
                seen["chars"] += len(run.group())
                yield run

    monkeypatch.setattr(tomlfile, "DIGIT_RUN", Counted())
    return seen


def test_the_search_reads_each_run_of_digits_once(read):
    text = prices_text()
    message = tomlfile.long_integer(Path("p.toml"), text)
    assert message == (f"p.toml:{3 * 200 + 3}: key 'output_per_mtok' holds an integer of more than {LIMIT:,} "
                       "digits, which Python cannot read")
    digits = sum(len(run) for run in re.findall(r"[0-9]+", text))
    assert read["runs"] == len(re.findall(r"[0-9]+", text))  # 602 runs: each once, never again from inside
    assert read["chars"] == digits <= len(text)  # about 863,000: the old search tried about 1.8 billion steps


def test_the_search_stops_at_the_first_long_run(read):
    text = "a = " + "1" * (LIMIT + 1) + "\n" + prices_text(values=50)
    assert tomlfile.long_integer(Path("p.toml"), text).startswith("p.toml:1: key 'a' holds")
    assert read["runs"] == 1 and read["chars"] == LIMIT + 1


def test_the_review_prices_file_is_one_line_in_well_under_a_second_of_work():
    """The whole reader on the review's file, in a child that may use 20 s of CPU (the old search took 86 s)."""
    path_text = repr(str(ROOT))
    program = (f"import sys; sys.path.insert(0, {path_text})\n"
               "from tests.test_tomlfile_long_integer import prices_text\n"
               "from common import tomlfile\nfrom common.errors import UserError\n"
               "import pathlib, tempfile\n"
               "path = pathlib.Path(tempfile.mkdtemp()) / 'p.toml'\n"
               "path.write_text(prices_text(), encoding='utf-8')\n"
               "try:\n    tomlfile.load(path, 'prices file')\nexcept UserError as exc:\n"
               "    print(str(exc).removeprefix(str(path)))\n")

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (20, 20))

    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=limited)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout == (f":603: key 'output_per_mtok' holds an integer of more than {LIMIT:,} digits, which "
                           "Python cannot read\n")


def old_message(path: Path, text: str) -> str:
    """The message as the unanchored search gave it (small inputs only: it is quadratic)."""
    match = re.search(rf"[0-9](?:_?[0-9]){{{LIMIT},}}", text)
    problem = f"an integer of more than {LIMIT:,} digits, which Python cannot read"
    if match is None:
        return f"{path}: not valid TOML ({problem})"
    start = text.rfind("\n", 0, match.start()) + 1
    line = text.count("\n", 0, start) + 1
    key = tomlfile.KEY_AT_LINE_START.match(text, start, match.start() + 1)
    return f"{path}:{line}: key {key.group(1)!r} holds {problem}" if key else f"{path}:{line}: {problem}"


DIGITS = "1" * 5_000
SAME = {
    # the inputs of tests/test_runner_config.py and tests/test_conditions.py
    "max_tokens": f"model = 'x'\nmax_tokens = {DIGITS}\n",
    "underscores": f"name = {DIGITS[:300]}_{DIGITS}\n",
    "in-an-array": f"seed = [1, 2,\n  {DIGITS}]\n",
    "condition-file": "x = " + "7" * 5000 + "\n",
    # and around them: signs, a short run first, underscores, a run cut by "__", no key, no integer at all
    "signed": f"a = 1\nb = -{DIGITS}\n",
    "plus": f"b = +{DIGITS}\n",
    "short-first": f"a = {'2' * 4_000}\nb = {DIGITS}\n",
    "single-underscores": "c = " + "_".join(["12"] * 3_000) + "\n",
    "long-then-double": f"d = {DIGITS}__{'3' * 10}\n",
    "trailing-underscore": f"e = {DIGITS}_\n",
    "at-the-limit": f"f = {'4' * LIMIT}\n",
    "one-past": f"f = {'4' * (LIMIT + 1)}\n",
    "array-line": f"g = [{'5' * 4_000}, {DIGITS}]\n",
    "no-key": f"[t]\n{DIGITS}\n",
    "start-of-text": DIGITS,
    "float": f"h = 1.{DIGITS}\n",
    "none": "a = 1\n",
}


@pytest.mark.parametrize("text", SAME.values(), ids=SAME.keys())
def test_the_message_is_the_old_searchs_on_every_input_of_the_tests(text):
    assert tomlfile.long_integer(Path("x.toml"), text) == old_message(Path("x.toml"), text)


def test_a_long_integer_in_a_prices_file_is_still_one_line(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(f"[m]\ninput_per_mtok = {DIGITS}\n", encoding="utf-8")
    with pytest.raises(UserError) as caught:
        tomlfile.load(path, "prices file")
    assert str(caught.value) == (f"{path}:2: key 'input_per_mtok' holds an integer of more than {LIMIT:,} digits, "
                                 "which Python cannot read")


def test_a_run_after_an_underscore_is_no_integer_and_is_passed_over():
    """Where the two searches differ: digits after "_" (a key such as v1__2…, a "__" that TOML refuses in a
    number) start no TOML integer, and the old search named their line rather than the integer's."""
    text = f"# built from v1__{DIGITS}\nx = {DIGITS}\n"
    assert old_message(Path("x.toml"), text).startswith("x.toml:1: ")
    assert tomlfile.long_integer(Path("x.toml"), text).startswith("x.toml:2: key 'x' holds")
