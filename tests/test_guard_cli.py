"""`seam.py guard` on JSON Lines and on one plain message: a row for a row, offsets into the message given, bad
input one line naming file and line, and with --out nothing written unless all of it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import seam
from guard.mark import MITIGATION, guard

ROOT = Path(__file__).resolve().parents[1]
CODE = "Please fix the bug:\n\ndef area(r):\n    return 3.14 * r * r * r\n\nprint(area(2))\nbtw, this is for class"


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "seam.py"), "guard", *args], input=stdin,
                          capture_output=True, timeout=120, check=False)


def test_json_lines_in_and_out_a_row_for_a_row(tmp_path):
    rows = [{"id": "a", "message": CODE}, {"id": 7, "message": "just a question"},
            {"id": "s", "message": CODE.replace("class", "class \ud800")}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = run(str(source), "--out", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode() == "guard: 2 of 3 messages marked\n"
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in out] == ["a", 7, "s"]
    for row, given in zip(out, rows, strict=True):
        expected = guard(given["message"])
        assert row == {"id": given["id"], "marked": expected.marked, "artifact_start": expected.artifact_start,
                       "artifact_end": expected.artifact_end, "message": expected.message}
    assert out[1]["artifact_start"] == out[1]["artifact_end"] == -1 and out[1]["message"] == "just a question"
    assert CODE[out[0]["artifact_start"]:out[0]["artifact_end"]].startswith("def area(r):")


def test_standard_input_to_standard_output_and_the_mitigation_sentence():
    done = run("--mitigation", stdin=(json.dumps({"id": "a", "message": CODE}) + "\n").encode())
    assert done.returncode == 0
    assert json.loads(done.stdout)["message"] == guard(CODE, sentence=MITIGATION).message


def test_one_plain_message_byte_for_byte():
    crlf = CODE.replace("\n", "\r\n").encode("utf-8")
    done = run("--text", "--open", "<doc>", "--close", "</doc>", stdin=crlf)
    assert done.returncode == 0
    assert done.stdout == guard(crlf.decode(), open="<doc>", close="</doc>").message.encode("utf-8")
    assert done.stderr.decode().startswith("guard: marked: the paste is characters 23 to ")
    done = run("--text", stdin=b"hello")
    assert (done.stdout, done.stderr.decode()) == (b"hello", "guard: not marked (no seam): the message is passed "
                                                             "unchanged\n")


@pytest.mark.parametrize(("lines", "expected"), [
    (b'{"id": "a", "message": "x"}\nnot json\n', ":2: expected one JSON object per line (not JSON"),
    (b'{"id": "a"}\n', ":1: 'message' is missing"),
    (b'{"id": true, "message": "x"}\n', ":1: 'id' is a boolean, expected a string or a whole number"),
    (b'{"id": "a", "message": 3}\n', ":1: 'message' is a number, expected a string"),
    (b'[1]\n', ":1: found an array, expected an object"),
    (b'\n', ":1: empty line"),
    (b'{"id": "a", "message": "\xff"}\n', ":1: expected one JSON object per line (not UTF-8"),
])
def test_bad_input_is_one_line_naming_file_and_line_and_nothing_is_written(tmp_path, lines, expected):
    source = tmp_path / "in.jsonl"
    source.write_bytes(lines)
    out = tmp_path / "out.jsonl"
    done = run(str(source), "--out", str(out))
    assert done.returncode == 2
    stderr = done.stderr.decode()
    assert stderr.count("\n") == 1 and stderr.startswith(f"seam.py guard: error: {source}") and expected in stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize(("args", "expected"), [
    (["--open", ""], "--open is '': expected one line of text"),
    (["--close", "END\tX"], "--close is 'END\\tX': expected one line of text"),
    (["--open", "X", "--close", "X"], "--open and --close are both 'X'"),
])
def test_bad_markers_are_one_line(args, expected):
    done = run(*args, stdin=b"")
    assert done.returncode == 2 and expected in done.stderr.decode() and done.stderr.decode().count("\n") == 1


def test_endless_and_missing_inputs_are_one_line():
    for args, expected in ((["/dev/zero"], "/dev/zero:1: a line of more than"),
                           (["--text", "/dev/zero"], "/dev/zero: a character device, not a regular file"),
                           (["/nonexistent.jsonl"], "/nonexistent.jsonl: no such file")):
        done = subprocess.run([sys.executable, "-c", "import resource, runpy, sys; resource.setrlimit("
                               "resource.RLIMIT_AS, (2 << 30, 2 << 30)); sys.argv = sys.argv[1:]; "
                               "runpy.run_path(sys.argv[0], run_name='__main__')", str(ROOT / "seam.py"), "guard",
                               *args], capture_output=True, timeout=120, check=False)
        assert done.returncode == 2 and expected in done.stderr.decode() and b"Traceback" not in done.stderr


def test_the_help_has_an_example():
    with pytest.raises(SystemExit):
        seam.main(["guard", "--help"])
