"""`seam.py import` of inspect_ai logs, on the logs a real inspect_ai run wrote (tests/fixtures/harness/, made by
tests/test_harness_inspect.py: one cluster, six requests answered by the fake server with an edit, an edit cut by
the output limit, a filter, an empty reply, an HTTP 400 and an edit), and on logs made from them to be wrong: a
zip cut short, a damaged member, a log of another task, a changed prompt, a sample with no output, lone
surrogates, several epochs, a request twice, a log that decompresses to 1 GB. Each wrong input is one line on
stderr (exit 2) and nothing written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import seam
from common.records import TraceRow, read
from harness import inspect_log, zipread

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness"
EVAL, JSON = FIXTURES / "inspect.eval", FIXTURES / "inspect.json"
STATUSES = {"humaneval-001/clean": "ok", "humaneval-001/newline": "unusable", "humaneval-001/blank": "unusable",
            "humaneval-001/boundary": "unusable", "humaneval-001/mitigation": "failed", "humaneval-001/native": "ok"}


def imported(tmp_path, *logs, extra=(), name="out.jsonl"):
    out = tmp_path / name
    status = seam.main(["import", *map(str, logs), "--out", str(out), *extra])
    return status, out


def refused(tmp_path, capsys, *logs, extra=()) -> str:
    """The one line an import of `logs` is refused with; nothing written beside it."""
    capsys.readouterr()
    before = _files(tmp_path)
    status, out = imported(tmp_path, *logs, extra=extra)
    err = capsys.readouterr().err
    assert status == 2, err
    assert _files(tmp_path) == before
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("seam.py import: error: "), err
    return lines[0]


def _files(folder: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def rows(path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def json_log() -> dict:
    return json.loads(JSON.read_text(encoding="utf-8"))


def sent(sample: dict) -> list:
    """The messages of the sample's model call as the .json log keeps them (inline; the .eval log refers into
    `events_data`)."""
    return next(e for e in sample["events"] if e.get("event") == "model")["call"]["request"]["messages"]


def write_json(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")  # ensure_ascii: a lone surrogate as its escape
    return path


def rezip(source: Path, target: Path, change=None, *, compression=zipfile.ZIP_DEFLATED) -> Path:
    """The .eval log `source` written again (deflated by default), each member through `change(name, data)`."""
    with zipread.Members(source) as members, zipfile.ZipFile(target, "w", compression) as out:
        for name in members.names():
            data = members.read(name)
            out.writestr(name, change(name, data) if change else data)
    return target


def test_the_eval_log_imports_as_the_runner_records_it(tmp_path, capsys):
    status, out = imported(tmp_path, EVAL)
    assert status == 0
    found = rows(out)
    assert {rid: row.status for rid, row in found.items()} == STATUSES
    assert found["humaneval-001/newline"].reason == "stopped by the output limit (finish_reason=length)"
    assert found["humaneval-001/blank"].reason.startswith("blocked by a content filter")
    assert found["humaneval-001/boundary"].reason == "empty output"
    assert found["humaneval-001/mitigation"].reason.startswith("inspect_ai: Error code: 400")
    assert found["humaneval-001/clean"].output.startswith("EDITED<Add a docstring")
    assert {row.model for row in found.values()} == {"fake-model"}
    harness = found["humaneval-001/clean"].request["harness"]
    assert (harness["name"], harness["log"], harness["epoch"]) == ("inspect_ai", "inspect.eval", 1)
    request = found["humaneval-001/clean"].request
    assert request["provider"] == "openai" and request["url"].endswith("/v1/chat/completions")
    assert capsys.readouterr().err.strip().endswith("ok 2, unusable 3 (1 stopped by the output limit), failed 1")


def test_the_json_log_and_a_deflated_eval_log_import_alike(tmp_path):
    _, from_eval = imported(tmp_path, EVAL, name="eval.jsonl")
    _, from_json = imported(tmp_path, JSON, name="json.jsonl")
    _, deflated = imported(tmp_path, rezip(EVAL, tmp_path / "deflated.eval"), name="deflated.jsonl")
    reference = rows(from_eval)
    for other in (rows(from_json), rows(deflated)):
        assert sorted(other) == sorted(reference)
        for rid, row in other.items():
            mine, theirs = row.to_row(), reference[rid].to_row()
            mine["request"]["harness"]["log"] = theirs["request"]["harness"]["log"] = ""
            assert mine == theirs, rid


def test_model_names_a_model_the_log_does_not(tmp_path):
    status, out = imported(tmp_path, EVAL, extra=["--model", "my-model"])
    assert status == 0 and {row.model for row in rows(out).values()} == {"my-model"}


def test_without_zstandard_one_line_says_what_to_install_or_how_to_convert(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard now fails
    line = refused(tmp_path, capsys, EVAL)
    assert "'zstandard'" in line and "pip install zstandard" in line and "inspect log convert" in line


def test_a_zip_cut_short_is_refused(tmp_path, capsys):
    cut = tmp_path / "cut.eval"
    cut.write_bytes(EVAL.read_bytes()[: EVAL.stat().st_size // 2])
    assert "not a complete .eval log" in refused(tmp_path, capsys, cut)


def test_a_damaged_member_is_refused(tmp_path, capsys):
    data = bytearray(EVAL.read_bytes())
    with zipfile.ZipFile(EVAL) as original:
        info = next(i for i in original.infolist() if i.filename.startswith("samples/"))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 8
    data[start:start + 16] = bytes(16)
    damaged = tmp_path / "damaged.eval"
    damaged.write_bytes(bytes(data))
    line = refused(tmp_path, capsys, damaged)
    assert f"member {info.filename}" in line and "damaged" in line


def test_a_member_whose_checksum_is_wrong_is_refused(tmp_path, capsys):
    """A member that decompresses whole but is not what the zip's directory says (its CRC-32 changed there)."""
    data = bytearray(EVAL.read_bytes())
    with zipfile.ZipFile(EVAL) as original:
        info = next(i for i in original.infolist() if i.filename.startswith("samples/"))
    entry = data.index(b"PK\x01\x02")  # the directory's first entry
    while data[entry + 46:entry + 46 + len(info.filename)] != info.filename.encode():
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 16:entry + 20] = ((info.CRC + 1) & 0xFFFFFFFF).to_bytes(4, "little")
    changed = tmp_path / "checksum.eval"
    changed.write_bytes(bytes(data))
    line = refused(tmp_path, capsys, changed)
    assert f"member {info.filename}" in line and "another checksum" in line


