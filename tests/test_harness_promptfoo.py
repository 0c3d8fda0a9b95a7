"""The promptfoo route with the real harness: `seam.py export --to promptfoo`, `promptfoo eval` of the exported
config against the kit's fake OpenAI-compatible server on 127.0.0.1, `seam.py import` of its output, then the
bodies the server received, the trace rows and the labels compared with those of the kit's own runner against the
same fake server with the same script, a condition file's message holding nunjucks syntax sent unchanged, and
`seam.py compare` on the import, naming the harness on its page.

promptfoo is a Node.js program, not a Python package: `bash scripts/install_promptfoo.sh` installs 0.118.0 (the
last release for Node.js 20) into ~/.cache/seam/promptfoo-0.118.0; SEAM_PROMPTFOO names another command. Where
there is none these tests are skipped (CI included: it is not required there); tests/test_harness_promptfoo_import.py
reads the output kept from this run (tests/fixtures/harness/promptfoo/) everywhere. `python
tests/test_harness_promptfoo.py` writes those fixtures again. promptfoo's config folder is a temporary one, and its
telemetry and update check are off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import harnessflow
from support.fakeserver import serve

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness" / "promptfoo"
INSTALLED = Path.home() / ".cache" / "seam" / "promptfoo-0.118.0" / "node_modules" / ".bin" / "promptfoo"
FIRST = 1  # one cluster: six requests, one per condition
MAX_TOKENS = 256
# What the fake server does with the k-th request of the selection (clean, newline, blank, boundary, mitigation,
# native): an answer, one cut by the output limit, one blocked by a filter, an empty one, a 400, an answer.
SCRIPT = {1: ["truncated"], 2: ["filter"], 3: ["empty"], 4: ["400"]}
STATUSES = ["ok", "unusable", "unusable", "unusable", "failed", "ok"]
# promptfoo keeps neither the served model nor the response id: they are compared as None below
COMPARED = ("id", "cluster", "condition", "source", "status", "output", "finish_reason", "benchmark_sha256",
            "message_sha256")
# A condition whose markers and sentence hold nunjucks syntax (and backslashes), which promptfoo renders in a
# template or a variable: the message must reach the server unchanged.
NUNJUCKS = """\
[conditions.nunjucks]
pool = "casual"
open = "{{ x }} {% raw %}{{ id }} {#"
close = "{% endraw %} {# c #} \\\\ \\\\n \\\\\\\\ {% if %}"
sentence = "Keep {{message}} and {%- set a = 1 -%} as they are."
"""


def seam_main(argv: list[str]) -> int:
    """`seam.py ARGV` (imported here, so that this file also runs as a script to write the fixtures)."""
    import seam

    return seam.main(argv)


def promptfoo_command() -> Path:
    named = os.environ.get("SEAM_PROMPTFOO")
    found = Path(named) if named else INSTALLED if INSTALLED.exists() else shutil.which("promptfoo")
    if not found:
        pytest.skip("promptfoo is not installed (bash scripts/install_promptfoo.sh, or SEAM_PROMPTFOO=COMMAND)")
    return Path(found)


def requests(conditions: str | None = None, only: list[str] | None = None) -> list[dict]:
    from benchmark import conditions as condition_sets
    from benchmark.dataset import requests as rendered

    chosen = [request.to_row() for request in rendered(limit=FIRST, defined=condition_sets.load(conditions))]
    return [request for request in chosen if only is None or request["condition"] in only]


def script() -> dict[str, list[str]]:
    chosen = requests()
    return {chosen[index]["message"]: steps for index, steps in SCRIPT.items()}


def run_promptfoo(folder: Path, promptfoo: Path, extra: tuple[str, ...] = ()) -> tuple[Path, list[dict]]:
    """Export, run the real promptfoo against the fake server: its output and the requests the server received."""
    export = folder / "export"
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PROMPTFOO_CONFIG_DIR=str(folder / "promptfoo-home"), PROMPTFOO_DISABLE_TELEMETRY="1",
               PROMPTFOO_DISABLE_UPDATE="1", NO_COLOR="1", FORCE_COLOR="0")
    env.pop("OPENAI_API_KEY", None)
    with serve(script()) as server:
        assert seam_main(["export", "--to", "promptfoo", "--out", str(export), "--first", str(FIRST), "--max-tokens",
                          str(MAX_TOKENS), "--model", "fake-model", "--base-url", f"{server.url}/v1", *extra]) == 0
        output = export / "out.json"
        done = subprocess.run([str(promptfoo), "eval", "-c", str(export / "promptfooconfig.yaml"), "-o", str(output),
                               "-j", "1", "--no-cache"], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=300)
        received = list(server.received)
    # promptfoo exits 100 when a test failed or errored (the 400 here), 0 when none did
    assert done.returncode in (0, 100) and output.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return output, received


def run_runner(folder: Path) -> tuple[Path, list[dict]]:
    """The kit's own runner against the same fake server with the same script (one request fails: exit 1)."""
    return harnessflow.run_runner(folder, script(), first=FIRST, max_tokens=MAX_TOKENS, expected_exit=1)


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    promptfoo = promptfoo_command()
    folder = tmp_path_factory.mktemp("promptfoo")
    output, received = run_promptfoo(folder, promptfoo)
    imported = folder / "imported.jsonl"
    assert seam_main(["import", str(output), "--out", str(imported)]) == 0
    traces, runner_received = run_runner(folder)
    return {"folder": folder, "output": output, "received": received, "imported": imported, "runner": traces,
            "runner_received": runner_received, "promptfoo": promptfoo}


