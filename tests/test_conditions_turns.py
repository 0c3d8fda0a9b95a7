"""Conditions beyond one message (issue 38): a system prompt, a later turn built from the cluster's parts and the
model's own reply, and the control a treatment is scored against; every malformed key one line naming the file,
the condition and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import seam
from benchmark import conditions, dataset
from benchmark.check import check
from benchmark.replies import Replies
from common import jsonl
from common.conversation import Conversation, Turn
from common.errors import UserError
from common.files import sha256_text
from common.records import Request
from tests.support.samples import trace_row

FOLLOW_UPS = '["Make it a little shorter.", "Tighten the wording."]'
LATER = f'''
[conditions.later-turn]
pool = "casual"
turns = ["clean", "reply", "follow-up"]
follow_up = {FOLLOW_UPS}
control = "later-control"

[conditions.later-control]
pool = "none"
turns = ["clean", "reply", "follow-up"]
follow_up = {FOLLOW_UPS}
'''
SYSTEM = '''
[conditions.system-mitigation]
pool = "casual"
system = "The text to edit is in the user's message.\\nAnything after it is a remark to you."
'''


def clean_row(cluster, status: str = "ok", output: str = "x = 2", **fields) -> dict:
    """The model's final clean row of `cluster`, answering clean's message as it renders now."""
    asked = sha256_text(conditions.builtin().get("clean").message(cluster))
    return trace_row(f"{cluster.cluster}/clean", status, output, **{"message_sha256": asked, **fields})


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(UserError) as caught:
        conditions.load(write(tmp_path, text))
    message = str(caught.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------- what is sent


def test_a_system_prompt_is_sent_with_the_newline_message_and_fingerprints_the_request(tmp_path):
    defined = conditions.load(write(tmp_path, SYSTEM))
    cluster = dataset.load().clusters[0]
    sent = defined.conversation("system-mitigation", cluster)
    assert sent.message == defined.get("newline").message(cluster) and sent.earlier == ()
    assert sent.system == "The text to edit is in the user's message.\nAnything after it is a remark to you."
    assert sent.sha256 != sha256_text(sent.message)  # the system prompt is part of what was asked
    request, = dataset.requests(defined=defined, conditions=["system-mitigation"], cluster_ids=[cluster.cluster])
    assert request.to_row()["system"] == sent.system and "earlier" not in request.to_row()
    assert request.conversation == sent
    # the built-in conditions' rows keep their fields: no system, no earlier turns
    clean, = dataset.requests(defined=defined, conditions=["clean"], cluster_ids=[cluster.cluster])
    assert "system" not in clean.to_row() and "earlier" not in clean.to_row()
    assert clean.conversation.sha256 == sha256_text(clean.message)


def test_a_later_turn_holds_the_models_own_clean_reply_and_a_follow_up_with_the_remark(tmp_path):
    defined = conditions.load(write(tmp_path, LATER))
    benchmark = dataset.load()
    first, second = benchmark.clusters[:2]
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [clean_row(first, output="def f():\n    return 1")])
    replies = Replies.read(traces)
    sent = defined.conversation("later-turn", first, replies)
    assert sent.earlier == (Turn("user", defined.get("clean").message(first)),
                            Turn("assistant", "def f():\n    return 1"))
    follow_up = defined.get("later-turn").follow_up_of(first.cluster)
    assert follow_up in ("Make it a little shorter.", "Tighten the wording.")
    assert sent.message == follow_up + "\n" + first.comment.text
    control = defined.conversation("later-control", first, replies)
    assert control.earlier == sent.earlier and control.message == follow_up  # the same conversation, no remark
    assert defined.control_of("later-turn") == "later-control" and defined.control_of("newline") == "clean"
    assert defined.control_of("later-control") is None
    # the second cluster has no clean row: its two requests are left out, and said to be
    assert defined.conversation("later-turn", second, replies) is None
    built = dataset.requests(benchmark, defined=defined, conditions=["later-turn", "later-control"],
                             cluster_ids=[first.cluster, second.cluster], replies=replies)
    assert [r.id for r in built] == [f"{first.cluster}/later-turn", f"{first.cluster}/later-control"]
    assert sorted(replies.missed) == [f"{second.cluster}/later-control", f"{second.cluster}/later-turn"]
    assert replies.summary().startswith("2 later-turn requests left out: the model's reply it holds is missing (2) in ")
    row = built[0].to_row()
    assert row["earlier"] == [{"role": "user", "text": sent.earlier[0].text},
                              {"role": "assistant", "text": "def f():\n    return 1"}]
    assert Request.from_row(json.loads(json.dumps(row)), "r.jsonl:1").to_row() == row


def test_the_follow_up_is_picked_by_the_cluster_the_same_everywhere_and_spread_over_the_pool(tmp_path):
    pool = ", ".join(f'"Follow-up {i}."' for i in range(4))
    defined = conditions.load(write(tmp_path, LATER.replace(FOLLOW_UPS, f"[{pool}]")))
    later = defined.get("later-turn")
    picked = [later.follow_up_of(cluster.cluster) for cluster in dataset.load().clusters]
    assert picked[0] == later.follow_up[int(sha256_text(dataset.load().clusters[0].cluster)[:8], 16) % 4]
    assert all(55 <= picked.count(f"Follow-up {i}.") <= 95 for i in range(4))  # 75 each if even


def test_a_unusable_reply_leaves_the_request_out_and_no_replies_at_all_is_one_line(tmp_path):
    defined = conditions.load(write(tmp_path, LATER))
    cluster = dataset.load().clusters[0]
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [clean_row(cluster, "unusable", "")])
    replies = Replies.read(traces)
    assert defined.conversation("later-turn", cluster, replies) is None
    assert replies.missed == {f"{cluster.cluster}/later-turn": "unusable"}
    with pytest.raises(UserError, match=r"condition 'later-turn' holds the model's own reply to its clean request "
                                        r"\(reply = \"model\" in .*mine\.toml\): pass --replies TRACE"):
        defined.conversation("later-turn", cluster)


def test_a_reply_to_another_message_is_not_taken(tmp_path):
    """The clean row answered a message clean no longer renders (a layout or benchmark changed since, a hand-made
    request file): the model never gave that reply to this conversation's opening turn."""
    defined = conditions.load(write(tmp_path, LATER))
    cluster = dataset.load().clusters[0]
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [clean_row(cluster, message_sha256="c" * 64)])
    replies = Replies.read(traces)
    assert defined.conversation("later-turn", cluster, replies) is None
    assert replies.missed == {f"{cluster.cluster}/later-turn": "a reply to another message"}
    assert "rerun the opening requests as their condition renders them now" in replies.summary()


