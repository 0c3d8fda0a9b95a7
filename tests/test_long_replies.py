"""A very long reply costs memory in proportion to its length, or is left out saying so (issue 36, defect 2).

Once, one 5 MB reply in a trace took `seam.py validity` to 2.2 GB (`ast.parse` of the whole reply, and chrF's
n-grams of it) and `seam.py score` to about 50 times the reply. Now a reply longer than the kit reads
(`common.records.MAX_OUTPUT_CHARS`) is unusable for the scorer and the validity checks, with the reason in the
label and a note in the tables; the syntax check parses no code longer than its bound (`validity.syntax.
MAX_PARSED_CHARS`) and says how many it left out; chrF keeps n-grams of the shorter text only. The two
commands run here in a child process under an address-space limit, so a regression fails fast.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from benchmark import dataset
from common import jsonl
from common.records import MAX_OUTPUT_CHARS, TREATMENTS
from scorer import synthetic
from scorer.inputs import read_items, read_traces
from scorer.score import score
from validity import report
from validity.syntax import MAX_PARSED_CHARS
from validity.synthetic import trace_row

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = dataset.load()
HE, WK = BENCHMARK.cluster("humaneval-001"), BENCHMARK.cluster("wikipedia-001")
LIMIT = 700 << 20  # address space of a child: ample for the commands on a small trace (about 100 MB)


def code(size: int) -> str:
    """A fenced Python block of `size` characters: many small, distinct functions, padded with a comment."""
    functions, total, n = [], 14, 0
    while total + 80 < size:
        functions.append(f"def f{n}(a):\n    return [a + {n}, (a, a)]\n")
        total, n = total + len(functions[-1]), n + 1
    text = "```python\n" + "".join(functions) + "#" * (size - total - 1) + "\n```\n"
    assert len(text) == size
    return text


def rows(long: str) -> list[dict]:
    """One model's rows of humaneval-001 and wikipedia-001, with `long` as the humaneval newline reply."""
    made = [("humaneval-001", condition, long if condition == "newline" else HE.reference)
            for condition in ("clean", *TREATMENTS)]
    made += [("wikipedia-001", condition, WK.reference) for condition in ("clean", *TREATMENTS)]
    return [trace_row(cluster, condition, output, at=timedelta(seconds=i), benchmark_sha256=BENCHMARK.sha256)
            for i, (cluster, condition, output) in enumerate(made)]


def table_text(result, name: str) -> str:
    (table,) = [table for table in result.tables if table.name == name]
    return "\n".join(table.notes)


def test_code_longer_than_the_parse_bound_is_not_parsed_and_the_syntax_tables_say_so(tmp_path):
    path = tmp_path / "m.jsonl"
    jsonl.write(path, rows(code(MAX_PARSED_CHARS + 1)))
    result = report.build([path])
    item = next(row for row in result.items if row["id"] == "humaneval-001/newline")
    assert item["usable"] and item["parses"] is None and item["returned_parses"] is None
    for name in ("validity_syntax", "validity_syntax_as_returned"):
        assert f"1 usable output of a code cluster was not parsed: longer than {MAX_PARSED_CHARS:,}" in table_text(
            result, name)
    syntax = next(row for row in result.tables if row.name == "validity_syntax").rows
    newline = next(row for row in syntax if row[1] == "all" and row[2] == "newline")
    assert newline[3:5] == (1, 0)  # one final row, none parsed


def test_code_within_the_parse_bound_is_parsed_and_no_note_is_added(tmp_path):
    path = tmp_path / "m.jsonl"
    jsonl.write(path, rows(code(MAX_PARSED_CHARS)))
    result = report.build([path])
    item = next(row for row in result.items if row["id"] == "humaneval-001/newline")
    assert item["parses"] is True and item["returned_parses"] is True
    assert "not parsed" not in table_text(result, "validity_syntax")


