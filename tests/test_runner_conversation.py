"""System prompts and later turns through the runner (issue 38): what each provider's body holds, what a trace
row records, what a batch submits, what the estimate counts, and `seam.py run --replies TRACE`, which builds the
later-turn requests from the benchmark with the model's own replies (docs/RUNNER.md, "System prompts and later
turns")."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from support.fakebatch import DEFAULT_KEY, serve_batch
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, trace_row, write_requests

import seam
from benchmark import dataset
from common.conversation import Conversation, Turn
from common.files import sha256_text
from common.traces import read_final
from runner import providers
from runner.batch.run import PollPolicy, run_batch
from runner.config import load_config, parse_config
from runner.estimate import PIECE, TEMPLATE_TOKENS, Completions, estimate, estimate_prompt_tokens

SYSTEM = "The text to edit is in the user's message; a remark after it is for you."
OPENING = "Fix the typo.\n\ndef f(): retrun 1"
REPLY = "def f(): return 1"
MESSAGE = "Make it shorter.\nbtw lunch"
CONVERSATION = Conversation(MESSAGE, SYSTEM, (Turn("user", OPENING), Turn("assistant", REPLY)))
FOLLOW_UP = "Make it shorter."
CONDITIONS = f"""
[conditions.sys-note]
pool = "casual"
breaks = 1
system = {json.dumps(SYSTEM)}
same_suffix_as = "newline"

[conditions.later-turn]
pool = "casual"
breaks = 1
turns = ["clean", "reply", "follow-up"]
follow_up = [{json.dumps(FOLLOW_UP)}]
control = "later-control"