def test_a_log_of_another_task_is_refused(tmp_path, capsys):
    def other(name, data):
        if name in ("header.json", "_journal/start.json"):
            document = json.loads(data)
            document["eval"]["task"] = "gsm8k"
            return json.dumps(document).encode()
        return data

    assert "a log of the task 'gsm8k', not of seam.py export's task 'seam'" in refused(
        tmp_path, capsys, rezip(EVAL, tmp_path / "other.eval", other))


def test_a_changed_prompt_is_refused_naming_the_id_and_the_first_differing_character(tmp_path, capsys):
    text = JSON.read_text(encoding="utf-8").replace("def x_or_y(", "def x_0r_y(")
    changed = tmp_path / "changed.json"
    changed.write_text(text, encoding="utf-8")
    from benchmark.dataset import requests

    message = next(r.message for r in requests(limit=1))
    at = message.index("x_or_y") + 3  # 1-based: the "o"
    line = refused(tmp_path, capsys, changed)
    assert "humaneval-001/" in line and f"differ at character {at}" in line and "'0r_y" in line


def test_a_system_message_is_refused(tmp_path, capsys):
    document = json_log()
    for sample in document["samples"]:
        sent(sample).insert(0, {"role": "system", "content": "Be terse."})
    line = refused(tmp_path, capsys, write_json(tmp_path / "system.json", document))
    assert "roles system, user" in line and "no system prompt" in line


def test_a_sample_with_no_output_is_refused(tmp_path, capsys):
    document = json_log()
    sample = next(s for s in document["samples"] if s["id"] == "humaneval-001/clean")
    sample["output"]["choices"] = []
    sample["events"] = [e for e in sample["events"] if e.get("event") != "model"]
    line = refused(tmp_path, capsys, write_json(tmp_path / "unfinished.json", document))
    assert "(humaneval-001/clean)" in line and "no output and no error" in line


def test_lone_surrogates_in_an_id_or_a_prompt_are_refused(tmp_path, capsys):
    document = json_log()
    document["samples"][0]["id"] += "\udc80"
    line = refused(tmp_path, capsys, write_json(tmp_path / "id.json", document))
    assert "is not a request of the kit" in line
    document = json_log()
    sample = next(s for s in document["samples"] if s["id"] == "humaneval-001/clean")
    key = sent(sample)[0]["content"].removeprefix("attachment://")
    sample["attachments"][key] = sample["attachments"][key][:5] + "\udc80" + sample["attachments"][key][5:]
    line = refused(tmp_path, capsys, write_json(tmp_path / "prompt.json", document))
    assert "humaneval-001/clean" in line and "differ at character 6" in line


