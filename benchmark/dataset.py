"""Read the committed benchmark: its clusters, its checksum, and the rendered requests.

Everything downstream (runner, scorer, validity checks) reaches the benchmark
through `load` (or `requests`), so a change of layout touches one file.
`load` reads each partition file once and computes the checksum from the very
bytes it parsed, so the checksum always names the clusters it came with.
`seam.py check` reads the same bytes through `partition_files` and
`common.jsonl.parse_lines`, so that it can report every bad row instead of stopping at one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from benchmark.conditions import ConditionSet, builtin
from benchmark.render import cluster_requests
from benchmark.replies import Replies
from common.errors import UserError
from common.jsonl import parse_lines
from common.records import Cluster, Request, shown

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
    files = partition_files(data_dir)
    clusters = [Cluster.from_row(row, where) for path, data in files for where, row in parse_lines(path, data)]
    return Benchmark(tuple(clusters), checksum(files))


def partition_paths(data_dir: Path = DATA_DIR) -> list[Path]:
    return [Path(data_dir) / f"{name}.jsonl" for name in PARTITIONS]


def partition_files(data_dir: Path = DATA_DIR) -> list[tuple[Path, bytes]]:
    """Each partition file's path and bytes, in the fixed order; a missing one says how to rebuild it."""
    files = []
    for path in partition_paths(data_dir):
        try:
            files.append((path, path.read_bytes()))
        except FileNotFoundError:
            raise UserError(f"{path}: benchmark file missing; regenerate it with 'python seam.py build'") from None
    return files


def checksum(files: list[tuple[Path, bytes]]) -> str:
    """The benchmark checksum: SHA-256 of the partition files' bytes concatenated in the fixed order."""
    digest = hashlib.sha256()
    for _, data in files:
        digest.update(data)
    return digest.hexdigest()


def requests(benchmark: Benchmark | None = None, *, sources=None, conditions=None, cluster_ids=None,
             limit: int | None = None, defined: ConditionSet | None = None,
             replies: Replies | None = None) -> list[Request]:
    """The rendered requests, cluster by cluster, filtered by source, condition and cluster id.

    `benchmark` defaults to `load()`, `defined` (the conditions that exist) to the
    built-ins; `conditions` names some of them (default: all, in their order).
    `limit` keeps the first N clusters (after the source and cluster filters). A
    condition that is not defined, or a source or cluster id that selects nothing,
    is a `UserError`, so that a typo never passes for an empty selection.
    """
    defined = defined or builtin()
    conditions = defined.check(dict.fromkeys(conditions)) if conditions else defined.names
    benchmark = load() if benchmark is None else benchmark
    if cluster_ids:
        by_name = benchmark.by_name
        missing = sorted(name for name in set(cluster_ids)
                         if name not in by_name or (sources and by_name[name].source not in sources))
        if missing:
            among = f" among source(s) {', '.join(sources)}" if sources else ""
            raise UserError(f"no cluster {', '.join(missing)}{among}; cluster ids look like humaneval-007 "
                            "(see 'seam.py prompts --sources humaneval --only clean')")
    chosen = [cluster for cluster in benchmark.clusters
              if (not sources or cluster.source in sources) and (not cluster_ids or cluster.cluster in cluster_ids)]
    if sources:
        missing = sorted(set(sources) - {cluster.source for cluster in chosen})
        if missing:
            raise UserError(f"no clusters from source(s) {', '.join(missing)}")
    if limit is not None:
        chosen = chosen[:limit]
    return [request for cluster in chosen
            for request in cluster_requests(cluster, benchmark.sha256, conditions, defined, replies)]

