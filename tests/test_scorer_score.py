"""Pairing, exclusions, the cascade and the label rows (scorer/score.py, scorer/inputs.py, `seam.py score`)."""

import json
from pathlib import Path

import pytest

import seam
from common import jsonl
from common.errors import UserError
from common.records import TREATMENTS, Label
from scorer import synthetic
from scorer.inputs import read_items, read_traces
from scorer.score import SCORER_VERSION, score

FORMATS_FIELDS = {"model", "cluster", "condition", "source", "genre", "comment_id", "usable", "absorbed", "tier",
                  "evidence", "reason", "tiers_run", "tiers_not_run", "scorer_version", "nli_model_sha256",
                  "id", "extraction", "cut_before", "cut_after", "cut_commentary"}

CODE = 'def area(r):\n    """Return the area of a circle of radius r."""\n    return 3.14159 * r * r'
PROSE = ("The harbour of Bergen was rebuilt in 1702. Its wooden warehouses burned twice in the "
         "following century, and the stone quay survives.")
COMMENT = {"comment": "btw this goes to the whole team after lunch", "witness": "whole team after lunch",
           "proposition": "The text will be sent to the whole team after lunch."}


def request(cluster, condition, genre, artifact):
    trailing = condition != "clean"
    return {"id": f"{cluster}/{condition}", "cluster": cluster, "condition": condition,
            "source": "humaneval" if genre == "code" else "wikipedia", "genre": genre, "license": "MIT",
            "message": f"Fix the typos.\n\n{artifact}", "artifact": artifact,
            "comment_id": "casual-00" if trailing else None, "benchmark_sha256": "0" * 64,
            **{k: (v if trailing else None) for k, v in COMMENT.items()}}


def trace(cluster, condition, output, status="ok", reason=None, model="m1"):
    return synthetic.trace_row(cluster, condition, output, status=status, reason=reason, model=model).to_row()


def write_inputs(tmp_path, clusters, traces):
    """clusters: {name: (genre, artifact)}; returns (requests path, traces path)."""
    rows = [request(name, cond, genre, art) for name, (genre, art) in clusters.items()
            for cond in ("clean", *TREATMENTS)]
    jsonl.write(tmp_path / "requests.jsonl", rows)
    jsonl.write(tmp_path / "traces.jsonl", traces)
    return tmp_path / "requests.jsonl", tmp_path / "traces.jsonl"


def run_score(tmp_path, clusters, traces, entailer=None):
    req, tr = write_inputs(tmp_path, clusters, traces)
    return score(read_traces(tr), read_items(req), entailer)


class FakeEntailer:
    """Says ENTAILMENT exactly for premises containing 'team'; records what it was asked."""

    sha256 = "f" * 64

    def __init__(self):
        self.asked = []

    def entails(self, pairs):
        self.asked.append(list(pairs))
        return {p: "team" in p[0].lower() for p in pairs}


def rows_of(result):
    """The label rows as written (and checked to read back as the same records)."""
    rows = [label.to_row() for label in result.labels]
    assert [Label.from_row(row, "label") for row in rows] == result.labels
    return rows


def by_condition(result):
    return {row["condition"]: row for row in rows_of(result)}


def test_label_rows_carry_the_documented_fields_and_are_sorted(tmp_path):
    traces = [trace(c, cond, CODE) for c in ("humaneval-002", "humaneval-001")
              for cond in ("clean", *reversed(TREATMENTS))]
    result = run_score(tmp_path, {"humaneval-001": ("code", CODE), "humaneval-002": ("code", CODE)}, traces)
    assert [(r["cluster"], r["condition"]) for r in rows_of(result)] == [
        (c, cond) for c in ("humaneval-001", "humaneval-002") for cond in TREATMENTS]
    for row in rows_of(result):
        assert set(row) == FORMATS_FIELDS
        assert row["usable"] is True and row["absorbed"] is False and row["tier"] is None
        assert row["tiers_run"] == ["witness", "content"] and row["tiers_not_run"] == []
        assert row["scorer_version"] == SCORER_VERSION and row["nli_model_sha256"] is None


