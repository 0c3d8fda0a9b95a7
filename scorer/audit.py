"""Audit: rescore the traces and check that the labels file is reproduced byte for byte.

A labels file is only evidence if anyone can regenerate exactly it from the
traces. The audit recomputes every label (by default without the entailment
cache, so the model itself is rerun) and compares bytes; it reports the
SHA-256 of both, and the first line that differs when they do not match.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from benchmark.conditions import ConditionSet
from common.errors import UserError
from common.reading import read_bytes
from scorer.entailment import Entailer
from scorer.inputs import Item, TraceSet
from scorer.score import labels_bytes, score


@dataclass(frozen=True)
class AuditResult:
    identical: bool
    labels_sha256: str  # of the labels file as found
    rescored_sha256: str  # of the labels the rescore produced
    first_difference: int | None  # 1-based line number of the first differing line
    rows: int


def audit(labels_path: str | Path, traces: TraceSet, items: dict[str, Item],
          entailer: Entailer | None = None, conditions: ConditionSet | None = None) -> AuditResult:
    labels_path = Path(labels_path)
    try:
        found = read_bytes(labels_path, "a labels file (JSON Lines)")
    except FileNotFoundError:
        raise UserError(f"{labels_path}: no such labels file") from None
    except OSError as exc:
        raise UserError(f"{labels_path}: cannot read the labels file ({exc.strerror or exc})") from None
    result = score(traces, items, entailer, conditions)
    rescored = labels_bytes(result.labels)
    first = None
    if found != rescored:
        old, new = found.split(b"\n"), rescored.split(b"\n")
        first = next((i + 1 for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    return AuditResult(found == rescored, hashlib.sha256(found).hexdigest(),
                       hashlib.sha256(rescored).hexdigest(), first, len(result.labels))
