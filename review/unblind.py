"""Unblinding a review: the kit's verdicts joined to the cases, and each stratum's counts.

The kit's verdicts are joined here, and only here, from the labels files whose
SHA-256 the review's header recorded (other labels are refused). With
`rescored` (`--rescored`), the verdicts, tiers and evidence come from other
labels of the same outputs instead (a rescore with a later scorer version; it may
call some outputs unusable, whose cases are then measured no more), while the
design (strata, the draw's weights) stays the one the sample was drawn with,
read from the recorded labels: each case was drawn with the
probability of its stratum at the draw, whatever a rescore says about it now.
review/tables.py makes the report's tables from what this gives.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from common.errors import UserError
from common.records import Label
from review import inputs
from review.estimate import Reviewed
from review.records import Answer, FileRef, kit_verdict
from review.sample import population
from review.store import ReviewFile
from stats.rates import NAN


@dataclass(frozen=True)
class StratumCounts:
    """One stratum's population, definite answers and how many of them the reviewer judged absorbed.

    `kit_absorbed`: how many of the stratum's outputs the kit calls absorbed, by the labels the verdicts
    are taken from (the whole stratum or none of it, unless the labels are a rescore).
    """

    key: tuple[str, str, str, str]  # model, kit verdict at the draw, genre, condition
    population: int
    judged: int
    absorbed: int
    kit_absorbed: int

    @property
    def weight(self) -> float:
        """The outputs each definite answer of the stratum stands for."""
        return self.population / self.judged if self.judged else NAN


@dataclass(frozen=True)
class Judged:
    """One case with the kit's verdict (from the labels) and the reviewer's answer in force (or None)."""

    number: int
    model: str
    id: str
    condition: str
    stratum: tuple[str, str, str, str]  # the design's: with the kit verdict at the draw
    label: Label  # the kit's verdict, tier and evidence (the rescore's, when there is one)
    answer: Answer | None

    @property
    def excluded(self) -> bool:
        """A rescore made the output unusable (e.g. a reply that attempts no edit): it is measured no more."""
        return not self.label.usable

    @property
    def kit(self) -> str:
        return self.stratum[1] if self.excluded else kit_verdict(bool(self.label.absorbed))

    @property
    def reviewer(self) -> str | None:
        return self.answer.verdict if self.answer is not None else None

    @property
    def definite(self) -> bool:
        return not self.excluded and self.reviewer in ("absorbed", "not_absorbed")


@dataclass(frozen=True)
class Rescore:
    """Labels other than those the sample was drawn from, whose verdicts the report uses (`--rescored`)."""

    refs: tuple[FileRef, ...]  # the rescored labels, as given
    drawn_refs: tuple[FileRef, ...]  # the labels drawn from, as given (--labels; same bytes as the header's)
    drawn_versions: tuple[str, ...]  # scorer_version of the drawn labels
    versions: tuple[str, ...]  # scorer_version of these labels
    changed: tuple[tuple[int, str, str, str, str], ...] = ()  # case, model, id, verdict at the draw, verdict now
    excluded: tuple[tuple[int, str, str, str], ...] = ()  # case, model, id, why the rescore made it unusable

    def note(self) -> str:
        changed = "; ".join(f"case {n} {model} {rid}: {before} -> {now}" for n, model, rid, before, now in self.changed)
        excluded = "; ".join(f"case {n} {model} {rid} ({reason})" for n, model, rid, reason in self.excluded)
        return (f"Rescored: the kit's verdicts, tiers and evidence come from {_files(self.refs)} (scorer_version "
                f"{', '.join(self.versions)}), not from the labels the sample was drawn from, "
                f"{_files(self.drawn_refs)} (scorer_version {', '.join(self.drawn_versions)}); the design (strata, "
                "weights) is the draw's. "
                + (f"{len(self.changed)} case(s) changed verdict: {changed}." if self.changed
                   else "No case changed verdict.")
                + (f" {len(self.excluded)} case(s) are unusable in the rescore and measured no more (each stratum's "
                   f"population counts its outputs still usable): {excluded}." if self.excluded else ""))

    def to_row(self) -> dict:
        row = {"labels": [ref.to_row() for ref in self.refs], "scorer_versions": list(self.versions),
               "drawn_labels": [ref.to_row() for ref in self.drawn_refs],
               "drawn_scorer_versions": list(self.drawn_versions),
               "changed": [{"case": n, "model": model, "id": rid, "drawn": before, "rescored": now}
                           for n, model, rid, before, now in self.changed]}
        if self.excluded:  # absent when none, so that a rescore without exclusions keeps its bytes
            row["excluded"] = [{"case": n, "model": model, "id": rid, "reason": reason}
                               for n, model, rid, reason in self.excluded]
        return row


def _files(refs: tuple[FileRef, ...]) -> str:
    """Each file as "path [SHA-256 …]", separated by commas."""
    return ", ".join(f"{ref.path} [SHA-256 {ref.sha256}]" for ref in refs)


def unblind(review: ReviewFile, label_paths, rescored_paths=None) -> tuple[list[Judged], list[StratumCounts],
                                                                          Rescore | None]:
    """Join the kit's verdicts to the cases, checking that the labels are the ones the sample was drawn from.

    With `rescored_paths`, the verdicts come from those labels instead, which must hold every case and the same
    usable outputs; the strata stay those of the draw.
    """
    labels, refs = inputs.load_labels(label_paths)
    recorded = sorted(ref.sha256 for ref in review.header.labels)
    if sorted(ref.sha256 for ref in refs) != recorded:
        named = ", ".join(ref.path for ref in review.header.labels)
        raise UserError(f"--labels: these are not the labels the review was drawn from ({named}, SHA-256 "
                        f"{', '.join(s[:12] + '…' for s in recorded)}); give exactly those files"
                        + ("" if rescored_paths else "; to measure other labels of the same outputs, give them "
                           "with --rescored"))
    strata = population(labels)
    header_strata = {s.key: s for s in review.header.strata}
    if {key: len(units) for key, units in strata.items()} != {k: s.population for k, s in header_strata.items()}:
        raise UserError(f"{review.path}: the header's strata do not match these labels' populations")
    verdicts, rescore = labels, None
    if rescored_paths:
        verdicts, rescore = _rescored(review, labels, refs, rescored_paths)
    latest = review.latest()
    judged = []
    for case in review.cases:
        drawn = labels.get((case.model, case.id))
        if drawn is None or not drawn.usable:
            raise UserError(f"{review.path}: case {case.case} ({case.model} {case.id}) is not a usable label")
        unit_key = (case.model, kit_verdict(bool(drawn.absorbed)), case.genre, case.condition)
        judged.append(Judged(case.case, case.model, case.id, case.condition, unit_key,
                             verdicts[(case.model, case.id)], latest.get(case.case)))
    if rescore is not None:
        changed = tuple((item.number, item.model, item.id, item.stratum[1], item.kit) for item in judged
                        if item.kit != item.stratum[1])
        excluded = tuple((item.number, item.model, item.id, item.label.reason or "unusable") for item in judged
                         if item.excluded)
        rescore = dataclasses.replace(rescore, changed=tuple(sorted(changed)), excluded=excluded)
    drawn_counts = {key: 0 for key in header_strata}
    for item in judged:
        drawn_counts[item.stratum] = drawn_counts.get(item.stratum, 0) + 1
    if any(drawn_counts[key] != stratum.drawn for key, stratum in header_strata.items()):
        raise UserError(f"{review.path}: the cases do not match the header's strata (drawn counts differ)")
    counts = []
    for key in header_strata:
        answers = [item.reviewer for item in judged if item.stratum == key and not item.excluded]
        definite = [verdict for verdict in answers if verdict in ("absorbed", "not_absorbed")]
        kit_absorbed = sum(bool(verdicts[(unit.model, unit.id)].absorbed) for unit in strata.get(key, ()))
        usable = sum(verdicts[(unit.model, unit.id)].usable for unit in strata.get(key, ()))  # a rescore may exclude
        counts.append(StratumCounts(key, usable if rescore is not None else header_strata[key].population,
                                    len(definite), sum(verdict == "absorbed" for verdict in definite), kit_absorbed))
    return judged, counts, rescore


def _rescored(review: ReviewFile, drawn: dict[tuple[str, str], Label], drawn_refs: tuple[FileRef, ...],
              paths) -> tuple[dict, Rescore]:
    """The rescored labels, refused unless they label every output of the draw (usable ones may become unusable:
    excluded; none may become usable) and hold every case."""
    labels, refs = inputs.load_labels(paths)
    if sorted(ref.sha256 for ref in refs) == sorted(ref.sha256 for ref in review.header.labels):
        raise UserError("--rescored: these are the labels the review was drawn from; leave --rescored out")
    missing = [case for case in review.cases if (case.model, case.id) not in labels]
    if missing:
        raise UserError(f"--rescored: no label for {len(missing)} case(s) of {review.path} (first: case "
                        f"{missing[0].case}, {missing[0].model} {missing[0].id}); give labels of the same outputs")
    was = {key for key, label in drawn.items() if label.usable}
    now = {key for key, label in labels.items() if label.usable}
    lacking = sorted(was - set(labels))
    if lacking:
        raise UserError(f"--rescored: no label for {len(lacking)} output(s) of the draw (first: "
                        f"{' '.join(lacking[0])}); give labels of the same outputs")
    if not now <= was:  # outputs the rescore excludes are measured no more; new ones were never in the design
        differ = sorted(now - was)
        raise UserError(f"--rescored: {len(differ)} output(s) are usable in these labels but were not in the labels "
                        f"drawn from (first: {' '.join(differ[0])}); the review's design describes the usable outputs "
                        "of the draw, so it cannot measure labels of other outputs")
    return labels, Rescore(tuple(refs), drawn_refs, _versions(drawn), _versions(labels))


def _versions(labels: dict[tuple[str, str], Label]) -> tuple[str, ...]:
    return tuple(sorted({label.scorer_version for label in labels.values()}))


def units_of(judged: list[Judged], counts: list[StratumCounts]) -> list[tuple[Judged, Reviewed]]:
    """Each definite answer with its weight (population / answered of its stratum)."""
    weight = {h.key: h.weight for h in counts}
    return [(item, Reviewed(weight[item.stratum], item.kit == "absorbed", item.reviewer == "absorbed"))
            for item in judged if item.definite]