def test_a_request_row_must_be_what_its_condition_sends(tmp_path):
    defined = conditions.load(write(tmp_path, SYSTEM + LATER))
    cluster = dataset.load().clusters[0]
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [clean_row(cluster, model="m")])
    rows = {r.condition: r for r in dataset.requests(defined=defined, cluster_ids=[cluster.cluster],
                                                     replies=Replies.read(traces))}
    for request in rows.values():
        defined.check_request(request, "r.jsonl:1", model="m")
    assert rows["later-turn"].reply_model == "m" and rows["newline"].reply_model is None
    import dataclasses

    cases = [
        (dataclasses.replace(rows["newline"], comment=None, comment_id=None, witness=None, proposition=None),
         "needs its comment"),
        (dataclasses.replace(rows["system-mitigation"], system=None), "has no system prompt, but the condition"),
        (dataclasses.replace(rows["clean"], system="Be brief."), "has a system prompt the condition does not send"),
        (dataclasses.replace(rows["later-turn"], earlier=None), "has no earlier turns, but the condition is a later"),
        (dataclasses.replace(rows["clean"], earlier=rows["later-turn"].earlier), "has earlier turns, but the"),
        (dataclasses.replace(rows["later-turn"], message="Shorter."), "is not the condition's later turn"),
        (dataclasses.replace(rows["later-turn"], reply_model=None), "does not say whose reply it holds"),
    ]
    for request, message in cases:
        with pytest.raises(UserError, match=f"^r\\.jsonl:1: a {request.condition} request.*{message}"):
            defined.check_request(request, "r.jsonl:1")
    with pytest.raises(UserError, match=r"holds model 'm''s own reply, not 'other''s"):
        defined.check_request(rows["later-turn"], "r.jsonl:1", model="other")


def test_a_fixed_reply_needs_no_trace(tmp_path):
    text = LATER.replace('turns = ["clean", "reply", "follow-up"]\nfollow_up',
                         'turns = ["clean", "reply", "follow-up"]\nreply = "fixed"\nreply_text = "Done."\nfollow_up')
    defined = conditions.load(write(tmp_path, text))
    cluster = dataset.load().clusters[0]
    assert defined.conversation("later-turn", cluster).earlier[1] == Turn("assistant", "Done.")
    assert not defined.get("later-turn").needs_replies


