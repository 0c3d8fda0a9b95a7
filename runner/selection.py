"""Which requests to run: rendered from the committed benchmark, or read from a file, then filtered.

Filters mean the same for both inputs: conditions, sources and cluster ids by name, and
`limit` keeps the first N clusters (in input order) after the source and cluster filters.
Every condition named, and every request row's condition, must be defined:
built in, or in the condition file given (`defined`, `--conditions FILE`).
A later-turn condition that holds the model's own reply (docs/CONDITIONS.md)
is rendered from the benchmark only with that model's trace (`--replies
TRACE`, `model_replies`); its requests whose reply is missing or unusable there
are left out, and `chosen` says how many. A request file already holds its
conversations, so it takes no replies.
A request file must hold Unicode text: a lone surrogate escape ("\\udc80",
which JSON allows and UTF-8 cannot carry) is refused naming file, line and
field, the system prompt and each earlier turn included. Ids and values are
quoted cut short in every message.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from benchmark.conditions import ConditionSet, builtin
from benchmark.replies import Replies
from common import records
from common.errors import UserError
from common.jsonl import LONE_SURROGATE
from common.records import Request, shown

SURROGATE = LONE_SURROGATE


def benchmark_requests(*, conditions=None, sources=None, cluster_ids=None, limit: int | None = None,
                       defined: ConditionSet | None = None, replies: Replies | None = None) -> list[Request]:
    """The benchmark's requests; a later-turn one holding the model's reply takes it from `replies`."""
    from benchmark import dataset

    return dataset.requests(sources=sources, conditions=conditions, cluster_ids=cluster_ids, limit=limit,
                            defined=defined, replies=replies)


def model_replies(path: str | Path, model: str) -> Replies:
    """The replies of `model` (a config's name) in the trace file `path`, for `--replies TRACE`.

    A later turn holds the model's own answer to its opening request: another model's answer would put words
    in its mouth it never said, so a trace of another model (its rows' `model`), or of none, is refused.
    """
    replies = Replies.read(path)
    if replies.model is None:
        raise UserError(f"{path}: no trace rows, so no reply of model {shown(model)} for a later turn to hold; "
                        "--replies takes the trace of that model's run of the opening requests")
    if replies.model != model:
        raise UserError(f"{path}: its rows are model {shown(replies.model)}, the config is {shown(model)}: a later "
                        "turn holds the model's own reply, so --replies takes the trace of the same config's run")
    return replies


def chosen(*, model: str, requests_file: str | Path | None = None, replies_file: str | Path | None = None,
           **filters) -> tuple[list[Request], str | None]:
    """The requests a command works on (a run, `--dry-run`, `--check-connection`, `--estimate`, `--batch`: all
    of them through here, so that none renders the benchmark otherwise), and the line saying which later-turn
    requests were left out for want of a usable reply (None when none were).

    `filters` are `benchmark_requests`'s. A request file already holds its conversations (`seam.py prompts
    --replies` wrote their earlier turns), so `replies_file` goes without `requests_file`.
    """
    if requests_file is not None:
        if replies_file is not None:
            raise UserError("--replies goes without --requests: a request file already holds its conversations "
                            "(seam.py prompts --replies TRACE wrote their earlier turns)")
        return file_requests(requests_file, **filters, model=model), None
    replies = model_replies(replies_file, model) if replies_file is not None else None
    requests = benchmark_requests(**filters, replies=replies)
    if replies is None:
        return requests, None
    for request in requests:  # a trace written by hand may hold what the runner never writes
        if request.earlier:
            check_text(request, f"request {shown(request.id)}", f"the replies trace {replies.source}")
    left_out = replies.summary()
    if not requests and left_out:
        raise UserError(f"nothing to run: {left_out}")
    return requests, left_out


def file_requests(path: str | Path, *, conditions=None, sources=None, cluster_ids=None, limit: int | None = None,
                  defined: ConditionSet | None = None, model: str | None = None) -> list[Request]:
    """Requests from a JSON Lines file of request rows (docs/FORMATS.md), checked and filtered; each row must be
    what its condition sends (`ConditionSet.check_request`), a later turn holding `model`'s own reply."""
    defined = defined or builtin()
    if conditions:
        defined.check(conditions)
    requests: list[Request] = []
    first: dict[str, str] = {}  # id -> the line it first appears on
    for where, request in records.read(path, Request):
        line = where.rpartition(":")[2]
        check_text(request, where)
        defined.check_request(request, where, model)
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


def check_text(request: Request, where: str, source: str = "the request file") -> None:
    """Refuse a request whose strings UTF-8 cannot carry (it could be neither sent nor recorded): every string
    field (the system prompt among them) and each earlier turn's text, named `earlier[I].text` (I from 0, as the
    row's JSON list counts). `source` is what holds the text, for the message."""
    texts = [(item.name, getattr(request, item.name)) for item in dataclasses.fields(request)]
    texts += [(f"earlier[{index}].text", turn.text) for index, turn in enumerate(request.earlier or ())]
    for name, value in texts:
        match = SURROGATE.search(value) if isinstance(value, str) else None
        if match:
            raise UserError(f"{where}: field {name!r} holds a lone surrogate (U+{ord(match.group()):04X} at "
                            f"character {match.start() + 1}), which UTF-8 cannot carry; {source} must hold "
                            "Unicode text")


def check_unique_ids(requests: list[Request]) -> None:
    seen = set()
    for request in requests:
        if request.id in seen:
            raise UserError(f"request id {shown(request.id)} appears twice; each id gets one final trace row")
        seen.add(request.id)
