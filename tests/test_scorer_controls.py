"""Each treatment is scored against its control: a later turn against the same conversation without the remark
(a condition file's control, collected beside it), every other condition against clean. The trace's
`message_sha256` is checked against the whole conversation (system prompt, earlier turns, the model's own reply),
controls are never labelled, and the page shows what the model was sent besides the message, escaped."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

import seam
from benchmark import conditions, dataset
from benchmark.replies import Replies
from common import jsonl
from common.conversation import Conversation
from common.files import sha256_text
from common.records import TraceRow, request_id
from scorer.synthetic import trace_row

SHORTER = "Here is the shorter text:"
SYSTEM = 'Treat <b>pasted</b> text & remarks apart: "quoted" </script>'
TOML = f"""contrasts = ["newline vs later-turn"]

[conditions.later-turn]
pool = "casual"
breaks = 1
turns = ["clean", "reply", "follow-up"]
follow_up = ["Make it a little shorter."]
control = "later-control"

[conditions.later-control]
pool = "none"
turns = ["clean", "reply", "follow-up"]
follow_up = ["Make it a little shorter."]

[conditions.system-note]
pool = "casual"
breaks = 1
system = {json.dumps(SYSTEM)}
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The condition file, the conditions it defines and three prose clusters of the committed benchmark."""
    root = tmp_path_factory.mktemp("controls")
    path = root / "turns.toml"
    path.write_text(TOML, encoding="utf-8")
    benchmark = dataset.load()
    chosen = [c for c in benchmark.clusters if c.source == "wikipedia"][:3]
    return path, conditions.load(path), benchmark, chosen


def row(cluster, condition: str, output: str, sha: str | None, benchmark) -> TraceRow:
    return dataclasses.replace(trace_row(cluster.cluster, condition, output, model="m", source=cluster.source,
                                         benchmark_sha256=benchmark.sha256), message_sha256=sha)


def sent(defined, name: str, cluster, clean_rows: dict[str, TraceRow]) -> str:
    """The `message_sha256` the runner records: of the conversation, with the model's own clean reply."""
    return defined.conversation(name, cluster, Replies(clean_rows, "clean rows")).sha256


def study_rows(setup, *, drop=(), later_sha=None) -> list[TraceRow]:
    """Clean, later-turn and later-control rows of the three clusters (A, B, C):
    A: the remark in the later-turn output only (absorbed); B: in both the later-turn and the later-control
    output, not in the clean one (not absorbed against the control, absorbed against clean); C: no later-control
    row. `drop`: ids left out; `later_sha`: the later-turn rows' message_sha256 instead of the right one."""
    _, defined, benchmark, (a, b, c) = setup
    clean = {request_id(x.cluster, "clean"): row(x, "clean", x.artifact, sha256_text(
        defined.get("clean").message(x)), benchmark) for x in (a, b, c)}
    rows = list(clean.values())
    for cluster in (a, b, c):
        remark = cluster.comment.text
        rows.append(row(cluster, "later-turn", f"{cluster.artifact}\n{remark}",
                        later_sha or sent(defined, "later-turn", cluster, clean), benchmark))
        if cluster is not c:
            control = f"{cluster.artifact}\n{remark}" if cluster is b else f"{SHORTER}\n\n{cluster.artifact}"
            rows.append(row(cluster, "later-control", control, sent(defined, "later-control", cluster, clean),
                            benchmark))
    return [r for r in rows if r.id not in drop]


def score(setup, tmp_path, rows, *extra) -> tuple[int, list[dict]]:
    path = setup[0]
    traces, out = tmp_path / "m.jsonl", tmp_path / "labels" / "m.jsonl"
    jsonl.write(traces, [r.to_row() for r in rows])
    status = seam.main(["score", str(traces), "--conditions", str(path), "--no-nli", "--workers", "1",
                        "--out", str(out), *extra])
    labels = [json.loads(line) for line in out.read_text().splitlines()] if status == 0 else []
    return status, labels


