"""How many CPUs this process can use: what the scorer's workers and ./reproduce.sh's side-by-side steps count.

Two limits apply, and the smaller counts. The affinity is the set of CPUs the process may run on (what
`nproc` prints). A container's CPU quota (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us` over
`cpu.cfs_period_us`) caps the CPU time it gets whatever the affinity: a container allowed half a CPU on a
16-core host sees 16 CPUs and would start 16 workers that share one half, each slower than one alone. A
quota is rounded up (1.5 CPUs of quota: 2 workers); the process's own cgroup (/proc/self/cgroup) and every
one above it are read, the tightest quota counting; a missing or unreadable file means no quota there.

    python -m common.cpus      # prints the count
"""

from __future__ import annotations

import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def affinity() -> int:
    """The CPUs this process may run on, at least 1 (os.cpu_count() where the system has no affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _ceil_cpus(limit: str, period: str) -> int | None:
    """CPUs of a quota over a period, rounded up; None for no quota ("max", -1) or a value that is not one."""
    if limit == "max" or not limit.lstrip("-").isdigit() or not period.isdigit():
        return None
    limit_us, period_us = int(limit), int(period)
    if limit_us <= 0 or period_us <= 0:
        return None
    return max(1, -(-limit_us // period_us))


def _own_paths(proc_cgroup: Path) -> tuple[str | None, str | None]:
    """This process's cgroup path for v2 (the "0::" line) and for v1's cpu controller, from /proc/self/cgroup."""
    v2 = v1 = None
    try:
        lines = proc_cgroup.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None, None
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _walk(folder: Path, top: Path):
    """`folder` and each folder above it up to `top`: a quota set on a parent cgroup binds its children too."""
    while True:
        yield folder
        if folder == top or top not in folder.parents:
            return
        folder = folder.parent


def quota(cgroup: Path = CGROUP, proc_cgroup: Path = Path("/proc/self/cgroup")) -> int | None:
    """The CPUs the tightest cgroup quota over this process allows (rounded up), or None where there is none or
    none can be read: cgroup v2's `cpu.max` ("<quota> <period>", "max" for none) or v1's `cpu.cfs_quota_us`
    (-1 for none) over `cpu.cfs_period_us`, in the process's own cgroup and every one above it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "cpu.max").write_text("150000 100000\\n")
    ...     half = quota(Path(folder), Path(folder) / "no-proc")
    ...     _ = (Path(folder) / "cpu.max").write_text("max 100000\\n")
    ...     half, quota(Path(folder), Path(folder) / "no-proc"), quota(Path(folder) / "absent")
    (2, None, None)
    """
    v2, v1 = _own_paths(proc_cgroup)
    found = []
    if (cgroup / "cpu.max").exists() or v2 is not None:
        for folder in _walk(cgroup / (v2 or "/").lstrip("/"), cgroup):
            try:
                found.append(_ceil_cpus(*(folder / "cpu.max").read_text(encoding="ascii").split()[:2]))
            except (OSError, TypeError, UnicodeDecodeError):
                continue
    else:
        top = cgroup / "cpu"
        for folder in _walk(top / (v1 or "/").lstrip("/"), top):
            try:
                limit = (folder / "cpu.cfs_quota_us").read_text(encoding="ascii").strip()
                period = (folder / "cpu.cfs_period_us").read_text(encoding="ascii").strip()
            except (OSError, UnicodeDecodeError):
                continue
            found.append(_ceil_cpus(limit, period))
    limits = [limit for limit in found if limit is not None]
    return min(limits) if limits else None


def available(cgroup: Path = CGROUP, proc_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """The CPUs this process can use: its affinity, capped by a cgroup quota; at least 1.

    >>> 1 <= available() <= affinity()
    True
    """
    limit = quota(cgroup, proc_cgroup)
    return affinity() if limit is None else min(affinity(), limit)


def _print() -> None:
    print(available())


if __name__ == "__main__":
    import sys

    from common.pipes import run_main

    sys.exit(run_main(_print))
