"""The inspect_ai route with the real harness: `seam.py export --to inspect`, `inspect eval` of the exported task
against the kit's fake OpenAI-compatible server on 127.0.0.1, `seam.py import` of its log (.eval, and .json by
`inspect log convert`), then the trace rows and labels compared with those of the kit's own runner against the
same fake server with the same script, and `seam.py compare` on the import, naming the harness on its page.

inspect_ai is a development dependency (requirements-dev.txt): where it is not installed these tests are skipped
(an error on CI); tests/test_harness_import.py reads the logs kept from this run (tests/fixtures/harness/)
everywhere. `python tests/test_harness_inspect.py` writes those fixtures again.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import on_ci
from support import harnessflow
from support.fakeserver import serve

import seam
from common.records import TraceRow, read
from runner.usage import read_usage

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness"
FIRST = 1  # one cluster: six requests, one per condition
# What the fake server does with the k-th request of the selection (clean, newline, blank, boundary, mitigation,
# native): an answer, one cut by the output limit, one blocked by a filter, an empty one, a 400, an answer.
SCRIPT = {1: ["truncated"], 2: ["filter"], 3: ["empty"], 4: ["400"]}
COMPARED = ("id", "cluster", "condition", "source", "status", "output", "finish_reason", "served_model",
            "response_id", "benchmark_sha256", "message_sha256")


def inspect_command() -> Path:
    if importlib.util.find_spec("inspect_ai") is None:
        reason = "inspect_ai is not installed (pip install -r requirements-dev.txt)"
        if on_ci():
            pytest.fail(f"CI must run every test, but {reason}", pytrace=False)
        pytest.skip(reason)
    return Path(sys.executable).parent / "inspect"


def requests() -> list[dict]:
    from benchmark.dataset import requests as rendered

    return [request.to_row() for request in rendered(limit=FIRST)]


def script() -> dict[str, list[str]]:
    chosen = requests()
    return {chosen[index]["message"]: steps for index, steps in SCRIPT.items()}


def run_inspect(folder: Path, inspect: Path) -> tuple[Path, Path]:
    """Export, run the real inspect_ai against the fake server, convert its log to JSON: (.eval, .json)."""
    export = folder / "export"
    assert seam.main(["export", "--to", "inspect", "--out", str(export), "--first", str(FIRST),
                      "--max-tokens", "256"]) == 0
    env = dict(os.environ, LOCAL_API_KEY="none", INSPECT_DISPLAY="none", HOME=str(folder),
               INSPECT_LOG_DIR=str(folder / "unused"), NO_COLOR="1")
    with serve(script()) as server:
        done = subprocess.run([str(inspect), "eval", "seam_task.py", "--model", "openai-api/local/fake-model",
                               "--model-base-url", f"{server.url}/v1", "--max-connections", "1", "--log-dir", "logs",
                               "--display", "none"],  # as the README says: from the folder (no absolute path)
                              cwd=export, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (log,) = sorted((export / "logs").glob("*.eval"))
    converted = folder / "json"
    done = subprocess.run([str(inspect), "log", "convert", str(log), "--to", "json", "--output-dir", str(converted)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (as_json,) = sorted(converted.glob("*.json"))
    return log, as_json


def run_runner(folder: Path) -> Path:
    """The kit's own runner against the same fake server with the same script (one request fails: exit 1)."""
    return harnessflow.run_runner(folder, script(), first=FIRST, max_tokens=256, expected_exit=1)[0]


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    inspect = inspect_command()
    folder = tmp_path_factory.mktemp("inspect")
    log, as_json = run_inspect(folder, inspect)
    imported = {}
    for name, path in (("eval", log), ("json", as_json)):
        imported[name] = folder / f"imported-{name}.jsonl"
        assert seam.main(["import", str(path), "--out", str(imported[name])]) == 0
    return {"folder": folder, "log": log, "json": as_json, "imported": imported, "runner": run_runner(folder)}