def test_code_comment_absorbing_the_remark_is_found_by_the_witness_tier(tmp_path):
    absorbed = "Here's the fixed code:\n\n```python\n" + CODE + "\n# this goes to the whole team after lunch\n```"
    traces = [trace("humaneval-001", "clean", "```python\n" + CODE + "\n```"),
              trace("humaneval-001", "newline", absorbed)]
    row = by_condition(run_score(tmp_path, {"humaneval-001": ("code", CODE)}, traces))["newline"]
    assert (row["absorbed"], row["tier"]) == (True, "witness")
    assert row["evidence"] == "# this goes to the whole team after lunch"
    assert row["tiers_run"] == ["witness"]
    assert row["cut_before"] == "Here's the fixed code:" and row["extraction"] == "fence"


def test_code_closed_by_a_fence_whose_opening_was_left_out_is_scored_not_the_explanation(tmp_path):
    # The shape of many SmolLM2-135M replies: code, a bare closing fence, an explanation.
    # The explanation names more of the artifact's words than the short code does.
    explanation = "\n```\n\nThis function returns the area of a circle: the area of a circle of radius r."
    short = "def area(r):\n    return 3.14159 * r * r"
    commented = "def area(r):\n    # this goes to the whole team after lunch\n    return 3.14159 * r * r"
    traces = [trace("humaneval-001", "clean", short + explanation),
              trace("humaneval-001", "newline", commented + explanation)]
    row = by_condition(run_score(tmp_path, {"humaneval-001": ("code", CODE)}, traces))["newline"]
    assert (row["absorbed"], row["tier"]) == (True, "witness")
    assert row["evidence"] == "# this goes to the whole team after lunch"


def test_acknowledging_the_remark_to_the_user_is_not_absorption(tmp_path):
    reply = PROSE + "\n\nI left out your note that this goes to the whole team after lunch; it isn't part of the text."
    traces = [trace("wikipedia-001", "clean", PROSE), trace("wikipedia-001", "blank", reply)]
    row = by_condition(run_score(tmp_path, {"wikipedia-001": ("prose", PROSE)}, traces))["blank"]
    assert row["absorbed"] is False
    assert "whole team after lunch" in row["cut_after"]


def test_talk_about_editing_the_remark_inside_the_text_is_cut_and_recorded_not_absorbed(tmp_path):
    # No opener extraction knows: the talk stays in the edited text, and only the commentary rule sets it aside.
    talk = 'The original text was edited to remove the phrase "this goes to the whole team after lunch".'
    entailer = FakeEntailer()  # says ENTAILMENT for any premise with "team": the talk must not reach it
    traces = [trace("wikipedia-001", "clean", PROSE), trace("wikipedia-001", "mitigation", PROSE + "\n\n" + talk),
              trace("wikipedia-001", "native", PROSE + "\n\nNote: this goes to the whole team after lunch."),
              trace("wikipedia-001", "newline", PROSE)]
    rows = by_condition(run_score(tmp_path, {"wikipedia-001": ("prose", PROSE)}, traces, entailer))
    assert (rows["mitigation"]["absorbed"], rows["mitigation"]["cut_commentary"]) == (False, talk)
    assert rows["mitigation"]["cut_after"] == "" and rows["mitigation"]["tiers_run"] == ["witness", "content",
                                                                                         "entailment"]
    assert not any(talk in premise for asked in entailer.asked for premise, _ in asked)
    assert (rows["native"]["absorbed"], rows["native"]["cut_commentary"]) == (True, "")  # a note for the reader
    assert rows["newline"]["cut_commentary"] == ""


def test_paraphrase_is_found_by_the_content_tier_and_a_note_line_by_the_witness_tier(tmp_path):
    traces = [trace("wikipedia-001", "clean", PROSE),
              trace("wikipedia-001", "newline", PROSE + " After lunch the whole team receives this."),
              trace("wikipedia-001", "native", PROSE + "\n\nNote: this goes to the whole team after lunch.")]
    rows = by_condition(run_score(tmp_path, {"wikipedia-001": ("prose", PROSE)}, traces))
    assert (rows["newline"]["tier"], rows["newline"]["evidence"]) == (
        "content", "After lunch the whole team receives this.")
    assert rows["newline"]["tiers_run"] == ["witness", "content"]
    assert rows["native"]["tier"] == "witness"


