"""The OpenAI Batch route: `seam.py export --to openai-batch`, the input file submitted to the kit's fake Batch API
(tests/support/fakebatch.py) by the README's steps (upload, create, poll, fetch the output and error files: here
with `requests` instead of curl), `seam.py import` of input, output and error files, then the rows and labels
compared with those of `seam.py run --batch` against the same fake with the same faults, and `compare` on the
import naming the harness on its page. Plus the Batch files' own wrong inputs, one line each, nothing written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import requests
from support.fakebatch import API_KEY, serve_batch
from support.fakeserver import toml_text

import seam
from common.records import TraceRow, read
from runner.usage import read_usage

FIRST = 1
FAIL = {"return x\neek, zoom call in five": "errored"}  # humaneval-001/newline's end: an error line for it
COMPARED = ("id", "status", "output", "reason", "finish_reason", "served_model", "benchmark_sha256",
            "message_sha256", "model")


def submit(url: str, input_file: Path, folder: Path) -> list[Path]:
    """What the export's README does with curl: upload, create, poll until done, fetch the output and error files."""
    session, auth = requests.Session(), {"Authorization": f"Bearer {API_KEY}"}
    uploaded = session.post(f"{url}/files", headers=auth, data={"purpose": "batch"},
                            files={"file": (input_file.name, input_file.read_bytes(), "application/jsonl")}).json()
    batch = session.post(f"{url}/batches", headers=auth, json={"input_file_id": uploaded["id"], "completion_window":
                                                                "24h", "endpoint": "/v1/chat/completions"}).json()
    for _ in range(50):
        batch = session.get(f"{url}/batches/{batch['id']}", headers=auth).json()
        if batch["status"] in ("completed", "failed", "expired", "cancelled"):
            break
        time.sleep(0.01)
    assert batch["status"] == "completed", batch
    files = []
    for key, name in (("output_file_id", "output.jsonl"), ("error_file_id", "errors.jsonl")):
        if batch.get(key):
            files.append(folder / name)
            files[-1].write_bytes(session.get(f"{url}/files/{batch[key]}/content", headers=auth).content)
    return files


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch")
    export = folder / "export"
    assert seam.main(["export", "--to", "openai-batch", "--out", str(export), "--first", str(FIRST),
                      "--model", "fake-model", "--max-tokens", "256"]) == 0
    with serve_batch("openai", polls=1, fail=FAIL) as fake:
        results = submit(fake.url, export / "batch_input.jsonl", folder)
    imported = folder / "imported.jsonl"
    assert seam.main(["import", str(export / "batch_input.jsonl"), *map(str, results), "--out", str(imported)]) == 0
    runner = folder / "runner.jsonl"
    with serve_batch("openai", polls=1, fail=FAIL) as fake, pytest.MonkeyPatch.context() as patch:
        patch.setenv("SEAM_FAKE_BATCH_KEY", API_KEY)
        config = folder / "fake-model.toml"
        config.write_text(toml_text({"name": "fake-model", "provider": "openai", "model": "fake-model",
                                     "base_url": fake.url, "api_key_env": "SEAM_FAKE_BATCH_KEY",
                                     "temperature": 0.0, "max_tokens": 256}), encoding="utf-8")
        assert seam.main(["run", str(config), "--first", str(FIRST), "--out", str(runner), "--batch",
                          "--batch-poll", "0.01"]) == 1  # the errored request
    return {"folder": folder, "export": export, "results": results, "imported": imported, "runner": runner}