def rows(path: Path) -> dict:
    from common.records import TraceRow, read

    return {row.id: row for _, row in read(path, TraceRow)}


def version_of(output: Path) -> str:
    return json.loads(output.read_text(encoding="utf-8"))["metadata"]["promptfooVersion"]


def test_the_server_receives_the_runners_bodies(flow):
    """Each request as the runner sends it: one user message holding the exact message, no system prompt,
    temperature 0, the limit, no stop sequences (promptfoo retries nothing here: one request each)."""
    theirs = {r["body"]["messages"][0]["content"]: r["body"] for r in flow["runner_received"]}
    mine = [r["body"] for r in flow["received"]]
    assert [body["messages"][0]["content"] for body in mine] == [request["message"] for request in requests()]
    for body in mine:
        message = body["messages"][0]["content"]
        assert body == theirs[message]  # the runner's body: same keys, same values
        assert body == {"model": "fake-model", "messages": [{"role": "user", "content": message}],
                        "max_tokens": MAX_TOKENS, "temperature": 0}
    assert all(r["path"] == "/v1/chat/completions" for r in flow["received"])


def test_the_import_holds_the_runners_rows_for_the_same_server(flow):
    from runner.usage import read_usage

    mine, theirs = rows(flow["imported"]), rows(flow["runner"])
    assert list(mine) == [request["id"] for request in requests()]
    assert sorted(mine) == sorted(theirs)
    for rid, row in mine.items():
        runner_row = theirs[rid]
        assert {name: getattr(row, name) for name in COMPARED} == {name: getattr(runner_row, name)
                                                                    for name in COMPARED}, rid
        assert read_usage(row.usage) == read_usage(runner_row.usage), rid
        assert row.model == runner_row.model == "fake-model"
        assert (row.served_model, row.response_id) == (None, None)  # promptfoo keeps neither
        if row.status != "failed":
            assert row.reason == runner_row.reason, rid
        assert row.request["parameters"] == runner_row.request["parameters"] == {"max_tokens": MAX_TOKENS,
                                                                                  "temperature": 0.0}
    assert [mine[request["id"]].status for request in requests()] == STATUSES
    assert mine[requests()[4]["id"]].reason.startswith("promptfoo: API error: 400 Bad Request")


