"""`seam.py validity --conditions FILE`: a condition file's conditions are checked like the built-in ones.

A study's trace file (no clean rows) is given beside the model's built-in one; each treatment is compared with
its own control (clean, or a later turn's later-control, never clean for it), echoes are counted by the
condition's own marker lines, a check that means nothing for a condition is left empty, and without
--conditions nothing changes."""

from __future__ import annotations

import filecmp
from datetime import timedelta

import pytest

import seam
from benchmark import dataset
from common import jsonl
from common.files import read_csv
from scorer.markercut import Markers
from validity import syntax
from validity.synthetic import trace_row

BENCHMARK = dataset.load()
SHA = BENCHMARK.sha256
HE1, HE2, WK = (BENCHMARK.cluster(name) for name in ("humaneval-001", "humaneval-002", "wikipedia-001"))
TOML = """contrasts = ["boundary vs tagged"]

[conditions.tagged]
pool = "casual"
open = "<doc>"
close = "</doc>"
breaks = 1

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
"""


def broken(cluster) -> str:
    """The cluster's reference with its first line's colon removed: invalid Python."""
    first, rest = cluster.reference.split("\n", 1)
    return first.rstrip().rstrip(":") + "\n" + rest


def row(cluster, condition: str, output: str, at: int) -> dict:
    return trace_row(cluster.cluster, condition, output, at=timedelta(seconds=at), benchmark_sha256=SHA)


@pytest.fixture
def files(tmp_path):
    """The condition file, the model's built-in trace (clean and boundary rows) and its study trace.

    humaneval-001: clean valid, later-control invalid, later-turn invalid (the same as its control);
    humaneval-002: clean valid, later-control valid, later-turn invalid (only the treatment);
    so later-turn against later-control is 1 to 0 on 2 pairs, where against clean it would be 2 to 0.
    tagged echoes its own markers: around valid code on humaneval-001, twice over on humaneval-002 (the inner
    pair left in the edited text, which parses once they are removed)."""
    conditions = tmp_path / "study.toml"
    conditions.write_text(TOML, encoding="utf-8")
    twice = f"<doc>\n{HE2.reference}\n</doc>\n<doc>\n{HE2.reference}\n</doc>"
    builtin = [row(HE1, "clean", HE1.reference, 0), row(HE2, "clean", HE2.reference, 1),
               row(WK, "clean", WK.reference, 2), row(HE1, "boundary", HE1.reference, 3),
               row(WK, "boundary", WK.artifact, 4)]
    study = [row(HE1, "later-control", broken(HE1), 10), row(HE2, "later-control", HE2.reference, 11),
             row(HE1, "later-turn", broken(HE1), 12), row(HE2, "later-turn", broken(HE2), 13),
             row(WK, "later-control", WK.artifact, 14), row(WK, "later-turn", WK.reference, 15),
             row(HE1, "tagged", f"**<doc>**\n{HE1.reference}\n</doc>", 16), row(HE2, "tagged", twice, 17)]
    jsonl.write(tmp_path / "builtin" / "model-a.jsonl", builtin)
    jsonl.write(tmp_path / "study" / "model-a.jsonl", study)
    return conditions, tmp_path / "builtin" / "model-a.jsonl", tmp_path / "study" / "model-a.jsonl"


def run(*argv) -> int:
    return seam.main(["validity", *map(str, argv)])


def table(out, name: str) -> list[dict]:
    return read_csv(out / f"{name}.csv")