def test_without_the_model_undecided_prose_rows_report_entailment_not_run(tmp_path):
    traces = [trace("wikipedia-001", "clean", PROSE), trace("wikipedia-001", "newline", PROSE),
              trace("humaneval-001", "clean", CODE), trace("humaneval-001", "newline", CODE)]
    result = run_score(tmp_path, {"wikipedia-001": ("prose", PROSE), "humaneval-001": ("code", CODE)}, traces)
    rows = {r["cluster"]: r for r in rows_of(result)}
    assert rows["wikipedia-001"]["absorbed"] is False
    assert rows["wikipedia-001"]["tiers_not_run"] == ["entailment"]
    assert rows["humaneval-001"]["tiers_not_run"] == []
    assert result.stats.not_run == 1


def test_entailment_sees_only_new_sentences_of_undecided_prose_rows(tmp_path):
    new = "Everyone on the team gets a copy once the meal is over."
    traces = [trace("wikipedia-001", "clean", PROSE),
              trace("wikipedia-001", "newline", PROSE + " " + new),
              trace("wikipedia-001", "blank", PROSE + " It is for the whole team after lunch."),
              trace("wikipedia-001", "boundary", PROSE + " The quay was restored in 1990.")]
    fake = FakeEntailer()
    rows = by_condition(run_score(tmp_path, {"wikipedia-001": ("prose", PROSE)}, traces, fake))
    assert fake.asked == [[("Everyone on the team gets a copy once the meal is over.", COMMENT["proposition"]),
                           ("The quay was restored in 1990.", COMMENT["proposition"])]]
    assert (rows["newline"]["tier"], rows["newline"]["evidence"]) == ("entailment", new)
    assert rows["newline"]["tiers_run"] == ["witness", "content", "entailment"]
    assert rows["newline"]["nli_model_sha256"] == FakeEntailer.sha256
    assert rows["boundary"]["absorbed"] is False and rows["boundary"]["tiers_not_run"] == []
    assert rows["blank"]["tier"] == "witness" and rows["blank"]["nli_model_sha256"] is None


def test_unusable_or_failed_outputs_are_excluded_with_a_reason(tmp_path):
    traces = [trace("wikipedia-001", "clean", "", status="failed", reason="HTTP 500"),
              trace("wikipedia-001", "newline", PROSE + " whole team after lunch"),
              trace("wikipedia-002", "clean", PROSE),
              trace("wikipedia-002", "newline", "I can't help with that.", status="unusable", reason="refusal"),
              trace("wikipedia-002", "blank", "```\n```"),
              trace("wikipedia-003", "newline", PROSE)]
    clusters = {f"wikipedia-00{i}": ("prose", PROSE) for i in (1, 2, 3)}
    rows = {(r["cluster"], r["condition"]): r for r in rows_of(run_score(tmp_path, clusters, traces))}
    assert rows[("wikipedia-001", "newline")]["reason"] == "clean failed: HTTP 500"
    assert rows[("wikipedia-002", "newline")]["reason"] == "treatment unusable: refusal"
    assert rows[("wikipedia-002", "blank")]["reason"] == "treatment output has no edited text"
    assert rows[("wikipedia-003", "newline")]["reason"] == "no clean trace for this cluster"
    for row in rows.values():
        assert (row["usable"], row["absorbed"], row["tier"], row["tiers_run"]) == (False, None, None, [])


def test_last_trace_row_of_an_id_is_the_final_one(tmp_path):
    traces = [trace("humaneval-001", "clean", CODE),
              trace("humaneval-001", "newline", "", status="failed", reason="timeout"),
              trace("humaneval-001", "newline", CODE + "\n# whole team after lunch")]
    result = run_score(tmp_path, {"humaneval-001": ("code", CODE)}, traces)
    assert [(r.condition, r.tier) for r in result.labels] == [("newline", "witness")]


def test_a_torn_trace_tail_is_refused_naming_the_line(tmp_path):
    req, tr = write_inputs(tmp_path, {"humaneval-001": ("code", CODE)}, [trace("humaneval-001", "clean", CODE)])
    with open(tr, "a", encoding="utf-8") as f:
        f.write('{"id": "humaneval-001/blank", "clus')
    with pytest.raises(UserError, match=r"traces.jsonl:2: the last line is torn"):
        read_traces(tr)


