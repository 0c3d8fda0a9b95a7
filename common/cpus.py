"""How many CPUs this process can use: what the scorer's workers and ./reproduce.sh's side-by-side steps count.

Two limits apply, and the smaller counts. The affinity is the set of CPUs the process may run on (what
`nproc` prints). A container's CPU quota (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us` over
`cpu.cfs_period_us`) caps the CPU time it gets whatever the affinity: a container allowed half a CPU on a
16-core host sees 16 CPUs and would start 16 workers that share one half, each slower than one alone. A
quota is rounded up (1.5 CPUs of quota: 2 workers), and a missing or unreadable file means no quota.

    python -m common.cpus      # prints the count
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def affinity() -> int:
    """The CPUs this process may run on, at least 1 (os.cpu_count() where the system has no affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def quota(cgroup: Path = CGROUP) -> int | None:
    """The CPUs a cgroup quota allows (rounded up), or None where there is none or it cannot be read.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "cpu.max").write_text("150000 100000\\n")
    >>> quota(root)
    2
    >>> _ = (root / "cpu.max").write_text("max 100000\\n")
    >>> quota(root) is None
    True
    """
    try:
        if (cgroup / "cpu.max").exists():  # cgroup v2: "<quota> <period>", quota "max" for none
            limit, period = (cgroup / "cpu.max").read_text(encoding="ascii").split()[:2]
        else:  # cgroup v1: quota -1 for none
            limit = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text(encoding="ascii").strip()
            period = (cgroup / "cpu" / "cpu.cfs_period_us").read_text(encoding="ascii").strip()
        if limit == "max" or int(limit) <= 0 or int(period) <= 0:
            return None
        return max(1, math.ceil(int(limit) / int(period)))
    except (OSError, ValueError):
        return None


def available(cgroup: Path = CGROUP) -> int:
    """The CPUs this process can use: its affinity, capped by a cgroup quota; at least 1.

    >>> 1 <= available() <= affinity()
    True
    """
    limit = quota(cgroup)
    return affinity() if limit is None else min(affinity(), limit)


if __name__ == "__main__":
    print(available())
