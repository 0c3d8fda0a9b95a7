"""`seam.py export --to lm-eval`: the dataset holds the same selection as `seam.py prompts`, the task YAML sets
every lm-eval default that would change a request (read as YAML where PyYAML is installed, as lm-eval reads it),
the README's command is the one tests/test_harness_lmeval.py runs, and mistakes are one line. Needs no lm-eval.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import pytest

import seam

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "conditions" / "example.toml"
SELECTIONS = [["--first", "2"], ["--sources", "austen,pyfaq", "--only", "clean,native", "--first", "3"],
              ["--conditions", str(EXAMPLE), "--only", "xml-tags", "--first", "2"]]
KEYS = ["id", "message", "cluster", "condition", "source", "benchmark_sha256", "message_sha256"]


def stdout_of(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert seam.main(argv) == 0
    return out.getvalue()


@pytest.mark.parametrize("selection", SELECTIONS, ids=["first", "sources-only", "condition-file"])
def test_the_dataset_holds_the_prompts_of_the_same_selection(tmp_path, selection):
    assert seam.main(["export", "--to", "lm-eval", "--out", str(tmp_path), *selection]) == 0
    prompts = [json.loads(line) for line in stdout_of(["prompts", *selection]).splitlines()]
    rows = [json.loads(line) for line in (tmp_path / "seam_requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [sorted(row) for row in rows] == [sorted(KEYS)] * len(prompts)
    assert [{key: row[key] for key in KEYS[:-1]} for row in rows] == [{key: p[key] for key in KEYS[:-1]}
                                                                       for p in prompts]
    from common.files import sha256_text

    assert [row["message_sha256"] for row in rows] == [sha256_text(p["message"]) for p in prompts]


def test_the_task_sets_every_default_that_would_change_a_request(tmp_path):
    out = tmp_path / "a folder's \"name\" with: yaml"  # quoted in the task as YAML reads it
    assert seam.main(["export", "--to", "lm-eval", "--out", str(out), "--first", "1", "--max-tokens", "777"]) == 0
    text = (out / "seam.yaml").read_text(encoding="utf-8")
    for line in ("task: seam", "output_type: generate_until", "doc_to_text: message  #", 'description: ""',
                 "num_fewshot: 0", "  until: []  #", "  max_gen_toks: 777  #", "  temperature: 0.0",
                 "  stop: null  #", "  seed: null  #", "  - metric: bypass  #"):
        assert f"\n{line}" in text, line
    if importlib.util.find_spec("yaml") is None:
        pytest.skip("PyYAML is not installed: the task was checked as text only")
    import yaml

    task = yaml.safe_load(text)
    assert task["dataset_kwargs"] == {"data_files": {"test": str((out / "seam_requests.jsonl").resolve())}}
    assert task["doc_to_text"] == "message" and task["test_split"] == "test"
    assert task["generation_kwargs"] == {"until": [], "max_gen_toks": 777, "temperature": 0.0, "do_sample": False,
                                         "stop": None, "seed": None}


def test_the_readme_runs_local_chat_completions_against_the_server_and_imports_after(tmp_path):
    assert seam.main(["export", "--to", "lm-eval", "--out", str(tmp_path), "--first", "1", "--model", "qwen/2.5",
                      "--base-url", "http://127.0.0.1:9000/v1", "--conditions", str(EXAMPLE)]) == 0
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "lm_eval --model local-chat-completions" in readme
    assert ("""--model_args 'model="qwen/2.5",base_url=http://127.0.0.1:9000/v1/chat/completions,num_concurrent=1'"""
            in readme)  # the model double-quoted: lm-eval reads it as a text whatever it is (1.5, true, None)
    assert f"--tasks seam --include_path {tmp_path} --apply_chat_template --log_samples --output_path " \
           f"{tmp_path}/results" in readme
    assert f"python seam.py import {tmp_path}/results/*/samples_seam_*.jsonl --out runs/qwen-2.5.jsonl --model " \
           f"qwen-2.5 --conditions {EXAMPLE}" in readme
    assert "python seam.py compare runs/qwen-2.5.jsonl" in readme


@pytest.mark.parametrize(("extra", "said"), [
    (["--base-url", "http://127.0.0.1:8080/v1,x"], "holds a comma"),
    (["--base-url", "ftp://127.0.0.1/v1"], "--base-url must be an http:// or https:// URL"),
    (["--model", "qwen,7b"], "holds ','"),  # lm-eval's --model_args splits at commas and '='
    (["--model", "a=b"], "holds '='"),
    (["--model", 'say "hi"'], "holds '\"'"),
    (["--model", "a\\b"], "holds '\\\\'"),
    (["--model", "my\nmodel"], "a line break"),
    (["--model", "m\r"], "a line break"),
    (["--max-tokens-field", "max_completion_tokens"], "only --to openai-batch names the limit's field"),
])
def test_mistakes_are_one_line(tmp_path, capsys, extra, said):
    assert seam.main(["export", "--to", "lm-eval", "--out", str(tmp_path / "x"), "--first", "1", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
    assert not (tmp_path / "x").exists()


def test_a_folder_whose_name_holds_glob_characters_is_named_as_it_is(tmp_path):
    """lm-eval's `datasets` reads data_files as a glob pattern: `lm[1]` would match a folder `lm1`, and the task would
    load nothing. The path is escaped (tests/test_harness_lmeval.py runs the real lm-eval on such a folder)."""
    import glob

    out = tmp_path / "lm[1] *?"
    (tmp_path / "lm1 xx").mkdir()
    (tmp_path / "lm1 xx" / "seam_requests.jsonl").write_text("{}\n", encoding="utf-8")  # what the glob would match
    assert seam.main(["export", "--to", "lm-eval", "--out", str(out), "--first", "1"]) == 0
    line = next(line for line in (out / "seam.yaml").read_text(encoding="utf-8").splitlines() if "test: " in line)
    pattern = json.loads(line.split("test: ", 1)[1])  # a YAML double-quoted string is JSON's
    assert glob.glob(pattern) == [str((out / "seam_requests.jsonl").resolve())]