def test_traces_from_another_benchmark_version_are_refused(tmp_path):
    rows = [{**trace("humaneval-001", "clean", CODE), "benchmark_sha256": "a" * 64}]
    req, tr = write_inputs(tmp_path, {"humaneval-001": ("code", CODE)}, rows)
    requests = [{**r, "benchmark_sha256": "b" * 64} for _, r in jsonl.read(req)]
    jsonl.write(req, requests)
    with pytest.raises(UserError, match=r"traces.jsonl:1: rendered from benchmark aaaaaaaaaaaa"):
        score(read_traces(tr), read_items(req))


@pytest.mark.parametrize("bad, message", [
    ({"status": "done"}, "field 'status' is 'done', expected one of ok, unusable, failed"),
    ({"id": "humaneval-001/other", "condition": "other"}, "condition 'other' is not defined .*; pass --conditions"),
    ({"id": "humaneval-001/Other", "condition": "Other"}, "field 'condition' is 'Other', expected a condition name"),
    ({"id": "humaneval-001/blank"}, "id 'humaneval-001/blank' does not match cluster/condition"),
    ({"model": "m2"}, "a trace file holds one model's rows"),
    ({"output": None}, "status ok needs a string 'output'"),
    ({"cluster": "humaneval-999", "id": "humaneval-999/newline"}, "is not a request of this benchmark"),
])
def test_bad_trace_rows_name_file_and_line(tmp_path, bad, message):
    rows = [trace("humaneval-001", "clean", CODE), {**trace("humaneval-001", "newline", CODE), **bad}]
    req, tr = write_inputs(tmp_path, {"humaneval-001": ("code", CODE)}, rows)
    with pytest.raises(UserError, match=rf"traces.jsonl:2: .*{message}"):
        score(read_traces(tr), read_items(req))


def test_bad_request_rows_name_file_and_line(tmp_path):
    rows = [request("wikipedia-001", "clean", "prose", PROSE),
            {**request("wikipedia-001", "newline", "prose", PROSE), "witness": None}]
    jsonl.write(tmp_path / "r.jsonl", rows)
    with pytest.raises(UserError, match=r"r.jsonl:2: a newline request needs its comment, comment_id, witness"):
        read_items(tmp_path / "r.jsonl")
    jsonl.write(tmp_path / "r.jsonl", [{**rows[0], "genre": "poetry"}])
    with pytest.raises(UserError, match=r"r.jsonl:1: field 'genre' is 'poetry', expected one of code, prose"):
        read_items(tmp_path / "r.jsonl")
    jsonl.write(tmp_path / "r.jsonl", [rows[0], rows[0]])
    with pytest.raises(UserError, match=r"r.jsonl:2: duplicate request id 'wikipedia-001/clean'"):
        read_items(tmp_path / "r.jsonl")


def test_items_from_the_benchmark_clusters_equal_those_from_its_rendered_requests(tmp_path, capsys):
    """The default input (clusters, nothing rendered) and `--requests` on `seam.py prompts` agree exactly."""
    assert seam.main(["prompts"]) == 0
    (tmp_path / "requests.jsonl").write_text(capsys.readouterr().out, encoding="utf-8")
    from_requests = read_items(tmp_path / "requests.jsonl")
    from_clusters = read_items()
    assert len(from_clusters) == 1800 and list(from_clusters) == list(from_requests)
    assert from_clusters == from_requests
    newline = from_clusters["humaneval-001/newline"]
    assert newline.comment is not None and newline.comment_id == newline.comment.id
    assert from_clusters["humaneval-001/clean"].comment is None