def test_prompts_builds_later_turns_from_the_replies_trace_and_says_what_it_left_out(tmp_path, capsys):
    path = write(tmp_path, LATER)
    benchmark = dataset.load()
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [clean_row(benchmark.clusters[0])])
    code = seam.main(["prompts", "--conditions", str(path), "--only", "later-turn", "--first", "3",
                      "--replies", str(traces)])
    out, err = capsys.readouterr()
    assert code == 0
    assert [json.loads(line)["id"] for line in out.splitlines()] == [f"{benchmark.clusters[0].cluster}/later-turn"]
    assert err.strip() == (f"prompts: 2 later-turn requests left out: the model's reply it holds is missing (2) in "
                           f"{traces}; collect the missing ones (seam.py run), then build these again")
    with pytest.raises(SystemExit):
        seam.main(["prompts", "--conditions", str(path), "--replies", str(tmp_path / "none.jsonl")])
    assert "no such file" in capsys.readouterr().err


def test_a_request_row_with_turns_out_of_order_is_one_line():
    row = {"id": "humaneval-001/later-turn", "cluster": "humaneval-001", "source": "humaneval", "genre": "code",
           "license": "MIT", "condition": "later-turn", "message": "Shorter.\nbtw lunch", "artifact": "x",
           "comment": "btw lunch", "comment_id": "casual-01", "witness": "lunch", "proposition": "p",
           "benchmark_sha256": "0" * 64, "earlier": [{"role": "assistant", "text": "x"}]}
    with pytest.raises(UserError, match=r"^r\.jsonl:1: field 'earlier' holds turns of assistant, expected user and "):
        Request.from_row(row, "r.jsonl:1")
    row["earlier"] = [{"role": "user", "text": "a"}, {"role": "model", "text": "b"}]
    with pytest.raises(UserError, match=r"^r\.jsonl:1: earlier turn 2: field 'role' is 'model', expected one of"):
        Request.from_row(row, "r.jsonl:1")
    row["earlier"] = [{"role": "user", "text": "a"}, {"role": "assistant", "text": "b"}]
    row["system"] = 3
    with pytest.raises(UserError, match=r"^r\.jsonl:1: field 'system' is 3, expected a non-empty string"):
        Request.from_row(row, "r.jsonl:1")
    del row["system"]
    assert Request.from_row(row, "r.jsonl:1").conversation == Conversation(
        "Shorter.\nbtw lunch", None, (Turn("user", "a"), Turn("assistant", "b")))


# ---------------------------------------------------------------- checked on every cluster


def test_check_passes_a_well_formed_file_and_finds_a_follow_up_that_holds_the_remark(tmp_path):
    assert check(conditions=conditions.load(write(tmp_path, SYSTEM + LATER))).problems == []
    loud = LATER.replace(FOLLOW_UPS, '["Make it shorter; it goes out with friday\'s newsletter."]')
    problems = check(conditions=conditions.load(write(tmp_path, loud))).problems
    found = [p for p in problems if "later-turn: comment casual-" in p]
    assert len({p.split(" later-turn")[0] for p in found}) == 12  # the clusters that carry that casual comment
    assert all("collides with the condition's follow-ups, reply or system prompt" in p for p in found)


# ---------------------------------------------------------------- malformed files: one line each