def test_the_rows_name_the_harness_its_version_and_its_output(flow):
    version = version_of(flow["output"])
    assert version == subprocess.run([str(flow["promptfoo"]), "--version"], capture_output=True, text=True,
                                     env=dict(os.environ, PROMPTFOO_DISABLE_UPDATE="1",
                                              PROMPTFOO_CONFIG_DIR=str(flow["folder"] / "promptfoo-home")),
                                     timeout=60).stdout.strip().splitlines()[-1]
    for row in rows(flow["imported"]).values():
        assert {key: value for key, value in row.request["harness"].items() if key != "importer"} == {
            "name": "promptfoo", "version": version, "log": "out.json", "model": "openai:chat:fake-model"}


def test_the_labels_equal_the_runners(flow):
    folder = flow["folder"]
    labels = harnessflow.labels_of(folder, {"import": flow["imported"], "runner": flow["runner"]})
    mine, theirs = labels["import"], labels["runner"]
    failed = requests()[4]["id"]
    assert [row["id"] for row in mine] == [row["id"] for row in theirs]
    for a, b in zip(mine, theirs, strict=True):
        if a["id"] == failed:  # the harness's words for the failure are its own
            assert a["reason"].startswith("treatment failed: promptfoo: API error: 400") and b["reason"].startswith(
                "treatment failed: HTTP 400")
            a, b = {**a, "reason": None}, {**b, "reason": None}
        assert a == b


def test_compare_reads_the_import_and_its_page_names_the_harness(flow):
    out = flow["folder"] / "compare"
    assert seam_main(["compare", str(flow["imported"]), "--out", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"fake-model: promptfoo {version_of(flow['output'])}" in page


def test_a_message_holding_nunjucks_syntax_reaches_the_server_unchanged(flow, tmp_path):
    conditions = tmp_path / "nunjucks.toml"
    conditions.write_text(NUNJUCKS, encoding="utf-8")
    (request,) = requests(str(conditions), ["nunjucks"])
    message = request["message"]
    assert all(part in message for part in ("{{ x }}", "{% raw %}", "{% endraw %}", "{#", "\\\\", "{%- set"))
    output, received = run_promptfoo(tmp_path, flow["promptfoo"], ("--conditions", str(conditions), "--only",
                                                                    "nunjucks"))
    (body,) = [r["body"] for r in received]
    assert body["messages"] == [{"role": "user", "content": message}]
    assert json.loads(received[0]["raw"])["messages"][0]["content"] == message  # the bytes sent, decoded once
    imported = tmp_path / "nunjucks.jsonl"
    assert seam_main(["import", str(output), "--out", str(imported), "--conditions", str(conditions)]) == 0
    (row,) = rows(imported).values()
    assert row.status == "ok" and row.output == f"EDITED<{message}>"


def write_fixtures() -> None:
    """Run the flow once and keep promptfoo's outputs (the six requests', and the nunjucks condition's with its
    condition file) as the import tests' fixtures."""
    import tempfile

    promptfoo = promptfoo_command()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        output, _ = run_promptfoo(Path(tmp) / "six", promptfoo)
        shutil.copyfile(output, FIXTURES / "out.json")
        conditions = Path(tmp) / "nunjucks.toml"
        conditions.write_text(NUNJUCKS, encoding="utf-8")
        output, _ = run_promptfoo(Path(tmp) / "nunjucks", promptfoo, ("--conditions", str(conditions), "--only",
                                                                      "nunjucks"))
        shutil.copyfile(output, FIXTURES / "nunjucks.json")
    (FIXTURES / "nunjucks.toml").write_text(NUNJUCKS, encoding="utf-8")
    print(f"wrote {FIXTURES / 'out.json'}, {FIXTURES / 'nunjucks.json'} and {FIXTURES / 'nunjucks.toml'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    write_fixtures()