def test_a_condition_files_treatments_are_checked_and_paired_with_their_own_controls(files, tmp_path):
    conditions, builtin, study = files
    out = tmp_path / "out"
    assert run(builtin, study, "--conditions", conditions, "--out", out) == 0
    syntax_rows = {(r["source"], r["condition"]): r for r in table(out, "validity_syntax")}
    assert [c for s, c in syntax_rows if s == "all"] == ["clean", "boundary", "tagged", "later-turn",
                                                         "later-control"]  # built-ins first, then the file's
    assert (syntax_rows["all", "later-turn"]["n"], syntax_rows["all", "later-turn"]["invalid"]) == ("2", "2")
    contrasts = {r["contrast"]: r for r in table(out, "validity_syntax_contrasts")}
    assert "later-turn vs clean" not in contrasts and "later-control vs clean" not in contrasts
    later = contrasts["later-turn vs later-control"]
    assert (later["n_pairs"], later["b"], later["c"]) == ("2", "1", "0")
    assert (contrasts["tagged vs clean"]["n_pairs"], contrasts["tagged vs clean"]["b"]) == ("2", "1")
    markdown = (out / "validity_syntax_contrasts.md").read_text()
    assert "each condition vs its control" in markdown
    assert "c: only under its control (clean; later-turn against later-control)" in markdown
    # the similarity to the control output: the later turn (the reference) against later-control (the artifact)
    similarity = {(r["source"], r["condition"]): r for r in table(out, "validity_similarity")}
    turn, control = similarity["wikipedia", "later-turn"], similarity["wikipedia", "later-control"]
    assert (turn["pairs"], turn["higher"], turn["lower"]) == ("1", "1", "0")
    assert control["pairs"] == "" and control["diff"] == ""  # a control is compared with nothing
    assert float(turn["diff"]) == pytest.approx(1 - float(control["chrf"]))
    # a later turn edits the model's own reply, not the artifact: "unchanged" says nothing, so it is left empty
    assert turn["unchanged"] == "" and control["unchanged"] == ""
    assert similarity["wikipedia", "boundary"]["unchanged"] == "1"
    notes = (out / "validity_similarity.md").read_text()
    assert "later-turn against later-control" in notes and "unchanged is left empty" in notes
    provenance = [r["condition"] for r in table(out, "validity_provenance")]
    assert provenance == ["clean", "boundary", "tagged", "later-turn", "later-control"]


def test_the_markers_of_a_users_condition_are_counted_as_echoed(files, tmp_path):
    conditions, builtin, study = files
    out = tmp_path / "out"
    assert run(builtin, study, "--conditions", conditions, "--out", out) == 0
    tagged = {r["source"]: r for r in table(out, "validity_syntax") if r["condition"] == "tagged"}["all"]
    assert (tagged["n"], tagged["echo"], tagged["marker_in_text"]) == ("2", "2", "1")
    assert (tagged["invalid"], tagged["recovered"]) == ("1", "1")
    returned = {r["source"]: r for r in table(out, "validity_syntax_as_returned")
                if r["condition"] == "tagged"}["all"]
    assert (returned["invalid"], returned["echoing"], returned["recovered"]) == ("2", "2", "2")
    items = {i["id"]: i for _, i in jsonl.read(out / "validity_items.jsonl")}
    assert items["humaneval-001/tagged"]["echoes_marker"] and items["humaneval-001/tagged"]["parses"]
    assert "own marker lines as well, as the extraction cuts at them" in (out / "validity_syntax.md").read_text()
    # the same lines are no marker of a built-in condition: only BEGIN TEXT and END TEXT are
    reply = f"<doc>\n{HE1.reference}\n</doc>"
    assert syntax.check_reply(reply, Markers.of("<doc>", "</doc>")).recovered
    assert not syntax.check_reply(reply).echoes_marker


def test_a_later_turn_without_its_control_says_so(files, tmp_path):
    conditions, builtin, study = files
    rows = [r for _, r in jsonl.read(study) if r["condition"] != "later-control"]
    jsonl.write(study, rows)
    out = tmp_path / "out"
    assert run(builtin, study, "--conditions", conditions, "--out", out) == 0
    assert not any(r["contrast"].startswith("later-turn") for r in table(out, "validity_syntax_contrasts"))
    markdown = (out / "validity_syntax_contrasts.md").read_text()
    assert "No later-control outputs: later-turn cannot be compared with later-control, its control." in markdown


