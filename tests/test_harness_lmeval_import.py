"""`seam.py import` of lm-evaluation-harness's `--log_samples` output, on the files a real lm-eval run wrote
(tests/fixtures/harness/lmeval/, made by tests/test_harness_lmeval.py: one cluster's six requests and one of the
Jinja-marker condition of jinja.toml there, answered by the fake server with an edit, an edit cut by the output
limit, a filter, an empty reply, a 429 then an edit, an edit, an edit), and on files made from them to be wrong: a
line cut short, a line that is not JSON, a sample of another task, a changed prompt, a system message, a text
prompt, a sample with no response, a sample twice, lone surrogates, a file short of its run's count, stop
sequences, a missing or foreign results file. Each wrong input is one line on stderr (exit 2) naming the file
and line, and nothing written. Needs no lm-eval.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import seam
from common.records import TraceRow, read

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness" / "lmeval"
CONDITIONS = FIXTURES / "jinja.toml"
(SAMPLES,) = FIXTURES.glob("samples_seam_*.jsonl")
RESULTS = FIXTURES / SAMPLES.name.replace("samples_seam_", "results_").replace(".jsonl", ".json")
STATUSES = {"humaneval-001/clean": "ok", "humaneval-001/newline": "ok", "humaneval-001/blank": "unusable",
            "humaneval-001/boundary": "unusable", "humaneval-001/mitigation": "ok", "humaneval-001/native": "ok",
            "humaneval-001/jinja": "ok"}
WITH_CONDITIONS = ["--conditions", str(CONDITIONS)]


def imported(tmp_path: Path, *logs, extra=WITH_CONDITIONS, name="out.jsonl") -> tuple[int, Path]:
    out = tmp_path / name
    return seam.main(["import", *map(str, logs), "--out", str(out), *extra]), out


def refused(tmp_path: Path, capsys, *logs, extra=WITH_CONDITIONS) -> str:
    """The one line an import of `logs` is refused with; nothing written beside it."""
    capsys.readouterr()
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    status, _ = imported(tmp_path, *logs, extra=extra)
    err = capsys.readouterr().err
    assert status == 2, err
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("seam.py import: error: "), err
    return lines[0]


def rows(path: Path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def samples() -> list[dict]:
    return [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]


def results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def run_files(tmp_path: Path, lines: list[dict] | None = None, *, raw: bytes | None = None, run: dict | None = None,
              name: str = SAMPLES.name, folder: str = "run") -> Path:
    """A samples file (the fixture's, or these lines, or these bytes) with its results file beside it."""
    where = tmp_path / folder
    where.mkdir(exist_ok=True)
    path = where / name
    if raw is None:  # ensure_ascii: a lone surrogate as its escape, as JSON allows
        raw = "".join(json.dumps(line) + "\n" for line in (samples() if lines is None else lines)).encode()
    path.write_bytes(raw)
    date = name.rsplit("_", 1)[1].removesuffix(".jsonl")
    (where / f"results_{date}.json").write_text(json.dumps(results() if run is None else run), encoding="utf-8")
    return path


def sample(lines: list[dict], condition: str) -> dict:
    return next(line for line in lines if line["doc"]["id"] == f"humaneval-001/{condition}")


def chat(line: dict) -> list[dict]:
    return json.loads(line["arguments"]["gen_args_0"]["arg_0"][0])


def set_chat(line: dict, messages: list[dict]) -> None:
    line["arguments"]["gen_args_0"]["arg_0"] = [json.dumps(messages, ensure_ascii=False)]


def test_the_samples_import_as_the_runner_records_their_texts(tmp_path, capsys):
    status, out = imported(tmp_path, SAMPLES)
    assert status == 0
    found = rows(out)
    assert {rid: row.status for rid, row in found.items()} == STATUSES
    assert found["humaneval-001/newline"].output == "EDITE"  # cut by the limit: lm-eval cannot say so
    assert found["humaneval-001/blank"].reason == found["humaneval-001/boundary"].reason == "empty output"
    assert found["humaneval-001/clean"].output.startswith("EDITED<Add a docstring")
    assert "{% raw %}{{ message }}" in found["humaneval-001/jinja"].output  # the message as it was sent
    row = found["humaneval-001/clean"]
    assert (row.model, row.usage, row.finish_reason, row.served_model, row.response) == ("fake-model", None, None,
                                                                                         None, None)
    assert row.request["parameters"] == {"max_tokens": 321, "temperature": 0.0, "stop": None, "seed": None}
    assert row.request["harness"] | {"importer": None} == {
        "name": "lm-eval", "version": "0.4.13", "log": SAMPLES.name, "results": RESULTS.name, "model": "fake-model",
        "model_type": "local-chat-completions", "base_url": results()["config"]["model_args"]["base_url"],
        "importer": None}
    from datetime import UTC, datetime

    start = datetime.fromtimestamp(results()["date"], UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert {(r.started_at, r.finished_at) for r in found.values()} == {(start, start)}
    line = capsys.readouterr().err.strip()
    assert "7 rows of model fake-model from 1 lm-eval 0.4.13 log(s): ok 5, unusable 2" in line
    assert line.endswith("lm-eval keeps no finish reason: a reply cut by the output limit is counted ok")


def test_the_results_file_may_be_given_too_and_not_alone(tmp_path, capsys):
    _, alone = imported(tmp_path, SAMPLES, name="alone.jsonl")
    _, both = imported(tmp_path, RESULTS, SAMPLES, name="both.jsonl")
    assert alone.read_bytes() == both.read_bytes()
    line = refused(tmp_path, capsys, RESULTS)
    assert RESULTS.name in line and "no samples file of its run is given" in line


def test_a_missing_or_foreign_results_file_is_refused(tmp_path, capsys):
    path = run_files(tmp_path)
    (path.parent / RESULTS.name).unlink()
    line = refused(tmp_path, capsys, path)
    assert str(path) in line and "results file of the same run beside it" in line and "found none" in line
    run = results()
    run["config"]["model"] = "hf"
    line = refused(tmp_path, capsys, run_files(tmp_path, run=run))
    assert "a run of lm-eval's model 'hf'" in line and "local-chat-completions" in line
    run = results()
    run["configs"] = {"gsm8k": {}}
    assert "a run of the task(s) 'gsm8k', not of 'seam'" in refused(tmp_path, capsys, run_files(tmp_path, run=run))
    del run["lm_eval_version"]
    assert "no lm_eval_version in it" in refused(tmp_path, capsys, run_files(tmp_path, run=run))


def test_a_line_cut_short_is_refused(tmp_path, capsys):
    data = SAMPLES.read_bytes()
    path = run_files(tmp_path, raw=data[: len(data) - 200])
    line = refused(tmp_path, capsys, path)
    assert f"{path}:7:" in line and "the last line is cut short" in line


def test_a_line_that_is_not_json_is_refused(tmp_path, capsys):
    lines = SAMPLES.read_bytes().split(b"\n")
    path = run_files(tmp_path, raw=b"\n".join([*lines[:2], b'{"doc_id": 2, "doc": {', *lines[2:]]))
    line = refused(tmp_path, capsys, path)
    assert f"{path}:3:" in line and "not JSON" in line


def test_samples_of_another_task_are_refused(tmp_path, capsys):
    other = run_files(tmp_path, name=SAMPLES.name.replace("samples_seam_", "samples_gsm8k_"))
    line = refused(tmp_path, capsys, other)
    assert "the samples of lm-eval's task 'gsm8k'" in line
    lines = samples()
    lines[1]["doc"] = {"question": "Janet's ducks lay 16 eggs per day.", "answer": "18"}
    path = run_files(tmp_path, lines)
    line = refused(tmp_path, capsys, path)
    assert f"{path}:2:" in line and "a sample of another task" in line
    lines = samples()
    lines[1]["doc"]["id"] = "gsm8k/1"
    assert "'gsm8k/1' is not a request of the kit" in refused(tmp_path, capsys, run_files(tmp_path, lines))


def test_a_changed_prompt_is_refused_naming_the_line_and_the_first_differing_character(tmp_path, capsys):
    lines = samples()
    line = sample(lines, "native")
    messages = chat(line)
    messages[0]["content"] = messages[0]["content"].replace("def x_or_y(", "def x_0r_y(")
    set_chat(line, messages)
    path = run_files(tmp_path, lines)
    found = refused(tmp_path, capsys, path)
    at = line["doc"]["message"].index("x_or_y") + 3
    assert f"{path}:{lines.index(line) + 1} (humaneval-001/native)" in found and f"differ at character {at}" in found


def test_a_system_message_and_a_text_prompt_are_refused(tmp_path, capsys):
    lines = samples()
    set_chat(lines[0], [{"role": "system", "content": "Be terse."}, *chat(lines[0])])
    line = refused(tmp_path, capsys, run_files(tmp_path, lines))
    assert ":1 (humaneval-001/clean)" in line and "roles system, user" in line
    lines = samples()
    lines[0]["arguments"]["gen_args_0"]["arg_0"] = lines[0]["doc"]["message"]  # no --apply_chat_template
    line = refused(tmp_path, capsys, run_files(tmp_path, lines))
    assert "not a list of chat messages" in line and "--apply_chat_template" in line


def test_a_sample_with_no_response_is_refused(tmp_path, capsys):
    for resps in ([], [[]], None):
        lines = samples()
        lines[3]["resps"] = resps
        path = run_files(tmp_path, lines)
        line = refused(tmp_path, capsys, path)
        assert f"{path}:4 (humaneval-001/boundary): no response" in line


def test_a_sample_twice_or_with_two_replies_is_refused(tmp_path, capsys):
    lines = samples()
    path = run_files(tmp_path, [*lines, lines[2]])
    line = refused(tmp_path, capsys, path)
    assert f"{path}:8 (humaneval-001/blank)" in line and "again (first in" in line
    lines[2]["resps"] = [["one", "two"]]  # a task with repeats: 2
    path = run_files(tmp_path, lines)
    line = refused(tmp_path, capsys, path)
    assert f"{path}:3 (humaneval-001/blank)" in line and "expected one text" in line


def test_lone_surrogates_in_an_id_or_a_prompt_are_refused(tmp_path, capsys):
    lines = samples()
    lines[0]["doc"]["id"] += "\udc80"
    assert "is not a request of the kit" in refused(tmp_path, capsys, run_files(tmp_path, lines))
    lines = samples()
    messages = chat(lines[0])
    messages[0]["content"] = messages[0]["content"][:5] + "\udc80" + messages[0]["content"][5:]
    lines[0]["arguments"]["gen_args_0"]["arg_0"] = [json.dumps(messages)]  # the escape, as JSON allows
    line = refused(tmp_path, capsys, run_files(tmp_path, lines))
    assert "humaneval-001/clean" in line and "differ at character 6" in line


def test_a_lone_surrogate_in_a_reply_is_unusable_as_the_runner_records_it(tmp_path, capsys):
    lines = samples()
    sample(lines, "native")["resps"][0][0] += "\udc80"  # lm-eval cannot write this; another writer could
    status, out = imported(tmp_path, run_files(tmp_path, lines))
    row = rows(out)["humaneval-001/native"]
    assert status == 0 and row.status == "unusable" and row.output.endswith("\ufffd")
    assert row.reason.startswith("the reply held 1 lone surrogate escape(s)")  # the reply's, as the runner says
    assert "ok 4, unusable 3" in capsys.readouterr().err  # and counted so


def test_a_file_short_of_its_runs_count_is_refused(tmp_path, capsys):
    """What lm-eval leaves when a reply holds a lone surrogate: its writer stops there ('Could not save sample
    results'), exits 0, and the samples file lacks that sample and the ones after it."""
    path = run_files(tmp_path, samples()[:5])
    line = refused(tmp_path, capsys, path)
    assert f"{path}: 5 sample(s), but {RESULTS.name} says lm-eval ran 7" in line and "lone surrogate" in line


def test_stop_sequences_are_refused_and_an_empty_stop_list_recorded(tmp_path, capsys):
    lines = samples()
    for line in lines:  # lm-eval's defaults: until the blank line, and the body's stop made from it
        kwargs = line["arguments"]["gen_args_0"]["arg_1"]
        kwargs["until"] = ["\n\n"]
        del kwargs["stop"], kwargs["seed"]
    path = run_files(tmp_path, lines)
    line = refused(tmp_path, capsys, path)
    assert f"{path}:1 (humaneval-001/clean): lm-eval sent the stop sequences ['\\n\\n']" in line
    for line in lines:
        line["arguments"]["gen_args_0"]["arg_1"]["until"] = []
    status, out = imported(tmp_path, run_files(tmp_path, lines))
    assert status == 0 and rows(out)["humaneval-001/clean"].request["parameters"] == {
        "max_tokens": 321, "temperature": 0.0, "stop": [], "seed": 1234}  # what lm-eval sends without the task's


def test_a_text_over_the_traces_limit_and_a_blank_one_are_unusable(tmp_path):
    from common.records import MAX_OUTPUT_CHARS

    lines = samples()
    sample(lines, "clean")["resps"] = [["x" * (MAX_OUTPUT_CHARS + 1)]]
    sample(lines, "native")["resps"] = [[" \n "]]
    status, out = imported(tmp_path, run_files(tmp_path, lines))
    found = rows(out)
    assert status == 0 and found["humaneval-001/native"].reason == "empty output"
    clean = found["humaneval-001/clean"]
    assert clean.status == "unusable" and len(clean.output) == MAX_OUTPUT_CHARS and "recorded cut" in clean.reason


def test_another_harness_an_epoch_and_another_model_are_refused(tmp_path, capsys):
    inspect_log = ROOT / "tests" / "fixtures" / "harness" / "inspect.eval"
    line = refused(tmp_path, capsys, SAMPLES, inspect_log)
    assert "(inspect, lm-eval)" in line and "one harness at a time" in line
    assert "lm-eval's samples have no epochs" in refused(tmp_path, capsys, SAMPLES,
                                                        extra=[*WITH_CONDITIONS, "--epoch", "1"])
    run = results()
    run["config"]["model_args"]["model"] = "other-model"
    other = run_files(tmp_path, run=run, name="samples_seam_2026-01-02T03-04-05.678901.jsonl", folder="other")
    assert "import one model at a time" in refused(tmp_path, capsys, SAMPLES, other)


BIG = """
import sys
sys.path.insert(0, sys.argv[1])
import pytest

import seam
status = seam.main(["import", sys.argv[2], "--out", sys.argv[3]])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))  # this program's own
print(status, int(peak.split()[1]) // 1024)
"""


def test_a_samples_file_of_half_a_gigabyte_is_read_in_bounded_memory(tmp_path):
    """128 samples of 4 MiB each (the padding in their doc, which lm-eval keeps whole): the import's memory stays
    that of one line, far below the file's size."""
    from benchmark.dataset import requests

    chosen = requests(limit=22)[:128]
    template = sample(samples(), "clean")
    padding = "x" * (4 << 20)
    folder = tmp_path / "big"
    folder.mkdir()
    path = folder / SAMPLES.name
    with open(path, "w", encoding="utf-8") as f:
        for number, request in enumerate(chosen):
            line = json.loads(json.dumps(template))
            line["doc_id"], line["doc"] = number, {"id": request.id, "message": request.message, "padding": padding}
            set_chat(line, [{"role": "user", "content": request.message}])
            f.write(json.dumps(line) + "\n")
    run = results()
    run["n-samples"]["seam"]["effective"] = len(chosen)
    (folder / RESULTS.name).write_text(json.dumps(run), encoding="utf-8")
    assert path.stat().st_size > 512 << 20
    done = subprocess.run([sys.executable, "-c", BIG, str(ROOT), str(path), str(tmp_path / "out.jsonl")],
                          capture_output=True, text=True, timeout=600)
    status, peak_mib = map(int, done.stdout.split())
    assert status == 0, done.stderr
    assert len(rows(tmp_path / "out.jsonl")) == len(chosen)
    assert peak_mib < 200, f"{peak_mib} MiB at most for a file of {path.stat().st_size >> 20} MiB"


def test_credentials_in_the_servers_url_are_not_recorded(tmp_path):
    run = results()
    run["config"]["model_args"]["base_url"] = "http://me:s3cret@127.0.0.1:9/v1/chat/completions?api_key=k3y"
    status, out = imported(tmp_path, run_files(tmp_path, run=run))
    assert status == 0
    assert {row.request["harness"]["base_url"] for row in rows(out).values()} == {
        "http://127.0.0.1:9/v1/chat/completions"}
    assert "s3cret" not in out.read_text(encoding="utf-8") and "k3y" not in out.read_text(encoding="utf-8")


def test_a_run_that_keeps_only_the_text_after_a_thinking_token_is_refused(tmp_path, capsys):
    """With think_end_token in --model_args, lm-eval keeps only the text after that token: not the server's reply."""
    run = results()
    run["config"]["model_args"]["think_end_token"] = "</think>"
    line = refused(tmp_path, capsys, run_files(tmp_path, run=run))
    assert RESULTS.name in line and "think_end_token '</think>'" in line and "not the reply the server sent" in line
    run["config"]["model_args"]["think_end_token"] = None  # think_end_token=none: nothing is cut
    assert imported(tmp_path, run_files(tmp_path, run=run))[0] == 0


def test_a_tokenizer_that_adds_its_end_of_text_as_a_stop_is_refused(tmp_path, capsys):
    """A tokenizer_backend gives lm-eval an end-of-text string, which it sends as a stop sequence unless the gen
    kwargs give `stop` (the exported task's stop: null)."""
    run = results()
    run["config"]["model_args"]["tokenizer_backend"] = "tiktoken"
    lines = samples()
    for line in lines:
        del line["arguments"]["gen_args_0"]["arg_1"]["stop"]
    path = run_files(tmp_path, lines, run=run)
    line = refused(tmp_path, capsys, path)
    assert f"{path}:1 (humaneval-001/clean)" in line and "tokenizer_backend 'tiktoken'" in line
    assert imported(tmp_path, run_files(tmp_path, run=run))[0] == 0  # with the task's stop: null, no stop is sent
    run["config"]["model_args"]["tokenizer_backend"] = "none"
    assert imported(tmp_path, run_files(tmp_path, lines, run=run), name="none.jsonl")[0] == 0


@pytest.mark.parametrize(("name", "value"), [("stop", 5), ("stop", {}), ("until", 5), ("until", [1]),
                                             ("stop", [["\n"]])])
def test_stop_sequences_of_another_type_are_refused(tmp_path, capsys, name, value):
    """lm-eval reads `until` and `stop` as a text or a list of texts: anything else is no file it wrote, and would
    otherwise be read as no stop sequence."""
    lines = samples()
    lines[2]["arguments"]["gen_args_0"]["arg_1"][name] = value
    path = run_files(tmp_path, lines)
    line = refused(tmp_path, capsys, path)
    assert f"{path}:3 (humaneval-001/blank): gen kwargs' {name} is" in line and "expected stop sequences" in line
