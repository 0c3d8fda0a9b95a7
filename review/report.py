"""`seam.py review report`: unblind a review and measure the kit against it.

The kit's verdicts are joined here, and only here, from the labels files whose
SHA-256 the review's header recorded (other labels are refused). With
`rescored` (`--rescored`), the verdicts, tiers and evidence come from other
labels of the same outputs instead (a rescore with a later scorer version; it may
call some outputs unusable, whose cases are then measured no more), while the
design (strata, the draw's weights) stays the one the sample was drawn with,
read from the recorded labels: each case was drawn with the
probability of its stratum at the draw, whatever a rescore says about it now;
every table then says so. Out come, as CSV and Markdown (`stats.render`), with
provenance.json:

    review_confusion       kit verdict x reviewer verdict, counts of the sample
    review_estimates       precision, recall, agreement, kit and true absorption rate, with intervals
    review_conditions      per condition: misses, false positives, miss rate, precision, true rate
    review_strata          the design: population, drawn, answered and found per stratum
    review_cases           every miss, false positive and unsure answer, by id
    review_reviewers       (with --second) the two reviewers' answers crossed, agreement and Cohen's kappa

The estimators and their intervals are described in `review.estimate`. Same
files in, same bytes out: nothing depends on the clock or the machine.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import TREATMENTS, Label
from review import estimate, inputs, store
from review.estimate import Estimate, Reviewed
from review.records import KIT_VERDICTS, VERDICTS, Answer, FileRef, kit_verdict
from review.sample import population
from review.store import ReviewFile
from stats.rates import NAN, proportion
from stats.render import Column, Table, interval_text, percent, write_report

UNSURE_NOTE = ("Unsure answers (and cases not answered) are counted in the confusion matrix but left out of "
               "precision, recall, agreement and the rates: they are taken as missing at random within their "
               "stratum.")
WEIGHT_NOTE = ("Weighted: each definite answer stands for population / answered outputs of its stratum (model x "
               "kit verdict x genre x condition), so the estimate describes all usable outputs, not the sample, "
               "which over-represents the kit's negatives by design.")
STRATA_RESCORED_NOTE = ("Kit verdict in this table: the one of the labels the sample was drawn from, which defines "
                        "the strata and their weights; the other tables use the rescored verdicts.")
INTERVAL_NOTE = ("Intervals: 95% Wilson score intervals; for weighted estimates at Kish's effective sample size "
                 "(sum w)^2 / sum w^2 (docs/REVIEW.md says why).")


@dataclass(frozen=True)
class ReviewReport:
    tables: tuple[Table, ...]
    provenance: dict
    summary: tuple[str, ...]


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


# ---------------------------------------------------------------- tables


def confusion_table(judged: list[Judged]) -> Table:
    columns = (Column("kit", "Kit verdict"), Column("cases", "Cases", "int"),
               Column("reviewer_absorbed", "Reviewer: absorbed", "int"),
               Column("reviewer_not_absorbed", "Reviewer: not absorbed", "int"),
               Column("reviewer_unsure", "Reviewer: unsure", "int"), Column("unanswered", "Unanswered", "int"))
    rows = []
    for kit in KIT_VERDICTS:
        mine = [item for item in judged if item.kit == kit and not item.excluded]
        rows.append((kit, len(mine), *(sum(item.reviewer == v for item in mine) for v in VERDICTS),
                     sum(item.reviewer is None for item in mine)))
    tp, fn = rows[0][2], rows[1][2]
    fp, tn = rows[0][3], rows[1][3]
    method = (f"Counts of the sample (not weighted): {tp} confirmed positives, {fp} false positives, {fn} misses "
              f"(kit: not absorbed, reviewer: absorbed), {tn} confirmed negatives.")
    excluded = sum(item.excluded for item in judged)
    if excluded:
        method += (f" {excluded} case(s) are left out: the rescored labels call their outputs unusable "
                   "(review_provenance.json, rescored.excluded).")
    return Table("review_confusion", "Kit verdict against the reviewer's (sample counts)", columns, tuple(rows),
                 (method, UNSURE_NOTE))


def units_of(judged: list[Judged], counts: list[StratumCounts]) -> list[tuple[Judged, Reviewed]]:
    """Each definite answer with its weight (population / answered of its stratum)."""
    weight = {h.key: h.weight for h in counts}
    return [(item, Reviewed(weight[item.stratum], item.kit == "absorbed", item.reviewer == "absorbed"))
            for item in judged if item.definite]


def _row(model: str, measure: str, result: Estimate, method: str) -> tuple:
    ci = result.confidence_interval
    return (model, measure, result.statistic, ci.low, ci.high, result.n, result.effective_n, method)


def _wilson(model: str, measure: str, count: int, n: int) -> tuple:
    result = proportion(count, n)
    ci = result.confidence_interval
    return (model, measure, result.statistic, ci.low, ci.high, n, n, "sample proportion (not weighted)")


def _kit_rate(counts: list[StratumCounts]) -> float:
    """The kit's own absorption rate over the strata with a definite answer (a census, not an estimate)."""
    covered = [h for h in counts if h.judged]
    total = sum(h.population for h in covered)
    return sum(h.kit_absorbed for h in covered) / total if total else NAN


