"""Collection provenance: when each condition was asked, what answered it, and how much was unusable.

A difference between two conditions means little if they were answered by
different model versions. The original benchmark found models whose
artifact-native condition was collected weeks after the newline one, possibly
from a changed deployment. From the final trace rows this module reports, per
model and condition, the first, median and last request time (attempt start
times), the served model identifiers and system fingerprints seen, and the
share of unusable and failed rows; and it flags a model when

* `served_differs`: two of its conditions were answered by different sets of
  served model identifiers (`served_model`; rows without one are left out), or
* `served_missing`: a condition was answered (ok or unusable rows) but none of
  its rows carries a served identifier, so nothing shows which deployment
  answered it, nor whether it is the one that answered the others, or
* `days_apart`: the median request times of two of its conditions lie more
  than `max_days` apart. The median, not the first or last request, so that an
  interleaved run that took long, or a few rows asked again later, is not
  mistaken for a condition collected at another time.

System fingerprints (OpenAI's `system_fingerprint`) are listed but not
flagged: they change between backends of the same deployment many times a day.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from benchmark.conditions import ConditionSet, builtin
from common.records import TraceRow

DEFAULT_MAX_DAYS = 7.0


@dataclass(frozen=True)
class ConditionProvenance:
    model: str
    condition: str
    rows: int
    ok: int
    unusable: int
    failed: int
    first: datetime | None  # earliest attempt start
    median: datetime | None  # lower median of the answering attempts' starts
    last: datetime | None  # latest attempt start
    served: tuple[tuple[str, int], ...]  # (served model, rows), most frequent first
    fingerprints: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ModelFlags:
    model: str
    conditions: int
    served: tuple[str, ...]  # every served model identifier seen, sorted
    served_differs: bool
    served_missing: tuple[str, ...]  # answered conditions none of whose rows names a served identifier
    gap_days: float | None  # largest distance between two conditions' median request times
    gap_between: tuple[str, str] | None
    days_apart: bool

    @property
    def flagged(self) -> bool:
        return self.served_differs or bool(self.served_missing) or self.days_apart

    @property
    def reasons(self) -> tuple[str, ...]:
        """The flags raised, in words (for the notes of the tables that leave flagged models out)."""
        reasons = []
        if self.served_differs:
            reasons.append("served identifiers differ between conditions")
        if self.served_missing:
            reasons.append(f"no served identifier under {', '.join(self.served_missing)}")
        if self.days_apart:
            reasons.append(f"{self.gap_between[0]} and {self.gap_between[1]} collected {self.gap_days:.1f} days "
                           "apart")
        return tuple(reasons)


def _counted(values) -> tuple[tuple[str, int], ...]:
    counts = Counter(v for v in values if v is not None)
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def first_request(row: TraceRow) -> datetime | None:
    """When the row's earliest attempt started (None for a row without attempts)."""
    return min((attempt.started() for attempt in row.attempts), default=None)


def answered(row: TraceRow) -> datetime | None:
    """When the attempt that gave the row its final answer, the last one, started."""
    return row.attempts[-1].started() if row.attempts else None


def by_condition(outputs: list[TraceRow], conditions: ConditionSet | None = None) -> list[ConditionProvenance]:
    """One entry per (model, condition) present, models sorted, conditions in the order of `conditions` (default:
    the built-ins, in the benchmark's order; a condition file's follow, in the file's)."""
    groups: dict[tuple[str, str], list[TraceRow]] = {}
    for item in outputs:
        groups.setdefault((item.model, item.condition), []).append(item)
    order = {c: i for i, c in enumerate((conditions or builtin()).names)}
    result = []
    for (model, condition), items in sorted(groups.items(), key=lambda g: (g[0][0], order[g[0][1]])):
        status = Counter(i.status for i in items)
        starts = [t for t in map(first_request, items) if t is not None]
        finals = sorted(t for t in map(answered, items) if t is not None)
        result.append(ConditionProvenance(
            model=model, condition=condition, rows=len(items), ok=status["ok"], unusable=status["unusable"],
            failed=status["failed"], first=min(starts) if starts else None,
            median=finals[(len(finals) - 1) // 2] if finals else None,
            last=max(finals) if finals else None,
            served=_counted(i.served_model for i in items), fingerprints=_counted(i.fingerprint for i in items)))
    return result


def flags(entries: list[ConditionProvenance], max_days: float = DEFAULT_MAX_DAYS) -> list[ModelFlags]:
    """The flags of the module docstring, per model."""
    if max_days < 0:
        raise ValueError(f"max_days must be non-negative, got {max_days}")
    models: dict[str, list[ConditionProvenance]] = {}
    for entry in entries:
        models.setdefault(entry.model, []).append(entry)
    result = []
    for model, items in sorted(models.items()):
        served_sets = [frozenset(name for name, _ in e.served) for e in items if e.served]
        gap, between = None, None
        timed = [e for e in items if e.median is not None]
        for i, a in enumerate(timed):
            for b in timed[i + 1:]:
                days = abs((b.median - a.median).total_seconds()) / 86400
                if gap is None or days > gap:
                    gap, between = days, (a.condition, b.condition)
        result.append(ModelFlags(
            model=model, conditions=len(items),
            served=tuple(sorted(set().union(*served_sets))) if served_sets else (),
            served_differs=len(set(served_sets)) > 1,
            served_missing=tuple(e.condition for e in items if e.ok + e.unusable and not e.served),
            gap_days=gap, gap_between=between,
            days_apart=gap is not None and gap > max_days))
    return result
