"""A full disk (issue 13): a command that cannot write its outputs leaves the previous ones whole.

The file-size limit (RLIMIT_FSIZE, with SIGXFSZ ignored so that the write fails with EFBIG instead of
killing the process) stands in for a full disk: each command is first run normally, then again on
other input with a limit just below its largest new file. It must fail with one line naming the
file, leave every previous output byte for byte as it was (none half-replaced, no mix of old and new
tables), and leave no temporary file behind.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

import seam
from benchmark import dataset
from common import files, jsonl
from common.errors import UserError
from scorer import synthetic
from stats.synthetic import synthetic_labels
from validity.synthetic import trace_row as validity_row

ROOT = Path(__file__).resolve().parents[1]


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (hidden ones included) by relative path, with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def run_limited(argv, limit: int) -> subprocess.CompletedProcess:
    """seam.py in a child process whose files may not grow beyond `limit` bytes."""
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited through exec: the write fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-B", str(ROOT / "seam.py"), *map(str, argv)], capture_output=True,
                          text=True, cwd=ROOT, preexec_fn=limit_file_size,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def assert_failed_and_unchanged(done: subprocess.CompletedProcess, command: str, out: Path,
                                before: dict[str, bytes], what: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.splitlines()[-1]
    assert [line for line in done.stderr.splitlines() if line.startswith("seam.py")] == [last]
    assert last.startswith(f"seam.py {command}: error: could not write {out}")
    assert last.endswith(f": File too large; the previous {what} are unchanged")
    assert snapshot(out) == before  # byte for byte, and no *.tmp left


def limit_below_largest(directory: Path) -> int:
    """A file-size limit that only the largest file in `directory` exceeds (every other one fits)."""
    return max(len(data) for data in snapshot(directory).values()) - 1


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory):
    """Requests for a synthetic benchmark and two different trace sets (a, b) of one model."""
    root = tmp_path_factory.mktemp("synthetic")
    clusters = synthetic.clusters(per_source=2, seed=3)
    jsonl.write(root / "req.jsonl", synthetic.request_rows(clusters))
    jsonl.write(root / "a" / "m.jsonl", synthetic.traces(clusters, model="m", seed=4))
    jsonl.write(root / "b" / "m.jsonl", synthetic.traces(clusters, model="m", seed=5))
    jsonl.write(root / "b" / "n.jsonl", synthetic.traces(clusters, model="n", seed=7))
    return root


def test_score_leaves_the_previous_labels_whole(synthetic_run, tmp_path):
    req = ["--requests", synthetic_run / "req.jsonl", "--no-nli"]
    out = tmp_path / "labels"
    assert seam.main(list(map(str, ["score", synthetic_run / "a" / "m.jsonl", *req, "--out", out / "m.jsonl"]))) == 0
    before = snapshot(out)
    assert seam.main(list(map(str, ["score", synthetic_run / "b" / "m.jsonl", *req, "--out",
                                    tmp_path / "new" / "m.jsonl"]))) == 0
    assert (tmp_path / "new" / "m.jsonl").read_bytes() != before["m.jsonl"]
    done = run_limited(["score", synthetic_run / "b" / "m.jsonl", *req, "--out", out / "m.jsonl"],
                       limit_below_largest(tmp_path / "new"))
    assert_failed_and_unchanged(done, "score", out, before, "labels")


def test_score_out_dir_writes_every_labels_file_or_none(synthetic_run, tmp_path):
    req = ["--requests", synthetic_run / "req.jsonl", "--no-nli"]
    out = tmp_path / "labels"
    assert seam.main(list(map(str, ["score", synthetic_run / "a" / "m.jsonl", *req, "--out-dir", out]))) == 0
    before = snapshot(out)
    traces = [synthetic_run / "b" / "m.jsonl", synthetic_run / "b" / "n.jsonl"]
    assert seam.main(list(map(str, ["score", *traces, *req, "--out-dir", tmp_path / "new"]))) == 0
    sizes = {name: len(data) for name, data in snapshot(tmp_path / "new").items()}
    traces.sort(key=lambda path: sizes[path.name])  # the smaller one first: it fits under the limit, the other not
    assert sizes[traces[0].name] < sizes[traces[1].name]
    done = run_limited(["score", *traces, *req, "--out-dir", out], sizes[traces[1].name] - 1)
    assert_failed_and_unchanged(done, "score", out, before, "labels")
    assert done.stderr.splitlines()[-1].startswith(f"seam.py score: error: could not write {out / traces[1].name}:")


def test_placebo_leaves_the_previous_rows_whole(synthetic_run, tmp_path):
    req = ["--requests", synthetic_run / "req.jsonl", "--no-nli"]
    out = tmp_path / "placebo"
    assert seam.main(list(map(str, ["placebo", synthetic_run / "a" / "m.jsonl", *req, "--out", out / "m.jsonl"]))) == 0
    before = snapshot(out)
    assert seam.main(list(map(str, ["placebo", synthetic_run / "b" / "m.jsonl", *req, "--out",
                                    tmp_path / "new" / "m.jsonl"]))) == 0
    assert (tmp_path / "new" / "m.jsonl").read_bytes() != before["m.jsonl"]
    done = run_limited(["placebo", synthetic_run / "b" / "m.jsonl", *req, "--out", out / "m.jsonl"],
                       limit_below_largest(tmp_path / "new"))
    assert_failed_and_unchanged(done, "placebo", out, before, "placebo rows")


def test_tables_are_all_new_or_all_old(tmp_path):
    jsonl.write(tmp_path / "a.jsonl", synthetic_labels(models=2, clusters=20, comments=4, seed=1))
    jsonl.write(tmp_path / "b.jsonl", synthetic_labels(models=2, clusters=24, comments=4, seed=2))
    quick = ["--resamples", "50"]
    out = tmp_path / "tables"
    assert seam.main(["tables", str(tmp_path / "a.jsonl"), "--out", str(out), *quick]) == 0
    before = snapshot(out)
    assert seam.main(["tables", str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "new"), *quick]) == 0
    new = snapshot(tmp_path / "new")
    assert new.keys() == before.keys() and all(new[name] != before[name] for name in ("rates.csv", "clusters.csv"))
    done = run_limited(["tables", tmp_path / "b.jsonl", "--out", out, *quick], limit_below_largest(tmp_path / "new"))
    assert_failed_and_unchanged(done, "tables", out, before, "tables")
    assert done.stderr.count("\n") == 1  # the error line is all there is


def validity_rows(output_of) -> list[dict]:
    benchmark = dataset.load()
    rows = []
    for i, name in enumerate(["humaneval-001", "humaneval-002", "fissix-002", "wikipedia-001", "wikipedia-002"]):
        cluster = benchmark.cluster(name)
        for j, condition in enumerate(("clean", "newline", "boundary")):
            rows.append(validity_row(name, condition, output_of(cluster, condition), at=timedelta(minutes=3 * i + j),
                                     benchmark_sha256=benchmark.sha256))
    return rows


def test_validity_tables_are_all_new_or_all_old(tmp_path):
    jsonl.write(tmp_path / "a.jsonl", validity_rows(lambda c, condition: c.reference or c.artifact))
    jsonl.write(tmp_path / "b.jsonl", validity_rows(lambda c, condition: c.artifact if condition != "clean"
                                                    else c.reference or c.artifact))
    out = tmp_path / "tables"
    assert seam.main(["validity", str(tmp_path / "a.jsonl"), "--out", str(out)]) == 0
    before = snapshot(out)
    assert seam.main(["validity", str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "new")]) == 0
    new = snapshot(tmp_path / "new")
    assert new.keys() == before.keys() and new["validity_syntax.csv"] != before["validity_syntax.csv"]
    done = run_limited(["validity", tmp_path / "b.jsonl", "--out", out], limit_below_largest(tmp_path / "new"))
    assert_failed_and_unchanged(done, "validity", out, before, "validity tables")
    assert done.stderr.count("\n") == 1


def test_write_files_replaces_all_or_nothing_and_tidies_up(tmp_path, monkeypatch):
    targets = {tmp_path / name: f"new {name}\n".encode() for name in ("a.csv", "b.csv", "c.csv")}
    for path in list(targets)[:2]:
        path.write_bytes(b"old\n")
    real_write, calls = os.write, []

    def full_on_the_third_file(fd, data):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_on_the_third_file)
    with pytest.raises(UserError) as caught:
        files.write_files(targets, "tables")
    assert str(caught.value) == (f"could not write {tmp_path / 'c.csv'}: No space left on device; "
                                 "the previous tables are unchanged")
    assert snapshot(tmp_path) == {"a.csv": b"old\n", "b.csv": b"old\n"}
    monkeypatch.setattr(os, "write", real_write)
    files.write_files(targets, "tables")
    assert snapshot(tmp_path) == {path.name: data for path, data in targets.items()}
    umask = os.umask(0)
    os.umask(umask)
    assert {path.stat().st_mode & 0o777 for path in targets} == {0o666 & ~umask}  # as a plain open() would


def test_a_failed_first_write_into_a_new_folder_leaves_no_folder(tmp_path, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(UserError, match=r"could not write .*deep/er/x\.jsonl: No space left on device; "
                                        r"nothing was written$"):
        jsonl.write(tmp_path / "deep" / "er" / "x.jsonl", [{"a": 1}], "labels")
    assert list(tmp_path.iterdir()) == []


# --- seam.py run: appending to the trace fails (issue 13, rerun) --------------------------------------------

def test_run_under_a_file_size_limit_keeps_its_rows_and_resumes(tmp_path):
    from support.fakeserver import config_keys, serve, toml_text
    from support.samples import make_requests, write_requests

    from common.traces import read_final

    rows = make_requests(6)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    full = tmp_path / "full.jsonl"
    out = tmp_path / "traces.jsonl"
    with serve() as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, "openai", concurrency=1)))
        base = ["run", config, "--requests", requests]
        assert seam.main(list(map(str, [*base, "--out", full]))) == 0
        lines = full.read_bytes().splitlines(keepends=True)
        limit = len(lines[0]) + len(lines[1]) + len(lines[2]) // 2  # two rows fit, the third is cut short
        done = run_limited([*base, "--out", out], limit)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("seam.py")]
        assert errors == [f"seam.py run: error: could not append to {out}: File too large; rows written so "
                          "far are kept; rerun to continue (--move-torn if the last line is torn)"]
        assert done.stderr.endswith(errors[0] + "\n")
        kept = out.read_bytes()
        assert len(kept) == limit and kept.count(b"\n") == 2  # the rows before, then one torn line and no more
        assert seam.main(list(map(str, [*base, "--out", out, "--move-torn"]))) == 0
    final = read_final(out).final
    assert sorted(final) == sorted(row.id for row in rows) and {row.status for row in final.values()} == {"ok"}


def test_run_on_a_full_disk_keeps_its_rows(tmp_path, monkeypatch):
    from support.fakeserver import config_keys, serve, toml_text
    from support.samples import make_requests, write_requests

    rows = make_requests(5)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    real_write, calls = os.write, []

    def full_from_the_third_row(fd, data):
        if os.path.realpath(f"/proc/self/fd/{fd}") == str(out):
            calls.append(fd)
            if len(calls) >= 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    with serve() as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, "openai", concurrency=2)))
        monkeypatch.setattr(os, "write", full_from_the_third_row)
        with pytest.raises(UserError) as caught:
            seam_run = ["run", str(config), "--requests", str(requests), "--out", str(out)]
            from seam import build_parser
            args = build_parser().parse_args(seam_run)
            args.func(args)
    assert str(caught.value) == (f"could not append to {out}: No space left on device; rows written so far are "
                                 "kept; rerun to continue (--move-torn if the last line is torn)")
    assert out.read_bytes().count(b"\n") == 2 and out.read_bytes().endswith(b"\n")


def test_a_torn_line_that_cannot_be_moved_aside_leaves_the_trace_unchanged(tmp_path):
    from support.samples import make_requests, trace_row, write_requests

    rows = make_requests(2)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    out.write_bytes(jsonl.dumps(trace_row(rows[0].id)).encode() + b'{"id": "torn' + b"x" * 5000)
    before = out.read_bytes()
    config = tmp_path / "m.toml"
    config.write_text('name = "synthetic-model"\nprovider = "openai"\nmodel = "m"\n'
                      'base_url = "http://127.0.0.1:9/v1"\nmax_tokens = 5\n')
    done = run_limited(["run", config, "--requests", requests, "--out", out, "--move-torn"], 4096)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"seam.py run: error: could not move the torn last line of {out} aside into "
                                  f"{out}.torn-")
    assert done.stderr.endswith(": File too large; the trace is unchanged\n")
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "m.toml", "requests.jsonl", "traces.jsonl"]


# --- validity --execute under limits the sandbox cannot raise (issue 13, rerun) -----------------------------

def run_with_limits(argv, limits: dict) -> subprocess.CompletedProcess:
    """seam.py in a child process started with these rlimits (soft = hard: no unprivileged process raises them;
    the machine's root lacks CAP_SYS_RESOURCE in most containers, and the test is skipped where it has it)."""
    def set_limits():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        for which, value in limits.items():
            resource.setrlimit(which, (value, value))

    return subprocess.run([sys.executable, "-B", str(ROOT / "seam.py"), *map(str, argv)], capture_output=True,
                          text=True, cwd=ROOT, preexec_fn=set_limits,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def can_raise_hard_limits() -> bool:
    done = subprocess.run([sys.executable, "-c", "import resource as r\nr.setrlimit(r.RLIMIT_NOFILE, (64, 64))\n"
                           "r.setrlimit(r.RLIMIT_NOFILE, (65, 65))\n"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(can_raise_hard_limits(), reason="this process may raise its hard limits (CAP_SYS_RESOURCE)")
@pytest.mark.parametrize(("limit", "value", "expected"), [
    (resource.RLIMIT_FSIZE, 1000 * 1024, "at most 1048576 bytes per file written (RLIMIT_FSIZE), but the hard "
                                         "limit this process inherited is 1024000 (`ulimit -f`)"),
    (resource.RLIMIT_NOFILE, 20, "at most 64 open files (RLIMIT_NOFILE), but the hard limit this process "
                                 "inherited is 20 (`ulimit -n`)"),
    (resource.RLIMIT_AS, 600_000 * 1024, "at most 1073741824 bytes of address space (RLIMIT_AS), but the hard "
                                         "limit this process inherited is 614400000 (`ulimit -v`)"),
    (resource.RLIMIT_CPU, 3, "at most 4 CPU seconds (RLIMIT_CPU), but the hard limit this process inherited "
                             "is 3 (`ulimit -t`)"),
], ids=["file-size", "open-files", "address-space", "cpu"])
def test_validity_execute_under_a_lower_inherited_limit_refuses_in_one_line(tmp_path, limit, value, expected):
    jsonl.write(tmp_path / "a.jsonl", validity_rows(lambda c, condition: c.reference or c.artifact))
    out = tmp_path / "tables"
    assert seam.main(["validity", str(tmp_path / "a.jsonl"), "--out", str(out)]) == 0
    before = snapshot(out)
    done = run_with_limits(["validity", tmp_path / "a.jsonl", "--out", out, "--execute"], {limit: value})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("seam.py")]
    assert len(errors) == 1 and done.stderr.endswith(errors[0] + "\n"), done.stderr
    assert errors[0].startswith("seam.py validity: error: --execute: the sandbox runs each program with "
                                + expected), errors[0]
    assert errors[0].endswith("run seam.py where that limit is at least as high (e.g. a new shell without that "
                              "ulimit); nothing was run")
    assert snapshot(out) == before


def test_validity_execute_without_a_usable_temporary_directory_is_one_line(tmp_path):
    jsonl.write(tmp_path / "a.jsonl", validity_rows(lambda c, condition: c.reference or c.artifact))
    out = tmp_path / "tables"
    assert seam.main(["validity", str(tmp_path / "a.jsonl"), "--out", str(out)]) == 0
    before = snapshot(out)
    done = run_limited(["validity", tmp_path / "a.jsonl", "--out", out, "--execute"], 0)  # tempfile probes by writing
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("seam.py")]
    assert error.startswith("seam.py validity: error: --execute: cannot start the sandbox: No usable temporary "
                            "directory found in ")
    assert snapshot(out) == before
