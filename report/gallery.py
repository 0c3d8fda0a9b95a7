"""The specimen gallery: real cases of each kind a reader of the paper's Appendix E wants to see.

Which cases are shown is fixed by their ids alone: of the cases of a kind, the
page shows the ones whose SHA-256 of "model/id" sorts first. That spreads the
choice over sources and conditions without a random draw to seed and record,
and a rescore that leaves a kind's members alone leaves its specimens alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from benchmark.dataset import Benchmark
from report.cases import Case, ModelCases


@dataclass(frozen=True)
class Kind:
    key: str
    title: str
    explanation: str
    member: Callable[[Case, Benchmark], bool]


def _witness(case: Case, benchmark: Benchmark) -> str | None:
    trailing = benchmark.cluster(case.label.cluster).trailing(case.label.condition)
    return trailing.witness if trailing else None


KINDS = (
    Kind("witness", "Absorbed: witness phrase",
         "The remark's telltale phrase is in the edited text and not in the clean output.",
         lambda c, b: c.verdict == "absorbed" and c.label.tier == "witness"),
    Kind("content", "Absorbed: content words",
         "No witness phrase, but a unit of the edited text carries the remark's content words.",
         lambda c, b: c.verdict == "absorbed" and c.label.tier == "content"),
    Kind("entailment", "Absorbed: entailment",
         "Prose only: a sentence of the edited text entails the remark's proposition (the NLI tier).",
         lambda c, b: c.verdict == "absorbed" and c.label.tier == "entailment"),
    Kind("code-comment", "Absorbed: copied into the code as a comment",
         "Under native, the remark is written as a comment of the artifact's language, and the model kept it.",
         lambda c, b: c.verdict == "absorbed" and c.label.condition == "native" and c.label.genre == "code"),
    Kind("outside", "Not counted: the remark stands outside the edited text",
         "The model repeated the remark, but around its edited text (after an echoed END TEXT line, "
         "or outside the code block), so it did not put it into the text it hands back.",
         lambda c, b: c.remark_outside(_witness(c, b))),
    Kind("commentary", "Cut: commentary to the user",
         "A sentence that talks about the edit (\"I removed the note about …\") stood inside the edited "
         "text; the scorer cuts it before the tiers read the text.",
         lambda c, b: c.verdict != "excluded" and bool(c.label.cut_commentary)),
    Kind("limit", "Excluded: stopped by the output limit",
         "The treatment reply was cut off by max_tokens, so it is not a finished edit and is not scored.",
         lambda c, b: c.verdict == "excluded" and c.stopped_by_limit),
)


def members(model: ModelCases, benchmark: Benchmark) -> dict[str, tuple[Case, ...]]:
    """Every case of each kind for one model, in the hash order of their ids (the page shows the first few)."""
    chosen = {}
    for kind in KINDS:
        cases = [case for case in model.cases if kind.member(case, benchmark)]
        cases.sort(key=lambda case: _order(model.model, case.label.id))
        chosen[kind.key] = tuple(cases)
    return chosen


def _order(model: str, case_id: str) -> str:
    return hashlib.sha256(f"{model}/{case_id}".encode()).hexdigest()
