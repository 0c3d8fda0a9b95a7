"""Run untrusted Python (a model's edited code and its unit tests) in a separate, fenced process.

The functional check executes model output, so it is opt-in (`--execute`) and
every run goes through `run_program`, which starts `validity/sandbox_child.py`
in a fresh interpreter and enforces, from outside, a wall-clock limit (the
whole process group is killed). Inside, the child sets up the protections
listed in its docstring: namespaces, read-only mounts and no capabilities
where the kernel allows it (Linux as root, or with unprivileged user
namespaces), resource limits everywhere, and an audit-hook guard. The result
says which protections applied, and `docs/VALIDITY.md` says where each holds.

Determinism: the verdict depends only on the program and the limits. The
child runs with PYTHONHASHSEED=0 and `random.seed(0)`, exceptions are reported
by their nearest built-in class and program part (never by message or by the
program's own class name, which may hold addresses or anything else), and a
timeout is a verdict like any other. The limits are generous so that no
HumanEval solution comes near them.
"""

from __future__ import annotations

import json
import os
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


@dataclass(frozen=True)
class Limits:
    """What one run may use. Recorded in the functional table's notes."""

    cpu_seconds: int = 4
    wall_seconds: float = 30.0
    memory_bytes: int = 1 << 30  # address space
    file_bytes: int = 1 << 20  # any one file written, the captured stdout and stderr included
    open_files: int = 64
    workdir_bytes: int = 16 << 20  # the tmpfs working directory (kernel layer only)

    def describe(self) -> str:
        return (f"{self.cpu_seconds} CPU seconds, {self.wall_seconds:g} s wall clock, "
                f"{self.memory_bytes >> 20} MiB address space, {self.file_bytes >> 10} KiB per file written, "
                f"{self.open_files} open files, no new processes, "
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
    process died without a verdict (a signal, `os._exit`, a memory limit hit in C).
    `kernel` ("auto", "require", "off") and `guard` choose the protections; the
    defaults use all that the machine allows. Raises SandboxError when the sandbox
    cannot start or `kernel="require"` cannot be met.
    """
    if kernel not in KERNEL_MODES:
        raise ValueError(f"kernel must be one of {KERNEL_MODES}, got {kernel!r}")
    problem = available()
    if problem:
        raise SandboxError(problem)
    nonce = secrets.token_hex(16)
    scratch = Path(tempfile.mkdtemp(prefix="seam-sandbox-"))
    try:
        workdir = scratch / "work"
        workdir.mkdir(mode=0o700)
        job = {"nonce": nonce, "workdir": str(workdir), "kernel": kernel, "guard": guard,
               "parts": [list(p) for p in parts],
               "limits": {"cpu_seconds": limits.cpu_seconds, "memory_bytes": limits.memory_bytes,
                          "file_bytes": limits.file_bytes, "open_files": limits.open_files,
                          "workdir_bytes": limits.workdir_bytes}}
        lines, timed_out, returncode = _spawn(job, workdir, scratch / "output", limits.wall_seconds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _verdict(lines, nonce, timed_out, returncode)


def _child_env(workdir: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8",
            "HOME": str(workdir), "TMPDIR": str(workdir)}


def _spawn(job: dict, workdir: Path, output: Path, wall_seconds: float) -> tuple[list[str], bool, int]:
    """Start the child, feed it the job, wait within the wall-clock limit; (result lines, timed out, code)."""
    read_end, write_end = os.pipe()
    try:
        with open(output, "wb") as captured:
            process = subprocess.Popen(
                [sys.executable, "-P", "-s", "-S", "-B", str(CHILD), str(write_end)],
                stdin=subprocess.PIPE, stdout=captured, stderr=subprocess.STDOUT, pass_fds=(write_end,),
                cwd=workdir, env=_child_env(workdir), start_new_session=True, close_fds=True)
        os.close(write_end)
        write_end = -1
        deadline = time.monotonic() + wall_seconds
        try:
            process.stdin.write(json.dumps(job).encode("utf-8"))
            process.stdin.close()
        except BrokenPipeError:
            pass  # the child died at once; its exit status tells
        timed_out = not _wait(process, deadline)
        if timed_out:
            _kill_group(process.pid)
            process.wait()
        data = _read_until_eof(read_end, time.monotonic() + 2.0)
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    return data.decode("utf-8", "replace").splitlines(), timed_out, process.returncode


def _wait(process: subprocess.Popen, deadline: float) -> bool:
    """Wait for the child until `deadline`; False on timeout.

    Where Linux offers a pidfd, wake up the moment the child exits: `Popen.wait`
    with a timeout polls with a growing sleep, which costs ~50 ms per program.
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
            if not ready:
                return False
            process.wait()
            return True
    try:
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
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


def _verdict(lines: list[str], nonce: str, timed_out: bool, returncode: int) -> RunResult:
    reports = {}
    for line in lines:
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict) and item.get("nonce") == nonce:
            reports.setdefault(item.get("kind"), item)
    if "setup" in reports:
        raise SandboxError(reports["setup"]["detail"])
    isolation = tuple(reports.get("ready", {}).get("isolation", ()))
    if "result" in reports:
        return RunResult(reports["result"]["outcome"], reports["result"]["detail"], isolation)
    if timed_out:
        return RunResult("timeout", "wall-clock limit", isolation)
    if not isolation:
        raise SandboxError(f"the sandbox child exited with status {returncode} before running anything")
    code = reports["status"]["exit"] if "status" in reports else returncode
    if code in (-signal.SIGKILL, -signal.SIGXCPU):
        return RunResult("timeout", "CPU limit", isolation)
    if code < 0:
        return RunResult("crashed", f"killed by {signal.Signals(-code).name}", isolation)
    return RunResult("crashed", f"exited with status {code} before the tests finished", isolation)