def test_a_lone_surrogate_in_a_reply_is_unusable_as_the_runner_records_it(tmp_path):
    document = json_log()
    sample = next(s for s in document["samples"] if s["id"] == "humaneval-001/native")
    call = next(e for e in sample["events"] if e.get("event") == "model")["call"]
    key = call["response"]["choices"][0]["message"]["content"].removeprefix("attachment://")
    sample["attachments"][key] += "\udc80"
    status, out = imported(tmp_path, write_json(tmp_path / "reply.json", document))
    row = rows(out)["humaneval-001/native"]
    assert status == 0 and row.status == "unusable" and row.output.endswith("\ufffd")
    assert "1 lone surrogate escape(s)" in row.reason


def test_several_epochs_are_refused_unless_one_is_picked(tmp_path, capsys):
    document = json_log()
    second = json.loads(json.dumps(document["samples"]))
    for sample in second:
        sample["epoch"] = 2
    document["samples"] += second
    log = write_json(tmp_path / "epochs.json", document)
    assert "the task ran several epochs" in refused(tmp_path, capsys, log) and "--epoch N" in refused(
        tmp_path, capsys, write_json(tmp_path / "second.json", {**document, "samples": second}))
    status, out = imported(tmp_path, log, extra=["--epoch", "2"])
    assert status == 0 and {rid: row.request["harness"]["epoch"] for rid, row in rows(out).items()} == {
        rid: 2 for rid in STATUSES}
    out.unlink()
    assert "no sample of epoch 3" in refused(tmp_path, capsys, log, extra=["--epoch", "3"])


def test_a_request_in_two_logs_is_refused(tmp_path, capsys):
    line = refused(tmp_path, capsys, EVAL, JSON)
    assert "again (first in" in line and "each request is imported once" in line


def test_an_existing_out_and_an_out_in_data_are_refused(tmp_path, capsys):
    (tmp_path / "out.jsonl").write_text("", encoding="utf-8")
    assert "exists" in refused(tmp_path, capsys, EVAL)
    inside = ROOT / "data" / "traces" / "x-harness-test.jsonl"
    try:
        status = seam.main(["import", str(EVAL), "--out", str(inside)])
        assert status == 2 and "inside" in capsys.readouterr().err and not inside.exists()
    finally:
        inside.unlink(missing_ok=True)  # should it ever be written, never left in the release


def test_a_json_log_over_the_bound_is_refused_unread(tmp_path, capsys):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(inspect_log.MAX_JSON_LOG_BYTES + 1)  # sparse: nothing is read to refuse it
    line = refused(tmp_path, capsys, huge)
    assert "read whole" in line and "inspect log convert" in line


def test_other_files_and_two_harnesses_are_refused(tmp_path, capsys):
    other = tmp_path / "log.txt"
    other.write_text("x", encoding="utf-8")
    assert "expected an inspect log" in refused(tmp_path, capsys, other)
    batch = tmp_path / "b.jsonl"
    batch.write_text("{}\n", encoding="utf-8")
    assert "two harnesses" in refused(tmp_path, capsys, EVAL, batch)


BIG = """
import sys
sys.path.insert(0, sys.argv[1])
import seam
status = seam.main(["import", sys.argv[2], "--out", sys.argv[3]])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))  # this program's own
print(status, int(peak.split()[1]) // 1024)  # (ru_maxrss would count the test process it was forked from)
"""


def test_a_log_of_a_gigabyte_is_read_in_bounded_memory(tmp_path):
    """252 samples of 4 MiB each once decompressed (zstd makes the file small): the import's memory stays that
    of one sample, far below the log's size."""
    import zstandard

    from benchmark.dataset import requests

    chosen = requests(limit=42)
    padding = "x" * (17 << 18)  # 4.25 MiB
    log = tmp_path / "big.eval"
    header = json.dumps({"version": 2, "status": "success", "eval": {
        "task": "seam", "model": "openai-api/local/big-model", "packages": {"inspect_ai": "0.3.285"}}}).encode()
    with zipfile.ZipFile(log, "w", zipfile.ZIP_STORED) as out:
        out.writestr("header.json", header)
    samples = ((f"samples/{r.id}_epoch_1.json", json.dumps({
        "id": r.id, "epoch": 1, "input": r.message, "store": {"padding": padding},
        "started_at": "2026-01-02T03:04:05+00:00", "completed_at": "2026-01-02T03:04:06+00:00",
        "output": {"model": "big-model", "choices": [{"message": {"role": "assistant", "content": "done"},
                                                      "stop_reason": "stop"}]}}).encode()) for r in chosen)
    with open(log, "r+b") as f:  # zstd members, written as inspect writes them (method 93), by hand
        zipped = _zstd_members(f, samples, zstandard)
    assert zipped > 1 << 30
    done = subprocess.run([sys.executable, "-c", BIG, str(ROOT), str(log), str(tmp_path / "out.jsonl")],
                          capture_output=True, text=True, timeout=600)
    status, peak_mib = map(int, done.stdout.split())
    assert status == 0, done.stderr
    found = rows(tmp_path / "out.jsonl")
    assert len(found) == len(chosen) and {row.status for row in found.values()} == {"ok"}
    # no model call in these samples: inspect's own output was read, and no endpoint is claimed for it
    assert {(row.request["provider"], row.request["url"]) for row in found.values()} == {(None, None)}
    assert peak_mib < 200, f"{peak_mib} MiB at most for a log of {zipped >> 20} MiB"