@pytest.mark.parametrize("text, message", [
    ('[conditions.x]\npool = "casual"\nsystem = 3\n', r"mine\.toml: conditions\.x\.system is 3, expected text "),
    ('[conditions.x]\npool = "casual"\nsystem = "Be brief.\\u0000"\n', r"conditions\.x\.system is 'Be brief"),
    ('[conditions.x]\npool = "casual"\nsystem = " Be brief."\n', r"conditions\.x\.system is ' Be brief\.', expected"),
    ('[conditions.x]\npool = "casual"\nsystem = "' + "a" * 4001 + '"\n',
     r"conditions\.x\.system is 'aaa.*at most 4,000"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "answer", "follow-up"]\nfollow_up = ["Shorter."]\n',
     r"mine\.toml: conditions\.x\.turns\[1\] is 'answer', expected \"reply\" \(the assistant's turn\)"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "remark"]\nfollow_up = ["Shorter."]\n',
     r"conditions\.x\.turns\[2\] is 'remark', expected \"follow-up\""),
    ('[conditions.x]\npool = "casual"\nturns = ["nosuch", "reply", "follow-up"]\nfollow_up = ["Shorter."]\n'
     'control = "clean"\n',
     r"mine\.toml: conditions\.x\.turns\[0\] is 'nosuch', expected another defined condition \(clean, newline, "),
    ('[conditions.x]\npool = "casual"\nturns = ["reply", "reply", "follow-up"]\nfollow_up = ["Shorter."]\n',
     r"conditions\.x\.turns\[0\] is 'reply', expected a condition's name"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up", "reply"]\nfollow_up = ["S."]\n',
     r"conditions\.x\.turns has 4 parts, expected three, \[\"CONDITION\", \"reply\", \"follow-up\"\]"),
    ('[conditions.x]\npool = "casual"\nturns = "clean"\n', r"conditions\.x\.turns is 'clean', expected a list of "),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\n',
     r"conditions\.x\.follow_up is None, expected a list of 1 to 20 follow-up instructions"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["a\\nb"]\n',
     r"conditions\.x\.follow_up\[0\] is 'a\\nb', expected one line"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n'
     'reply = "fixed"\n', r"conditions\.x\.reply_text: missing; reply = \"fixed\" sends it"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n'
     'reply = "mine"\n', r"conditions\.x\.reply is 'mine', expected \"model\""),
    ('[conditions.x]\npool = "casual"\nfollow_up = ["S."]\n', r"conditions\.x\.follow_up: only a later-turn "),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n'
     'sentence = "Edit only the text."\n', r"conditions\.x\.sentence: a later-turn condition's last message"),
    ('[conditions.x]\npool = "casual"\nturns = ["x", "reply", "follow-up"]\nfollow_up = ["S."]\n',
     r"conditions\.x\.turns\[0\] is 'x', expected another defined condition"),
    ('[conditions.s]\npool = "none"\nsystem = "Be brief."\n[conditions.x]\npool = "casual"\n'
     'turns = ["s", "reply", "follow-up"]\nfollow_up = ["S."]\n',
     r"conditions\.x\.turns\[0\] is 's', which is sent with a system prompt: expected a condition sent as one "),
    ('[conditions.x]\npool = "casual"\nturns = ["boundary", "reply", "follow-up"]\nfollow_up = ["S."]\n',
     r"conditions\.x\.turns\[0\] is 'boundary': a later turn holding the model's own reply \(reply = \"model\"\) "
     r"opens with clean"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n'
     'system = "Be brief."\ncontrol = "c"\n[conditions.c]\npool = "none"\nturns = ["clean", "reply", "follow-up"]\n'
     'follow_up = ["S."]\nsystem = "Be brief."\n',
     r"conditions\.(x|c)\.system: a later turn holding the model's own reply \(reply = \"model\"\) has no system "),
    ('[conditions.x]\npool = "casual"\nsame_prefix_as = "c"\n[conditions.c]\npool = "none"\n'
     'turns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n',
     r"conditions\.x\.same_prefix_as is 'c', a later-turn condition, whose message holds no paste"),
    # controls
    ('[conditions.x]\npool = "casual"\ncontrol = "newline"\n',
     r"mine\.toml: conditions\.x\.control is 'newline', a treatment \(its pool is casual\); expected a condition "
     r"without a comment: clean$"),
    ('[conditions.x]\npool = "casual"\ncontrol = "nosuch"\n',
     r"conditions\.x\.control is 'nosuch', which is not defined here or built in"),
    ('[conditions.x]\npool = "casual"\ncontrol = 3\n', r"conditions\.x\.control is 3, expected the name of a "),
    ('[conditions.a]\npool = "casual"\ncontrol = "b"\n[conditions.b]\npool = "native"\ncontrol = "a"\n',
     r"mine\.toml: conditions\.a\.control: a cycle of controls \(a → b → a\)"),
    ('[conditions.a]\npool = "casual"\ncontrol = "a"\n', r"conditions\.a\.control: a cycle of controls \(a → a\)"),
    ('[conditions.c]\npool = "none"\ncontrol = "clean"\n', r"conditions\.c\.control: a condition without a comment "
                                                           r"is a control itself"),
    ('[conditions.x]\npool = "casual"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n',
     r"conditions\.x\.control is 'clean', expected the same conversation without the comment"),
    ('[conditions.c]\npool = "none"\nturns = ["clean", "reply", "follow-up"]\nfollow_up = ["S."]\n'
     '[conditions.x]\npool = "casual"\ncontrol = "c"\n',
     r"conditions\.x\.control is 'c', a later-turn condition; expected a condition sent as one message"),
])
def test_a_malformed_key_is_one_line_naming_the_file_the_condition_and_the_key(tmp_path, text, message):
    assert refusal_matches(refused(tmp_path, text), message)


def refusal_matches(found: str, pattern: str) -> bool:
    import re

    assert re.search(pattern, found), found
    return True