def test_a_later_turn_is_scored_against_its_control_not_clean(setup, tmp_path):
    _, _, _, (a, b, c) = setup
    status, labels = score(setup, tmp_path, study_rows(setup))
    assert status == 0
    by_id = {label["id"]: label for label in labels}
    assert sorted(by_id) == sorted(request_id(x.cluster, "later-turn") for x in (a, b, c))  # controls unlabelled
    first, second = by_id[request_id(a.cluster, "later-turn")], by_id[request_id(b.cluster, "later-turn")]
    assert (first["usable"], first["absorbed"], first["tier"]) == (True, True, "witness")
    # the remark is in the control's output too: not a signal, though the clean output lacks it
    assert (second["usable"], second["absorbed"]) == (True, False)


def test_a_missing_control_row_is_the_reason_named_after_the_control(setup, tmp_path):
    _, _, _, (a, b, c) = setup
    status, labels = score(setup, tmp_path, study_rows(setup))
    assert status == 0
    label = next(x for x in labels if x["cluster"] == c.cluster)
    assert (label["usable"], label["reason"]) == (False, "no later-control trace for this cluster")
    failed = [dataclasses.replace(r, status="failed", output="", reason="HTTP 500")
              if r.id == request_id(a.cluster, "later-control") else r for r in study_rows(setup)]
    status, labels = score(setup, tmp_path, failed)
    assert status == 0
    assert next(x for x in labels if x["cluster"] == a.cluster)["reason"] == "later-control failed: HTTP 500"


def test_a_later_turn_whose_conversation_differs_is_refused(setup, tmp_path, capsys):
    _, defined, _, (a, _, _) = setup
    other = Conversation("x").sha256
    status, _ = score(setup, tmp_path, study_rows(setup, later_sha=other))
    assert status == 2
    err = capsys.readouterr().err
    assert re.search(r"m\.jsonl:\d+: the conversation sent \(message_sha256 [0-9a-f]{12}…\) is not condition "
                     r"'later-turn''s as it is defined now with the model's own reply in \S*m\.jsonl "
                     r"\([0-9a-f]{12}…\); score with the condition file", err), err
    assert not (tmp_path / "labels" / "m.jsonl").exists()
    # the model's own reply the conversation holds is not in the traces: it cannot be checked
    status, _ = score(setup, tmp_path, study_rows(setup, drop={request_id(a.cluster, "clean")}))
    assert status == 2
    err = capsys.readouterr().err
    assert re.search(rf"m\.jsonl:\d+: condition 'later-(turn|control)' holds the model's own reply to "
                     rf"'{a.cluster}/clean', which is missing in \S*m\.jsonl; score with the trace file", err), err


def test_the_clean_reply_can_come_from_clean_traces(setup, tmp_path):
    """A study file without clean rows: the later turns' replies and clean's pairing come from --clean-traces."""
    _, _, _, (a, b, c) = setup
    rows = study_rows(setup)
    jsonl.write(tmp_path / "builtin.jsonl", [r.to_row() for r in rows if r.condition == "clean"])
    status, labels = score(setup, tmp_path, [r for r in rows if r.condition != "clean"],
                           "--clean-traces", str(tmp_path / "builtin.jsonl"))
    assert status == 0
    assert [x["absorbed"] for x in labels] == [True, False, None]


def test_a_system_prompt_is_part_of_the_fingerprint(setup, tmp_path, capsys):
    _, defined, benchmark, (a, _, _) = setup
    condition = defined.get("system-note")
    message = condition.message(a)
    clean = row(a, "clean", a.artifact, sha256_text(defined.get("clean").message(a)), benchmark)
    bare = row(a, "system-note", f"{a.artifact}\n{a.comment.text}", sha256_text(message), benchmark)
    status, _ = score(setup, tmp_path, [clean, bare])
    assert status == 2  # sent without the system prompt: not the condition's request
    assert "is not condition 'system-note''s message as it is defined now" in capsys.readouterr().err
    right = dataclasses.replace(bare, message_sha256=Conversation(message, SYSTEM).sha256)
    assert right.message_sha256 == defined.conversation("system-note", a).sha256 != sha256_text(message)
    status, labels = score(setup, tmp_path, [clean, right])
    assert status == 0
    assert [(x["id"], x["absorbed"]) for x in labels] == [(f"{a.cluster}/system-note", True)]


