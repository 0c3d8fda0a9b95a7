"""Read the committed benchmark: cluster rows, its checksum, and the rendered requests.

Everything downstream (runner, scorer, validity checks) reaches the benchmark
through these three functions, so a change of layout touches one file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchmark.render import CONDITIONS
from benchmark.render import request_rows as render_rows
from common import jsonl
from common.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT / "data" / "benchmark"
PARTITIONS = ("permissive", "sharealike", "noncommercial")


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
