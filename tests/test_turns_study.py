"""The turns study's conditions (data/conditions/turns.toml: a system prompt, a later turn and its control) through
every stage: prompts with the model's own replies, run (and run --batch), score, tables, report and compare, on
four clusters answered by the fake server (its reply echoes the user's message; in a later turn, its own last reply
with the follow-up and any remark after it)."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
from support.fakebatch import DEFAULT_KEY, serve_batch
from support.fakeserver import config_keys, serve, toml_text

import seam
from benchmark import conditions, dataset
from common import jsonl

ROOT = Path(__file__).resolve().parents[1]
TURNS = ROOT / "data" / "conditions" / "turns.toml"
MINE = ("system-mitigation", "system-boundary", "later-turn", "later-control")
BUILTIN = "clean,newline,boundary,mitigation"


def rows_of(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Built-in traces of four clusters, then the study's four conditions, their later turns holding those clean
    outputs (--replies), all from the fake server."""
    root = tmp_path_factory.mktemp("turns")
    chosen = [c.cluster for c in dataset.load().clusters[::75]]
    with serve() as server:
        config = root / "fake.toml"
        config.write_text(toml_text(config_keys(server)), encoding="utf-8")
        builtin = root / "traces" / "m.jsonl"
        assert seam.main(["run", str(config), "--only", BUILTIN, "--cluster-ids", ",".join(chosen),
                          "--out", str(builtin)]) == 0
        before = len(server.received)
        assert seam.main(["run", str(config), "--conditions", str(TURNS), "--only", ",".join(MINE),
                          "--cluster-ids", ",".join(chosen), "--replies", str(builtin),
                          "--out", str(root / "study" / "traces" / "m.jsonl")]) == 0
        received = [r["body"] for r in server.received[before:]]  # the study's requests
    return root, chosen, received


def test_the_requests_carry_the_system_prompt_and_the_models_own_clean_reply(study):
    root, chosen, received = study
    defined = conditions.load(TURNS)
    builtin = {row["id"]: row for row in lines(root / "traces" / "m.jsonl")}
    sent = {(body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else None,
             len(body["messages"])) for body in received}
    assert (defined.get("system-mitigation").system, 2) in sent and (defined.get("system-boundary").system, 2) in sent
    cluster = dataset.load().by_name[chosen[0]]
    later = [body["messages"] for body in received if len(body["messages"]) == 3]
    assert len(later) == 2 * len(chosen)  # later-turn and later-control
    reply = builtin[f"{chosen[0]}/clean"]["output"]
    follow_up = defined.get("later-turn").follow_up_of(chosen[0])
    assert [{"role": "user", "content": defined.get("clean").message(cluster)},
            {"role": "assistant", "content": reply},
            {"role": "user", "content": follow_up + "\n" + cluster.comment.text}] in later
    traces = {row["id"]: row for row in lines(root / "study" / "traces" / "m.jsonl")}
    assert sorted(traces) == sorted(f"{c}/{m}" for c in chosen for m in MINE)
    assert traces[f"{chosen[0]}/system-mitigation"]["request"]["system"] == defined.get("system-mitigation").system
    assert "system" not in traces[f"{chosen[0]}/later-turn"]["request"]


def test_a_batch_run_sends_the_same_conversations(study, tmp_path, monkeypatch):
    root, chosen, received = study
    monkeypatch.setenv("FAKE_BATCH_KEY", DEFAULT_KEY)
    with serve_batch("openai", polls=1) as fake:
        config = tmp_path / "batch.toml"
        config.write_text(f'name = "fake-openai"\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "{fake.url}"\n'
                          'api_key_env = "FAKE_BATCH_KEY"\nmax_tokens = 512\ntemperature = 0\n', encoding="utf-8")
        out = tmp_path / "batch.jsonl"
        assert seam.main(["run", str(config), "--conditions", str(TURNS), "--only", ",".join(MINE),
                          "--cluster-ids", ",".join(chosen), "--replies", str(root / "traces" / "m.jsonl"),
                          "--batch", "--batch-poll", "0.01", "--out", str(out)]) == 0
        submitted = [json.loads(line)["body"] for f in fake.files.values() if f["object"]["purpose"] == "batch"
                     for line in f["data"].decode().splitlines()]
    assert sorted(json.dumps(b["messages"], sort_keys=True) for b in submitted) == sorted(
        json.dumps(b["messages"], sort_keys=True) for b in received)
    synced = {row["id"]: row["message_sha256"] for row in lines(root / "study" / "traces" / "m.jsonl")}
    assert {row["id"]: row["message_sha256"] for row in lines(out)} == synced


