"""The harness routes carry a request's whole conversation (issue 38): a condition's system prompt and earlier turns.

Export: inspect's sample `input` is the chat messages (system, user, assistant, user), the batch body is the
runner's for the conversation, promptfoo's prompt function returns them (its test's `preceding` variable, then
the message), and lm-eval, whose task sends one templated message, refuses such a request in one line. Import: a
log whose conversation is the kit's gives rows with the conversation's `message_sha256` and the system prompt in
`request.system`, as the runner's; one whose system prompt, assistant turn or roles differ is refused naming the
first difference. The logs are the existing fixtures' (tests/fixtures/harness/), their prompts replaced. Then, where
inspect_ai and promptfoo are installed, each real harness against the fake server: the bodies it sent hold the
conversation exactly, and its log imports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.fakeserver import serve

import seam
from common.conversation import Conversation
from common.records import Request, TraceRow, read

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness"
REPLIES = ROOT / "data" / "traces" / "qwen2.5-coder-0.5b.jsonl"  # a released trace: the later turn's model replies
SYSTEM = "You edit texts."
# A system prompt alone (the newline message), and a later turn holding the model's own reply: user, assistant, user
# (with no system prompt: the model gave that reply without one, benchmark/condition_file.py).
CONDITIONS = """\
[conditions.sys-only]
pool = "casual"
breaks = 1
system = "The text to edit is the pasted one; a remark after it is not part of it."
same_suffix_as = "newline"

[conditions.sys-later]
pool = "casual"
breaks = 1
turns = ["clean", "reply", "follow-up"]
reply = "model"
follow_up = ["Make it a little shorter."]
control = "sys-later-control"

[conditions.sys-later-control]
pool = "none"
turns = ["clean", "reply", "follow-up"]
reply = "model"
follow_up = ["Make it a little shorter."]
"""
ONLY = "sys-only,sys-later"
SYS_ONLY, SYS_LATER = "humaneval-001/sys-only", "humaneval-001/sys-later"


@pytest.fixture
def conditions(tmp_path) -> Path:
    path = tmp_path / "conversations.toml"
    path.write_text(CONDITIONS, encoding="utf-8")
    return path


def kit(conditions: Path) -> dict[str, Request]:
    """The kit's requests of the first cluster under the two conditions, by id."""
    from benchmark import conditions as condition_sets
    from benchmark.dataset import requests
    from benchmark.replies import Replies

    chosen = requests(limit=1, conditions=ONLY.split(","), defined=condition_sets.load(str(conditions)),
                      replies=Replies.read(REPLIES))
    return {request.id: request for request in chosen}


def messages(request: Request) -> list[dict]:
    """The chat messages a request sends, spelled out here: its system prompt, its earlier turns, its message."""
    found = [{"role": "system", "content": request.system}] if request.system is not None else []
    found += [{"role": turn.role, "content": turn.text} for turn in request.earlier or ()]
    return found + [{"role": "user", "content": request.message}]


def export(tmp_path: Path, target: str, conditions: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / target
    status = seam.main(["export", "--to", target, "--out", str(out), "--first", "1", "--max-tokens", "256",
                        "--model", "fake-model", "--conditions", str(conditions), "--only", ONLY,
                        "--replies", str(REPLIES), *extra])
    return status, out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_inspect_samples_hold_the_conversation_as_chat_messages(tmp_path, conditions):
    status, out = export(tmp_path, "inspect", conditions)
    assert status == 0
    requests = kit(conditions)
    assert [m["role"] for m in messages(requests[SYS_ONLY])] == ["system", "user"]
    assert [m["role"] for m in messages(requests[SYS_LATER])] == ["user", "assistant", "user"]
    assert requests[SYS_LATER].earlier[1].text.startswith("```python")  # the model's own clean reply
    samples = {row["id"]: row for row in lines(out / "seam.jsonl")}
    assert sorted(samples) == sorted(requests)
    for rid, request in requests.items():
        assert samples[rid]["input"] == messages(request), rid
        assert samples[rid]["metadata"]["message_sha256"] == request.conversation.sha256
    task = (out / "seam_task.py").read_text(encoding="utf-8")
    assert "ChatMessageSystem" in task and "ChatMessageAssistant" in task
    readme = (out / "README.md").read_text(encoding="utf-8")  # its import renders the same requests
    assert f"--model fake-model --conditions {conditions} --replies {REPLIES}\n" in readme


def test_batch_bodies_are_the_runners_for_the_conversation(tmp_path, conditions):
    from harness.export import batch_config
    from runner import providers

    status, out = export(tmp_path, "openai-batch", conditions)
    assert status == 0
    requests = kit(conditions)
    config = batch_config("fake-model", 256)
    for line in lines(out / "batch_input.jsonl"):
        request = requests[line["custom_id"]]
        assert line["body"]["messages"] == messages(request)
        assert line["body"] == providers.build(providers.get("openai"), config, request.conversation)[2]


def test_promptfoos_prompt_function_returns_the_conversation(tmp_path, conditions):
    status, out = export(tmp_path, "promptfoo", conditions)
    assert status == 0
    requests = kit(conditions)
    tests = lines(out / "tests.jsonl")
    for test in tests:
        request = requests[test["vars"]["id"]]
        assert test["vars"]["message"] == request.message
        assert test["vars"]["preceding"] == messages(request)[:-1]  # a list of objects: one test, not one per item
        assert test["metadata"]["message_sha256"] == request.conversation.sha256
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the prompt function is not run")
    script = (f"const prompt = require({json.dumps(str(out / 'seam_prompt.cjs'))});\n"
              f"for (const test of {json.dumps(tests)}) console.log(JSON.stringify(prompt({{ vars: test.vars }})));\n")
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=True)
    returned = [json.loads(line) for line in done.stdout.splitlines()]
    assert returned == [messages(requests[test["vars"]["id"]]) for test in tests]


