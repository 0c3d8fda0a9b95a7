"""Which requests to run: rendered from the committed benchmark, or read from a file, then filtered.

Filters mean the same for both inputs: conditions, sources and cluster ids by name, and
`limit` keeps the first N clusters (in input order) after the source and cluster filters.
Every condition named, and every request row's condition, must be defined:
built in, or in the condition file given (`defined`, `--conditions FILE`).
A request file must hold Unicode text: a lone surrogate escape ("\\udc80",
which JSON allows and UTF-8 cannot carry) is refused naming file, line and
field. Ids and values are quoted cut short in every message.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from benchmark.conditions import ConditionSet, builtin
from common import records
from common.errors import UserError
from common.jsonl import LONE_SURROGATE
from common.records import Request, shown

SURROGATE = LONE_SURROGATE


def benchmark_requests(*, conditions=None, sources=None, cluster_ids=None, limit: int | None = None,
                       defined: ConditionSet | None = None) -> list[Request]:
    from benchmark import dataset

    return dataset.requests(sources=sources, conditions=conditions, cluster_ids=cluster_ids, limit=limit,
                            defined=defined)


def file_requests(path: str | Path, *, conditions=None, sources=None, cluster_ids=None, limit: int | None = None,
                  defined: ConditionSet | None = None) -> list[Request]:
    """Requests from a JSON Lines file of request rows (docs/FORMATS.md), checked and filtered."""
    defined = defined or builtin()
    if conditions:
        defined.check(conditions)
    requests: list[Request] = []
    first: dict[str, str] = {}  # id -> the line it first appears on
    for where, request in records.read(path, Request):
        line = where.rpartition(":")[2]
        check_text(request, where)
        defined.get(request.condition, where)
        if request.id in first:
            raise UserError(f"{where}: request id {shown(request.id)} appears twice (first at line "
                            f"{first[request.id]}); each id gets one final trace row")
        first[request.id] = line
        requests.append(request)
    if not requests:
        raise UserError(f"{path}: no request rows")
    if conditions:
        known = {request.condition for request in requests}
        unknown = sorted(set(conditions) - known)
        if unknown:
            raise UserError(f"{path}: no rows with condition(s) {', '.join(unknown)}; "
                            f"the file has {', '.join(sorted(known))}")
        requests = [request for request in requests if request.condition in conditions]
    if sources:
        missing = sorted(set(sources) - {request.source for request in requests})
        if missing:
            raise UserError(f"{path}: no rows from source(s) {', '.join(missing)}")
        requests = [request for request in requests if request.source in sources]
    if cluster_ids:
        missing = sorted(set(cluster_ids) - {request.cluster for request in requests})
        if missing:
            among = f" from source(s) {', '.join(sources)}" if sources else ""
            raise UserError(f"{path}: no rows{among} of cluster(s) {', '.join(shown(name) for name in missing)}")
        requests = [request for request in requests if request.cluster in cluster_ids]
    if limit is not None:
        kept: dict[str, None] = {}  # the first `limit` clusters, in input order
        for request in requests:
            if len(kept) == limit:
                break
            kept.setdefault(request.cluster)
        requests = [request for request in requests if request.cluster in kept]
    return requests


def check_text(request: Request, where: str) -> None:
    """Refuse a request whose strings UTF-8 cannot carry (it could be neither sent nor recorded)."""
    for item in dataclasses.fields(request):
        value = getattr(request, item.name)
        match = SURROGATE.search(value) if isinstance(value, str) else None
        if match:
            raise UserError(f"{where}: field {item.name!r} holds a lone surrogate (U+{ord(match.group()):04X} at "
                            f"character {match.start() + 1}), which UTF-8 cannot carry; the request file must "
                            "hold Unicode text")


def check_unique_ids(requests: list[Request]) -> None:
    seen = set()
    for request in requests:
        if request.id in seen:
            raise UserError(f"request id {shown(request.id)} appears twice; each id gets one final trace row")
        seen.add(request.id)