def rows(path: Path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def test_the_input_file_holds_the_runners_bodies(flow):
    lines = [json.loads(line) for line in (flow["export"] / "batch_input.jsonl").read_text("utf-8").splitlines()]
    runner = rows(flow["runner"])
    assert [line["custom_id"] for line in lines] == list(sorted(runner, key=[line["custom_id"] for line in
                                                                            lines].index))
    for line in lines:
        assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
        assert line["body"] == {"model": "fake-model", "messages": line["body"]["messages"], "max_tokens": 256,
                                "temperature": 0.0}
        assert runner[line["custom_id"]].request["parameters"] == {"max_tokens": 256, "temperature": 0.0}


def test_the_import_holds_the_runners_rows_for_the_same_batch(flow):
    mine, theirs = rows(flow["imported"]), rows(flow["runner"])
    assert sorted(mine) == sorted(theirs) and len(mine) == 6 * FIRST
    for rid, row in mine.items():
        assert {name: getattr(row, name) for name in COMPARED} == {name: getattr(theirs[rid], name)
                                                                    for name in COMPARED}, rid
        assert read_usage(row.usage) == read_usage(theirs[rid].usage), rid
        assert row.request["batch"] is True and row.request["harness"]["name"] == "openai-batch"
    assert [row.status for row in mine.values()].count("failed") == 1
    assert mine["humaneval-001/newline"].reason.startswith("batch error server_error")


def test_the_labels_equal_the_runners(flow):
    labels = {}
    for name in ("imported", "runner"):
        labels[name] = flow["folder"] / f"labels-{name}.jsonl"
        assert seam.main(["score", str(flow[name]), "--out", str(labels[name]), "--no-nli"]) == 0
    assert labels["imported"].read_bytes() == labels["runner"].read_bytes()


def test_compare_reads_the_import_and_its_page_names_the_harness(flow):
    out = flow["folder"] / "compare"
    assert seam.main(["compare", str(flow["imported"]), "--out", str(out)]) == 0
    assert "fake-model: openai-batch" in (out / "report.html").read_text(encoding="utf-8")


def refused(tmp_path, capsys, *files) -> str:
    capsys.readouterr()
    out = tmp_path / "out.jsonl"
    status = seam.main(["import", *map(str, files), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert status == 2 and not out.exists() and len(err.splitlines()) == 1, err
    return err


def test_an_output_file_without_its_input_file_is_refused(flow, tmp_path, capsys):
    assert "no Batch API input file" in refused(tmp_path, capsys, *flow["results"])


def test_a_changed_body_is_refused_naming_the_id_and_character(flow, tmp_path, capsys):
    text = (flow["export"] / "batch_input.jsonl").read_text(encoding="utf-8").replace("x_or_y", "x_OR_y", 1)
    changed = tmp_path / "batch_input.jsonl"
    changed.write_text(text, encoding="utf-8")
    line = refused(tmp_path, capsys, changed, *flow["results"])
    assert "humaneval-001/clean" in line and "'OR_y" in line


def test_a_result_of_no_request_and_a_result_twice_are_refused(flow, tmp_path, capsys):
    output = flow["results"][0]
    first = output.read_text(encoding="utf-8").splitlines()[0]
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({**json.loads(first), "custom_id": "gsm8k-001/clean"}) + "\n", "utf-8")
    assert "not in the input file" in refused(tmp_path, capsys, flow["export"] / "batch_input.jsonl", foreign)
    twice = tmp_path / "twice.jsonl"
    twice.write_text(first + "\n" + first + "\n", encoding="utf-8")
    assert "again (first in" in refused(tmp_path, capsys, flow["export"] / "batch_input.jsonl", twice)


def test_a_line_that_is_no_batch_line_is_refused(flow, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"custom_id": "x", "something": 1}\n', encoding="utf-8")
    assert "neither a Batch API input line" in refused(tmp_path, capsys, flow["export"] / "batch_input.jsonl", bad)
    torn = tmp_path / "torn.jsonl"
    torn.write_text(flow["results"][0].read_text(encoding="utf-8")[:-40], encoding="utf-8")
    assert "torn.jsonl:" in refused(tmp_path, capsys, flow["export"] / "batch_input.jsonl", torn)


def test_a_line_that_is_not_json_names_the_batch_file(tmp_path, capsys):
    """`common.jsonl.stream`'s refusal names what the file was expected to be, as its docstring says."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {}}\nnot json\n',
                   encoding="utf-8")
    line = refused(tmp_path, capsys, bad)
    assert f"{bad}:2: expected one JSON object per line (not JSON: " in line and line.endswith("(a Batch API file)")