def test_lmeval_refuses_a_conversation_in_one_line(tmp_path, conditions, capsys):
    for only, holds in (("sys-only", "a system prompt"), ("sys-later", "earlier turns")):
        capsys.readouterr()
        status = seam.main(["export", "--to", "lm-eval", "--out", str(tmp_path / only), "--first", "1",
                            "--conditions", str(conditions), "--only", only, "--replies", str(REPLIES)])
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and len(err) == 1 and not (tmp_path / only).exists()
        assert f"humaneval-001/{only} (condition {only}) has {holds}" in err[0] and "one templated" in err[0]


# --- import -------------------------------------------------------------------------------------------------

def imported(tmp_path: Path, conditions: Path, *logs: Path, replies: bool = True) -> tuple[int, Path]:
    out = tmp_path / "imported.jsonl"
    # the rows are the replies' model's: a later turn shows a model its own reply (another model's is refused)
    extra = ["--replies", str(REPLIES), "--model", "qwen2.5-coder-0.5b"] if replies else []
    return seam.main(["import", *map(str, logs), "--out", str(out), "--conditions", str(conditions), *extra]), out


def refused(tmp_path: Path, conditions: Path, capsys, *logs: Path, replies: bool = True) -> str:
    """The one line an import of `logs` is refused with; nothing written."""
    capsys.readouterr()
    status, out = imported(tmp_path, conditions, *logs, replies=replies)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("seam.py import: error: "), err
    assert not out.exists()
    return err[0]


def rows(path: Path) -> dict[str, TraceRow]:
    return {row.id: row for _, row in read(path, TraceRow)}


def inspect_log(tmp_path: Path, sent: dict[str, list[dict]]) -> Path:
    """The fixture's .json log with one sample per id of `sent` (the clean sample's, renamed), whose model call
    sent those messages."""
    document = json.loads((FIXTURES / "inspect.json").read_text(encoding="utf-8"))
    clean = next(sample for sample in document["samples"] if sample["id"] == "humaneval-001/clean")
    document["samples"] = []
    for rid, chat in sent.items():
        sample = json.loads(json.dumps(clean))
        sample["id"] = rid
        next(e for e in sample["events"] if e.get("event") == "model")["call"]["request"]["messages"] = chat
        document["samples"].append(sample)
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def promptfoo_output(tmp_path: Path, sent: dict[str, list[dict]]) -> Path:
    """The fixture's promptfoo output with one result per id of `sent` (the clean result's), that prompt sent."""
    document = json.loads((FIXTURES / "promptfoo" / "out.json").read_text(encoding="utf-8"))
    results = document["results"]["results"]
    clean = next(result for result in results if result["vars"]["id"] == "humaneval-001/clean")
    results.clear()
    for index, (rid, chat) in enumerate(sent.items()):
        result = json.loads(json.dumps(clean))
        result["vars"]["id"], result["testIdx"], result["prompt"]["raw"] = rid, index, json.dumps(chat)
        results.append(result)
    path = tmp_path / "out.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_matching_inspect_log_imports_with_the_conversations_fingerprint(tmp_path, conditions):
    requests = kit(conditions)
    status, out = imported(tmp_path, conditions, inspect_log(tmp_path, {rid: messages(r) for rid, r in
                                                                         requests.items()}))
    assert status == 0
    found = rows(out)
    for rid, request in requests.items():
        assert found[rid].status == "ok" and found[rid].message_sha256 == request.conversation.sha256
        assert found[rid].request.get("system") == request.system  # as the runner records it
        assert found[rid].message_sha256 != Conversation(request.message).sha256


