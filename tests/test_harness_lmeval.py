"""The lm-evaluation-harness route with the real harness: `seam.py export --to lm-eval`, `lm_eval` with
`local-chat-completions` and `--apply_chat_template` against the kit's fake OpenAI-compatible server on 127.0.0.1,
`seam.py import` of its `--log_samples` output, then the requests the server received, the trace rows and the
labels compared with those of the kit's own runner against the same fake server with the same script, and
`seam.py compare` on the import, naming "lm-eval VERSION" on its page.

One cluster's six requests and one of a condition whose markers are Jinja syntax (tests/fixtures/harness/lmeval/
jinja.toml), which must reach the server unchanged, exported into a folder whose name holds glob characters
(`export[1]`: lm-eval reads the task's dataset path as a glob) and run with the README's own command. The script
answers with an edit, an edit cut by the output limit, a filter, an empty reply, a 429 then an edit, an edit:
lm-eval keeps only the reply's text, so the cut edit imports as ok (the runner: unusable) and the filter as an
empty output (the runner: blocked by a filter), which the tests pin. (No request fails: one that fails three
times ends lm-eval's whole run, writing nothing.)

lm-eval is optional (not in requirements-dev.txt; pip install 'lm-eval[api]==0.4.13'): where it is not installed
these tests are skipped, on CI too. tests/test_harness_lmeval_import.py reads the files kept from this run
(tests/fixtures/harness/lmeval/) everywhere; `python tests/test_harness_lmeval.py` writes them again.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import conftest  # noqa: F401 (puts the repository on sys.path, for `python tests/test_harness_lmeval.py`)
import pytest
from support import harnessflow
from support.fakeserver import serve

import seam
from common.records import TraceRow, read

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness" / "lmeval"
CONDITIONS = FIXTURES / "jinja.toml"
FIRST = 1  # one cluster: six requests, one per built-in condition, and the jinja condition's
MAX_TOKENS = 321  # not lm-eval's default (256), so that a task that does not set it is seen
# What the fake server does with the k-th request of the selection (clean, newline, blank, boundary, mitigation,
# native, jinja): an answer, one cut by the output limit, one blocked by a filter, an empty one, a 429 then an
# answer (both retry), an answer, an answer.
SCRIPT = {1: ["truncated"], 2: ["filter"], 3: ["empty"], 4: ["429"]}
CUT, FILTERED = 1, 2  # what lm-eval cannot record: the finish reason
COMPARED = ("id", "cluster", "condition", "source", "status", "output", "reason", "benchmark_sha256",
            "message_sha256")


def lmeval_command() -> Path:
    missing = [name for name in ("lm_eval", "aiohttp", "tenacity") if importlib.util.find_spec(name) is None]
    if missing:  # optional, even on CI: the inspect route is CI's
        pytest.skip(f"{', '.join(missing)} not installed (pip install 'lm-eval[api]==0.4.13')")
    return Path(sys.executable).parent / "lm_eval"


def requests() -> list[dict]:
    from benchmark import conditions
    from benchmark.dataset import requests as rendered

    return [request.to_row() for request in rendered(limit=FIRST, defined=conditions.load(str(CONDITIONS)))]


def script() -> dict[str, list[str]]:
    chosen = requests()
    return {chosen[index]["message"]: steps for index, steps in SCRIPT.items()}


def run_lmeval(folder: Path, lm_eval: Path) -> tuple[Path, list[dict]]:
    """Export into a folder whose name holds glob characters (lm-eval's `datasets` reads the task's data_files as a
    glob), run the real lm-eval against the fake server with the README's own command: (the samples file, the
    requests received)."""
    export = folder / "export[1]"
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    env.update(HOME=str(folder), HF_HOME=str(folder / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TQDM_DISABLE="1", NO_COLOR="1")
    with serve(script()) as server:
        assert seam.main(["export", "--to", "lm-eval", "--out", str(export), "--first", str(FIRST), "--max-tokens",
                          str(MAX_TOKENS), "--model", "fake-model", "--conditions", str(CONDITIONS), "--base-url",
                          f"{server.url}/v1"]) == 0
        done = subprocess.run([str(lm_eval), *readme_command(export)[1:]], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=600)
        received = list(server.received)
    assert done.returncode == 0, done.stderr[-3000:]
    (samples,) = sorted((export / "results" / "fake-model").glob("samples_seam_*.jsonl"))
    return samples, received


def readme_command(export: Path) -> list[str]:
    """The `lm_eval ...` command of the export's README, as a shell splits it."""
    import shlex

    readme = (export / "README.md").read_text(encoding="utf-8")
    start = readme.index("    lm_eval --model")
    argv = shlex.split(readme[start:readme.index("\n\n", start)].replace("\\\n", " "))
    assert argv[:3] == ["lm_eval", "--model", "local-chat-completions"] and "--model_args" in argv
    return argv


def run_runner(folder: Path) -> tuple[Path, list[dict]]:
    """The kit's own runner against the same fake server with the same script: (its traces, the requests)."""
    return harnessflow.run_runner(folder, script(), first=FIRST, max_tokens=MAX_TOKENS, expected_exit=0,
                                  conditions=CONDITIONS)


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    lm_eval = lmeval_command()
    folder = tmp_path_factory.mktemp("lmeval")
    samples, sent = run_lmeval(folder, lm_eval)
    imported = folder / "imported.jsonl"
    assert seam.main(["import", str(samples), "--out", str(imported), "--conditions", str(CONDITIONS)]) == 0
    runner, runner_sent = run_runner(folder)
    return {"folder": folder, "samples": samples, "sent": sent, "imported": imported, "runner": runner,
            "runner_sent": runner_sent}