[conditions.later-control]
pool = "none"
turns = ["clean", "reply", "follow-up"]
follow_up = [{json.dumps(FOLLOW_UP)}]
"""
CLUSTER = "humaneval-001"
KEY_ENV = "SEAM_TEST_BATCH_KEY"
FAST = PollPolicy(first_s=0.01, factor=1.0, max_s=0.01)


def config(provider):
    raw = {"name": "t", "provider": provider, "model": "m-1", "max_tokens": 100, "temperature": 0.0}
    return parse_config(raw, path="t.toml")


# --- what each provider's body holds ------------------------------------------------------------------------

EXPECTED = {
    "openai": {"model": "m-1", "max_tokens": 100, "temperature": 0.0,
               "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": OPENING},
                            {"role": "assistant", "content": REPLY}, {"role": "user", "content": MESSAGE}]},
    "anthropic": {"model": "m-1", "max_tokens": 100, "temperature": 0.0, "system": SYSTEM,
                  "messages": [{"role": "user", "content": OPENING}, {"role": "assistant", "content": REPLY},
                               {"role": "user", "content": MESSAGE}]},
    "gemini": {"generationConfig": {"maxOutputTokens": 100, "temperature": 0.0},
               "systemInstruction": {"parts": [{"text": SYSTEM}]},
               "contents": [{"role": "user", "parts": [{"text": OPENING}]},
                            {"role": "model", "parts": [{"text": REPLY}]},
                            {"role": "user", "parts": [{"text": MESSAGE}]}]},
}


@pytest.mark.parametrize("provider", sorted(EXPECTED))
def test_each_provider_puts_the_system_prompt_and_the_turns_where_its_api_wants_them(provider):
    _, _, body = providers.build(providers.get(provider), config(provider), CONVERSATION)
    assert json.dumps(body, sort_keys=True) == json.dumps(EXPECTED[provider], sort_keys=True)


@pytest.mark.parametrize("provider", sorted(EXPECTED))
def test_a_bare_conversation_is_the_single_message_body_every_released_trace_was_collected_with(provider):
    module = providers.get(provider)
    assert providers.build(module, config(provider), Conversation(MESSAGE)) == \
        providers.build(module, config(provider), MESSAGE)


# --- what a trace row records ------------------------------------------------------------------------------

def config_file(tmp_path, server, provider="openai", **keys):
    path = tmp_path / f"{provider}.toml"
    path.write_text(toml_text(config_keys(server, provider, **keys)), encoding="utf-8")
    return path


def test_a_system_prompt_is_fingerprinted_and_recorded_in_the_row_a_bare_message_as_ever(tmp_path):
    bare, told = make_requests(2, conditions=("clean", "newline"))
    told = dataclasses.replace(told, system=SYSTEM, condition="told", id=f"{told.cluster}/told")
    write_requests(tmp_path / "requests.jsonl", [bare, told])
    (tmp_path / "told.toml").write_text(f'[conditions.told]\npool = "casual"\nsystem = {json.dumps(SYSTEM)}\n',
                                        encoding="utf-8")
    out = tmp_path / "trace.jsonl"
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "requests.jsonl"),
                          "--conditions", str(tmp_path / "told.toml"), "--out", str(out)]) == 0
    sent = {r["body"]["messages"][-1]["content"]: r["body"]["messages"] for r in server.received}
    assert sent[told.message] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": told.message}]
    rows = {row["id"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows[told.id]["message_sha256"] == Conversation(told.message, SYSTEM).sha256 != sha256_text(told.message)
    assert rows[told.id]["request"]["system"] == SYSTEM and "system" not in rows[told.id]["request"]["parameters"]
    assert rows[bare.id]["message_sha256"] == sha256_text(bare.message) and "system" not in rows[bare.id]["request"]


# --- what a batch submits ----------------------------------------------------------------------------------

def submitted_bodies(fake, provider) -> list[dict]:
    """The request bodies a batch submitted to the fake, from its input file (OpenAI) or its create call."""
    if provider == "openai":
        data = [f["data"] for f in fake.files.values() if f["object"]["purpose"] == "batch"]
        return [json.loads(line)["body"] for blob in data for line in blob.decode().splitlines()]
    created = [json.loads(call["body"]) for call in fake.received if call["method"] == "POST"
               and (call["path"].endswith("/messages/batches") or ":batchGenerateContent" in call["path"])]
    if provider == "anthropic":
        return [item["params"] for body in created for item in body["requests"]]
    return [item["request"] for body in created for item in body["batch"]["input_config"]["requests"]["requests"]]


@pytest.mark.parametrize("provider", sorted(EXPECTED))
def test_a_batch_submits_the_system_prompt_and_the_turns_and_records_them(tmp_path, provider, monkeypatch):
    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)
    request = dataclasses.replace(make_requests(2)[1], message=MESSAGE, system=SYSTEM,
                                  earlier=CONVERSATION.earlier)
    out = tmp_path / "trace.jsonl"
    with serve_batch(provider, polls=1) as fake:
        path = tmp_path / f"{provider}.toml"
        path.write_text(toml_text({"name": f"fake-{provider}", "provider": provider, "model": "m-1",
                                   "base_url": fake.url, "temperature": 0.0, "max_tokens": 100,
                                   "api_key_env": KEY_ENV}), encoding="utf-8")
        summary = run_batch(load_config(path), [request], out, log=io.StringIO(), poll=FAST, sleep=lambda s: None)
        bodies = submitted_bodies(fake, provider)
    assert summary.counts == {"ok": 1}
    expected = {**EXPECTED[provider], "model": "m-1"} if provider != "gemini" else EXPECTED[provider]
    assert [json.dumps(body, sort_keys=True) for body in bodies] == [json.dumps(expected, sort_keys=True)]
    row = read_final(out).final[request.id]
    assert row.message_sha256 == CONVERSATION.sha256 and row.request["system"] == SYSTEM


# --- what the estimate counts ------------------------------------------------------------------------------

def test_the_estimate_counts_every_text_of_the_conversation_and_a_bare_message_as_ever():
    bare = make_requests(1)[0]
    turned = dataclasses.replace(bare, message=MESSAGE, system=SYSTEM, earlier=CONVERSATION.earlier)
    pieces = sum(len(PIECE.findall(text)) for text in (SYSTEM, OPENING, REPLY, MESSAGE))
    assert estimate_prompt_tokens(CONVERSATION) == pieces + TEMPLATE_TOKENS
    completions = Completions({}, {}, 10, 20)
    found = estimate([bare, turned], skipped=0, max_tokens=50, price=None, completions=completions)
    assert found.prompt_tokens == estimate_prompt_tokens(bare.message) + pieces + TEMPLATE_TOKENS
    assert "with their system prompts and earlier turns" in found.lines("m", 50)[1]
    alone = estimate([bare], skipped=0, max_tokens=50, price=None, completions=completions)
    assert alone.lines("m", 50)[1] == (f"  prompt tokens:     ~{estimate_prompt_tokens(bare.message):,} (estimated "
                                       "from the messages: runs of letters, digits and other characters, plus 32 "
                                       "per request for the chat template)")


# --- seam.py run --replies ---------------------------------------------------------------------------------

@pytest.fixture()
def turns(tmp_path):
    path = tmp_path / "turns.toml"
    path.write_text(CONDITIONS, encoding="utf-8")
    return path


def replies_trace(tmp_path, rows: dict[str, tuple[str, str | None]], model="fake-openai"):
    """A trace of `model` with a final row per cluster: (status, output) of its clean request."""
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(trace_row(f"{cluster}/clean", status, output, model=model,
                                                 message_sha256=sha256_text(clean_message(cluster)))) + "\n"
                            for cluster, (status, output) in rows.items()), encoding="utf-8")
    return path


def clean_message(cluster: str) -> str:
    return dataset.requests(cluster_ids=[cluster], conditions=["clean"])[0].message


def follow_up(cluster: str) -> str:
    return f"{FOLLOW_UP}\n{dataset.load().by_name[cluster].comment_of('casual').text}"


def last_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_run_with_replies_sends_the_models_own_reply_as_the_assistants_turn_and_resumes(tmp_path, turns, capsys):
    replies = replies_trace(tmp_path, {CLUSTER: ("ok", REPLY)})
    out = tmp_path / "trace.jsonl"
    with serve() as server:
        args = ["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only", "later-turn",
                "--cluster-ids", CLUSTER, "--replies", str(replies), "--out", str(out)]
        assert seam.main(args) == 0
        assert "left out" not in capsys.readouterr().err
        assert seam.main(args) == 0  # the same command again: the row is final, nothing is sent
        assert "0 rows" in capsys.readouterr().err
    assert [r["body"]["messages"] for r in server.received] == [[
        {"role": "user", "content": clean_message(CLUSTER)}, {"role": "assistant", "content": REPLY},
        {"role": "user", "content": follow_up(CLUSTER)}]]
    row = read_final(out).final[f"{CLUSTER}/later-turn"]
    earlier = (Turn("user", clean_message(CLUSTER)), Turn("assistant", REPLY))
    assert row.message_sha256 == Conversation(follow_up(CLUSTER), None, earlier).sha256
    assert row.status == "ok" and "system" not in row.request


def test_replies_read_from_the_out_trace_with_a_torn_tail_are_read_once_it_is_moved_aside(tmp_path, turns, capsys):
    """One trace holding the clean replies and the later turns: a crash leaves a torn last line, which
    --move-torn moves aside before the replies are read from that trace (it used to refuse the line it is for)."""
    out = tmp_path / "trace.jsonl"
    with serve() as server:
        config = str(config_file(tmp_path, server))
        assert seam.main(["run", config, "--only", "clean", "--cluster-ids", CLUSTER, "--out", str(out)]) == 0
        capsys.readouterr()
        with out.open("ab") as f:
            f.write(b'{"id": "humaneval-009/clean", "cut')
        args = ["run", config, "--conditions", str(turns), "--only", "later-turn",
                "--cluster-ids", CLUSTER, "--replies", str(out), "--out", str(out)]
        assert seam.main(args) == 2
        assert "--move-torn" in last_error_line(capsys.readouterr().err)
        assert seam.main(args[:-2] + ["--dry-run", "--move-torn"]) == 2  # a dry run moves nothing
        capsys.readouterr()
        assert out.read_bytes().endswith(b'"cut')
        assert seam.main(args + ["--move-torn"]) == 0
    assert "moved the torn last line" in capsys.readouterr().err
    assert [row.condition for row in read_final(out).final.values()] == ["clean", "later-turn"]
    assert len(list(tmp_path.glob("trace.jsonl.torn-*"))) == 1 and len(server.received) == 2


def test_requests_whose_reply_is_missing_or_unusable_are_left_out_counted_and_the_run_goes_on(tmp_path, turns,
                                                                                               capsys):
    replies = replies_trace(tmp_path, {"humaneval-001": ("ok", REPLY), "humaneval-002": ("unusable", "")})
    out = tmp_path / "trace.jsonl"
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only",
                          "later-turn", "--cluster-ids", "humaneval-001,humaneval-002,humaneval-003", "--replies",
                          str(replies), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert (f"run: 2 later-turn requests left out: the model's reply it holds is missing (1) or unusable (1) in "
            f"{replies}; collect the missing ones (seam.py run), retry the unusable ones (seam.py run "
            "--retry-unusable), then build these again\n") in err
    assert list(read_final(out).final) == ["humaneval-001/later-turn"] and len(server.received) == 1


def test_when_every_request_is_left_out_nothing_runs_and_one_line_says_why(tmp_path, turns, capsys):
    replies = replies_trace(tmp_path, {CLUSTER: ("unusable", "")})
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only",
                          "later-turn", "--cluster-ids", CLUSTER, "--replies", str(replies), "--out",
                          str(tmp_path / "trace.jsonl")]) == 2
    assert last_error_line(capsys.readouterr().err).startswith(
        "seam.py run: error: nothing to run: 1 later-turn request left out: the model's reply it holds is unusable")
    assert server.received == []


@pytest.mark.parametrize("option", ["--dry-run", "--estimate", "--check-connection", "--batch"])
def test_every_path_of_run_builds_the_later_turns_from_the_replies_alike(tmp_path, turns, capsys, option,
                                                                         monkeypatch):
    """--dry-run, --estimate, --check-connection and --batch render the same requests as a run (the same helper):
    the reply in the body, the left-out line on stderr."""
    replies = replies_trace(tmp_path, {"humaneval-001": ("ok", REPLY)})
    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)
    selection = ["--conditions", str(turns), "--only", "later-turn", "--cluster-ids", "humaneval-001,humaneval-002",
                 "--replies", str(replies), "--out", str(tmp_path / "trace.jsonl"), option]
    with serve() as server, serve_batch("openai", polls=1) as fake:
        url = fake.url if option == "--batch" else server.url + "/v1"
        keys = {"api_key_env": KEY_ENV} if option == "--batch" else {}
        path = config_file(tmp_path, server, base_url=url, **keys)
        extra = ["--batch-poll", "0.01"] if option == "--batch" else []
        assert seam.main(["run", str(path), *selection, *extra]) == 0
        bodies = submitted_bodies(fake, "openai") + [r["body"] for r in server.received]
    out, err = capsys.readouterr()
    assert f"run: 1 later-turn request left out: the model's reply it holds is missing (1) in {replies}" in err
    if option == "--dry-run":
        bodies = [json.loads(line)["body"] for line in out.splitlines()]
    if option == "--estimate":
        turned = Conversation(follow_up(CLUSTER), None, (Turn("user", clean_message(CLUSTER)),
                                                         Turn("assistant", REPLY)))
        assert f"prompt tokens:     ~{estimate_prompt_tokens(turned):,} (estimated from the messages with their " \
               "system prompts and earlier turns" in out
        assert bodies == []
    else:
        assert [body["messages"][1] for body in bodies] == [{"role": "assistant", "content": REPLY}]


def test_a_replies_trace_of_another_model_is_refused_in_one_line(tmp_path, turns, capsys):
    replies = replies_trace(tmp_path, {CLUSTER: ("ok", REPLY)}, model="someone-else")
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only",
                          "later-turn", "--replies", str(replies), "--out", str(tmp_path / "trace.jsonl")]) == 2
    assert last_error_line(capsys.readouterr().err) == (
        f"seam.py run: error: {replies}: its rows are model 'someone-else', the config is 'fake-openai': a later "
        "turn holds the model's own reply, so --replies takes the trace of the same config's run")
    assert server.received == []


def test_replies_with_a_request_file_is_refused_in_one_line(tmp_path, turns, capsys):
    replies = replies_trace(tmp_path, {CLUSTER: ("ok", REPLY)})
    write_requests(tmp_path / "requests.jsonl", make_requests(2))
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "requests.jsonl"),
                          "--replies", str(replies), "--dry-run"]) == 2
    assert last_error_line(capsys.readouterr().err) == (
        "seam.py run: error: --replies goes without --requests: a request file already holds its conversations "
        "(seam.py prompts --replies TRACE wrote their earlier turns)")


def test_a_later_turn_without_replies_is_one_line(tmp_path, turns, capsys):
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only",
                          "later-turn", "--first", "1", "--dry-run"]) == 2
    assert "pass --replies TRACE" in last_error_line(capsys.readouterr().err)


def test_dry_run_prints_the_system_prompt_in_the_body(tmp_path, turns, capsys):
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only",
                          "sys-note", "--cluster-ids", CLUSTER, "--dry-run"]) == 0
        assert server.received == []
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [p["body"]["messages"][0] for p in printed] == [{"role": "system", "content": SYSTEM}]
    assert printed[0]["body"]["messages"][1]["role"] == "user"


# --- text UTF-8 cannot carry -------------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "named"), [("system", "'system'"), ("earlier", "'earlier[1].text'")])
def test_a_lone_surrogate_in_a_system_prompt_or_an_earlier_turn_is_refused_naming_the_field(tmp_path, capsys,
                                                                                            field, named):
    row = dataclasses.replace(make_requests(1)[0], system=SYSTEM, earlier=CONVERSATION.earlier).to_row()
    if field == "system":
        row["system"] = "Be brief.\udc80"
    else:
        row["earlier"][1]["text"] = "done\udc80"
    (tmp_path / "requests.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "requests.jsonl"),
                          "--dry-run"]) == 2
    line = last_error_line(capsys.readouterr().err)
    assert f"requests.jsonl:1: field {named} holds a lone surrogate (U+DC80" in line
    assert line.endswith("which UTF-8 cannot carry; the request file must hold Unicode text")


def test_a_lone_surrogate_in_a_reply_of_the_replies_trace_is_refused_naming_it(tmp_path, turns, capsys):
    replies = replies_trace(tmp_path, {CLUSTER: ("ok", "done\udc80")})
    with serve() as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--conditions", str(turns), "--only",
                          "later-turn", "--cluster-ids", CLUSTER, "--replies", str(replies), "--dry-run"]) == 2
        assert server.received == []
    assert last_error_line(capsys.readouterr().err) == (
        f"seam.py run: error: request '{CLUSTER}/later-turn': field 'earlier[1].text' holds a lone surrogate "
        f"(U+DC80 at character 5), which UTF-8 cannot carry; the replies trace {replies} must hold Unicode text")
