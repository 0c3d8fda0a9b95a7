"""common/cpus.py: the CPUs a process can use, its affinity capped by a container's CPU quota (cgroup v2 or v1)."""

from pathlib import Path

import pytest

from common import cpus


def _v1(root: Path, quota: str, period: str = "100000") -> Path:
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "cpu.cfs_quota_us").write_text(quota + "\n")
    (root / "cpu" / "cpu.cfs_period_us").write_text(period + "\n")
    return root


@pytest.mark.parametrize(("text", "expected"), [
    ("50000 100000", 1), ("100000 100000", 1), ("150000 100000", 2), ("400000 100000", 4), ("max 100000", None),
    ("", None), ("lots 100000", None), ("100000 0", None)])
def test_a_cgroup_v2_quota_is_read_and_rounded_up(tmp_path, text, expected):
    (tmp_path / "cpu.max").write_text(text + "\n")
    assert cpus.quota(tmp_path) == expected


def test_a_cgroup_v1_quota_is_read_and_minus_one_is_none(tmp_path):
    assert cpus.quota(_v1(tmp_path / "a", "250000")) == 3
    assert cpus.quota(_v1(tmp_path / "b", "-1")) is None
    assert cpus.quota(tmp_path / "none") is None


def test_the_quota_caps_the_affinity_and_never_raises_it(tmp_path, monkeypatch):
    monkeypatch.setattr(cpus, "affinity", lambda: 8)
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    assert cpus.available(tmp_path) == 2
    (tmp_path / "cpu.max").write_text("1600000 100000\n")
    assert cpus.available(tmp_path) == 8
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpus.available(tmp_path) == 8


def test_the_scorer_starts_one_worker_per_usable_cpu(monkeypatch):
    from scorer import parallel

    monkeypatch.setattr(cpus, "available", lambda: 3)
    assert parallel.worker_count(None, 20) == 3 and parallel.worker_count(None, 2) == 2