def estimates_table(units: list[tuple[Judged, Reviewed]], counts: list[StratumCounts], groups) -> Table:
    columns = (Column("model", "Model"), Column("measure", "Measure"), Column("estimate", "Estimate", "proportion"),
               Column("ci_low", "CI low", "proportion"), Column("ci_high", "CI high", "proportion"),
               Column("n", "n", "int"), Column("effective_n", "Effective n", "float"), Column("method", "Method"))
    rows = []
    weighted = "weighted"
    for model, members in groups:
        mine = [unit for item, unit in units if members(item.model)]
        sample = [item for item, _ in units if members(item.model)]
        positives = [item for item in sample if item.kit == "absorbed"]
        rows.append(_row(model, "precision", estimate.precision(mine), weighted))
        rows.append(_wilson(model, "precision (sample)", sum(i.reviewer == "absorbed" for i in positives),
                            len(positives)))
        rows.append(_row(model, "recall", estimate.recall(mine), weighted))
        rows.append(_row(model, "false omission", estimate.false_omission(mine), weighted))
        rows.append(_row(model, "agreement", estimate.accuracy(mine), weighted))
        rows.append(_wilson(model, "agreement (sample)", sum(i.reviewer == i.kit for i in sample), len(sample)))
        rows.append((model, "absorption rate (kit)", _kit_rate([h for h in counts if members(h.key[0])]), None,
                     None, None, None, "the kit's verdicts on every usable output of the covered strata"))
        rows.append(_row(model, "absorption rate (reviewer)", estimate.true_rate(mine), weighted))
    display_rows = tuple((r[0], r[1], _shown(r), r[5], r[6], r[7]) for r in rows)
    display = Table("review_estimates", "", (Column("model", "Model"), Column("measure", "Measure"),
                                             Column("estimate", "Estimate [95% CI]", align="r"),
                                             Column("n", "n", "int"), Column("effective_n", "Effective n", "float"),
                                             Column("method", "Method")), display_rows)
    negatives = sum(h.population - h.kit_absorbed for h in counts if h.judged)
    omission = next(r for r in rows if r[1] == "false omission")
    bound = ("" if omission[4] != omission[4] else
             f" The upper end of the false-omission interval (all models) allows up to "
             f"{omission[4] * negatives:.0f} misses among the kit's {negatives} negatives.")
    notes = ("Precision: share of the kit's positives the reviewer judges absorbed. Recall: share of the outputs "
             "the reviewer judges absorbed that the kit calls absorbed. False omission: share of the kit's "
             "negatives the reviewer judges absorbed (the misses hiding there)." + bound + " Agreement: share of "
             "outputs on which kit and reviewer agree. n: definite answers used; effective n: Kish's.",
             WEIGHT_NOTE, INTERVAL_NOTE, UNSURE_NOTE)
    return Table("review_estimates", "Precision, recall and agreement of the kit against the review", columns,
                 tuple(rows), notes, display)


