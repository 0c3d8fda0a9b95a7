"""What a fault campaign found in the files the kit writes and the archives it reads: cells a spreadsheet
would evaluate, raw HTML in Markdown, and zip members it cannot read (encrypted, an unknown compression
method, two of one name), each now handled in one line."""

from __future__ import annotations

import csv
import warnings
import zipfile

import pytest

import seam
from common import jsonl
from common.errors import UserError
from occurrence.corpus import open_corpus
from stats.render import Column, Table, to_csv, to_markdown
from stats.synthetic import synthetic_labels


def test_a_text_cell_that_starts_like_a_formula_is_written_as_text():
    table = Table("t", "T", (Column("model", "Model"), Column("diff", "Diff", "proportion")),
                  (("=HYPERLINK(\"http://evil.example\")", -0.25), ("+1", 0.5), ("-x", 0.1), ("@SUM(A1)", 0.0),
                   ("plain", -0.5)))
    rows = list(csv.reader(to_csv(table).splitlines()))
    assert [row[0] for row in rows[1:]] == ["'=HYPERLINK(\"http://evil.example\")", "'+1", "'-x", "'@SUM(A1)", "plain"]
    assert rows[1][1] == "-0.250000"  # a number is a number: only text cells are guarded


def test_a_model_named_like_a_formula_lands_in_rates_csv_as_text(tmp_path):
    rows = synthetic_labels(models=1, clusters=12, comments=4)
    for row in rows:
        row["model"] = "=HYPERLINK(\"http://evil.example\",\"x\")"
    jsonl.write(tmp_path / "labels.jsonl", rows)
    assert seam.main(["tables", str(tmp_path / "labels.jsonl"), "--out", str(tmp_path / "out"),
                      "--resamples", "20"]) == 0
    cells = [row["model"] for row in csv.DictReader(open(tmp_path / "out" / "rates.csv", encoding="utf-8"))]
    assert cells and all(cell.startswith("'=") for cell in cells)


def test_markdown_cells_and_notes_hold_no_raw_html():
    table = Table("t", "T", (Column("phrase", "Phrase"),), (("<script>alert(1)</script>",), ("p < 0.05",)),
                  ("a note with <img src=x onerror=alert(1)>",))
    text = to_markdown(table)
    assert "<script" not in text and "<img" not in text and "&lt;script>" in text and "p < 0.05" in text


def _patched_zip(path, *, flag: int = 0, method: int | None = None):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("chat.jsonl", b'{"id": "1", "conversation": []}\n')
    data = bytearray(path.read_bytes())
    for signature, flags_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(signature)
        data[at + flags_at] |= flag
        if method is not None:
            data[at + method_at:at + method_at + 2] = method.to_bytes(2, "little")
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("kind, options, message", [
    ("encrypted", {"flag": 1}, r"member 'chat.jsonl' is encrypted; unpack it"),
    ("unknown method", {"method": 97}, r"member 'chat.jsonl' cannot be read here \(That compression method is not "
                                       r"supported\)"),
])
def test_a_zip_member_that_cannot_be_read_is_one_line(tmp_path, kind, options, message):
    path = _patched_zip(tmp_path / "corpus.zip", **options)
    with pytest.raises(UserError, match=message) as caught:
        open_corpus(path)
    assert "\n" not in str(caught.value)