def test_a_reply_longer_than_the_kit_reads_is_unusable_for_validity_saying_so(tmp_path):
    path = tmp_path / "m.jsonl"
    jsonl.write(path, rows(code(MAX_OUTPUT_CHARS + 1)))
    result = report.build([path])
    item = next(row for row in result.items if row["id"] == "humaneval-001/newline")
    assert not item["usable"] and item["chrf"] is None
    assert f"1 output is longer than the {MAX_OUTPUT_CHARS:,} characters the kit reads" in table_text(
        result, "validity_similarity")


def test_a_reply_longer_than_the_kit_reads_is_excluded_by_the_scorer_with_its_reason(tmp_path):
    long = "Here it is. " * (MAX_OUTPUT_CHARS // 12 + 1)
    traces = [synthetic.trace_row("synthetic-000", condition, "x = 1" if condition != "blank" else long).to_row()
              for condition in ("clean", *TREATMENTS)]
    traces.append(synthetic.trace_row("synthetic-001", "clean", long).to_row())
    traces += [synthetic.trace_row("synthetic-001", condition, "x = 1").to_row() for condition in TREATMENTS]
    jsonl.write(tmp_path / "t.jsonl", traces)
    requests = [{"id": f"synthetic-00{n}/{condition}", "cluster": f"synthetic-00{n}", "condition": condition,
                 "source": "humaneval", "genre": "code", "license": "MIT", "message": "Fix.\n\nx = 1",
                 "artifact": "x = 1", "benchmark_sha256": "0" * 64,
                 **({"comment": "btw lunch", "comment_id": "casual-00", "witness": "btw lunch",
                     "proposition": "The user eats lunch."} if condition != "clean"
                    else {"comment": None, "comment_id": None, "witness": None, "proposition": None})}
                for n in (0, 1) for condition in ("clean", *TREATMENTS)]
    jsonl.write(tmp_path / "r.jsonl", requests)
    labels = {label.id: label for label in score(read_traces(tmp_path / "t.jsonl"),
                                                 read_items(tmp_path / "r.jsonl")).labels}
    too_long = f"longer than the {MAX_OUTPUT_CHARS:,} characters the scorer reads"
    blank = labels["synthetic-000/blank"]
    assert not blank.usable and blank.reason.startswith("treatment output") and too_long in blank.reason
    assert labels["synthetic-000/newline"].usable
    for condition in TREATMENTS:  # a clean reply too long excludes its cluster's five treatments
        label = labels[f"synthetic-001/{condition}"]
        assert not label.usable and label.reason.startswith("clean output") and too_long in label.reason


def test_chrf_of_a_long_hypothesis_keeps_only_the_shorter_texts_ngrams():
    program = ("from validity.similarity import chrf\n"
               "text = ''.join(f'{n:x} ' for n in range(1_000_000))\n"  # about 6 MB, millions of distinct n-grams
               "print(round(chrf(text, 'the reference edit, a few words long'), 6))\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited(300 << 20))
    assert done.returncode == 0, done.stderr[-500:]


@pytest.mark.parametrize("command", ["validity", "score"])
def test_a_20_mb_reply_runs_in_bounded_memory(tmp_path, command):
    path = tmp_path / "m.jsonl"
    jsonl.write(path, rows(code(20 << 20)))
    out = ["--out", str(tmp_path / "tables")] if command == "validity" else [
        "--out", str(tmp_path / "labels.jsonl"), "--no-nli"]
    done = subprocess.run([sys.executable, "seam.py", command, str(path), *out], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, preexec_fn=_limited(LIMIT))
    assert done.returncode == 0, done.stderr[-800:]
    if command == "validity":  # not a MemoryError caught and recorded as the parser's verdict
        items = {row["id"]: row for _, row in jsonl.read(tmp_path / "tables" / "validity_items.jsonl")}
        assert not items["humaneval-001/newline"]["usable"]
        assert "MemoryError" not in (tmp_path / "tables" / "validity_items.jsonl").read_text(encoding="utf-8")
    else:
        labels = {row["id"]: row for _, row in jsonl.read(tmp_path / "labels.jsonl")}
        assert "longer than" in labels["humaneval-001/newline"]["reason"]


def _limited(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply
