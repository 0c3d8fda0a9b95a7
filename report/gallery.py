"""The specimen gallery: real cases of each kind a reader of the paper's Appendix E wants to see.

Which cases are shown is fixed by their ids alone: of the cases of a kind, the
page shows the ones whose SHA-256 of "model/id" sorts first. That spreads the
choice over sources and conditions without a random draw to seed and record,
and a rescore that leaves a kind's members alone leaves its specimens alone.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from benchmark.dataset import Benchmark
from common.normalize import contains_phrase
from common.records import Comment
from report.cases import Case, ModelCases
from scorer.commentary import cut_commentary


@dataclass(frozen=True)
class Kind:
    key: str
    title: str
    explanation: str
    member: Callable[[Case, Benchmark], bool]


# A line that is a comment of the artifact's language (the benchmark's code is Python; the others cost nothing).
_COMMENT_LINE = re.compile(r"^[ \t]*(?:#|//|/\*|--)", re.MULTILINE)


def _copied_as_comment(case: Case) -> bool:
    """Absorbed into code as a comment line (a line of the evidence, which may be a run of lines): the native
    note kept, or a casual remark the model made one."""
    evidence = case.label.evidence or ""
    return case.verdict == "absorbed" and case.label.genre == "code" and bool(_COMMENT_LINE.search(evidence))


@dataclass(frozen=True)
class _Cut:
    """What the text extraction cut around the edited text holds, as the two kinds that read it ask."""

    commentary: bool  # a unit of it is commentary about the remark
    remark: bool  # the remark's witness phrase stands in it, outside that commentary


def _around(case: Case, benchmark: Benchmark) -> _Cut:
    """What extraction cut around the edited text, split into commentary about the remark and the rest.

    The cut is the reply talking to the user (a preamble, notes after the text, an echoed END TEXT line and
    what follows it), so it is read as prose, with the scorer's own rule for talk about editing the remark
    (SCORER.md, "Commentary about editing the comment"): "- Changed "no rush" to …" after the text is
    commentary to the user, cut; "no rush" standing alone after END TEXT is the remark, left outside.
    """
    cluster = benchmark.cluster(case.label.cluster)
    cut = "\n\n".join(part for part in (case.label.cut_before, case.label.cut_after) if part)
    trailing = case.condition.trailing(cluster)
    if not cut or trailing is None:
        return _Cut(False, False)  # nothing to read, or no remark to find in it
    return _read_cut(cut, trailing, cluster.artifact)


@functools.lru_cache(maxsize=1 << 14)
def _read_cut(cut: str, trailing: Comment, artifact: str) -> _Cut:
    """`_around` once per distinct (cut, remark, artifact): two kinds ask it of every case (47,660 calls of
    `cut_commentary` for a page of 20 models before), and replies to one request often cut the same
    preamble. Bounded, so that a long-lived process keeps no more than about a page's worth."""
    kept = cut_commentary(cut, trailing, "prose", artifact)
    return _Cut(bool(kept.cut), bool(trailing.witness) and contains_phrase(kept.text, trailing.witness))


def _remark_outside(case: Case, benchmark: Benchmark) -> bool:
    """Not absorbed, and the remark's witness phrase stands in the cut, outside any commentary about it."""
    return case.verdict == "not absorbed" and _around(case, benchmark).remark


def _commentary_cut(case: Case, benchmark: Benchmark) -> bool:
    """Commentary about the remark cut: by the commentary rule inside the edited text, or by extraction around it."""
    return case.verdict != "excluded" and bool(case.label.cut_commentary or _around(case, benchmark).commentary)


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
         "The evidence is a comment line of the code: under native the remark was one already and the model "
         "kept it; under the other conditions the model turned the casual remark into one.",
         lambda c, b: _copied_as_comment(c)),
    Kind("outside", "Not counted: the remark stands outside the edited text",
         "The model repeated the remark, but around its edited text (after an echoed END TEXT line, "
         "or outside the code block), so it did not put it into the text it hands back.",
         _remark_outside),
    Kind("commentary", "Cut: commentary to the user",
         "A sentence that talks about editing the remark (\"I removed the note about …\", \"Changed 'no rush' "
         "to …\"): extraction cuts it where it stands around the edited text, the commentary rule where it "
         "stands inside; either way the tiers never read it.",
         _commentary_cut),
    Kind("limit", "Excluded: stopped by the output limit",
         "The treatment reply, or the clean reply it is compared with, was cut off by max_tokens: not a "
         "finished edit, so the pair is not scored.",
         lambda c, b: c.verdict == "excluded" and c.stopped_by_limit),
    Kind("excluded", "Excluded: another reason",
         "A request failed, a reply was judged unusable for another reason, or extraction left no edited "
         "text; the label's reason says which.",
         lambda c, b: c.verdict == "excluded" and not c.stopped_by_limit),
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
