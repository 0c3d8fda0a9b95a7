"""User mistakes on `seam.py score` and `seam.py audit`: one line on stderr, no traceback."""

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