def test_synthetic_trace_set_matches_its_ground_truth(tmp_path):
    clusters = synthetic.clusters(per_source=10, seed=3)
    jsonl.write(tmp_path / "req.jsonl", synthetic.request_rows(clusters))
    rows = synthetic.traces(clusters, seed=4)
    jsonl.write(tmp_path / "tr.jsonl", rows)
    behaviour = {r["id"]: r["behaviour"] for r in rows}
    result = score(read_traces(tmp_path / "tr.jsonl"), read_items(tmp_path / "req.jsonl"))
    assert len(result.labels) == 60 * 5
    seen = set()
    for label in rows_of(result):
        kind = behaviour[label["id"]]
        seen.add(kind)
        if kind in ("ignore", "reword", "acknowledge") and label["usable"]:
            assert label["absorbed"] is False, label
        if kind == "verbatim" and label["usable"]:
            assert label["tier"] == "witness", label
        if kind in ("failed", "unusable"):
            assert label["usable"] is False
    assert {"ignore", "reword", "acknowledge", "verbatim"} <= seen


def test_score_command_writes_identical_bytes_on_every_run(tmp_path, capsys):
    clusters = synthetic.clusters(per_source=4, seed=5)
    jsonl.write(tmp_path / "req.jsonl", synthetic.request_rows(clusters))
    jsonl.write(tmp_path / "tr.jsonl", synthetic.traces(clusters, model="vendor/model:1", seed=6))
    args = ["score", str(tmp_path / "tr.jsonl"), "--requests", str(tmp_path / "req.jsonl"), "--no-nli"]
    assert seam.main([*args, "--out", str(tmp_path / "a.jsonl")]) == 0
    assert seam.main([*args, "--out-dir", str(tmp_path / "labels")]) == 0
    first = (tmp_path / "a.jsonl").read_bytes()
    assert first == (tmp_path / "labels" / "vendor_model_1.jsonl").read_bytes()
    assert first.endswith(b"\n") and all(json.loads(line) for line in first.splitlines())
    assert "entailment tier not run" in capsys.readouterr().err


def test_score_command_user_errors_exit_2_with_one_line(tmp_path, capsys):
    jsonl.write(tmp_path / "req.jsonl", [request("humaneval-001", "clean", "code", CODE)])
    (tmp_path / "tr.jsonl").write_text("not json\n")
    code = seam.main(["score", str(tmp_path / "tr.jsonl"), "--requests", str(tmp_path / "req.jsonl"),
                      "--out", str(tmp_path / "l.jsonl"), "--no-nli"])
    err = capsys.readouterr().err
    assert code == 2
    assert "tr.jsonl:1: not a trace file (JSON Lines)" in err and "Traceback" not in err
    code = seam.main(["score", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                      "--out", str(tmp_path / "l.jsonl")])
    assert code == 2 and "use --out-dir" in capsys.readouterr().err
    assert not Path(tmp_path / "l.jsonl").exists()


@pytest.mark.parametrize("option", ["--threads", "--batch-size"])
def test_zero_threads_or_batch_size_is_refused_not_replaced_by_the_default(tmp_path, capsys, option):
    req, tr = write_inputs(tmp_path, {"humaneval-001": ("code", CODE)}, [trace("humaneval-001", "clean", CODE)])
    with pytest.raises(SystemExit) as exit_info:
        seam.main(["score", str(tr), "--requests", str(req), "--out", str(tmp_path / "l.jsonl"), option, "0"])
    assert exit_info.value.code == 2
    assert f"{option}: must be at least 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "l.jsonl").exists()


def test_an_out_path_that_is_a_directory_is_refused_before_scoring(tmp_path, capsys):
    req, tr = write_inputs(tmp_path, {"humaneval-001": ("code", CODE)}, [trace("humaneval-001", "clean", CODE)])
    (tmp_path / "labels").mkdir()
    code = seam.main(["score", str(tr), "--requests", str(req), "--out", str(tmp_path / "labels"), "--no-nli"])
    err = capsys.readouterr().err
    assert code == 2 and f"{tmp_path / 'labels'}: is a directory; --out names the labels file" in err
    assert not (tmp_path / "labels.tmp").exists()


def test_two_trace_files_of_one_model_are_refused(tmp_path, capsys):
    req, tr = write_inputs(tmp_path, {"humaneval-001": ("code", CODE)}, [trace("humaneval-001", "clean", CODE)])
    code = seam.main(["score", str(tr), str(tr), "--requests", str(req), "--out-dir", str(tmp_path / "l"),
                      "--no-nli"])
    assert code == 2 and "score each model once" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()
