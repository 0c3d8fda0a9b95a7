"""Run untrusted Python (a model's edited code and its unit tests) in a separate, fenced process.

The functional check executes model output, so it is opt-in (`--execute`) and
every run goes through `run_program`, which starts `validity/sandbox_child.py`
in a fresh interpreter, in a session of its own. That process, the
supervisor, runs no model code: it sets up the protections listed in its
docstring (namespaces, read-only mounts and no capabilities where the kernel
allows it: Linux as root, or with unprivileged user namespaces; resource
limits and a seccomp filter against new processes; an audit-hook guard),
runs the program in a process of its own (under a trusted init of a PID
namespace where it can), enforces the wall-clock limit, kills whatever the
program started, and only then writes the verdict. The result says which
protections applied, and `docs/VALIDITY.md` says where each holds.

What reaches the caller is checked here as well, field by field: one line
carrying the run's nonce (which exists only here and in the supervisor, never
in the program's memory), an outcome from OUTCOMES and a detail from a fixed
vocabulary built from the parts' labels; anything else is "crashed" with the
detail "invalid verdict". The parent kills the supervisor's process group
only if it overruns the wall clock by GRACE_SECONDS (or on an exception),
and does it before reaping it, so that the group's ID cannot have been reused.

Determinism: the verdict depends only on the program and the limits. The
child runs with PYTHONHASHSEED=0 and `random.seed(0)`, exceptions are reported
by their nearest built-in class and program part (never by message or by the
program's own class name, which may hold addresses or anything else), and a
timeout is a verdict like any other. The limits are generous so that no
HumanEval solution comes near them.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CHILD = Path(__file__).resolve().with_name("sandbox_child.py")
OUTCOMES = ("passed", "failed", "error", "timeout", "crashed")
KERNEL_MODES = ("auto", "require", "off")
GRACE_SECONDS = 10.0  # the supervisor enforces the wall clock; the parent steps in only this much later
# the built-in exception classes, as the child names them (it runs this same interpreter)
EXCEPTION_NAMES = frozenset(value.__name__ for value in vars(builtins).values()
                            if isinstance(value, type) and issubclass(value, BaseException))
CRASH_DETAIL = re.compile(r"killed by (SIG[A-Z0-9]{1,12}|signal \d{1,3})"
                          r"|exited with status \d{1,3} before the tests finished|invalid verdict")
INVALID = ("crashed", "invalid verdict")
MAX_LAYERS, MAX_LAYER_CHARS = 16, 400


@dataclass(frozen=True)
class Limits:
    """What one run may use. Recorded in the functional table's notes."""

    cpu_seconds: int = 4
    wall_seconds: float = 30.0
    memory_bytes: int = 1 << 30  # address space
    file_bytes: int = 1 << 20  # any one file written, the captured stdout and stderr included
    open_files: int = 64
    workdir_bytes: int = 16 << 20  # the tmpfs working directory (kernel layer only)
    processes: bool = False  # whether the program may start processes (only to test the process-tree kill)

    def describe(self) -> str:
        return (f"{self.cpu_seconds} CPU seconds, {self.wall_seconds:g} s wall clock, "
                f"{self.memory_bytes >> 20} MiB address space, {self.file_bytes >> 10} KiB per file written, "
                f"{self.open_files} open files, {'new processes allowed' if self.processes else 'no new processes'}, "
                f"{self.workdir_bytes >> 20} MiB working directory")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class RunResult:
    """The verdict on one program: outcome (one of OUTCOMES), a short detail, the protections applied."""

    outcome: str
    detail: str
    isolation: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (not a verdict on the program)."""


def available() -> str | None:
    """None when programs can be run here, else why not (the check needs POSIX resource limits)."""
    if os.name != "posix":
        return "the sandbox needs a POSIX system (resource limits, process groups)"
    try:
        import resource  # noqa: F401
    except ImportError:
        return "the sandbox needs the 'resource' module"
    return None


def run_program(parts: Sequence[tuple[str, str]], *, limits: Limits = DEFAULT_LIMITS, kernel: str = "auto",
                guard: bool = True) -> RunResult:
    """Run the (label, source) parts in order, in one namespace, in a sandboxed child process.

    Outcome: "passed" when every part ran to its end; "failed" on an AssertionError
    (a unit test failing); "error" on any other exception (detail: its type and the
    part); "timeout" when the CPU or wall-clock limit was hit; "crashed" when the
    process died without a verdict (a signal, `os._exit`, a memory limit hit in C)
    or wrote one that is not in the fixed format. When this returns, no process of
    the program is left (with the kernel layer or the seccomp filter, for certain:
    see `docs/VALIDITY.md`). `kernel` ("auto", "require", "off") and `guard` choose
    the protections; the defaults use all that the machine allows. Raises
    SandboxError when the sandbox cannot start or `kernel="require"` cannot be met.
    """
    if kernel not in KERNEL_MODES:
        raise ValueError(f"kernel must be one of {KERNEL_MODES}, got {kernel!r}")
    problem = available()
    if problem:
        raise SandboxError(problem)
    parts = [(str(label), str(source)) for label, source in parts]
    nonce = secrets.token_hex(16)
    try:
        scratch = Path(tempfile.mkdtemp(prefix="seam-sandbox-"))
    except OSError as exc:  # no usable temporary directory (a full disk, a file-size limit of 0, …)
        raise SandboxError(f"cannot start the sandbox: {exc.strerror or exc}") from None
    try:
        workdir = scratch / "work"
        workdir.mkdir(mode=0o700)
        job = {"workdir": str(workdir), "kernel": kernel, "guard": guard, "parts": [list(p) for p in parts],
               "limits": {"cpu_seconds": limits.cpu_seconds, "wall_seconds": limits.wall_seconds,
                          "memory_bytes": limits.memory_bytes, "file_bytes": limits.file_bytes,
                          "open_files": limits.open_files, "workdir_bytes": limits.workdir_bytes,
                          "processes": limits.processes}}
        lines, timed_out, returncode = _spawn(job, nonce, workdir, scratch / "output",
                                              limits.wall_seconds + GRACE_SECONDS)
    except OSError as exc:  # no descriptor or process left for the pipes and the child, a full disk, …
        raise SandboxError(f"cannot start the sandbox: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _verdict(lines, nonce, [label for label, _ in parts], timed_out=timed_out, returncode=returncode)


def _child_env(workdir: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8",
            "HOME": str(workdir), "TMPDIR": str(workdir)}


def _spawn(job: dict, nonce: str, workdir: Path, output: Path, seconds: float) -> tuple[list[str], bool, int]:
    """Start the supervisor, feed it the job and the nonce, wait up to `seconds`; (result lines, timed out, code).

    The nonce goes through a pipe of its own, which the supervisor reads only
    after it has forked the program's process (that process closes its copy
    first thing), so it is never in the program's memory.
    """
    read_end, write_end = os.pipe()
    nonce_read, nonce_write = os.pipe()
    process = None
    timed_out = False
    try:
        with open(output, "wb") as captured:
            process = subprocess.Popen(
                [sys.executable, "-P", "-s", "-S", "-B", str(CHILD), str(write_end), str(nonce_read)],
                stdin=subprocess.PIPE, stdout=captured, stderr=subprocess.STDOUT,
                pass_fds=(write_end, nonce_read), cwd=workdir, env=_child_env(workdir), start_new_session=True,
                close_fds=True)
        for fd in (write_end, nonce_read):
            os.close(fd)
        write_end = nonce_read = -1
        deadline = time.monotonic() + seconds
        os.write(nonce_write, nonce.encode("ascii"))  # 32 bytes: less than any pipe holds, never blocks
        os.close(nonce_write)
        nonce_write = -1
        try:
            process.stdin.write(json.dumps(job).encode("utf-8"))
            process.stdin.close()
        except BrokenPipeError:
            pass  # the child died at once; its exit status tells
        timed_out = not _wait_exit(process, deadline)
    finally:
        for fd in (write_end, nonce_read, nonce_write):
            if fd >= 0:
                os.close(fd)
        if process is not None:
            if process.returncode is None:  # exited or not, not reaped: its PID is still its process group's ID
                _kill_group(process.pid)
            process.wait()
    try:
        data = _read_until_eof(read_end, time.monotonic() + 2.0)
    finally:
        os.close(read_end)
    return data.decode("utf-8", "replace").splitlines(), timed_out, process.returncode


def _wait_exit(process: subprocess.Popen, deadline: float) -> bool:
    """Wait for the child until `deadline` without reaping it where possible; False on timeout.

    Where Linux offers a pidfd, wake up the moment the child exits (`Popen.wait`
    with a timeout polls with a growing sleep, which costs ~50 ms per program),
    and leave the child unreaped, so that its process group can still be killed
    safely. Elsewhere `Popen.wait` reaps it, and the group is left alone.
    """
    if hasattr(os, "pidfd_open"):
        try:
            handle = os.pidfd_open(process.pid)
        except OSError:
            handle = -1
        if handle >= 0:
            try:
                ready, _, _ = select.select([handle], [], [], max(0.0, deadline - time.monotonic()))
            finally:
                os.close(handle)
            return bool(ready)
    try:
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_until_eof(fd: int, deadline: float) -> bytes:
    """Everything written to the result pipe; gives up at `deadline` if a stray writer keeps it open."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _verdict(lines: list[str], nonce: str, labels: Sequence[str], *, timed_out: bool, returncode: int) -> RunResult:
    """The RunResult from the supervisor's line, checked field by field; anything unexpected is INVALID."""
    records = []
    for line in lines:
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict) and item.get("nonce") == nonce:
            records.append(item)
    if not records:
        if timed_out:
            return RunResult("timeout", "wall-clock limit", ())
        raise SandboxError(f"the sandbox child exited with status {returncode} without a verdict")
    record = records[0]
    if len(records) == 1 and record.get("kind") == "setup":
        raise SandboxError(str(record.get("detail"))[:500])
    isolation = record.get("isolation")
    if (len(records) != 1 or record.get("kind") != "verdict" or not isinstance(isolation, list)
            or len(isolation) > MAX_LAYERS
            or not all(isinstance(layer, str) and len(layer) <= MAX_LAYER_CHARS for layer in isolation)
            or not _valid(record.get("outcome"), record.get("detail"), labels)):
        return RunResult(*INVALID, ())
    return RunResult(record["outcome"], record["detail"], tuple(isolation))


def _valid(outcome: object, detail: object, labels: Sequence[str]) -> bool:
    """Whether (outcome, detail) is in the vocabulary: OUTCOMES, and details built only from fixed words,
    built-in exception class names, small numbers and the parts' labels."""
    if outcome not in OUTCOMES or not isinstance(detail, str):
        return False
    if outcome == "passed":
        return detail == ""
    if outcome in ("failed", "error"):
        name, separator, label = detail.partition(" in ")
        expected = name == "AssertionError" if outcome == "failed" else name in EXCEPTION_NAMES
        return bool(separator) and expected and label in labels
    if outcome == "timeout":
        return detail in ("CPU limit", "wall-clock limit")
    return CRASH_DETAIL.fullmatch(detail) is not None
