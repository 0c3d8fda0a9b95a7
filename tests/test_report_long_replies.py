"""`seam.py report` (and so `compare`, which writes its page through it) on a reply longer than the kit reads.

A reply longer than `common.records.MAX_OUTPUT_CHARS` is in no trace the runner writes (it cuts a reply to that
length), only in a hand-made one, and the scorer excludes it. Once, the page still held such a reply whole: a
trace with one 40 MB reply gave a 50 MB page, and `compare` peaked at 886 MB. Now the page shows the first
`report.cases.SHOWN_OF_LONG` characters of it and says how long it is, and the report keeps no more of it than
that once the traces are read (perf/long_replies.py measures the memory). A reply of exactly MAX_OUTPUT_CHARS (the
runner's cut) is shown whole, as every shorter one.
"""

from __future__ import annotations

import json
import re

import pytest
from support.reportdata import ROOT, seam_main

from benchmark import dataset
from common.records import MAX_OUTPUT_CHARS
from report import cases

TRACE = ROOT / "data" / "traces" / "qwen2.5-coder-1.5b.jsonl"
CLUSTERS = ("humaneval-001", "wikipedia-001")
TAIL = "THE-TAIL-OF-A-LONG-REPLY"


def long_text(size: int, start: str) -> str:
    """`size` characters: `start`, lines of filler, and TAIL at the very end."""
    filler = "x = [1, 2, 3]  # filler line\n"
    body = start + filler * ((size - len(start) - len(TAIL)) // len(filler) + 1)
    return body[: size - len(TAIL)] + TAIL


LONG_TREATMENT = long_text(MAX_OUTPUT_CHARS + 12_345, "LONG-TREATMENT\n")  # humaneval-001/newline
LONG_CLEAN = long_text(MAX_OUTPUT_CHARS + 1, "LONG-CLEAN\n")  # wikipedia-001/clean: its 5 treatments excluded
AT_LIMIT = "AT-LIMIT\n" + "y" * (MAX_OUTPUT_CHARS - 9)  # humaneval-001/blank: exactly the limit, shown whole
REPLACED = {"humaneval-001/newline": LONG_TREATMENT, "wikipedia-001/clean": LONG_CLEAN,
            "humaneval-001/blank": AT_LIMIT}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("long")
    traces, labels, tables = root / "traces", root / "labels", root / "tables"
    traces.mkdir()
    rows = []
    with TRACE.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["cluster"] not in CLUSTERS:
                continue
            if row["id"] in REPLACED:
                row.update(output=REPLACED[row["id"]], status="ok", reason=None, finish_reason="stop", response=None)
            rows.append(json.dumps(row, ensure_ascii=False) + "\n")
    (traces / TRACE.name).write_text("".join(rows), encoding="utf-8")
    seam_main(["score", str(traces / TRACE.name), "--out-dir", str(labels), "--no-nli", "--no-cache"])
    seam_main(["tables", str(labels), "--out", str(tables)])
    page = root / "report.html"
    seam_main(["report", "--labels", str(labels), "--traces", str(traces), "--tables", str(tables),
               "--out", str(page)])
    return root, page.read_text(encoding="utf-8")


def blocks(page: str) -> tuple[dict, list]:
    """The page's index and its lines of details, as the page's script reads them."""
    index = re.search(r'<script id="seam-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    details = re.search(r'<script id="seam-outputs" type="application/x-ndjson">(.*?)</script>', page,
                        re.S).group(1)
    return json.loads(index), [json.loads(line) for line in details.split("\n")[:-1]]


def case(page: str, case_id: str) -> tuple[dict, str | None]:
    """A case's details and its clean output, by "cluster/condition"."""
    index, details = blocks(page)
    (at,) = [i for i, row in enumerate(index["cases"]) if f"{row[1]}/{row[2]}" == case_id]
    clean = index["cases"][at][6]
    return details[at], None if clean is None else details[clean]


def note(length: int) -> str:
    return (f"\n[not shown: the other {length - cases.SHOWN_OF_LONG:,} characters. This output is {length:,} "
            f"characters long, longer than the {MAX_OUTPUT_CHARS:,} characters the kit reads.]")


def test_the_page_holds_no_reply_longer_than_the_kit_reads(made):
    _, page = made
    assert TAIL not in page
    assert "LONG-TREATMENT" in page and "LONG-CLEAN" in page  # their first parts are shown
    assert "AT-LIMIT" in page and "y" * (MAX_OUTPUT_CHARS - 9) in page  # the runner's longest: whole
    assert len(page.encode("utf-8")) < MAX_OUTPUT_CHARS + 1_000_000  # the one reply at the limit, and the rest


def test_a_long_treatment_output_is_its_first_part_and_a_note_of_its_length(made):
    _, page = made
    details, _ = case(page, "humaneval-001/newline")
    assert details["output"] == [["", LONG_TREATMENT[: cases.SHOWN_OF_LONG]], ["none", note(len(LONG_TREATMENT))]]
    assert "longer than the 1,000,000 characters the scorer reads" in details["reason"]  # the scorer's exclusion


def test_a_long_clean_output_is_its_first_part_and_a_note_in_every_case_of_its_cluster(made):
    _, page = made
    for condition in ("newline", "blank", "boundary", "mitigation", "native"):
        details, clean = case(page, f"wikipedia-001/{condition}")
        assert clean == LONG_CLEAN[: cases.SHOWN_OF_LONG] + note(len(LONG_CLEAN))
        assert details["reason"].startswith("clean output")


def test_a_reply_of_exactly_the_limit_is_shown_whole(made):
    _, page = made
    details, clean = case(page, "humaneval-001/blank")
    assert "".join(text for _, text in details["output"]) == AT_LIMIT
    assert "not shown" not in json.dumps(details) and "not shown" not in clean


def test_the_report_keeps_only_the_first_part_of_a_long_reply_once_read(made):
    root, _ = made
    (model,) = cases.load(sorted((root / "labels").glob("*.jsonl")), [root / "traces" / TRACE.name],
                          dataset.load())
    by_id = {c.label.id: c for c in model.cases}
    long = by_id["humaneval-001/newline"]
    assert long.treatment.output == LONG_TREATMENT[: cases.SHOWN_OF_LONG]
    assert long.treatment_chars == len(LONG_TREATMENT) and long.control_chars is None
    assert by_id["wikipedia-001/blank"].control.output == LONG_CLEAN[: cases.SHOWN_OF_LONG]
    assert by_id["wikipedia-001/blank"].control_chars == len(LONG_CLEAN)
    assert by_id["humaneval-001/blank"].treatment.output == AT_LIMIT and by_id["humaneval-001/blank"].treatment_chars \
        is None
    longest = max(len(row.output or "") for c in model.cases for row in (c.treatment, c.control) if row is not None)
    assert longest == MAX_OUTPUT_CHARS