def test_a_later_turn_and_its_control_in_two_files_are_refused_as_the_scorer_would_not_pair_them(
        files, tmp_path, capsys):
    conditions, builtin, study = files
    rows = [r for _, r in jsonl.read(study)]
    jsonl.write(study, [r for r in rows if r["condition"] != "later-control"])
    apart = tmp_path / "apart" / "controls.jsonl"
    apart.parent.mkdir()
    jsonl.write(apart, [r for r in rows if r["condition"] == "later-control"])
    assert run(builtin, study, apart, "--conditions", conditions, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "the control of 'humaneval-001/later-turn', 'later-control', is at" in err
    assert "keep a study's treatments and their control in one file" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_condition_file_row_sent_otherwise_is_refused(files, tmp_path, capsys):
    conditions, builtin, study = files
    rows = [r if r["condition"] != "tagged" else {**r, "message_sha256": "0" * 64} for _, r in jsonl.read(study)]
    jsonl.write(study, rows)
    assert run(builtin, study, "--conditions", conditions, "--out", tmp_path / "out") == 2
    assert "is not condition 'tagged''s message as it is defined now" in capsys.readouterr().err
    # without the file, the condition is not known: the refusal names the option
    assert run(builtin, study, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "is not defined (built-in: clean, newline, blank, boundary, mitigation, native); pass --conditions" in err
    assert not (tmp_path / "out").exists()


def test_without_conditions_the_built_in_tables_are_the_same_bytes(files, tmp_path):
    conditions, builtin, _ = files
    assert run(builtin, "--out", tmp_path / "plain") == 0
    assert run(builtin, "--conditions", conditions, "--out", tmp_path / "with") == 0
    names = sorted(p.name for p in (tmp_path / "plain").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "with").iterdir())
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "plain", tmp_path / "with", names, shallow=False)
    assert (mismatch, errors) == ([], [])


def test_a_study_file_given_without_the_built_in_one_is_told_which_file_to_add(files, tmp_path):
    conditions, _, study = files
    out = tmp_path / "out"
    assert run(study, "--conditions", conditions, "--out", out) == 0
    markdown = (out / "validity_syntax_contrasts.md").read_text()
    assert ("No clean outputs: no contrast with clean can be computed. A condition file's treatments are compared "
            "with the model's clean outputs in its built-in trace file: give it beside the study's.") in markdown


def test_a_later_turn_is_checked_against_the_conversation_with_the_models_own_reply(files, tmp_path, capsys):
    """As the scorer checks it: a later turn's message_sha256 is the conversation rebuilt with the model's clean
    output from the trace files given; another reply, or none there, is refused in one line."""
    from benchmark import conditions as conditions_module
    from benchmark.replies import Replies
    from common.traces import read_final

    conditions, builtin, study = files
    defined = conditions_module.load(conditions)
    replies = Replies(dict(read_final(builtin).final), "built-in")
    rows = [r if r["condition"] not in ("later-turn", "later-control") else
            {**r, "message_sha256": defined.conversation(r["condition"], BENCHMARK.cluster(r["cluster"]),
                                                         replies).sha256} for _, r in jsonl.read(study)]
    jsonl.write(study, rows)
    assert run(builtin, study, "--conditions", conditions, "--out", tmp_path / "ok") == 0
    capsys.readouterr()
    # the clean output it held was another one: the built-in trace's clean row changed since
    changed = [r if r["id"] != "humaneval-001/clean" else {**r, "output": r["output"] + "\n# edited"}
               for _, r in jsonl.read(builtin)]
    jsonl.write(tmp_path / "other" / "model-a.jsonl", changed)
    assert run(tmp_path / "other" / "model-a.jsonl", study, "--conditions", conditions, "--out", tmp_path / "x") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model-a.jsonl:" in err
    assert "the conversation sent (message_sha256" in err and "with the model's own reply" in err
    # without the built-in file, the reply is not there to rebuild it with
    assert run(study, "--conditions", conditions, "--out", tmp_path / "y") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "which is missing in the trace files given; give the model's trace file" in err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