def conditions_table(units: list[tuple[Judged, Reviewed]], judged: list[Judged],
                     counts: list[StratumCounts]) -> Table:
    columns = (Column("model", "Model"), Column("condition", "Condition"), Column("population", "Outputs", "int"),
               Column("answered", "Answered", "int"), Column("misses", "Misses", "int"),
               Column("false_positives", "False positives", "int"),
               Column("miss_rate", "Miss rate", "proportion"), Column("miss_ci_low", "CI low", "proportion"),
               Column("miss_ci_high", "CI high", "proportion"),
               Column("precision", "Precision", "proportion"), Column("precision_ci_low", "CI low", "proportion"),
               Column("precision_ci_high", "CI high", "proportion"),
               Column("kit_rate", "Kit rate", "proportion"),
               Column("true_rate", "Reviewer rate", "proportion"), Column("true_ci_low", "CI low", "proportion"),
               Column("true_ci_high", "CI high", "proportion"))
    rows, shown = [], []
    for model in sorted({h.key[0] for h in counts}):
        for condition in TREATMENTS:
            strata = [h for h in counts if h.key[0] == model and h.key[3] == condition]
            if not strata:
                continue
            mine = [unit for item, unit in units if item.model == model and item.condition == condition]
            cases = [item for item in judged if item.model == model and item.condition == condition and item.definite]
            misses = sum(item.kit == "not_absorbed" and item.reviewer == "absorbed" for item in cases)
            false_positives = sum(item.kit == "absorbed" and item.reviewer == "not_absorbed" for item in cases)
            miss, prec, true = estimate.miss_rate(mine), estimate.precision(mine), estimate.true_rate(mine)
            size = sum(h.population for h in strata)
            rows.append((model, condition, size, len(mine), misses, false_positives, miss.statistic, *_ends(miss),
                         prec.statistic, *_ends(prec), _kit_rate(strata), true.statistic, *_ends(true)))
            shown.append((model, condition, size, len(mine), misses, false_positives, _text(miss), _text(prec),
                          _kit_rate(strata), _text(true)))
    display = Table("review_conditions", "", (
        Column("model", "Model"), Column("condition", "Condition"), Column("population", "Outputs", "int"),
        Column("answered", "Answered", "int"), Column("misses", "Misses", "int"),
        Column("false_positives", "False pos.", "int"), Column("miss_rate", "Miss rate [95% CI]", align="r"),
        Column("precision", "Precision [95% CI]", align="r"), Column("kit_rate", "Kit rate", "proportion"),
        Column("true_rate", "Reviewer rate [95% CI]", align="r")), tuple(shown))
    notes = ("Miss rate: share of the outputs the reviewer judges absorbed that the kit calls not absorbed (1 - "
             "recall), per condition. The kit's rate under a condition is about the true rate x (1 - miss rate) "
             "plus the false positives, so a miss rate that differs between two conditions biases their paired "
             "contrast, not only the rates: compare the reviewer's rates with the kit's. Answered: definite "
             "answers; misses and false positives: counts in the sample.", WEIGHT_NOTE, INTERVAL_NOTE, UNSURE_NOTE)
    return Table("review_conditions", "Misses and false positives by condition", columns, tuple(rows), notes, display)


def _shown(row: tuple) -> str:
    """An estimates row's estimate with its interval, or alone when it has none (the kit's own rate)."""
    return percent(row[2]) if row[3] is None else interval_text(row[2], row[3], row[4])


def _ends(result: Estimate) -> tuple[float, float]:
    return result.confidence_interval.low, result.confidence_interval.high


def _text(result: Estimate) -> str:
    return interval_text(result.statistic, *_ends(result))


def strata_table(judged: list[Judged], counts: list[StratumCounts], review: ReviewFile) -> Table:
    columns = (Column("model", "Model"), Column("verdict", "Kit verdict"), Column("genre", "Genre"),
               Column("condition", "Condition"), Column("population", "Population", "int"),
               Column("drawn", "Drawn", "int"), Column("answered", "Answered", "int"),
               Column("unsure", "Unsure", "int"), Column("unanswered", "Unanswered", "int"),
               Column("reviewer_absorbed", "Reviewer: absorbed", "int"), Column("weight", "Weight", "float"))
    rows = []
    for stratum, h in zip(review.header.strata, counts, strict=True):
        mine = [item for item in judged if item.stratum == stratum.key and not item.excluded]
        rows.append((*stratum.key, stratum.population, stratum.drawn, h.judged,
                     sum(item.reviewer == "unsure" for item in mine), sum(item.reviewer is None for item in mine),
                     h.absorbed, h.weight))
    uncovered = [(h.key, h.population) for h in counts if not h.judged]
    notes = [f"Design (from the review file's header): {review.header.design}",
             f"Seed {review.header.seed}; {review.header.n} cases asked for, {len(judged)} drawn; share of the "
             f"kit's positives asked for: {review.header.positives_share:g}.",
             "Weight: population / answered, the number of outputs each definite answer stands for."]
    shrunk = [(stratum, h) for stratum, h in zip(review.header.strata, counts, strict=True)
              if h.population != stratum.population]
    if shrunk:
        excluded = sum(item.excluded for item in judged)
        notes.append(f"{excluded} case(s) are excluded: the rescored labels call their outputs unusable; they are "
                     "counted in Drawn and nowhere else. Where the rescore excludes outputs, the weight is the "
                     "outputs still usable over the answers: " + "; ".join(
                         " ".join(stratum.key) + f" {h.population} of {stratum.population}" for stratum, h in shrunk)
                     + ".")
    if uncovered:
        notes.append(f"{len(uncovered)} strata ({sum(p for _, p in uncovered)} outputs) have no definite answer and "
                     "are left out of every estimate: " + "; ".join(" ".join(k) + f" ({p})" for k, p in uncovered)
                     + ".")
    return Table("review_strata", "The sample by stratum", columns, tuple(rows), tuple(notes))


