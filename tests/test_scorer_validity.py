"""Placebo and audit, and end-to-end determinism with the tiny entailment model."""

import hashlib
from pathlib import Path

import pytest

import seam
from common import jsonl
from scorer import synthetic
from scorer.inputs import read_requests, read_traces
from scorer.placebo import donors, placebo

FIXTURE = Path(__file__).parent / "fixtures" / "tiny-deberta"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A synthetic benchmark of 4 clusters per source with one model's traces."""
    root = tmp_path_factory.mktemp("synthetic")
    clusters = synthetic.clusters(per_source=4, seed=11)
    jsonl.write(root / "req.jsonl", synthetic.requests(clusters))
    jsonl.write(root / "tr.jsonl", synthetic.traces(clusters, seed=12))
    return root


def test_donors_are_a_fixed_derangement_within_genre_and_condition(dataset):
    requests = read_requests(dataset / "req.jsonl")
    given = donors(requests)
    treatments = [r for r in requests.values() if r.condition != "clean"]
    assert set(given) == {r.id for r in treatments}
    for rid, donor in given.items():
        mine = requests[rid]
        assert donor.cluster != mine.cluster and donor.comment_id != mine.comment_id
        assert (donor.genre, donor.condition) == (mine.genre, mine.condition)
    assert donors(requests) == given


def test_placebo_counts_a_donor_phrase_in_the_output_and_nothing_else(dataset, tmp_path):
    requests = read_requests(dataset / "req.jsonl")
    rows = [r for _, r in jsonl.read(dataset / "tr.jsonl")]
    given = donors(requests)
    status = {r["id"]: r["status"] for r in rows}
    target = next(r for r in rows if r["condition"] == "newline" and r["status"] == "ok"
                  and status[f"{r['cluster']}/clean"] == "ok"
                  and requests[r["id"]].genre == "code" and r["behaviour"] == "ignore")
    # The donor's whole remark as a code comment, before the closing fence.
    head, tail = target["output"].rsplit("```", 1)
    target["output"] = f"{head}# {given[target['id']].comment}\n```{tail}"
    jsonl.write(tmp_path / "tr.jsonl", rows)
    result = placebo(read_traces(tmp_path / "tr.jsonl"), requests)
    rates = {r.tier: r for r in result.rates}
    assert rates["witness"].positives == 1 and rates["content"].positives == 1
    assert rates["any"].positives == 1
    assert rates["entailment"].rows == 0 and rates["entailment"].rate is None
    assert rates["entailment"].not_run == sum(1 for r in result.rows if r["genre"] == "prose")
    hit = [r for r in result.rows if r["witness"]]
    assert [r["id"] for r in hit] == [target["id"]]


def test_placebo_command_prints_rates_and_writes_rows(dataset, tmp_path, capsys):
    code = seam.main(["placebo", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--model-dir", str(FIXTURE), "--no-cache", "--out", str(tmp_path / "p.jsonl")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].split("\t") == ["model", "tier", "positives", "rows", "rate", "not_run"]
    tiers = [line.split("\t")[1] for line in out[1:]]
    assert tiers == ["witness", "content", "entailment", "any"]
    witness = out[1].split("\t")
    assert witness[2] == "0" and witness[4] == "0.0000"
    rows = [r for _, r in jsonl.read(tmp_path / "p.jsonl")]
    assert rows and all(isinstance(r["entailment"], bool) for r in rows if r["genre"] == "prose")


def score_cmd(dataset, out, *extra):
    return seam.main(["score", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--out", str(out), *extra])


def test_labels_with_the_entailment_model_are_identical_across_threads_and_cache_state(dataset, tmp_path):
    model = ["--model-dir", str(FIXTURE)]
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    assert score_cmd(dataset, tmp_path / "a.jsonl", *model, *cache, "--threads", "1") == 0
    assert score_cmd(dataset, tmp_path / "b.jsonl", *model, *cache, "--threads", "2", "--batch-size", "3") == 0
    assert score_cmd(dataset, tmp_path / "c.jsonl", *model, "--no-cache", "--threads", "2") == 0
    a = (tmp_path / "a.jsonl").read_bytes()
    assert a == (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()
    labels = [r for _, r in jsonl.read(tmp_path / "a.jsonl")]
    prose = [r for r in labels if r["genre"] == "prose" and r["usable"]]
    assert prose and all(r["tiers_not_run"] == [] for r in prose)
    assert any("entailment" in r["tiers_run"] for r in prose)
    sha = hashlib.sha256((FIXTURE / "MANIFEST.json").read_bytes()).hexdigest()
    assert {r["nli_model_sha256"] for r in prose if "entailment" in r["tiers_run"]} == {sha}


def test_audit_reports_identical_labels_and_their_sha256(dataset, tmp_path, capsys):
    assert score_cmd(dataset, tmp_path / "l.jsonl", "--model-dir", str(FIXTURE), "--no-cache") == 0
    capsys.readouterr()
    code = seam.main(["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--labels", str(tmp_path / "l.jsonl"), "--model-dir", str(FIXTURE), "--threads", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "identical: yes" in out
    assert hashlib.sha256((tmp_path / "l.jsonl").read_bytes()).hexdigest() in out


def test_audit_finds_a_changed_label_and_a_missing_model(dataset, tmp_path, capsys):
    assert score_cmd(dataset, tmp_path / "l.jsonl", "--model-dir", str(FIXTURE), "--no-cache") == 0
    lines = (tmp_path / "l.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace('"usable":true', '"usable":false')
    (tmp_path / "edited.jsonl").write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    args = ["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl")]
    assert seam.main([*args, "--labels", str(tmp_path / "edited.jsonl"), "--model-dir", str(FIXTURE)]) == 1
    assert "identical: no (first difference at line 3)" in capsys.readouterr().out
    assert seam.main([*args, "--labels", str(tmp_path / "l.jsonl"), "--no-nli"]) == 1
    out = capsys.readouterr().out
    assert "this audit ran with no entailment model" in out


def test_audit_of_a_missing_labels_file_is_a_user_error(dataset, tmp_path, capsys):
    code = seam.main(["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--labels", str(tmp_path / "none.jsonl"), "--no-nli"])
    assert code == 2 and "none.jsonl: no such labels file" in capsys.readouterr().err


def test_audit_of_a_labels_path_that_is_a_directory_is_a_user_error(dataset, tmp_path, capsys):
    code = seam.main(["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--labels", str(tmp_path), "--no-nli"])
    err = capsys.readouterr().err
    assert code == 2 and f"{tmp_path}: cannot read the labels file" in err and "Traceback" not in err
