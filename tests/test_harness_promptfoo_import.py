"""`seam.py import` of promptfoo's output, on the outputs a real promptfoo 0.118.0 run wrote (tests/fixtures/harness/
promptfoo/, made by tests/test_harness_promptfoo.py: one cluster, six requests answered by the fake server with an
edit, an edit cut by the output limit, a filter, an empty reply, an HTTP 400 and an edit; and one request of a
condition whose message holds nunjucks syntax), and on outputs made from them to be wrong: cut short, another
eval's, a changed prompt, a system message, a result with no response, a request twice (a --repeat run, or two
outputs), lone surrogates, two models, another provider, stop sequences, a latency that is no duration, a .json
that is neither harness's, and one over the size read whole. Each wrong input is one line on stderr (exit 2)
naming the file and the result, and nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import seam
from common.records import TraceRow, read
from harness import jsonlog, promptfoo_log

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness"
OUTPUT, NUNJUCKS_OUTPUT = FIXTURES / "promptfoo" / "out.json", FIXTURES / "promptfoo" / "nunjucks.json"
STATUSES = {"humaneval-001/clean": "ok", "humaneval-001/newline": "unusable", "humaneval-001/blank": "unusable",
            "humaneval-001/boundary": "unusable", "humaneval-001/mitigation": "failed", "humaneval-001/native": "ok"}


def imported(tmp_path, *logs, extra=(), name="out.jsonl"):
    out = tmp_path / name
    return seam.main(["import", *map(str, logs), "--out", str(out), *extra]), out


def refused(tmp_path, capsys, *logs, extra=()) -> str:
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


def rows(path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def output() -> dict:
    return json.loads(OUTPUT.read_text(encoding="utf-8"))


def results(document: dict) -> list[dict]:
    return document["results"]["results"]


def result(document: dict, rid: str) -> dict:
    return next(r for r in results(document) if r["vars"]["id"] == rid)


def written(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")  # ensure_ascii: lone surrogates as escapes
    return path


def test_the_output_imports_as_the_runner_records_it(tmp_path, capsys):
    status, out = imported(tmp_path, OUTPUT)
    assert status == 0
    found = rows(out)
    assert {rid: row.status for rid, row in found.items()} == STATUSES
    assert found["humaneval-001/newline"].reason == "stopped by the output limit (finish_reason=length)"
    assert found["humaneval-001/newline"].finish_reason == "length"
    assert found["humaneval-001/blank"].reason == ("blocked by a content filter or refused "
                                                   "(finish_reason=content_filter)")
    assert found["humaneval-001/boundary"].reason == "empty output"
    mitigation = found["humaneval-001/mitigation"]
    assert mitigation.reason.startswith("promptfoo: API error: 400 Bad Request")
    assert mitigation.attempts[0].http_status == 400 and mitigation.output is None
    clean = found["humaneval-001/clean"]
    assert clean.output.startswith("EDITED<Add a docstring") and clean.model == "fake-model"
    assert clean.usage == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert (clean.served_model, clean.response_id, clean.request["provider"], clean.request["url"]) == (
        None, None, None, None)  # promptfoo keeps no chat completion: its reading of one was judged
    harness = clean.request["harness"]
    assert (harness["name"], harness["version"], harness["log"], harness["model"]) == (
        "promptfoo", "0.118.0", "out.json", "openai:chat:fake-model")
    assert clean.request["parameters"] == {"max_tokens": 256, "temperature": 0}
    assert clean.started_at.endswith("Z") and clean.attempts[0].latency_s is not None
    assert capsys.readouterr().err.strip().endswith(
        "from 1 promptfoo 0.118.0 log(s): ok 2, unusable 3 (1 stopped by the output limit), failed 1")


def test_the_prompt_sent_is_read_not_the_variables_promptfoo_recorded(tmp_path):
    """promptfoo records the variables after it substituted {{message}} inside them (and stripped a final newline):
    the nunjucks condition's recorded message is not what was sent, and the import checks what was sent."""
    from benchmark import conditions
    from benchmark.dataset import requests

    document = json.loads(NUNJUCKS_OUTPUT.read_text(encoding="utf-8"))
    (only,) = results(document)
    file = NUNJUCKS_OUTPUT.with_suffix(".toml")  # the condition file it was exported with
    message = next(r.message for r in requests(limit=1, defined=conditions.load(str(file)))
                   if r.condition == "nunjucks")
    assert only["vars"]["message"] != message and json.loads(only["prompt"]["raw"])[0]["content"] == message
    status, out = imported(tmp_path, NUNJUCKS_OUTPUT, extra=["--conditions", str(file)])
    (row,) = rows(out).values()
    assert status == 0 and row.status == "ok" and row.output == f"EDITED<{message}>"


