"""Read the committed benchmark: its clusters, its checksum, and the rendered requests.

Everything downstream (runner, scorer, validity checks) reaches the benchmark
through `load` (or `request_rows`), so a change of layout touches one file.
`load` reads each partition file once and computes the checksum from the very
bytes it parsed, so the checksum always names the clusters it came with.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from benchmark.render import CONDITIONS
from benchmark.render import request_rows as render_rows
from common import jsonl
from common.errors import UserError
from common.records import Cluster, shown

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT / "data" / "benchmark"
PARTITIONS = ("permissive", "sharealike", "noncommercial")


@dataclass(frozen=True)
class Benchmark:
    """The clusters in file order (permissive, sharealike, noncommercial) and their checksum."""

    clusters: tuple[Cluster, ...]
    sha256: str

    @cached_property
    def by_name(self) -> dict[str, Cluster]:
        return {cluster.cluster: cluster for cluster in self.clusters}

    def cluster(self, name: str) -> Cluster:
        try:
            return self.by_name[name]
        except KeyError:
            raise UserError(f"cluster {shown(name)} is not in the benchmark") from None


def load(data_dir: Path = DATA_DIR) -> Benchmark:
    """Read the benchmark once: every cluster, checked, and the SHA-256 of the bytes read."""
    digest = hashlib.sha256()
    clusters = []
    for path in partition_paths(data_dir):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise UserError(f"{path}: benchmark file missing; regenerate it with 'python seam.py build'") from None
        digest.update(data)
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{where}: expected one JSON object per line ({exc})") from None
            if not isinstance(row, dict):
                raise UserError(f"{where}: expected a JSON object, found {type(row).__name__}")
            clusters.append(Cluster.from_row(row, where))
    return Benchmark(tuple(clusters), digest.hexdigest())


def partition_paths(data_dir: Path = DATA_DIR) -> list[Path]:
    return [Path(data_dir) / f"{name}.jsonl" for name in PARTITIONS]


def benchmark_sha256(data_dir: Path = DATA_DIR) -> str:
    """SHA-256 of the partition files concatenated in the fixed order."""
    digest = hashlib.sha256()
    for path in partition_paths(data_dir):
        try:
            digest.update(path.read_bytes())
        except FileNotFoundError:
            raise UserError(f"{path}: benchmark file missing; regenerate it with 'python seam.py build'") from None
    return digest.hexdigest()


def load_clusters(data_dir: Path = DATA_DIR) -> list[dict]:
    """All cluster rows, in file order (permissive, sharealike, noncommercial)."""
    clusters = []
    for path in partition_paths(data_dir):
        clusters.extend(row for _, row in jsonl.read(path))
    return clusters


def request_rows(data_dir: Path = DATA_DIR, *, sources=None, conditions=None, clusters=None,
                 limit: int | None = None) -> list[dict]:
    """Rendered request rows, cluster by cluster, filtered by source, condition and cluster id.

    `limit` keeps the first N clusters (after the source and cluster filters).
    """
    conditions = tuple(conditions or CONDITIONS)
    unknown = sorted(set(conditions) - set(CONDITIONS))
    if unknown:
        raise UserError(f"unknown condition(s) {', '.join(unknown)}; expected some of {', '.join(CONDITIONS)}")
    chosen = [c for c in load_clusters(data_dir)
              if (not sources or c["source"] in sources) and (not clusters or c["cluster"] in clusters)]
    if sources:
        missing = sorted(set(sources) - {c["source"] for c in chosen})
        if missing:
            raise UserError(f"no clusters from source(s) {', '.join(missing)}")
    if limit is not None:
        chosen = chosen[:limit]
    checksum = benchmark_sha256(data_dir)
    rows = []
    for cluster in chosen:
        rows.extend(render_rows(cluster, checksum, conditions))
    return rows