def test_two_members_of_one_name_are_refused_as_ambiguous(tmp_path):
    path = tmp_path / "corpus.zip"
    with zipfile.ZipFile(path, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name, and writes it
        archive.writestr("chat.jsonl", b"{}\n")
        archive.writestr("chat.jsonl", b"{}\n")
    for member in (None, "chat.jsonl"):
        with pytest.raises(UserError, match=r"2 members are named 'chat.jsonl'; the archive is ambiguous"):
            open_corpus(path, member)


def test_the_same_corpus_given_twice_is_refused(tmp_path):
    from occurrence import screen

    corpus = tmp_path / "chat.jsonl"
    corpus.write_text('{"id": "1", "conversation": [{"role": "user", "content": "hi"}]}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"given twice \(also as .*chat.jsonl\); give each corpus file once"):
        screen.screen([corpus, tmp_path / "." / "chat.jsonl"], "jsonl")


def test_an_error_about_a_condition_file_of_10000_conditions_stays_short(tmp_path):
    from benchmark import conditions

    path = tmp_path / "many.toml"
    path.write_text("".join(f'[conditions.c{i}]\npool = "casual"\n' for i in range(10_000)), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        conditions.load(path)
    message = str(caught.value)
    assert "10000 conditions" in message and "and 9,980 more" in message and len(message) < 1000


def _gz(path, parts):
    import gzip

    with gzip.open(path, "wb") as out:
        for part in parts:
            out.write(part)
    return path


@pytest.mark.parametrize("container", ["jsonl.gz", "zip"])
def test_a_line_past_the_size_cap_is_read_past_counted_and_the_screen_goes_on(tmp_path, monkeypatch, container):
    """A compressed bomb (one line inflating to gigabytes) reached 2.5 GB: a line past MAX_OBJECT_BYTES (set
    small here) is read past a megabyte at a time, never held, counted in the header, and the screen goes on."""
    import io

    import occurrence.stream as stream
    from occurrence import screen

    monkeypatch.setattr(stream, "MAX_OBJECT_BYTES", 1 << 20)
    message = "Fix this:\\ndef f(x):\\n    return x + 1\\nbtw it's for class"
    good = ('{"id": "ok", "conversation": [{"role": "user", "content": "' + message + '"}]}\n').encode()
    bomb = [b'{"id": "x", "conversation": [{"role": "user", "content": "', b"a" * (4 << 20), b'"}]}\n']
    if container == "jsonl.gz":
        path = _gz(tmp_path / "c.jsonl.gz", [good, *bomb, good])
    else:
        path = tmp_path / "c.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("c.jsonl", good + b"".join(bomb) + good)
    result = screen.screen([path], "jsonl", log=io.StringIO())
    assert result.header.corpora[0].oversized == 1 and result.header.conversations == 2
    assert [c.index for c in result.candidates] == [0, 1]  # the one after the bomb was read too


def test_an_array_object_past_the_size_cap_is_refused_in_one_line(tmp_path, monkeypatch):
    import occurrence.stream as stream
    from occurrence.stream import Reader

    monkeypatch.setattr(stream, "MAX_OBJECT_BYTES", 1 << 20)
    path = _gz(tmp_path / "c.json.gz", [b'[{"id": "x", "conversations": [{"from": "human", "value": "',
                                        b"a" * (4 << 20), b'"}]}]'])
    with pytest.raises(UserError, match=r"the object starting at line 1 holds more than 1 MiB of JSON") as caught:
        list(Reader(open_corpus(path)))
    assert "\n" not in str(caught.value)


def test_a_message_past_the_screened_length_is_no_candidate():
    from common.seams.segment import MAX_MESSAGE_CHARS, find_seam

    body = "x = 1\n" * (MAX_MESSAGE_CHARS // 6 + 1)
    assert find_seam(f"Fix this:\n{body}btw it's for class") is None
    assert find_seam("Fix this:\nx = 1\ny = 2\nbtw it's for class") is not None


def test_a_run_of_blank_lines_is_read_past_with_the_line_numbers_right(tmp_path):
    from occurrence.stream import Reader

    row = b'{"id": "1", "conversation": []}\n'
    path = tmp_path / "blank.jsonl"
    path.write_bytes(row + b"\n" * 3_000_000 + b"  \n\t\n" + row + b"\n\n{bad\n")
    reader = Reader(open_corpus(path))
    items = []
    with pytest.raises(UserError, match=r"blank.jsonl:3000007: byte 3,000,071: expected one JSON object"):
        for item in reader:
            items.append((item.line, item.offset))
    assert items == [(1, 0), (3_000_004, 3_000_037)]  # 32 bytes a row, 3,000,000 newlines, 5 of blank lines


def test_repeated_messages_are_written_as_they_come_not_held(tmp_path):
    """3.8 million copies of one message filled 2.5 GB (every candidate row was held until the end): the
    command now spools them to the file as they are found, with the same bytes as before."""
    import io
    import json
    import tracemalloc

    from occurrence import screen

    message = "Fix this:\ndef f(x):\n    return x + 1\nbtw it's for class"
    row = json.dumps({"id": "c", "conversation": [{"role": "user", "content": message}]}) + "\n"
    peaks = {}
    for copies in (1_000, 6_000):
        corpus = tmp_path / f"repeats-{copies}.jsonl"
        corpus.write_text(row * copies, encoding="utf-8")
        tracemalloc.start()
        try:
            screen.screen_to([corpus], "jsonl", tmp_path / f"spooled-{copies}.jsonl", log=io.StringIO())
            spooled = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            held = screen.screen([corpus], "jsonl", log=io.StringIO())
            peaks[copies] = (spooled, tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        screen.write(held, tmp_path / f"held-{copies}.jsonl")
        assert (tmp_path / f"spooled-{copies}.jsonl").read_bytes() == (tmp_path / f"held-{copies}.jsonl").read_bytes()
        assert held.header.candidates == copies and held.header.unique_candidates == 1
    # six times the rows: held, the peak grows by about 500 bytes a row; spooled, by a small part of that (what
    # grows is the corpus's own read buffer, up to its megabyte)
    held_growth, spooled_growth = peaks[6_000][1] - peaks[1_000][1], peaks[6_000][0] - peaks[1_000][0]
    assert held_growth > 2_000_000 and spooled_growth < held_growth / 4, peaks
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp") or ".body" in p.name]


def test_a_run_of_blank_lines_costs_no_readline_each(tmp_path, monkeypatch):
    """256 MB of blank lines took 120 s, one readline (and its Python overhead) per line: now they are read
    past a megabyte at a time. Counted in calls, not seconds (timing belongs in perf/)."""
    from occurrence.corpus import Counted
    from occurrence.stream import Reader

    calls = []
    original = Counted.readline

    def counted(self, *args):
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(Counted, "readline", counted)
    row = b'{"id": "1", "conversation": []}\n'
    path = tmp_path / "blank.jsonl"
    path.write_bytes(row + b"\n" * 2_000_000 + row)
    assert [item.line for item in Reader(open_corpus(path))] == [1, 2_000_002]
    assert len(calls) < 20, len(calls)
