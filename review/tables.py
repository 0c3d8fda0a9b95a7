"""The review report's tables, each built from its spec (review/specs.py) out of the unblinded cases
(review/unblind.py): counts of the sample, weighted estimates with their intervals (`review.estimate`), the
design, and the cases to read again. Every table's notes say how its numbers were made.
"""

from __future__ import annotations

from common.records import TREATMENTS
from review import estimate, specs
from review.estimate import Estimate, Reviewed
from review.records import KIT_VERDICTS, VERDICTS
from review.store import ReviewFile
from review.unblind import Judged, StratumCounts
from stats.agreement import cross
from stats.rates import NAN, proportion
from stats.render import Column, Table, interval_text, percent

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


def confusion_table(judged: list[Judged]) -> Table:
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
    return specs.CONFUSION.table("Kit verdict against the reviewer's (sample counts)", rows, (method, UNSURE_NOTE))


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
    display_rows = tuple((r[0], r[1], shown_estimate(r), r[5], r[6], r[7]) for r in rows)
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
    return specs.ESTIMATES.table("Precision, recall and agreement of the kit against the review", rows, notes,
                                 display)


def conditions_table(units: list[tuple[Judged, Reviewed]], judged: list[Judged],
                     counts: list[StratumCounts]) -> Table:
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
    return specs.CONDITIONS.table("Misses and false positives by condition", rows, notes, display)


def shown_estimate(row: tuple) -> str:
    """An estimates row's estimate with its interval, or alone when it has none (the kit's own rate)."""
    return percent(row[2]) if row[3] is None else interval_text(row[2], row[3], row[4])


def _ends(result: Estimate) -> tuple[float, float]:
    return result.confidence_interval.low, result.confidence_interval.high


def _text(result: Estimate) -> str:
    return interval_text(result.statistic, *_ends(result))


def strata_table(judged: list[Judged], counts: list[StratumCounts], review: ReviewFile) -> Table:
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
    return specs.STRATA.table("The sample by stratum", rows, notes)


def cases_table(judged: list[Judged]) -> Table:
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
    return specs.CASES.table("Misses, false positives and unsure answers", rows,
                 ("Miss: the kit says not absorbed, the reviewer absorbed. False positive: the kit says absorbed, "
                  "the reviewer not absorbed. A false positive confirmed on adjudication belongs in an exclusions "
                  "file for 'seam.py tables --exclusions' (docs/FORMATS.md).",),
                             specs.CASES.table("", shown))


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
    crossing = cross({n: row.verdict for n, row in a.items()}, {n: row.verdict for n, row in b.items()}, VERDICTS)
    names = (first.reviewer or "first", second.reviewer or "second")
    columns = specs.REVIEWERS.headed(first=f"{names[0]} \\ {names[1]}")
    rows = tuple((VERDICTS[i], *crossing.table[i]) for i in range(3))
    disagreements = [f"case {n} ({first.cases[n - 1].model} {first.cases[n - 1].id}): {one} vs {other}"
                     for n, one, other in crossing.disagreements]
    notes = (crossing.summary(), "Kappa is computed on the cases both reviewers answered absorbed or not absorbed "
             "(unsure left out); it is not weighted by stratum.",
             "Disagreements: " + ("; ".join(disagreements) if disagreements else "none") + ".")
    record = {"first": names[0], "second": names[1], **crossing.record()}
    return specs.REVIEWERS.table("Two reviewers' answers crossed", rows, notes, columns=columns), record