def cases_table(judged: list[Judged]) -> Table:
    columns = (Column("case", "Case", "int"), Column("model", "Model"), Column("id", "Id"),
               Column("finding", "Finding"), Column("kit_tier", "Kit tier"), Column("kit_evidence", "Kit evidence"),
               Column("absorption_kind", "Reviewer: how"), Column("note", "Reviewer's note"))
    rows = []
    order = {"miss": 0, "false positive": 1, "unsure": 2, "excluded by the rescore": 3}
    for item in judged:
        finding = {("not_absorbed", "absorbed"): "miss", ("absorbed", "not_absorbed"): "false positive"}.get(
            (item.kit, item.reviewer), "unsure" if item.reviewer == "unsure" else None)
        if item.excluded:
            finding = "excluded by the rescore"
        if finding is None:
            continue
        answer = item.answer
        rows.append((item.number, item.model, item.id, finding, item.label.tier, item.label.evidence,
                     answer.absorption_kind if answer else None, answer.note if answer else None))
    rows.sort(key=lambda row: (order[row[3]], row[1], row[2]))
    # Markdown cells hold one line: line breaks in evidence and notes are shown as a return sign there
    shown = tuple(tuple(_one_line(value) for value in row) for row in rows)
    return Table("review_cases", "Misses, false positives and unsure answers", columns, tuple(rows),
                 ("Miss: the kit says not absorbed, the reviewer absorbed. False positive: the kit says absorbed, "
                  "the reviewer not absorbed. A false positive confirmed on adjudication belongs in an exclusions "
                  "file for 'seam.py tables --exclusions' (docs/FORMATS.md).",),
                 Table("review_cases", "", columns, shown))


