"""common/cpus.py: the CPUs a process can use, its affinity capped by the tightest CPU quota of its own cgroup and
those above it (cgroup v2 or v1). Every test gives its own made-up /proc/self/cgroup, so the host's does not count."""

from pathlib import Path

import pytest

from common import cpus


def _proc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proc-self-cgroup"
    path.write_text(text)
    return path


def _v1(root: Path, quota: str, period: str = "100000") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cpu.cfs_quota_us").write_text(quota + "\n")
    (root / "cpu.cfs_period_us").write_text(period + "\n")
    return root


@pytest.mark.parametrize(("text", "expected"), [
    ("50000 100000", 1), ("100000 100000", 1), ("150000 100000", 2), ("400000 100000", 4), ("max 100000", None),
    ("", None), ("lots 100000", None), ("100000 0", None)])
def test_a_cgroup_v2_quota_is_read_and_rounded_up(tmp_path, text, expected):
    (tmp_path / "fs").mkdir()
    (tmp_path / "fs" / "cpu.max").write_text(text + "\n")
    assert cpus.quota(tmp_path / "fs", _proc(tmp_path, "0::/\n")) == expected


def test_the_process_own_v2_cgroup_and_its_parents_are_read_and_the_tightest_counts(tmp_path):
    fs = tmp_path / "fs"
    (fs / "system.slice" / "job.service").mkdir(parents=True)
    (fs / "cpu.max").write_text("max 100000\n")
    (fs / "system.slice" / "cpu.max").write_text("300000 100000\n")
    (fs / "system.slice" / "job.service" / "cpu.max").write_text("max 100000\n")
    assert cpus.quota(fs, _proc(tmp_path, "0::/system.slice/job.service\n")) == 3
    (fs / "system.slice" / "job.service" / "cpu.max").write_text("120000 100000\n")
    assert cpus.quota(fs, _proc(tmp_path, "0::/system.slice/job.service\n")) == 2


def test_a_cgroup_v1_quota_is_read_from_the_cpu_controllers_cgroup(tmp_path):
    fs = tmp_path / "fs"
    _v1(fs / "cpu", "-1")
    _v1(fs / "cpu" / "docker" / "abc", "250000")
    proc = _proc(tmp_path, "9:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/\n")
    assert cpus.quota(fs, proc) == 3
    assert cpus.quota(fs, _proc(tmp_path, "4:cpu,cpuacct:/\n")) is None  # the root's -1: no quota
    assert cpus.quota(tmp_path / "none", _proc(tmp_path, "")) is None


def test_the_quota_caps_the_affinity_and_never_raises_it(tmp_path, monkeypatch):
    monkeypatch.setattr(cpus, "affinity", lambda: 8)
    proc = _proc(tmp_path, "0::/\n")
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    assert cpus.available(tmp_path, proc) == 2
    (tmp_path / "cpu.max").write_text("1600000 100000\n")
    assert cpus.available(tmp_path, proc) == 8
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpus.available(tmp_path, proc) == 8


def test_the_scorer_starts_one_worker_per_usable_cpu(monkeypatch):
    from scorer import parallel

    monkeypatch.setattr(cpus, "available", lambda: 3)
    assert parallel.worker_count(None, 20) == 3 and parallel.worker_count(None, 2) == 2
