"""User mistakes on `seam.py score` and `seam.py audit`: one line on stderr, no traceback."""

import json

import seam
from common import jsonl
from scorer import synthetic


def write_dataset(tmp_path):
    clusters = synthetic.clusters(per_source=1, seed=3)
    jsonl.write(tmp_path / "req.jsonl", synthetic.request_rows(clusters))
    jsonl.write(tmp_path / "tr.jsonl", synthetic.traces(clusters, seed=4))
    return tmp_path / "req.jsonl", tmp_path / "tr.jsonl"


def test_an_out_dir_that_is_a_file_is_refused_before_scoring(tmp_path, capsys):
    req, tr = write_dataset(tmp_path)
    (tmp_path / "labels").write_text("already a file\n", encoding="utf-8")
    code = seam.main(["score", str(tr), "--requests", str(req), "--out-dir", str(tmp_path / "labels"), "--no-nli"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{tmp_path / 'labels'}: is a file; --out-dir names a directory" in err
    assert (tmp_path / "labels").read_text(encoding="utf-8") == "already a file\n"


def test_audit_of_a_labels_file_that_is_not_utf8_reports_the_difference(tmp_path, capsys):
    req, tr = write_dataset(tmp_path)
    (tmp_path / "labels.jsonl").write_bytes(b"\xff\xfe not a labels file\n")
    code = seam.main(["audit", str(tr), "--requests", str(req), "--labels", str(tmp_path / "labels.jsonl"),
                      "--no-nli"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert "identical: no (first difference at line 1)" in captured.out


def test_require_nli_fails_without_the_model_and_writes_nothing(tmp_path, capsys, monkeypatch):
    from scorer import model_dir

    monkeypatch.delenv(model_dir.ENV_VAR, raising=False)
    monkeypatch.setattr(model_dir, "DEFAULT_MODEL_DIR", model_dir.DEFAULT_MODEL_DIR.parent / "absent-in-this-test")
    req, tr = write_dataset(tmp_path)
    out = tmp_path / "labels.jsonl"
    code = seam.main(["score", str(tr), "--requests", str(req), "--out", str(out), "--require-nli"])
    assert code == 2 and "--require-nli: the entailment tier cannot run" in capsys.readouterr().err
    assert not out.exists()
    code = seam.main(["score", str(tr), "--requests", str(req), "--out", str(out), "--require-nli", "--no-nli"])
    assert code == 2 and "contradict" in capsys.readouterr().err
    code = seam.main(["score", str(tr), "--requests", str(req), "--out", str(out)])  # without it: lower bounds
    assert code == 0 and out.exists()


def test_require_nli_passes_when_the_entailment_tier_runs(tmp_path, capsys):
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "tiny-deberta"
    req, tr = write_dataset(tmp_path)
    out = tmp_path / "labels.jsonl"
    code = seam.main(["score", str(tr), "--requests", str(req), "--out", str(out), "--require-nli",
                      "--model-dir", str(fixture), "--no-cache"])
    assert code == 0, capsys.readouterr().err
    assert all(not json.loads(line)["tiers_not_run"] for line in out.read_text(encoding="utf-8").splitlines())


def test_require_nli_is_understood_by_placebo_and_audit_too(tmp_path, capsys, monkeypatch):
    from scorer import model_dir

    monkeypatch.delenv(model_dir.ENV_VAR, raising=False)
    monkeypatch.setattr(model_dir, "DEFAULT_MODEL_DIR", model_dir.DEFAULT_MODEL_DIR.parent / "absent-in-this-test")
    req, tr = write_dataset(tmp_path)
    assert seam.main(["placebo", str(tr), "--requests", str(req), "--require-nli"]) == 2
    assert "--require-nli: the entailment tier cannot run" in capsys.readouterr().err
