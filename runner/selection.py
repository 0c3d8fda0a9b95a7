"""Which request rows to run: rendered from the committed benchmark, or read from a file, then filtered.

Filters mean the same for both inputs: conditions and sources by name, and
`clusters` keeps the first N clusters (in input order) after the source filter.
"""

from __future__ import annotations

from pathlib import Path

from common import jsonl
from common.errors import UserError

REQUIRED_FIELDS = ("id", "cluster", "condition", "message", "benchmark_sha256")


def benchmark_requests(*, conditions=None, sources=None, clusters: int | None = None) -> list[dict]:
    from benchmark import dataset

    return dataset.request_rows(sources=sources, conditions=conditions, limit=clusters)


def file_requests(path: str | Path, *, conditions=None, sources=None,
                  clusters: int | None = None) -> list[dict]:
    """Request rows from a JSON Lines file (format: docs/FORMATS.md), checked and filtered."""
    rows, lines = [], {}
    for number, row in jsonl.read(path):
        for key in REQUIRED_FIELDS:
            if not isinstance(row.get(key), str):
                raise UserError(f"{path}:{number}: expected a request row with a string {key!r} "
                                f"(fields: docs/FORMATS.md, 'Request rows')")
        if row["id"] in lines:
            raise UserError(f"{path}:{number}: request id {row['id']!r} appears twice (first at line "
                            f"{lines[row['id']]}); each id gets one final trace row")
        lines[row["id"]] = number
        rows.append(row)
    if not rows:
        raise UserError(f"{path}: no request rows")
    if conditions:
        known = {row["condition"] for row in rows}
        unknown = sorted(set(conditions) - known)
        if unknown:
            raise UserError(f"{path}: no rows with condition(s) {', '.join(unknown)}; "
                            f"the file has {', '.join(sorted(known))}")
        rows = [row for row in rows if row["condition"] in conditions]
    if sources:
        known = {row.get("source") for row in rows}
        missing = sorted(set(sources) - known)
        if missing:
            raise UserError(f"{path}: no rows from source(s) {', '.join(missing)}")
        rows = [row for row in rows if row.get("source") in sources]
    if clusters is not None:
        kept: list[str] = []
        for row in rows:
            if row["cluster"] not in kept and len(kept) < clusters:
                kept.append(row["cluster"])
        rows = [row for row in rows if row["cluster"] in set(kept)]
    return rows


def check_unique_ids(rows: list[dict]) -> None:
    seen = set()
    for row in rows:
        if row["id"] in seen:
            raise UserError(f"request id {row['id']!r} appears twice; each id gets one final trace row")
        seen.add(row["id"])