def _zstd_members(f, members, zstandard) -> int:
    """Append zstd-compressed members ((name, bytes) pairs) to the zip open in `f`; their total size."""
    total = 0
    with zipfile.ZipFile(f, "a") as archive:
        for name, data in members:
            total += len(data)
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 2, 3, 4, 5))
            info.compress_type = zipfile.ZIP_STORED
            packed = zstandard.ZstdCompressor().compress(data)
            with archive.open(info, "w", force_zip64=False) as member:
                member.write(packed)
            info.compress_type, info.file_size, info.CRC = zipread.ZSTD, len(data), __import__("zlib").crc32(data)
            info.compress_size = len(packed)
            _rewrite_local_header(f, info)
    return total


def _rewrite_local_header(f, info) -> None:
    """The member's local header saying zstd and its real sizes (zipfile wrote it as stored)."""
    at = f.tell()
    f.seek(info.header_offset + 8)
    f.write(info.compress_type.to_bytes(2, "little"))
    f.seek(info.header_offset + 14)
    f.write(info.CRC.to_bytes(4, "little") + info.compress_size.to_bytes(4, "little")
            + info.file_size.to_bytes(4, "little"))
    f.seek(at)


@pytest.mark.parametrize("name", ["header.json", "_journal/start.json"])
def test_the_header_is_read_from_a_finished_or_a_running_log(tmp_path, name):
    def only(member, data):
        return data

    log = rezip(EVAL, tmp_path / "log.eval", only)
    if name == "_journal/start.json":  # a log still being written has no header.json yet
        with zipread.Members(log) as members:
            kept = {n: members.read(n) for n in members.names() if n != "header.json"}
        log = tmp_path / "running.eval"
        with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as out:
            for member, data in kept.items():
                out.writestr(member, data)
    header, samples = inspect_log.read_log(log)
    assert header.task == "seam" and header.model == "openai-api/local/fake-model"
    assert len(list(samples)) == 6


@pytest.mark.parametrize("time", ["1e400", "NaN", "-5"])
def test_a_call_time_that_is_no_duration_is_recorded_as_unknown(tmp_path, time):
    """inspect's `call.time` (and `output.time`) of 1e400 reads as Infinity, which no trace reader takes; NaN and a
    negative time are no durations either: each is recorded as unknown, and the trace written reads back."""
    text = JSON.read_text(encoding="utf-8")
    text = text.replace('"time": 0.004512491000241425', f'"time": {time}')  # the first sample's call and output
    log = tmp_path / "time.json"
    log.write_text(text, encoding="utf-8")
    status, out = imported(tmp_path, log)
    latencies = {row.id: row.attempts[-1].latency_s for row in rows(out).values()}  # read by the kit's reader
    assert status == 0 and list(latencies.values()).count(None) == 1 and len(latencies) == 6


def test_a_reply_that_only_starts_like_a_reference_is_the_reply_as_inspect_reads_it(tmp_path, capsys):
    """A reply whose own text begins "attachment://" (no hash of the sample's attachments follows) is that text,
    as inspect's reader keeps it; it was refused as a damaged log."""
    document = json_log()
    sample = next(s for s in document["samples"] if s["id"] == "humaneval-001/native")
    event = next(e for e in sample["events"] if e.get("event") == "model")
    literal = "attachment://not-a-reference: the reply a model gave"
    event["output"]["choices"][0]["message"]["content"] = literal
    event["call"]["response"]["choices"][0]["message"]["content"] = literal
    status, out = imported(tmp_path, write_json(tmp_path / "literal.json", document))
    assert status == 0, capsys.readouterr().err
    assert rows(out)["humaneval-001/native"].output == literal