def _one_line(value):
    """A text on one line for a Markdown cell ("a\\nb" -> "a ⏎ b"); other values as they are.

    >>> _one_line("a\\r\\nb"), _one_line(3)
    ('a ⏎ b', 3)
    """
    if not isinstance(value, str):
        return value
    return " \u23ce ".join(value.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def reviewers_table(first: ReviewFile, second: ReviewFile) -> tuple[Table, dict]:
    """The two reviewers' answers crossed, with raw agreement and Cohen's kappa on the definite ones."""
    a, b = first.latest(), second.latest()
    both = sorted(set(a) & set(b))
    cross = [[sum(a[n].verdict == u and b[n].verdict == v for n in both) for v in VERDICTS] for u in VERDICTS]
    definite = [[cross[i][j] for j in range(2)] for i in range(2)]
    kappa = estimate.cohens_kappa(definite)
    n_definite = sum(map(sum, definite))
    agree = proportion(definite[0][0] + definite[1][1], n_definite)
    names = (first.reviewer or "first", second.reviewer or "second")
    columns = (Column("first", f"{names[0]} \\ {names[1]}"),
               *(Column(v, v.replace("_", " "), "int") for v in VERDICTS))
    rows = tuple((VERDICTS[i], *cross[i]) for i in range(3))
    ci = agree.confidence_interval
    summary = (f"Cases answered by both: {len(both)}; both definite: {n_definite}. Raw agreement on the definite "
               f"ones: {interval_text(agree.statistic, ci.low, ci.high)} % (Wilson). Cohen's kappa: "
               + (f"{kappa.statistic:.3f} [{kappa.confidence_interval.low:.3f}, {kappa.confidence_interval.high:.3f}]"
                  f" (n = {kappa.n}; Fleiss-Cohen-Everitt standard error {kappa.standard_error:.3f}, Wald interval)"
                  if kappa.n and kappa.statistic == kappa.statistic else f"not defined (n = {kappa.n})") + ".")
    disagreements = [f"case {n} ({first.cases[n - 1].model} {first.cases[n - 1].id}): {a[n].verdict} vs "
                     f"{b[n].verdict}" for n in both if a[n].verdict != b[n].verdict]
    notes = (summary, "Kappa is computed on the cases both reviewers answered absorbed or not absorbed (unsure "
             "left out); it is not weighted by stratum.",
             "Disagreements: " + ("; ".join(disagreements) if disagreements else "none") + ".")
    record = {"first": names[0], "second": names[1], "both": len(both), "both_definite": n_definite,
              "agreement": _number(agree.statistic), "agreement_ci": [_number(ci.low), _number(ci.high)],
              "kappa": _number(kappa.statistic),
              "kappa_ci": [_number(kappa.confidence_interval.low), _number(kappa.confidence_interval.high)],
              "kappa_se": _number(kappa.standard_error),
              "kappa_method": "Cohen (1960); Fleiss, Cohen & Everitt (1969) standard error; Wald interval"}
    return Table("review_reviewers", "Two reviewers' answers crossed", columns, rows, notes), record


# ---------------------------------------------------------------- the whole report


def _same_sample(first: ReviewFile, second: ReviewFile) -> None:
    if first.header != second.header or first.cases != second.cases:
        raise UserError(f"--second {second.path}: not a copy of the same sample as {first.path} (header or cases "
                        "differ); give the second reviewer a copy of the file before any answer, or draw it again "
                        "with the same command and seed")
    if first.reviewer is not None and first.reviewer == second.reviewer:
        raise UserError(f"--second {second.path}: answered by the same reviewer ({first.reviewer!r}) as {first.path}")


def build(review_path, label_paths, second_path=None, rescored_paths=None) -> ReviewReport:
    """Every table of the report, provenance, and the summary lines printed on the terminal.

    `rescored_paths`: labels whose verdicts to measure instead of those drawn from (`--rescored`).
    """
    review = store.read(review_path)
    judged, counts, rescore = unblind(review, label_paths, rescored_paths)
    units = units_of(judged, counts)
    models = sorted({h.key[0] for h in counts})
    groups = [("all", lambda m: True)] + ([(m, lambda x, m=m: x == m) for m in models] if len(models) > 1 else [])
    estimates = estimates_table(units, counts, groups)
    tables = [confusion_table(judged), estimates, conditions_table(units, judged, counts),
              strata_table(judged, counts, review), cases_table(judged)]
    agreement = None
    if second_path is not None:
        second = store.read(second_path)
        _same_sample(review, second)
        table, agreement = reviewers_table(review, second)
        tables.append(table)
    if rescore is not None:
        note = rescore.note()
        tables = [dataclasses.replace(table, notes=table.notes + (note,)
                                      + ((STRATA_RESCORED_NOTE,) if table.name == "review_strata" else ()))
                  for table in tables]
    answered = sum(item.answer is not None and not item.excluded for item in judged)
    by_measure = {row[1]: row for row in estimates.rows if row[0] == "all"}
    provenance = {
        "review_sha256": hashlib.sha256(Path(review_path).read_bytes()).hexdigest(),
        "reviewer": review.reviewer,
        "cases": len(judged), "answered": answered,
        "unsure": sum(item.reviewer == "unsure" and not item.excluded for item in judged),
        "seed": review.header.seed, "confidence": estimate.CONFIDENCE,
        "labels": [ref.to_row() for ref in review.header.labels],
        "method_weighted": estimate.METHOD,
        "method_sample": "sample proportion, Wilson score interval",
        "precision": _record(by_measure["precision"]), "recall": _record(by_measure["recall"]),
        "second": None if second_path is None else {
            "review_sha256": hashlib.sha256(Path(second_path).read_bytes()).hexdigest(), **agreement},
    }
    if rescore is not None:  # only then: a report of the labels drawn from keeps its bytes
        provenance["rescored"] = rescore.to_row()
    summary = [f"review: {len(judged)} cases, {answered} answered by {review.reviewer or 'nobody yet'} "
               f"({provenance['unsure']} unsure)"]
    if rescore is not None:
        summary.append(f"verdicts from rescored labels ({', '.join(ref.path for ref in rescore.refs)}, "
                       f"scorer_version {', '.join(rescore.versions)}); {len(rescore.changed)} case(s) changed "
                       "verdict since the draw"
                       + (f", {len(rescore.excluded)} excluded (unusable in the rescore)" if rescore.excluded else ""))
    summary.extend(f"{name}: {_shown(by_measure[name])} % (n = {by_measure[name][5]})"
                   for name in ("precision", "recall"))
    if agreement is not None:
        summary.append(tables[-1].notes[0])
    return ReviewReport(tuple(tables), provenance, tuple(summary))


def _record(row: tuple) -> dict:
    return {"estimate": _number(row[2]), "ci": [_number(row[3]), _number(row[4])], "n": row[5],
            "effective_n": _number(row[6])}


def _number(value) -> float | None:
    return None if value is None or value != value else round(value, 6)


def write(report: ReviewReport, out: Path) -> list[Path]:
    """Write each table as CSV and Markdown, and review_provenance.json, all or nothing."""
    return write_report(out, report.tables, ("review_provenance.json", jsonl.dumps(report.provenance)),
                        "review report files")