def test_a_matching_promptfoo_output_imports_with_the_conversations_fingerprint(tmp_path, conditions):
    requests = kit(conditions)
    status, out = imported(tmp_path, conditions, promptfoo_output(tmp_path, {rid: messages(r) for rid, r in
                                                                              requests.items()}))
    assert status == 0
    assert {rid: row.message_sha256 for rid, row in rows(out).items()} == {
        rid: request.conversation.sha256 for rid, request in requests.items()}


def test_a_matching_batch_imports_and_one_without_the_system_prompt_is_refused(tmp_path, conditions, capsys):
    requests = kit(conditions)
    status, out = export(tmp_path, "openai-batch", conditions)
    assert status == 0
    inputs = out / "batch_input.jsonl"
    reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1790000000, "model": "fake-model",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": "Edited."}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}
    output = out / "output.jsonl"
    output.write_text("".join(json.dumps({"custom_id": rid, "response": {"status_code": 200, "request_id": "r",
                                                                         "body": reply}}) + "\n"
                              for rid in requests), encoding="utf-8")
    status, imported_rows = imported(tmp_path, conditions, inputs, output)
    assert status == 0
    assert {rid: (row.status, row.message_sha256) for rid, row in rows(imported_rows).items()} == {
        rid: ("ok", request.conversation.sha256) for rid, request in requests.items()}
    imported_rows.unlink()
    changed = [json.loads(line) for line in inputs.read_text(encoding="utf-8").splitlines()]
    for line in changed:
        line["body"]["messages"] = line["body"]["messages"][1:]  # the system prompt left out
    inputs.write_text("".join(json.dumps(line) + "\n" for line in changed), encoding="utf-8")
    line = refused(tmp_path, conditions, capsys, inputs, output)
    assert f"{SYS_ONLY} was sent as 1 message(s) with roles user, expected the kit's 2 with roles system, user" in line


def test_a_changed_system_prompt_is_refused_naming_it(tmp_path, conditions, capsys):
    requests = kit(conditions)
    chat = messages(requests[SYS_ONLY])
    chat[0]["content"] = chat[0]["content"].replace("pasted", "posted")
    line = refused(tmp_path, conditions, capsys, inspect_log(tmp_path, {SYS_ONLY: chat}))
    assert (f"(humaneval-001/sys-only): the system prompt of {SYS_ONLY} is not the kit's system prompt for it: "
            "they differ at character 26 ('osted one; a' in the log, 'asted one; a' in the kit's)") in line


def test_a_changed_assistant_turn_is_refused_naming_it(tmp_path, conditions, capsys):
    requests = kit(conditions)
    chat = messages(requests[SYS_LATER])
    chat[1]["content"] = chat[1]["content"].replace("```python", "```py", 1)
    line = refused(tmp_path, conditions, capsys, promptfoo_output(tmp_path, {SYS_LATER: chat}))
    assert f"the earlier turn 2 (assistant) of {SYS_LATER} is not the kit's turn for it: they differ at character " \
           "6 ('\\n" in line and "--replies" in line


def test_a_system_message_a_request_does_not_have_is_refused_as_ever(tmp_path, conditions, capsys):
    chat = [{"role": "system", "content": SYSTEM}, *messages(kit(conditions)[SYS_LATER])]
    line = refused(tmp_path, conditions, capsys, inspect_log(tmp_path, {SYS_LATER: chat}))
    assert "roles system, user, assistant, user, expected the kit's 3 with roles user, assistant, user" in line


def test_a_later_turn_without_replies_is_refused_saying_so(tmp_path, conditions, capsys):
    requests = kit(conditions)
    log = inspect_log(tmp_path, {rid: messages(r) for rid, r in requests.items()})
    line = refused(tmp_path, conditions, capsys, log, replies=False)
    assert f"'{SYS_LATER}' holds the model's own reply" in line and "give --replies TRACE" in line


# --- the real harnesses ---------------------------------------------------------------------------------------