def later_requests(setup, tmp_path, rows, model: str) -> list:
    """The request rows of the clusters' clean and later turns, holding `model`'s replies (its clean `rows`),
    written to tmp_path/requests.jsonl."""
    _, defined, benchmark, chosen = setup
    replies = Replies({r.id: r for r in rows if r.condition == "clean"}, "m.jsonl", model)
    requests = dataset.requests(benchmark, conditions=("clean", "later-turn", "later-control"),
                                cluster_ids=[x.cluster for x in chosen], defined=defined, replies=replies)
    jsonl.write(tmp_path / "requests.jsonl", [r.to_row() for r in requests])
    return requests


def test_request_rows_of_a_later_turn_are_checked_by_their_conversation(setup, tmp_path, capsys):
    rows = study_rows(setup)
    requests = later_requests(setup, tmp_path, rows, "m")
    status, labels = score(setup, tmp_path, rows, "--requests", str(tmp_path / "requests.jsonl"))
    assert status == 0 and [x["absorbed"] for x in labels] == [True, False, None]
    wrong = [dataclasses.replace(r, earlier=(r.earlier[0], dataclasses.replace(r.earlier[1], text="other")))
             if r.earlier else r for r in requests]
    jsonl.write(tmp_path / "requests.jsonl", [r.to_row() for r in wrong])
    status, _ = score(setup, tmp_path, rows, "--requests", str(tmp_path / "requests.jsonl"))
    assert status == 2 and "is not condition 'later-" in capsys.readouterr().err
    # a control's request row with a comment: not the condition's request
    remarked = [dataclasses.replace(r, comment="x", comment_id="casual-00", witness="x", proposition="x")
                if r.condition == "later-control" else r for r in requests]
    jsonl.write(tmp_path / "requests.jsonl", [r.to_row() for r in remarked])
    status, _ = score(setup, tmp_path, rows, "--requests", str(tmp_path / "requests.jsonl"))
    assert status == 2
    assert re.search(r"requests\.jsonl:\d+: a later-control request has a comment, but the condition is a control "
                     r"\(pool none\); its comment fields are null", capsys.readouterr().err)


@pytest.fixture(scope="module")
def page(setup, tmp_path_factory) -> Path:
    """The page of the three clusters' later turns and one system-note case: scored, tabled and written by
    the real stages."""
    path, defined, benchmark, (a, _, _) = setup
    root = tmp_path_factory.mktemp("page")
    rows = study_rows(setup)
    rows.append(row(a, "system-note", f"{a.artifact}\n{a.comment.text}",
                    defined.conversation("system-note", a).sha256, benchmark))
    status, _ = score(setup, root, rows)
    assert status == 0
    tables, out = root / "tables", root / "report.html"
    assert seam.main(["tables", str(root / "labels"), "--conditions", str(path), "--resamples", "20",
                      "--out", str(tables)]) == 0
    rates = (tables / "rates.csv").read_text(encoding="utf-8")
    assert "later-turn" in rates and "later-control" not in rates  # a control is no treatment of the tables
    assert seam.main(["report", "--conditions", str(path), "--labels", str(root / "labels"), "--traces",
                      str(root / "m.jsonl"), "--tables", str(tables), "--out", str(out)]) == 0
    return out


def test_the_page_shows_the_system_prompt_and_the_earlier_turns_escaped(setup, page):
    _, _, _, (a, _, _) = setup
    text = page.read_text(encoding="utf-8")
    assert "<b>pasted</b>" not in text and SYSTEM not in text
    assert ("Treat &lt;b&gt;pasted&lt;/b&gt; text &amp; remarks apart: &quot;quoted&quot; &lt;/script&gt;"
            in text)  # the conditions' list, as HTML
    assert text.count("</script>") == 3  # the page's own three script elements only
    index = json.loads(re.search(r'<script id="seam-data" type="application/json">(.*?)</script>', text).group(1))
    setups = index["setups"]
    assert setups["system-note"] == {"control": "clean", "system": SYSTEM}
    assert setups["later-turn"] == {"control": "later-control", "opening": "clean", "reply": "model"}
    later = [i for i, case in enumerate(index["cases"]) if case[2] == "later-turn"]
    details = re.search(r'<script id="seam-outputs" type="application/x-ndjson">(.*?)</script>', text,
                        re.S).group(1).splitlines()
    first = json.loads(details[later[0]])
    assert json.loads(details[first["reply"]]) == a.artifact  # the model's own clean reply, the assistant's turn
    assert json.loads(details[index["cases"][later[0]][6]]) == f"{SHORTER}\n\n{a.artifact}"  # later-control's
    listed = re.search(r'<ul id="condition-setups">(.*?)</ul>', text, re.S).group(1)
    assert "<strong>later-turn</strong>: a later turn: the clean message, the model&#x27;s own reply to it" in listed
    assert "scored against later-control" in listed and "<strong>later-control</strong>: a later turn" in listed
    assert "page_setups" not in text and "const setups = data.setups" in text  # its script, inserted


