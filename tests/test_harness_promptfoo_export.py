"""`seam.py export --to promptfoo`: the tests hold the same selection as `seam.py prompts`, each message exactly; the
config asks one model at one server with the runner's parameters and the env that keeps messages unrendered;
mistakes are refused in one line. (What promptfoo then sends is tests/test_harness_promptfoo.py's, with the real
promptfoo.)"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

import seam
from harness import promptfoo_task

SELECTION = ["--sources", "austen,pyfaq", "--only", "clean,native", "--first", "3"]


def exported(tmp_path, *extra: str) -> int:
    return seam.main(["export", "--to", "promptfoo", "--out", str(tmp_path), *extra])


def test_the_tests_hold_the_prompts_of_the_same_selection(tmp_path):
    assert exported(tmp_path, "--model", "m", *SELECTION) == 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert seam.main(["prompts", *SELECTION]) == 0
    prompts = [json.loads(line) for line in out.getvalue().splitlines()]
    tests = [json.loads(line) for line in (tmp_path / "tests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [test["vars"] for test in tests] == [{"id": row["id"], "message": row["message"]} for row in prompts]
    assert {test["metadata"]["condition"] for test in tests} == {"clean", "native"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "promptfooconfig.yaml", "seam_prompt.cjs",
                                                          "tests.jsonl"]


def test_the_config_sends_one_message_at_temperature_0_with_the_limit_and_nothing_else(tmp_path):
    yaml = pytest.importorskip("yaml")
    model, url = 'qwen "2.5": coder', "http://127.0.0.1:8081/v1/"
    assert exported(tmp_path, "--first", "1", "--max-tokens", "321", "--model", model, "--base-url", url) == 0
    config = yaml.safe_load((tmp_path / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    assert config["prompts"] == ["file://seam_prompt.cjs"] and config["tests"] == "file://tests.jsonl"
    (provider,) = config["providers"]
    assert provider == {"id": f"openai:chat:{model}", "config": {
        "apiBaseUrl": "http://127.0.0.1:8081/v1", "apiKeyRequired": False, "showThinking": False, "max_tokens": 321,
        "passthrough": {"max_tokens": 321, "temperature": 0}}}
    assert config["env"] == {"PROMPTFOO_DISABLE_TEMPLATING": "true", "OPENAI_API_HOST": "", "OPENAI_TOP_P": "",
                             "OPENAI_PRESENCE_PENALTY": "", "OPENAI_FREQUENCY_PENALTY": ""}
    assert config["evaluateOptions"] == {"maxConcurrency": 1} and "defaultTest" not in config
    prompt = (tmp_path / "seam_prompt.cjs").read_text(encoding="utf-8")
    assert 'return [...preceding, { role: "user", content: vars.message }];' in prompt  # preceding: a condition's
    assert 'role: "system"' not in prompt  # no system prompt of its own
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert f"promptfoo eval -c {tmp_path}/promptfooconfig.yaml -o {tmp_path}/out.json -j 1 --no-cache" in readme
    assert f"python seam.py import {tmp_path}/out.json --out runs/qwen--2.5---coder.jsonl" in readme


def test_the_default_server_and_limit(tmp_path):
    assert exported(tmp_path, "--first", "1", "--model", "m") == 0
    text = (tmp_path / "promptfooconfig.yaml").read_text(encoding="utf-8")
    assert f'apiBaseUrl: "{promptfoo_task.DEFAULT_BASE_URL}"' in text and "max_tokens: 4096" in text


@pytest.mark.parametrize(("extra", "said"), [
    ([], "--to promptfoo needs --model NAME"),
    (["--model", "m", "--base-url", "ftp://host/v1"], "--base-url must be an http:// or https:// URL"),
    (["--model", "m", "--base-url", "http://user:pw@host/v1"], "must not hold credentials"),
    (["--model", "m{{ 7*7 }}x"], "holds nunjucks syntax"),  # promptfoo would send the model "m49x"
    (["--model", "m{% if 1 %}x{% endif %}"], "holds nunjucks syntax"),
    (["--model", "m{# c #}"], "holds nunjucks syntax"),
    (["--model", "my\nmodel"], "a line break"),
    (["--model", "m", "--max-tokens-field", "max_tokens"], "only --to openai-batch names the limit's field"),
])
def test_mistakes_are_refused_in_one_line(tmp_path, capsys, extra, said):
    assert exported(tmp_path / "out", "--first", "1", *extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and not (tmp_path / "out").exists()