def test_real_inspect_sends_the_conversation_and_its_log_imports(tmp_path, conditions):
    from test_harness_inspect import inspect_command

    from harness.export import batch_config
    from runner import providers

    inspect = inspect_command()
    requests = kit(conditions)
    status, out = export(tmp_path, "inspect", conditions)
    assert status == 0
    env = dict(os.environ, LOCAL_API_KEY="none", INSPECT_DISPLAY="none", HOME=str(tmp_path),
               INSPECT_LOG_DIR=str(tmp_path / "unused"), NO_COLOR="1")
    with serve({}) as server:
        done = subprocess.run([str(inspect), "eval", "seam_task.py", "--model", "openai-api/local/fake-model",
                               "--model-base-url", f"{server.url}/v1", "--max-connections", "1", "--log-dir", "logs",
                               "--display", "none"], cwd=out, env=env, capture_output=True, text=True, timeout=300)
        received = [entry["body"] for entry in server.received]
    assert done.returncode == 0, done.stderr[-3000:]
    config = batch_config("fake-model", 256)  # the runner's config: this model, temperature 0, this limit
    runners = [providers.build(providers.get("openai"), config, request.conversation)[2] for request in
               requests.values()]
    assert sorted(json.dumps(body, sort_keys=True) for body in received) == sorted(
        json.dumps(body, sort_keys=True) for body in runners)  # the runner's bodies, the conversation in each
    assert sorted(json.dumps(body["messages"], sort_keys=True) for body in received) == sorted(
        json.dumps(messages(request), sort_keys=True) for request in requests.values())
    (log,) = (out / "logs").glob("*.eval")
    status, imported_rows = imported(tmp_path, conditions, log)
    assert status == 0
    assert {rid: (row.status, row.message_sha256) for rid, row in rows(imported_rows).items()} == {
        rid: ("ok", request.conversation.sha256) for rid, request in requests.items()}


def test_real_promptfoo_sends_the_conversation_and_its_output_imports(tmp_path, conditions):
    from test_harness_promptfoo import promptfoo_command

    promptfoo = promptfoo_command()
    requests = kit(conditions)
    env = dict(os.environ, PROMPTFOO_CONFIG_DIR=str(tmp_path / "promptfoo-home"), PROMPTFOO_DISABLE_TELEMETRY="1",
               PROMPTFOO_DISABLE_UPDATE="1", NO_COLOR="1", FORCE_COLOR="0")
    with serve({}) as server:
        status, out = export(tmp_path, "promptfoo", conditions, "--base-url", f"{server.url}/v1")
        assert status == 0
        done = subprocess.run([str(promptfoo), "eval", "-c", str(out / "promptfooconfig.yaml"), "-o",
                               str(out / "out.json"), "-j", "1", "--no-cache"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        received = [entry["body"] for entry in server.received]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(json.dumps(body["messages"], sort_keys=True) for body in received) == sorted(
        json.dumps(messages(request), sort_keys=True) for request in requests.values())
    status, imported_rows = imported(tmp_path, conditions, out / "out.json")
    assert status == 0
    assert {rid: row.message_sha256 for rid, row in rows(imported_rows).items()} == {
        rid: request.conversation.sha256 for rid, request in requests.items()}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_a_message_promptfoo_would_load_as_a_file_is_refused_and_another_models_replies_too(tmp_path, capsys):
    """promptfoo takes a variable starting with file:// (or package:) for a file to load, templating off or not;
    and a later turn holds the model's own reply, so rows of another model are not imported with it."""
    path = tmp_path / "loaded.toml"
    path.write_text('[conditions.loaded]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\n'
                    'reply = "fixed"\nreply_text = "Done."\nfollow_up = ["file://secret.txt"]\ncontrol = "loaded-c"\n'
                    '[conditions.loaded-c]\npool = "none"\nturns = ["clean", "reply", "follow-up"]\n'
                    'reply = "fixed"\nreply_text = "Done."\nfollow_up = ["file://secret.txt"]\n', encoding="utf-8")
    status = seam.main(["export", "--to", "promptfoo", "--out", str(tmp_path / "pf"), "--first", "1",
                        "--model", "fake-model", "--conditions", str(path), "--only", "loaded"])
    assert status == 2
    assert "--to promptfoo: humaneval-001/loaded (condition loaded) has a message that starts with file:, which " \
           "promptfoo reads as a file" in capsys.readouterr().err
    conditions_path = tmp_path / "conversations.toml"
    conditions_path.write_text(CONDITIONS, encoding="utf-8")
    requests = kit(conditions_path)
    log = inspect_log(tmp_path, {rid: messages(r) for rid, r in requests.items()})
    status = seam.main(["import", str(log), "--out", str(tmp_path / "other.jsonl"), "--model", "another-model",
                        "--conditions", str(conditions_path), "--replies", str(REPLIES)])
    assert status == 2
    assert "its rows are model 'qwen2.5-coder-0.5b', the imported rows model 'another-model'" in \
        capsys.readouterr().err
    assert not (tmp_path / "other.jsonl").exists()