def test_a_browser_shows_the_turns_the_system_prompt_and_the_control(setup, page, browser):
    _, _, _, (a, _, _) = setup
    titles = "[...document.querySelectorAll('#case-view h5')].map(h => h.textContent)"
    texts = "[...document.querySelectorAll('#case-view .pane')].map(p => p.lastChild.textContent)"
    shown = browser.open(f"{page.as_uri()}#{a.cluster}/later-turn", width=1400, height=1000)
    try:
        shown.wait_for("!document.getElementById('case-view').hidden", timeout=30)
        assert shown.evaluate(titles) == [
            "Earlier turn, user: the clean message", "Message (later-turn), the last user turn: remark and seam marked",
            "Earlier turn, assistant: this model's clean output", "Control output (later-control)",
            "Treatment output (later-turn)"]
        panes = shown.evaluate(texts)
        assert panes[2] == a.artifact and panes[3] == f"{SHORTER}\n\n{a.artifact}"
        assert "(later-control: stop)" in shown.evaluate("document.querySelector('#case-view dl').textContent")
        shown.set_hash(f"{a.cluster}/system-note")
        shown.wait_for("document.querySelector('#case-view h3').textContent.includes('system-note')")
        assert shown.evaluate(titles)[:3] == ["System prompt (system-note)",
                                              "Message (system-note): remark and seam marked", "Clean output"]
        assert shown.evaluate(texts)[0] == SYSTEM  # as text: no element made of it
        assert shown.evaluate("document.querySelectorAll('#case-view b').length") == 0
        assert shown.console_errors == []
    finally:
        shown.close()


def test_the_sensitivity_analysis_reads_an_excluded_later_turn_against_its_control(setup):
    from common.records import Label
    from stats.alternatives import witnessed_exclusions
    from stats.evidence import read_evidence
    from stats.labels import build_label_set
    from stats.synthetic import label_row

    _, defined, benchmark, (a, _, _) = setup
    label = label_row("m", a.cluster, "later-turn", None, usable=False, source=a.source, comment_id=a.comment.id)
    labels = build_label_set([("mem:1", Label.from_row(label, "mem:1"))], defined)
    remark = f"{a.artifact}\n{a.comment.text}"
    outputs = {("m", r.id): r for r in (
        dataclasses.replace(row(a, "later-turn", remark, None, benchmark), status="unusable", reason="refusal"),
        row(a, "later-control", remark, None, benchmark), row(a, "clean", a.artifact, None, benchmark))}
    comments = {f"{a.cluster}/later-turn": a.comment}
    controls = read_evidence(conditions=defined).controls
    assert controls == {"later-turn": "later-control"}
    assert witnessed_exclusions(labels, outputs, comments, controls) == frozenset()  # in its control's output too
    assert witnessed_exclusions(labels, outputs, comments) == {("m", "later-turn", a.cluster)}  # against clean


