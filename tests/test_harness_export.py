"""`seam.py export`: the same selection as `seam.py prompts`, each request as the kit's runner sends it (the batch
bodies are the runner's --dry-run bodies byte for byte), the task file and READMEs as documented, and mistakes
refused in one line."""

from __future__ import annotations

import ast
import contextlib
import io
import json
from pathlib import Path

import pytest

import seam

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "conditions" / "example.toml"
SELECTIONS = [["--first", "2"], ["--sources", "austen,pyfaq", "--only", "clean,native", "--first", "3"],
              ["--cluster-ids", "humaneval-011,austen-007", "--only", "blank"],
              ["--conditions", str(EXAMPLE), "--only", "xml-tags", "--first", "2"]]


def stdout_of(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert seam.main(argv) == 0
    return out.getvalue()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("selection", SELECTIONS, ids=["first", "sources-only", "cluster-ids", "condition-file"])
def test_the_inspect_dataset_holds_the_prompts_of_the_same_selection(tmp_path, selection):
    assert seam.main(["export", "--to", "inspect", "--out", str(tmp_path), *selection]) == 0
    prompts = [json.loads(line) for line in stdout_of(["prompts", *selection]).splitlines()]
    dataset = lines(tmp_path / "seam.jsonl")
    assert [(row["id"], row["input"]) for row in dataset] == [(row["id"], row["message"]) for row in prompts]
    assert [row["metadata"]["benchmark_sha256"] for row in dataset] == [row["benchmark_sha256"] for row in prompts]


@pytest.mark.parametrize("selection", SELECTIONS[:2], ids=["first", "sources"])
def test_the_batch_bodies_are_the_runners_dry_run_bodies(tmp_path, selection):
    assert seam.main(["export", "--to", "openai-batch", "--out", str(tmp_path), "--model", "gpt-x",
                      "--max-tokens", "777", *selection]) == 0
    config = tmp_path / "gpt-x.toml"
    config.write_text('name = "gpt-x"\nprovider = "openai"\nmodel = "gpt-x"\ntemperature = 0.0\nmax_tokens = 777\n',
                      encoding="utf-8")
    dry = [json.loads(line) for line in stdout_of(["run", str(config), "--dry-run", *selection]).splitlines()]
    exported = (tmp_path / "batch_input.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["custom_id"] for line in exported] == [row["id"] for row in dry]
    for line, row in zip(exported, dry, strict=True):
        assert json.loads(line) == {"custom_id": row["id"], "method": "POST", "url": "/v1/chat/completions",
                                    "body": row["body"]}
        assert set(row["body"]) == {"model", "messages", "max_tokens", "temperature"}
        assert len(row["body"]["messages"]) == 1 and row["body"]["messages"][0]["role"] == "user"


def test_max_completion_tokens_names_the_limit_as_such_models_want_it(tmp_path):
    assert seam.main(["export", "--to", "openai-batch", "--out", str(tmp_path), "--model", "o-x", "--first", "1",
                      "--max-tokens-field", "max_completion_tokens"]) == 0
    body = lines(tmp_path / "batch_input.jsonl")[0]["body"]
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body


def test_the_task_file_sends_one_message_at_temperature_0_with_the_limit_and_nothing_else(tmp_path):
    assert seam.main(["export", "--to", "inspect", "--out", str(tmp_path), "--first", "1", "--max-tokens", "321"]) == 0
    text = (tmp_path / "seam_task.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    calls = {node.func.id: node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name)}
    config = {kw.arg: ast.literal_eval(kw.value) for kw in calls["GenerateConfig"].keywords}
    assert config == {"temperature": 0, "max_tokens": 321}
    assert {kw.arg for kw in calls["Task"].keywords} == {"dataset", "solver", "config", "epochs", "fail_on_error"}
    assert [node.name for node in tree.body if isinstance(node, ast.FunctionDef)] == ["record_to_sample", "seam"]
    assert "system_message" not in text and "stop_seqs" not in text and "scorer" not in text.split('"""')[2]
    assert "from inspect_ai.dataset import Sample, json_dataset" in text


def test_the_readmes_say_the_command_that_runs_each_and_the_traps(tmp_path):
    assert seam.main(["export", "--to", "inspect", "--out", str(tmp_path / "i"), "--first", "1",
                      "--model", "qwen"]) == 0
    readme = (tmp_path / "i" / "README.md").read_text(encoding="utf-8")
    assert "inspect eval seam_task.py --model openai-api/local/qwen" in readme
    assert "-M responses_api=false" in readme and "--max-connections 1" in readme
    assert f"python seam.py import {tmp_path / 'i'}/logs/*.eval --out runs/qwen.jsonl" in readme
    assert "--model-base-url http://127.0.0.1:8080/v1 --max-connections 1" in readme
    assert seam.main(["export", "--to", "inspect", "--out", str(tmp_path / "j"), "--first", "1", "--model", "qwen",
                      "--base-url", "http://127.0.0.1:9001/v1/"]) == 0  # --base-url is the command's server
    readme = (tmp_path / "j" / "README.md").read_text(encoding="utf-8")
    assert "--model-base-url http://127.0.0.1:9001/v1 --max-connections 1" in readme and ":8080" not in readme
    assert seam.main(["export", "--to", "openai-batch", "--out", str(tmp_path / "b"), "--first", "1",
                      "--model", "gpt-x"]) == 0
    readme = (tmp_path / "b" / "README.md").read_text(encoding="utf-8")
    assert "/v1/batches" in readme and f"python seam.py import {tmp_path / 'b'}/batch_input.jsonl" in readme


def test_other_files_in_the_folder_are_kept(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "old.eval").write_bytes(b"kept")
    assert seam.main(["export", "--to", "inspect", "--out", str(tmp_path), "--first", "1"]) == 0
    assert (tmp_path / "logs" / "old.eval").read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "logs", "seam.jsonl", "seam_task.py"]


@pytest.mark.parametrize(("argv", "said"), [
    (["--to", "openai-batch"], "needs --model NAME"),
    (["--to", "inspect", "--only", "nosuch"], "nosuch"),
    (["--to", "inspect", "--sources", "nosuch"], "nosuch"),
    (["--to", "openai-batch", "--model", "m", "--base-url", "http://127.0.0.1:1/v1"], "--base-url: a batch goes to "
                                                                                      "OpenAI's Batch API"),
    (["--to", "inspect", "--max-tokens-field", "max_completion_tokens"], "only --to openai-batch names"),
    (["--to", "inspect", "--model", "my\nmodel"], "a line break"),
    (["--to", "openai-batch", "--model", "gpt\r\n"], "a line break"),
    (["--to", "inspect", "--base-url", "ftp://x/v1"], "--base-url must be an http:// or https:// URL"),
], ids=["batch-without-model", "unknown-condition", "unknown-source", "batch-base-url", "inspect-field",
        "inspect-line-break", "batch-line-break", "inspect-bad-url"])
def test_mistakes_are_one_line_and_nothing_written(tmp_path, capsys, argv, said):
    assert seam.main(["export", *argv, "--out", str(tmp_path / "x"), "--first", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and not (tmp_path / "x").exists()


def test_an_out_inside_data_is_refused(capsys):
    inside = ROOT / "data" / "x-harness-test"
    try:
        assert seam.main(["export", "--to", "inspect", "--out", str(inside), "--first", "1"]) == 2
        assert "inside" in capsys.readouterr().err and not inside.exists()
    finally:
        if inside.is_dir():  # should it ever be written, never left in the release
            for path in inside.iterdir():
                path.unlink()
            inside.rmdir()


def test_a_condition_files_requests_import_with_that_file_only(tmp_path, capsys):
    """The export of a condition file's conditions, answered by hand-made Batch output lines: the import refuses
    them without the file (their ids are no built-in request) and reads them with it."""
    assert seam.main(["export", "--to", "openai-batch", "--out", str(tmp_path), "--model", "m", "--first", "1",
                      "--conditions", str(EXAMPLE), "--only", "xml-tags,clean"]) == 0
    output = tmp_path / "output.jsonl"
    output.write_text("".join(json.dumps({"id": f"r{i}", "custom_id": line["custom_id"], "error": None, "response": {
        "status_code": 200, "request_id": f"q{i}", "body": {
            "id": f"c{i}", "object": "chat.completion", "created": 1767322800, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1}}}}) + "\n"
        for i, line in enumerate(lines(tmp_path / "batch_input.jsonl"))), encoding="utf-8")
    argv = ["import", str(tmp_path / "batch_input.jsonl"), str(output), "--out", str(tmp_path / "t.jsonl")]
    capsys.readouterr()
    assert seam.main(argv) == 2
    err = capsys.readouterr().err
    assert "is not a request of the kit" in err and "--conditions FILE" in err
    assert seam.main([*argv, "--conditions", str(EXAMPLE)]) == 0
    rows = lines(tmp_path / "t.jsonl")
    assert sorted(row["condition"] for row in rows) == ["clean", "xml-tags"] and rows[0]["started_at"] == \
        "2026-01-02T03:00:00.000Z"