def rows(path: Path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def bodies(received: list[dict]) -> dict[str, list[dict]]:
    """The bodies the server received, by message, in order."""
    found: dict[str, list[dict]] = {}
    for request in received:
        found.setdefault(request["body"]["messages"][0]["content"], []).append(request["body"])
    return found


def test_lm_eval_sends_the_runners_body_with_stop_and_seed_null(flow):
    mine, theirs = bodies(flow["sent"]), bodies(flow["runner_sent"])
    messages = [request["message"] for request in requests()]
    assert sorted(mine) == sorted(theirs) == sorted(messages)  # each message exactly, the Jinja one unchanged
    assert any("{% raw %}{{ message }}" in m and "{{ id }}{# #}" in m for m in mine)
    for message in messages:
        assert len(mine[message]) == len(theirs[message])  # the 429 asked again by both
        for body, runner_body in zip(mine[message], theirs[message], strict=True):
            assert body["messages"] == [{"role": "user", "content": message}]  # one user message, no system prompt
            # lm-eval always writes stop and seed: the task makes them null, the OpenAI API's "not given"
            assert body.pop("stop") is None and body.pop("seed") is None
            assert body == runner_body == {"model": "fake-model", "messages": body["messages"],
                                           "max_tokens": MAX_TOKENS, "temperature": 0.0}
    assert {request["path"] for request in flow["sent"]} == {"/v1/chat/completions"}


def test_the_import_holds_the_runners_rows_but_for_the_finish_reason(flow):
    mine, theirs = rows(flow["imported"]), rows(flow["runner"])
    chosen = [request["id"] for request in requests()]
    assert list(mine) == chosen and sorted(theirs) == sorted(chosen)
    for index, rid in enumerate(chosen):
        row, runner_row = mine[rid], theirs[rid]
        got = {name: getattr(row, name) for name in COMPARED}
        expected = {name: getattr(runner_row, name) for name in COMPARED}
        if index == CUT:  # lm-eval keeps the cut text and no finish reason: ok, where the runner says unusable
            assert expected["status"] == "unusable" and expected["reason"].startswith("stopped by the output limit")
            expected.update(status="ok", reason=None)
        if index == FILTERED:  # the filter's empty text, without the finish reason that names the filter
            assert expected["reason"].startswith("blocked by a content filter")
            expected.update(reason="empty output")
        assert got == expected, rid
        assert row.model == runner_row.model == "fake-model"
        # what lm-eval's log cannot tell is null (unknown), not made up
        assert (row.finish_reason, row.usage, row.served_model, row.response_id, row.response) == (None,) * 5
        assert runner_row.usage and runner_row.finish_reason
        assert row.request["parameters"] == {**runner_row.request["parameters"], "stop": None, "seed": None}
        assert runner_row.request["parameters"] == {"max_tokens": MAX_TOKENS, "temperature": 0.0}
    assert [mine[rid].status for rid in chosen] == ["ok", "ok", "unusable", "unusable", "ok", "ok", "ok"]


def test_the_rows_name_lm_eval_its_version_and_its_files(flow):
    version = __import__("lm_eval").__version__
    for row in rows(flow["imported"]).values():
        harness = row.request["harness"]
        assert (harness["name"], harness["version"], harness["log"]) == ("lm-eval", version, flow["samples"].name)
        assert harness["results"] == flow["samples"].name.replace("samples_seam_", "results_").replace(".jsonl",
                                                                                                       ".json")
        assert (harness["model"], harness["model_type"]) == ("fake-model", "local-chat-completions")
        assert row.request["provider"] is None and row.request["url"] is None  # no chat completion kept
        assert row.started_at == row.finished_at  # the run's start: lm-eval keeps no time per request


def test_the_labels_equal_the_runners_but_for_the_cut_reply(flow):
    folder = flow["folder"]
    labels = harnessflow.labels_of(folder, {"import": flow["imported"], "runner": flow["runner"]}, CONDITIONS)
    mine, theirs = labels["import"], labels["runner"]
    cut, filtered = requests()[CUT]["id"], requests()[FILTERED]["id"]
    assert [row["id"] for row in mine] == [row["id"] for row in theirs]
    differ = set()
    for a, b in zip(mine, theirs, strict=True):
        if a["id"] == filtered:  # unusable both; the reason names what each knows
            assert "empty output" in a["reason"] and "content filter" in b["reason"]
            a, b = {**a, "reason": None}, {**b, "reason": None}
        if a != b:
            differ.add(a["id"])
    assert differ == {cut}  # the cut reply is labelled by the import; the runner leaves it out as unusable


def test_compare_reads_the_import_and_its_page_names_lm_eval(flow):
    out = flow["folder"] / "compare"
    assert seam.main(["compare", str(flow["imported"]), "--out", str(out), "--conditions", str(CONDITIONS)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"fake-model: lm-eval {__import__('lm_eval').__version__}" in page


def write_fixtures() -> None:
    """Run lm-eval once and keep its samples and results files as the import tests' fixtures."""
    import tempfile

    lm_eval = lmeval_command()
    with tempfile.TemporaryDirectory() as tmp:
        samples, _ = run_lmeval(Path(tmp), lm_eval)
        for old in [*FIXTURES.glob("samples_seam_*.jsonl"), *FIXTURES.glob("results_*.json")]:
            old.unlink()
        results = samples.with_name(samples.name.replace("samples_seam_", "results_").replace(".jsonl", ".json"))
        for path in (samples, results):
            shutil.copyfile(path, FIXTURES / path.name)
            print(f"wrote {FIXTURES / path.name}")


if __name__ == "__main__":
    write_fixtures()