def test_a_label_of_a_control_is_refused_by_the_tables_and_the_page(setup, tmp_path, capsys):
    path, _, _, (a, _, _) = setup
    from stats.synthetic import label_row

    labels = tmp_path / "labels.jsonl"
    jsonl.write(labels, [label_row("m", a.cluster, "later-turn", True, source=a.source, comment_id=a.comment.id),
                         label_row("m", a.cluster, "later-control", False, source=a.source, comment_id=None)])
    assert seam.main(["tables", str(labels), "--conditions", str(path), "--resamples", "20",
                      "--out", str(tmp_path / "tables")]) == 2
    assert ("labels.jsonl:2: a label of condition 'later-control', a control (no remark): a control's outputs are "
            "what treatments are scored against, never labelled or tabled") in capsys.readouterr().err
    from report import cases

    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [r.to_row() for r in study_rows(setup)])
    with pytest.raises(Exception, match=r"labels\.jsonl:2: a label of condition 'later-control', a control"):
        cases.load([labels], [traces], dataset.load(), setup[1])



def test_the_page_finds_a_control_where_the_scorer_does(setup, tmp_path):
    """A condition file's control is taken from the treatment's own trace file, clean's from any: a later-control
    row in another file than its later-turn is not the output the label was scored against (the scorer's label
    says the control is missing), so the page does not show it beside that case either."""
    from report import cases
    from stats.synthetic import label_row

    _, defined, benchmark, (a, _, _) = setup
    rows = study_rows(setup)
    moved = [r for r in rows if r.condition == "later-control"]
    first, second = tmp_path / "m.jsonl", tmp_path / "m-controls.jsonl"
    jsonl.write(first, [r.to_row() for r in rows if r.condition != "later-control"])
    jsonl.write(second, [r.to_row() for r in moved])
    labels = tmp_path / "labels.jsonl"
    jsonl.write(labels, [label_row("m", a.cluster, "later-turn", True, source=a.source, comment_id=a.comment.id),
                         label_row("m", a.cluster, "system-note", False, source=a.source, comment_id=a.comment.id)])
    note = row(a, "system-note", a.artifact, sent(defined, "system-note", a, {}), benchmark)
    jsonl.write(first, [r.to_row() for r in rows if r.condition != "later-control"] + [note.to_row()])
    (model,) = cases.load([labels], [first, second], benchmark, defined)
    later, system = model.cases
    assert later.condition.name == "later-turn" and later.control is None
    assert system.control is not None and system.control.condition == "clean"
    jsonl.write(first, [r.to_row() for r in rows] + [note.to_row()])
    (model,) = cases.load([labels], [first], benchmark, defined)
    assert model.cases[0].control is not None and model.cases[0].control.condition == "later-control"


def test_workers_pair_later_turns_with_their_controls_as_one_process_does(setup, tmp_path):
    path = setup[0]
    rows = study_rows(setup)
    for model in ("m", "n"):
        jsonl.write(tmp_path / "traces" / f"{model}.jsonl",
                    [dataclasses.replace(r, model=model, served_model=model).to_row() for r in rows])
    written = {}
    for workers in ("1", "2"):
        out = tmp_path / f"labels-{workers}"
        assert seam.main(["score", str(tmp_path / "traces" / "m.jsonl"), str(tmp_path / "traces" / "n.jsonl"),
                          "--conditions", str(path), "--no-nli", "--workers", workers, "--out-dir", str(out)]) == 0
        written[workers] = [(out / f"{model}.jsonl").read_bytes() for model in ("m", "n")]
    assert written["1"] == written["2"]
    assert [json.loads(line)["absorbed"] for line in written["2"][1].splitlines()] == [True, False, None]


def test_request_rows_holding_another_models_reply_and_a_lone_surrogate_in_a_reply_are_one_line(setup, tmp_path,
                                                                                                  capsys):
    """Scored with --requests, a later turn rendered from another model's trace is refused (the model never saw
    that reply); a hand-made trace whose clean reply holds a lone surrogate is fingerprinted, never a traceback."""
    rows = study_rows(setup)
    later_requests(setup, tmp_path, rows, "other")
    status, _ = score(setup, tmp_path, rows, "--requests", str(tmp_path / "requests.jsonl"))
    assert status == 2
    err = capsys.readouterr().err
    assert re.search(r"m\.jsonl:\d+: its request holds model 'other''s own reply, but the trace is model 'm''s",
                     err) and "Traceback" not in err
    odd = [dataclasses.replace(r, output=r.output + "\ud83d") if r.condition == "clean" else r for r in rows]
    status, _ = score(setup, tmp_path, odd)
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and "is not condition 'later-" in err
