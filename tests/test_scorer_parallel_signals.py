"""`seam.py score --workers` stopped from outside (issue 36, defect 5): a SIGTERM or SIGINT to the parent ends
its worker processes too, and so does a SIGKILL (on Linux), so none is left running holding the caller's pipes;
and a temporary labels file left by a SIGKILL during the write is removed by the next run, which removes no file
it cannot prove is its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common import jsonl
from scorer import synthetic

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


def write_inputs(tmp_path: Path, models: int) -> tuple[Path, list[Path]]:
    """A full-size request file and `models` trace files (one model's rows, renamed: about 0.5 s each to score)."""
    clusters = synthetic.clusters(per_source=50, seed=5)
    requests = tmp_path / "requests.jsonl"
    jsonl.write(requests, synthetic.request_rows(clusters))
    template = tmp_path / "template.jsonl"
    jsonl.write(template, synthetic.traces(clusters, model="model-00", seed=7))
    data = template.read_bytes()
    paths = []
    for number in range(models):
        path = tmp_path / f"model-{number:02d}.jsonl"
        path.write_bytes(data.replace(b'"model-00"', f'"model-{number:02d}"'.encode()))
        paths.append(path)
    assert all(b'"model":"model-00"' in line for line in data.splitlines())  # the renaming finds every row
    return requests, paths


def score_command(requests: Path, paths: list[Path], out: Path, workers: int = 2) -> list[str]:
    return [sys.executable, str(ROOT / "seam.py"), "score", *map(str, paths), "--requests", str(requests),
            "--out-dir", str(out), "--no-nli", "--workers", str(workers)]


def stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process from /proc, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return fields[0], int(fields[1]), int(fields[19])


def children(parent: int) -> dict[int, int]:
    """The processes whose parent is `parent`: pid -> start time (which tells a reused pid apart)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := stat(int(entry))) is not None and info[1] == parent:
            found[int(entry)] = info[2]
    return found


def running(pid: int, started: int) -> bool:
    info = stat(pid)
    return info is not None and info[2] == started and info[0] not in ("Z", "X")


# the signal -> the parent's exit status: as SIGTERM and SIGKILL end a process, and seam.py's "interrupted"
STATUS = {signal.SIGTERM: -signal.SIGTERM, signal.SIGINT: 130, signal.SIGKILL: -signal.SIGKILL}


@pytest.mark.parametrize("signum", list(STATUS), ids=lambda signum: signum.name)
def test_a_signal_to_the_parent_ends_its_workers_and_closes_the_pipes(tmp_path, signum):
    requests, paths = write_inputs(tmp_path, 30)  # about 8 s of work for two workers
    out = tmp_path / "labels"
    process = subprocess.Popen(score_command(requests, paths, out), cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    workers: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and process.poll() is None and time.monotonic() < deadline:
            workers.update(children(process.pid))
            time.sleep(0.05)
        assert len(workers) == 2, f"the workers did not start: {workers}"
        time.sleep(1.0)  # the workers are scoring
        assert process.poll() is None, "scoring ended before the signal: give it more files"
        process.send_signal(signum)  # to the parent alone, as `kill PID` does
        try:
            _, err = process.communicate(timeout=30)  # returns once every holder of the pipes has closed them
        except subprocess.TimeoutExpired:
            pytest.fail("the pipes stayed open 30 s after the signal: a worker still holds them")
        assert process.returncode == STATUS[signum]
        deadline = time.monotonic() + 10
        while any(running(pid, started) for pid, started in workers.items()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid, started in workers.items() if running(pid, started)]
        assert b"Traceback" not in err
        assert not out.exists() or not list(out.iterdir())  # nothing written
        if signum == signal.SIGINT:
            assert err.decode().splitlines()[-1] == "seam.py score: interrupted"
    finally:
        if process.poll() is None or any(running(pid, started) for pid, started in workers.items()):
            os.killpg(process.pid, signal.SIGKILL)  # the session this test started: the parent and its workers
        process.wait()


KILLED_WHILE_WRITING = """
import os, signal, sys
sys.path.insert(0, sys.argv[1])
import seam
os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)  # killed between write and rename
sys.exit(seam.main(sys.argv[2:]))
"""


def test_a_temporary_left_by_a_kill_during_the_write_is_removed_by_the_next_run(tmp_path):
    requests, paths = write_inputs(tmp_path, 2)
    out = tmp_path / "labels"
    command = score_command(requests, paths, out)
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_WRITING, str(ROOT), *command[2:]], cwd=ROOT,
                            capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    left = sorted(path.name for path in out.iterdir())
    assert len(left) == 2 and all(name.endswith(".tmp") for name in left), left  # both written, neither renamed
    # files the next run cannot prove are its own: a user's, and a temporary whose writer still runs (this test)
    others = ["model-00.jsonl.backup.tmp", "model-00.jsonl.0123abcd.tmp", "notes.tmp",
              f"model-01.jsonl.{os.getpid()}-0123abcd.tmp"]
    for name in others:
        (out / name).write_text("mine\n")
    again = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert sorted(path.name for path in out.iterdir()) == sorted(["model-00.jsonl", "model-01.jsonl", *others])
    assert all((out / name).read_text() == "mine\n" for name in others)


KILLED_MID_RESULT = """
import multiprocessing, os, struct, sys, time
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, sys.argv[1])
from scorer import lifetime

def half_a_result(ready):
    # what a worker killed while sending a large result leaves in the pipe: a header promising 1,000 bytes and
    # one of them (the pool's own result pipe, inherited by fork)
    os.write(pool._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x")
    os.close(os.open(ready, os.O_CREAT | os.O_WRONLY))
    time.sleep(600)

pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
future = pool.submit(half_a_result, sys.argv[2])
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
time.sleep(0.2)  # not needed to fail the old code: the manager thread reads the half message when it wakes
manager = pool._executor_manager_thread
lifetime.kill_workers(pool)
print("killed; the manager thread", "still runs" if manager.is_alive() else "has ended", flush=True)
"""


def test_a_worker_killed_while_sending_its_result_does_not_keep_the_parent_from_exiting(tmp_path):
    """The pool's manager thread, left waiting for the rest of a message its killed worker will never send, is
    joined when the interpreter exits: the parent hung there for ever after "interrupted" (seen once in about
    twenty interrupted runs under load, where each worker's result is large). And it has ended when
    kill_workers returns: woken at exit while closing its pipe, it printed a traceback (1 run in 40)."""
    try:
        ended = subprocess.run([sys.executable, "-c", KILLED_MID_RESULT, str(ROOT), str(tmp_path / "ready")],
                               capture_output=True, timeout=30, start_new_session=True)
    except subprocess.TimeoutExpired:
        pytest.fail("the parent did not exit within 30 s of killing its worker")
    # ended before the interpreter's exit, which would otherwise wake it through a pipe it may be closing
    assert ended.stdout == b"killed; the manager thread has ended\n"
    assert ended.returncode == 0 and b"Traceback" not in ended.stderr, ended.stderr