def test_model_names_a_model_the_output_does_not(tmp_path):
    status, out = imported(tmp_path, OUTPUT, extra=["--model", "my-model"])
    assert status == 0 and {row.model for row in rows(out).values()} == {"my-model"}


def test_an_output_cut_short_is_refused(tmp_path, capsys):
    cut = tmp_path / "cut.json"
    cut.write_bytes(OUTPUT.read_bytes()[: OUTPUT.stat().st_size // 2])
    line = refused(tmp_path, capsys, cut)
    assert str(cut) in line and "not JSON" in line and "cut short or damaged" in line


def test_the_output_of_another_eval_is_refused(tmp_path, capsys):
    document = output()
    del result(document, "humaneval-001/blank")["vars"]["id"]
    line = refused(tmp_path, capsys, written(tmp_path / "other.json", document))
    assert "results[2]" in line and "vars.id" in line and "not an eval of seam.py export's promptfoo config" in line
    line = refused(tmp_path, capsys, written(tmp_path / "shape.json", {"evalId": "x", "results": []}))
    assert "or promptfoo's output (an object with evalId and results.results" in line


def test_a_changed_prompt_is_refused_naming_the_result_and_the_first_differing_character(tmp_path, capsys):
    document = output()
    changed = result(document, "humaneval-001/native")
    changed["prompt"]["raw"] = changed["prompt"]["raw"].replace("def x_or_y(", "def x_0r_y(")
    from benchmark.dataset import requests

    message = next(r.message for r in requests(limit=1))
    at = message.index("x_or_y") + 3  # 1-based: the "o"
    line = refused(tmp_path, capsys, written(tmp_path / "changed.json", document))
    assert "results[5]" in line and "humaneval-001/native" in line and f"differ at character {at}" in line


def test_a_prompt_rendered_from_a_template_is_refused(tmp_path, capsys):
    """What promptfoo sends for a template prompt (text, not the function's JSON) is read as one user message: the
    import refuses it when promptfoo rendered something in it (here a trailing part lost)."""
    document = output()
    changed = result(document, "humaneval-001/clean")
    changed["prompt"]["raw"] = json.loads(changed["prompt"]["raw"])[0]["content"][:-3]
    line = refused(tmp_path, capsys, written(tmp_path / "template.json", document))
    assert "results[0]" in line and "is not the kit's message" in line


def test_a_system_message_is_refused(tmp_path, capsys):
    document = output()
    for one in results(document):
        one["prompt"]["raw"] = json.dumps([{"role": "system", "content": "Be terse."},
                                           *json.loads(one["prompt"]["raw"])])
    line = refused(tmp_path, capsys, written(tmp_path / "system.json", document))
    assert "roles system, user" in line and "no system prompt" in line


def test_a_result_with_no_response_and_no_error_is_refused(tmp_path, capsys):
    document = output()
    unfinished = result(document, "humaneval-001/clean")
    del unfinished["response"]
    unfinished.pop("error", None)
    line = refused(tmp_path, capsys, written(tmp_path / "unfinished.json", document))
    assert "results[0] (humaneval-001/clean)" in line and "no response and no error" in line


def test_a_request_twice_is_refused(tmp_path, capsys):
    document = output()
    results(document).append(json.loads(json.dumps(results(document)[1])))  # what --repeat 2 records
    line = refused(tmp_path, capsys, written(tmp_path / "repeat.json", document))
    assert "results[6]" in line and "again (first at results[1])" in line and "--repeat" in line
    line = refused(tmp_path, capsys, OUTPUT, written(tmp_path / "copy.json", output()))
    assert "again (first in" in line and "each request is imported once" in line


def test_lone_surrogates_in_an_id_or_a_prompt_are_refused(tmp_path, capsys):
    document = output()
    results(document)[0]["vars"]["id"] += "\udc80"
    assert "is not a request of the kit" in refused(tmp_path, capsys, written(tmp_path / "id.json", document))
    document = output()
    sent = result(document, "humaneval-001/clean")["prompt"]
    messages = json.loads(sent["raw"])
    messages[0]["content"] = messages[0]["content"][:5] + "\udc80" + messages[0]["content"][5:]
    sent["raw"] = json.dumps(messages)
    line = refused(tmp_path, capsys, written(tmp_path / "prompt.json", document))
    assert "humaneval-001/clean" in line and "differ at character 6" in line


def test_a_lone_surrogate_in_a_reply_is_unusable_as_the_runner_records_it(tmp_path):
    document = output()
    result(document, "humaneval-001/native")["response"]["output"] += "\udc80"
    status, out = imported(tmp_path, written(tmp_path / "reply.json", document))
    row = rows(out)["humaneval-001/native"]
    assert status == 0 and row.status == "unusable" and row.output.endswith("\ufffd")
    assert "1 lone surrogate escape(s)" in row.reason


def test_a_refusal_a_null_output_and_an_answer_from_the_cache(tmp_path):
    document = output()
    refusal = result(document, "humaneval-001/clean")["response"]
    refusal.update(output="I can't help with that.", isRefusal=True)
    result(document, "humaneval-001/native")["response"].pop("output")  # content null: promptfoo says "No output"
    cached = result(document, "humaneval-001/newline")["response"]
    cached.update(cached=True, tokenUsage={"cached": 15, "total": 15})
    status, out = imported(tmp_path, written(tmp_path / "kinds.json", document))
    found = rows(out)
    assert status == 0
    clean = found["humaneval-001/clean"]
    assert clean.status == "unusable" and clean.output is None
    assert clean.reason == "blocked by a content filter or refused (refusal: I can't help with that.)"
    assert (found["humaneval-001/native"].status, found["humaneval-001/native"].reason) == ("unusable", "empty output")
    assert found["humaneval-001/newline"].usage is None  # no counts for an answer from promptfoo's cache


def test_two_models_and_an_epoch_are_refused(tmp_path, capsys):
    document = output()
    result(document, "humaneval-001/native")["provider"] = {"id": "openai:chat:other-model", "label": ""}
    line = refused(tmp_path, capsys, written(tmp_path / "two.json", document))
    assert "results[5]" in line and "'openai:chat:other-model'" in line and "one model at a time" in line
    assert "have no epochs" in refused(tmp_path, capsys, OUTPUT, extra=["--epoch", "1"])


def test_an_output_over_the_bound_is_refused_unread(tmp_path, capsys):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.write(b'{\n  "evalId": "eval-x",\n')
        f.truncate(promptfoo_log.MAX_OUTPUT_BYTES + 1)  # sparse: nothing is read to refuse it
    line = refused(tmp_path, capsys, huge)
    assert str(huge) in line and "a promptfoo output is read whole" in line
    assert f"{promptfoo_log.MAX_OUTPUT_BYTES:,} bytes" in line and "--first" in line


def test_an_inspect_log_is_told_apart_by_content(tmp_path, capsys):
    """Both are .json: an inspect log still imports as one, and with a promptfoo output it is two harnesses."""
    inspect = FIXTURES / "inspect.json"
    assert (jsonlog.kind(inspect), jsonlog.kind(OUTPUT)) == ("inspect", "promptfoo")
    renamed = tmp_path / "logs" / "out.json"
    renamed.parent.mkdir()
    renamed.write_bytes(inspect.read_bytes())
    status, out = imported(tmp_path, renamed)
    assert status == 0 and {row.request["harness"]["name"] for row in rows(out).values()} == {"inspect_ai"}
    out.unlink()
    assert "two harnesses or more (inspect, promptfoo)" in refused(tmp_path, capsys, OUTPUT, inspect)


@pytest.mark.parametrize(("text", "said"), [("[1, 2]", "JSON but no list of chat messages"),
                                            ('"just text"', "JSON but no list of chat messages"),
                                            ("", "is not the kit's message")])
def test_a_prompt_that_is_no_list_of_messages_is_refused(tmp_path, capsys, text, said):
    document = output()
    result(document, "humaneval-001/clean")["prompt"]["raw"] = text
    line = refused(tmp_path, capsys, written(tmp_path / "raw.json", document))
    assert "results[0]" in line and said in line


def test_the_parameters_are_the_providers_settings_as_promptfoo_sends_them(tmp_path):
    """Without the export's passthrough, promptfoo leaves a temperature of 0 out of the body."""
    document = output()
    (provider,) = document["config"]["providers"]
    provider["config"] = {"apiBaseUrl": "http://127.0.0.1:1/v1", "max_tokens": 100, "temperature": 0, "seed": 7}
    status, out = imported(tmp_path, written(tmp_path / "settings.json", document))
    assert status == 0
    assert [row.request["parameters"] for row in rows(out).values()] == [{"max_tokens": 100, "seed": 7}] * 6


@pytest.mark.parametrize("where", ["config", "passthrough"])
def test_stop_sequences_are_refused(tmp_path, capsys, where):
    """A SEAM request has no stop sequences: replies cut at one are not the runner's (as the lm-eval route)."""
    document = output()
    (provider,) = document["config"]["providers"]
    settings = provider["config"] if where == "config" else provider["config"]["passthrough"]
    settings["stop"] = ["\n\n"]
    line = refused(tmp_path, capsys, written(tmp_path / "stop.json", document))
    assert "results[0]" in line and "the stop sequences ['\\n\\n']" in line and "never sends" in line


@pytest.mark.parametrize("provider", [{"id": "echo"}, "openai:completion:fake-model", {"id": "openai:chat:"},
                                      {"id": "anthropic:messages:claude"}])
def test_providers_other_than_openai_chat_are_refused(tmp_path, capsys, provider):
    """The body is known for promptfoo's openai:chat: provider only (the exported config's)."""
    document = output()
    for one in results(document):
        one["provider"] = provider
    line = refused(tmp_path, capsys, written(tmp_path / "echo.json", document))
    assert "results[0]" in line and "openai:chat:MODEL providers only" in line and "request body" in line


def test_a_provider_id_holding_nunjucks_is_refused(tmp_path, capsys):
    """promptfoo renders {{ }} in a provider's id before templating is turned off: the body named another model."""
    document = output()
    for one in results(document):
        one["provider"] = {"id": "openai:chat:m{{ 7*7 }}x", "label": ""}
    line = refused(tmp_path, capsys, written(tmp_path / "nunjucks.json", document))
    assert "results[0]" in line and "nunjucks" in line and "another model" in line


@pytest.mark.parametrize("latency", ["1e400", "-1e400", "NaN", "-5", '"47"', "true"])
def test_a_latency_that_is_no_duration_is_recorded_as_unknown(tmp_path, latency):
    """Infinity and NaN (which Python's JSON reads) are no JSON a trace reader takes, nor is -5 a duration: each is
    recorded as unknown, and the trace written reads back."""
    text = json.dumps(output(), indent=2)
    text = text.replace('"latencyMs": ', f'"latencyMs": {latency}, "was": ', 1)
    status, out = imported(tmp_path, written_text(tmp_path / "latency.json", text))
    assert status == 0
    assert rows(out)["humaneval-001/clean"].attempts[0].latency_s is None  # read back by the kit's own reader
    assert rows(out)["humaneval-001/native"].attempts[0].latency_s is not None


def test_text_parts_are_joined_as_the_runner_joins_them(tmp_path):
    """A server may send a message's content as text parts: promptfoo keeps them as its output, the runner joins
    their texts (other parts left out)."""
    document = output()
    result(document, "humaneval-001/clean")["response"]["output"] = [
        {"type": "text", "text": "EDITED<"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text",
                                                                                               "text": "done>"}]
    result(document, "humaneval-001/native")["response"]["output"] = {"role": "assistant", "tool_calls": [],
                                                                      "content": [{"type": "text", "text": "hi"}]}
    status, out = imported(tmp_path, written(tmp_path / "parts.json", document))
    found = rows(out)
    assert status == 0
    assert (found["humaneval-001/clean"].status, found["humaneval-001/clean"].output) == ("ok", "EDITED<done>")
    assert (found["humaneval-001/native"].status, found["humaneval-001/native"].output) == ("ok", "hi")


@pytest.mark.parametrize(("tokens", "usage"), [
    ({"prompt": 10, "completion": 5}, {"prompt_tokens": 10, "completion_tokens": 5}),  # the server sent no total
    ({"total": 15, "prompt": 0, "completion": 5}, {"completion_tokens": 5, "total_tokens": 15}),  # nor a prompt count
    ({"total": 15, "prompt": 10, "completion": 5, "completionDetails": {"reasoning": 3}},
     {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "completion_tokens_details": {
         "reasoning_tokens": 3}}),
    ({"total": "15", "prompt": -1, "completion": True}, None),
    ({}, None),
])
def test_token_counts_are_the_ones_promptfoo_kept(tmp_path, tokens, usage):
    """promptfoo writes `prompt: data.usage.prompt_tokens || 0` and leaves `total` out when the server sent none:
    a prompt count of 0 is none, and a missing total leaves the other counts."""
    document = output()
    result(document, "humaneval-001/clean")["response"]["tokenUsage"] = tokens
    status, out = imported(tmp_path, written(tmp_path / "usage.json", document))
    assert status == 0 and rows(out)["humaneval-001/clean"].usage == usage


@pytest.mark.parametrize(("data", "said"), [(b"", "not JSON"), (b"[]", "an empty array"), (b"{}", "an empty object"),
                                            (b'{"results": [], "x": 1}', "an object with the keys 'results', 'x'"),
                                            (b"\xef\xbb\xbf" + OUTPUT.read_bytes(), "BOM"),
                                            (b'{"evalId": "x", "version": 2, "eval": {}, "samples": []}',
                                             "expected an inspect log")],
                         ids=["empty", "empty-array", "empty-object", "other-object", "bom", "evalid-first"])
def test_a_json_that_is_neither_harnesss_names_both(tmp_path, capsys, data, said):
    """A .json is an inspect log or a promptfoo output: one that is neither says what each must hold."""
    log = tmp_path / "log.json"
    log.write_bytes(data)
    line = refused(tmp_path, capsys, log)
    assert str(log) in line and said in line
    assert "expected an inspect log (an object with eval, plan and samples" in line
    assert "or promptfoo's output (an object with evalId and results.results" in line


def test_an_output_whose_keys_were_reordered_is_read_as_promptfoos(tmp_path):
    """promptfoo writes evalId first; a tool that rewrote the file (sorted its keys) leaves it a promptfoo output."""
    status, out = imported(tmp_path, written_text(tmp_path / "sorted.json", json.dumps(output(), sort_keys=True)))
    assert status == 0 and {row.request["harness"]["name"] for row in rows(out).values()} == {"promptfoo"}
    assert {rid: row.status for rid, row in rows(out).items()} == STATUSES


def written_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
