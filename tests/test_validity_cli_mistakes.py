"""User mistakes on `seam.py validity`: traces without a single row write no (empty) tables."""

import seam


def test_an_empty_trace_file_is_refused_and_nothing_is_written(tmp_path, capsys):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    code = seam.main(["validity", str(tmp_path / "empty.jsonl"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{tmp_path / 'empty.jsonl'}: no trace rows" in err
    assert not (tmp_path / "out").exists()
