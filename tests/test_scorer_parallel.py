"""`seam.py score` over several trace files in worker processes (scorer/parallel.py): the same labels, messages
and errors as one process, whatever the worker count, and nothing written when a worker dies."""

from __future__ import annotations

import os
import threading

import pytest

import seam
from common import cpus, jsonl
from scorer import parallel, synthetic

CLUSTERS = synthetic.clusters(per_source=3, seed=11)
MODELS = ("m-one", "m-two", "m-three")


def write_inputs(tmp_path, models=MODELS):
    """A request file and one trace file per model (different replies each)."""
    jsonl.write(tmp_path / "req.jsonl", synthetic.request_rows(CLUSTERS))
    paths = []
    for seed, model in enumerate(models, start=21):
        path = tmp_path / f"{model}.jsonl"
        jsonl.write(path, synthetic.traces(CLUSTERS, model=model, seed=seed))
        paths.append(path)
    return tmp_path / "req.jsonl", paths


def score(tmp_path, capsys, requests, paths, workers, *extra):
    out = tmp_path / f"labels-{workers}"
    code = seam.main(["score", *map(str, paths), "--requests", str(requests), "--out-dir", str(out), "--no-nli",
                      "--workers", str(workers), *extra])
    captured = capsys.readouterr()
    files = {path.name: path.read_bytes() for path in sorted(out.glob("*"))} if out.exists() else {}
    return code, captured.out.replace(str(out), "OUT"), captured.err.replace(str(out), "OUT"), files


def test_labels_and_messages_are_the_same_for_one_two_and_three_workers(tmp_path, capsys):
    requests, paths = write_inputs(tmp_path)
    one = score(tmp_path, capsys, requests, paths, 1)
    assert one[0] == 0 and sorted(one[3]) == [f"{model}.jsonl" for model in sorted(MODELS)]
    assert one[2].index("m-one.jsonl:") < one[2].index("m-two.jsonl:") < one[2].index("m-three.jsonl:")
    for workers in (2, 3):
        assert score(tmp_path, capsys, requests, paths, workers) == one
    assert b"workers" not in b"".join(one[3].values())


@pytest.mark.parametrize("bad", ["read", "score", "both", "two reads"])
def test_an_error_is_the_one_of_scoring_the_files_one_after_another(tmp_path, capsys, bad):
    requests, paths = write_inputs(tmp_path)
    if bad in ("score", "both"):  # the first file: a reply to a request the request rows do not have
        rows = synthetic.traces(CLUSTERS, model="m-one", seed=21)
        rows[0] = {**rows[0], "id": "nowhere-001/clean", "cluster": "nowhere-001"}
        jsonl.write(paths[0], rows)
    # a damaged row in the last file (and in the second), which the reading of every file meets first
    for path in paths[1:] if bad == "two reads" else paths[2:] if bad != "score" else []:
        with path.open("a", encoding="utf-8") as handle:
            handle.write('{"id": 1}\n')
    outcomes = [score(tmp_path, capsys, requests, paths, workers) for workers in (1, 2)]
    assert outcomes[0] == outcomes[1]
    code, _, err, files = outcomes[0]
    assert code == 2 and not files and err.count("error:") == 1
    first = {"read": "m-three.jsonl:", "score": "nowhere-001", "both": "m-three.jsonl:", "two reads": "m-two.jsonl:"}
    assert first[bad] in err


def test_the_worker_count_is_checked(tmp_path, capsys):
    requests, paths = write_inputs(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        seam.main(["score", *map(str, paths), "--requests", str(requests), "--out-dir", str(tmp_path / "l"),
                   "--workers", "0"])
    assert exit_info.value.code == 2
    assert "argument --workers: must be at least 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="needs fork")
def test_a_worker_that_dies_is_one_line_and_nothing_is_written(tmp_path, capsys, monkeypatch):
    requests, paths = write_inputs(tmp_path)
    # The workers must be forked to carry this test's patch. Where the test process has threads of its own (a
    # pytest-xdist worker's), the scorer would spawn them instead: they are forked all the same here (the child
    # runs only the patched function, touching none of those threads' locks).
    monkeypatch.setattr(threading, "active_count", lambda: 1)

    def dies(path):
        if path.name == "m-two.jsonl":
            os._exit(9)  # as when the system kills it
        return real(path)

    real = parallel._read_and_score
    monkeypatch.setattr(parallel, "_read_and_score", dies)
    code, out, err, files = score(tmp_path, capsys, requests, paths, 2)
    assert code == 2 and not files and out == ""
    assert err.count("\n") == 1 and "a worker process stopped unexpectedly" in err and "Traceback" not in err
    assert ".jsonl: not scored: " in err and "m-three" not in err  # the first file not scored by then


def test_workers_are_used_only_for_several_files_and_never_more_than_files():
    assert parallel.worker_count(None, 1) == 1
    assert parallel.worker_count(8, 3) == 3
    assert 1 <= parallel.worker_count(None, 50) == min(50, cpus.available())


def test_workers_started_afresh_give_the_same_labels(tmp_path, capsys, monkeypatch):
    """Where forking is unsafe (other threads running), the workers are spawned and get the requests pickled."""
    requests, paths = write_inputs(tmp_path)
    one = score(tmp_path, capsys, requests, paths, 1)
    monkeypatch.setattr(threading, "active_count", lambda: 2)  # as if another thread were running: spawn
    assert score(tmp_path, capsys, requests, paths, 2) == one