def score_all(root: Path) -> tuple[Path, Path]:
    labels, study_labels = root / "labels" / "m.jsonl", root / "study" / "labels" / "m.jsonl"
    assert seam.main(["score", str(root / "traces" / "m.jsonl"), "--no-nli", "--out", str(labels)]) == 0
    assert seam.main(["score", str(root / "study" / "traces" / "m.jsonl"), "--conditions", str(TURNS),
                      "--clean-traces", str(root / "traces"), "--no-nli", "--out", str(study_labels)]) == 0
    return labels, study_labels


def test_each_treatment_is_scored_against_its_control_and_tabled_with_the_files_contrasts(study, capsys):
    root, chosen, _ = study
    labels, study_labels = score_all(root)
    verdicts = {(label["condition"], label["absorbed"]) for label in lines(study_labels)}
    # the fake echoes the message: the remark after the bare line break is inside the edit, after END TEXT outside;
    # in the later turn it appends the follow-up and the remark to its own clean reply, the control the follow-up
    assert verdicts == {("system-mitigation", True), ("system-boundary", False), ("later-turn", True)}
    assert all(label["usable"] for label in lines(study_labels))
    tables = root / "tables"
    assert seam.main(["tables", str(labels), str(study_labels), "--conditions", str(TURNS), "--traces",
                      str(root / "traces"), str(root / "study" / "traces"), "--out", str(tables),
                      "--resamples", "20"]) == 0
    rates = {r["condition"] for r in rows_of(tables / "rates.csv")}
    assert rates == {"newline", "boundary", "mitigation", "system-mitigation", "system-boundary", "later-turn"}
    contrasts = [r["contrast"] for r in rows_of(tables / "contrasts.csv")]
    assert {"newline vs system-mitigation", "mitigation vs system-boundary", "newline vs later-turn"} <= set(contrasts)
    page = root / "report.html"
    assert seam.main(["report", "--conditions", str(TURNS), "--labels", str(labels), str(study_labels),
                      "--traces", str(root / "traces"), str(root / "study" / "traces"), "--tables", str(tables),
                      "--out", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    system = conditions.load(TURNS).get("system-boundary").system
    assert system.replace("'", "&#x27;") in text or json.dumps(system)[1:-1] in text
    assert "later-control" in text


def test_compare_scores_a_new_models_turns_beside_the_release(study, tmp_path, capsys):
    root, chosen, _ = study
    mine = tmp_path / "runs" / "new-model.jsonl"
    mine.parent.mkdir()
    rows = lines(root / "traces" / "m.jsonl") + lines(root / "study" / "traces" / "m.jsonl")
    jsonl.write(mine, [{**row, "model": "new-model"} for row in rows])
    out = tmp_path / "runs" / "compare"
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        assert seam.main(["compare", str(mine), "--conditions", str(TURNS), "--out", str(out)]) == 0
    finally:
        os.chdir(cwd)
    labels = lines(out / "labels" / "new-model.jsonl")
    later = {label["id"]: label for label in labels if label["condition"] == "later-turn"}
    assert len(later) == len(chosen) and all(label["absorbed"] for label in later.values())
    assert not any(label["condition"] == "later-control" for label in labels)
    assert re.search(r"later-turn", (out / "tables" / "rates.csv").read_text(encoding="utf-8"))


def test_request_rows_of_one_models_later_turns_are_refused_for_another(study, tmp_path, capsys):
    """`seam.py prompts --replies` writes whose reply a later turn holds (reply_model); a run of another config
    with those rows would show that model a reply it never gave."""
    root, chosen, _ = study
    rows = tmp_path / "later.jsonl"
    capsys.readouterr()
    assert seam.main(["prompts", "--conditions", str(TURNS), "--only", "later-turn", "--cluster-ids",
                      ",".join(chosen), "--replies", str(root / "traces" / "m.jsonl")]) == 0
    rows.write_text(capsys.readouterr().out, encoding="utf-8")
    assert {row["reply_model"] for row in lines(rows)} == {"fake-openai"}
    with serve() as server:
        config = tmp_path / "other.toml"
        config.write_text(toml_text({**config_keys(server), "name": "other-model"}), encoding="utf-8")
        assert seam.main(["run", str(config), "--conditions", str(TURNS), "--requests", str(rows),
                          "--out", str(tmp_path / "t.jsonl")]) == 2
        assert server.received == []
    assert re.search(r"later\.jsonl:1: a later-turn request holds model 'fake-openai''s own reply, not "
                     r"'other-model''s", capsys.readouterr().err)