def rows(path: Path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def test_the_import_holds_the_runners_rows_for_the_same_server(flow):
    mine, theirs = rows(flow["imported"]["eval"]), rows(flow["runner"])
    assert list(mine) == [request["id"] for request in requests()]
    assert sorted(mine) == sorted(theirs)
    for rid, row in mine.items():
        runner_row = theirs[rid]
        assert {name: getattr(row, name) for name in COMPARED} == {name: getattr(runner_row, name)
                                                                    for name in COMPARED}, rid
        assert row.usage == runner_row.usage, rid  # as the server sent it: the SDK's added nulls dropped
        assert read_usage(row.usage) == read_usage(runner_row.usage), rid
        assert row.model == runner_row.model == "fake-model"
        if row.status != "failed":
            assert row.reason == runner_row.reason, rid
        assert row.request["parameters"] == runner_row.request["parameters"] == {"max_tokens": 256,
                                                                                  "temperature": 0.0}
    statuses = [mine[request["id"]].status for request in requests()]
    assert statuses == ["ok", "unusable", "unusable", "unusable", "failed", "ok"]
    assert mine[requests()[4]["id"]].reason.startswith("inspect_ai: Error code: 400")


def test_the_rows_name_the_harness_its_version_and_its_log(flow):
    for row in rows(flow["imported"]["eval"]).values():
        harness = row.request["harness"]
        assert harness["name"] == "inspect_ai" and harness["log"] == flow["log"].name
        assert harness["version"] == __import__("inspect_ai").__version__
        assert harness["model"] == "openai-api/local/fake-model" and harness["epoch"] == 1


def test_the_json_log_imports_as_the_eval_log(flow):
    as_eval, as_json = rows(flow["imported"]["eval"]), rows(flow["imported"]["json"])
    assert sorted(as_eval) == sorted(as_json)  # the .json log lists its samples by id, the .eval as they ended
    for rid, row in as_eval.items():
        other = as_json[rid]
        assert row.to_row() | {"request": None} == other.to_row() | {"request": None}, rid
        assert {**row.request["harness"], "log": ""} == {**other.request["harness"], "log": ""}


def test_the_labels_equal_the_runners(flow):
    folder = flow["folder"]
    labels = harnessflow.labels_of(folder, {"import": flow["imported"]["eval"], "runner": flow["runner"]})
    mine, theirs = labels["import"], labels["runner"]
    failed = requests()[4]["id"]
    assert [row["id"] for row in mine] == [row["id"] for row in theirs]
    for a, b in zip(mine, theirs, strict=True):
        if a["id"] == failed:  # the harness's words for the failure are its own
            assert a["reason"].startswith("treatment failed: inspect_ai:") and b["reason"].startswith(
                "treatment failed: HTTP 400")
            a, b = {**a, "reason": None}, {**b, "reason": None}
        assert a == b


def test_compare_reads_the_import_and_its_page_names_the_harness(flow):
    out = flow["folder"] / "compare"
    assert seam.main(["compare", str(flow["imported"]["eval"]), "--out", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    version = __import__("inspect_ai").__version__
    assert f"fake-model: inspect_ai {version}" in page
    usage = (out / "tables" / "usage.csv").read_text(encoding="utf-8")
    assert "yours,fake-model,all,6,0,50,25," in usage  # five answered, 10 prompt and 5 completion tokens each


def write_fixtures() -> None:
    """Run the flow once and keep its logs as the import tests' fixtures."""
    import tempfile

    inspect = inspect_command()
    with tempfile.TemporaryDirectory() as tmp:
        log, as_json = run_inspect(Path(tmp), inspect)
        FIXTURES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, FIXTURES / "inspect.eval")
        shutil.copyfile(as_json, FIXTURES / "inspect.json")
    print(f"wrote {FIXTURES / 'inspect.eval'} and {FIXTURES / 'inspect.json'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    write_fixtures()
