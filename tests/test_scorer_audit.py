"""The audit (scorer/audit.py, `seam.py audit`): rescore and compare the labels file byte for byte."""

import hashlib
from pathlib import Path

import seam

FIXTURE = Path(__file__).parent / "fixtures" / "tiny-deberta"


def score_cmd(dataset, out, *extra):
    return seam.main(["score", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--out", str(out), *extra])


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
    lines[2] = lines[2].replace('"scorer_version":"', '"scorer_version":"edited-')  # still a valid label
    (tmp_path / "edited.jsonl").write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    args = ["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl")]
    assert seam.main([*args, "--labels", str(tmp_path / "edited.jsonl"), "--model-dir", str(FIXTURE)]) == 1
    assert "identical: no (first difference at line 3)" in capsys.readouterr().out
    assert seam.main([*args, "--labels", str(tmp_path / "l.jsonl"), "--no-nli"]) == 1
    out = capsys.readouterr().out
    assert "this audit ran with no entailment model" in out


def test_audit_of_labels_holding_a_malformed_label_names_it(dataset, tmp_path, capsys):
    assert score_cmd(dataset, tmp_path / "l.jsonl", "--no-nli") == 0
    lines = (tmp_path / "l.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace('"usable":true', '"usable":"yes"')
    (tmp_path / "edited.jsonl").write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert seam.main(["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--labels", str(tmp_path / "edited.jsonl"), "--no-nli"]) == 2
    captured = capsys.readouterr()
    assert "identical: no (first difference at line 3)" in captured.out
    assert captured.err.endswith(f"\nseam.py audit: error: {tmp_path / 'edited.jsonl'}:3: field 'usable' is 'yes', "
                                 "expected true or false\n")


def test_audit_of_a_missing_labels_file_is_a_user_error(dataset, tmp_path, capsys):
    code = seam.main(["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--labels", str(tmp_path / "none.jsonl"), "--no-nli"])
    assert code == 2 and "none.jsonl: no such labels file" in capsys.readouterr().err


def test_audit_of_a_labels_path_that_is_a_directory_is_a_user_error(dataset, tmp_path, capsys):
    code = seam.main(["audit", str(dataset / "tr.jsonl"), "--requests", str(dataset / "req.jsonl"),
                      "--labels", str(tmp_path), "--no-nli"])
    err = capsys.readouterr().err
    assert code == 2 and f"{tmp_path}: cannot read the labels file" in err and "Traceback" not in err
