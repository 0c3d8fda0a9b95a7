"""Assemble the validity tables from the checked outputs, with the statistics stage's own machinery.

Rates carry Wilson intervals (`stats.rates`); every treatment is compared with
clean on the same clusters with the exact McNemar test, the sign-flip test and
Newcombe's paired interval, Holm-adjusted across models per contrast, by the
same row builder as the absorption contrasts (`stats.contrasts.paired_contrast_rows`),
and written by the same contrast table builder (`stats.contrasts.paired_contrasts_table`);
intervals are formatted by `stats.render.interval_text`.
Tables are `stats.render.Table`s, so CSV, Markdown and LaTeX come out exactly
as the absorption tables do. Models are sorted, conditions follow the
benchmark's order (then a condition file's, in its order), sources are sorted:
the same traces give the same bytes. The checked outputs and the notes every
table shares are validity/checked.py's; each treatment against its control,
validity/contrasts.py's.
"""

from __future__ import annotations

import math
import sys

from common.records import Cluster
from stats.paired import mcnemar_exact
from stats.rates import NAN, proportion
from stats.render import Column, Table, interval_text, percent
from validity import provenance, similarity
from validity.checked import Checked, Options, later_notes, order
from validity.contrasts import clean_contrast_rows as clean_contrast_rows  # where the tests have found it
from validity.contrasts import clean_contrasts_table as clean_contrasts_table
from validity.inputs import format_time
from validity.sandbox import OUTCOMES, Limits, RunResult
from validity.specs import FUNCTIONAL, PROVENANCE, PROVENANCE_FLAGS, SIMILARITY, SYNTAX, SYNTAX_AS_RETURNED

__all__ = ["ALL", "Options", "clean_contrast_rows", "clean_contrasts_table", "flags_table", "functional_outcomes",
           "functional_table", "provenance_table", "similarity_table", "syntax_as_returned_table", "syntax_outcomes",
           "syntax_table"]

ALL = "all"  # the source value of rows pooling every source


# ---------------------------------------------------------------- syntax


def syntax_outcomes(checked: list[Checked], as_returned: bool = False
                    ) -> dict[tuple[str, str], dict[str, bool | None]]:
    """(model, condition) -> cluster -> invalid (True), valid (False) or unusable (None); code only.

    Invalid means the edited text does not parse, or with `as_returned` the reply as returned.
    """
    outcomes: dict[tuple[str, str], dict[str, bool | None]] = {}
    for c in checked:
        if c.genre == "code":
            check = c.reply_syntax if as_returned else c.syntax
            outcomes.setdefault((c.output.model, c.output.condition), {})[c.output.cluster] = (
                None if check is None else not check.parses)
    return outcomes


def _code_groups(checked: list[Checked], code_sources, options: Options):
    """(model, source, condition, the code outputs of that cell) for every row of the two syntax tables: models
    sorted, each source pooled ("all") then one by one, conditions in their order."""
    code = [c for c in checked if c.genre == "code"]
    conditions = order({c.output.condition for c in code}, options)
    for model in sorted({c.output.model for c in checked}):
        for source in (ALL, *code_sources):
            for condition in conditions:
                yield model, source, condition, [c for c in code if c.output.model == model
                                                 and c.output.condition == condition and source in (ALL, c.source)]


def syntax_table(checked: list[Checked], code_sources, options: Options, notes: list[str]) -> Table:
    rows, shown = [], []
    for model, source, condition, group in _code_groups(checked, code_sources, options):
        usable = [c.syntax for c in group if c.syntax is not None]
        invalid = sum(not s.parses for s in usable)
        result = proportion(invalid, len(usable), options.confidence)
        ci = result.confidence_interval
        echo = sum(s.echoes_marker for s in usable)
        left = sum(s.marker_in_text for s in usable)
        still = sum(not s.parses_without_markers for s in usable)
        recovered = sum(s.recovered for s in usable)
        rows.append((model, source, condition, len(group), len(usable), invalid, result.statistic,
                     ci.low, ci.high, echo, left, still, recovered))
        shown.append((model, source, condition, len(usable), invalid,
                      interval_text(result.statistic, ci.low, ci.high), echo, left, recovered))
    display = Table("validity_syntax", "", (
        Column("model", "Model"), Column("source", "Source"), Column("condition", "Condition"),
        Column("n", "n", "int"), Column("invalid", "Invalid", "int"),
        Column("rate", "Invalid % [95% CI]", align="r"), Column("echo", "Echo", "int"),
        Column("left", "Marker in text", "int"), Column("recovered", "Recovered", "int")), tuple(shown))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    method = (f"Usable outputs of code clusters (n). Invalid: the edited text (the scorer's extraction) does not "
              f"parse with Python {version}'s ast.parse. Echo: the reply has a boundary-marker line (a line whose "
              "only words are BEGIN TEXT or END TEXT); marker in text: the edited text itself keeps one; "
              "recovered: the edited text is invalid, and valid once its marker lines are removed. "
              f"Invalid %: the share invalid, in percent, with its {options.confidence:.0%} Wilson interval; "
              "source 'all' pools the code sources. The CSV adds the final trace rows (outputs) and the "
              "outputs still invalid without marker lines.")
    return SYNTAX.table("Syntactic validity of edited code", rows, (method, *notes), display)


def syntax_as_returned_table(checked: list[Checked], code_sources, options: Options, notes: list[str]) -> Table:
    """The original benchmark's measure (the reply as returned), beside the kit's (the edited text), same outputs."""
    rows, shown = [], []
    for model, source, condition, group in _code_groups(checked, code_sources, options):
        usable = [c for c in group if c.reply_syntax is not None]
        replies = [c.reply_syntax for c in usable]
        invalid = sum(not r.parses for r in replies)
        result = proportion(invalid, len(replies), options.confidence)
        ci = result.confidence_interval
        echoing = sum(not r.parses and r.echoes_marker for r in replies)
        recovered = sum(r.recovered for r in replies)
        extracted = sum(not c.syntax.parses for c in usable)
        rows.append((model, source, condition, len(group), len(replies), sum(r.fenced for r in replies),
                     invalid, result.statistic, ci.low, ci.high, echoing, recovered, invalid - recovered, extracted))
        shown.append((model, source, condition, len(replies), invalid,
                      interval_text(result.statistic, ci.low, ci.high), echoing, recovered, extracted))
    display = Table("validity_syntax_as_returned", "", (
        Column("model", "Model"), Column("source", "Source"), Column("condition", "Condition"),
        Column("n", "n", "int"), Column("invalid", "Invalid", "int"),
        Column("rate", "Invalid % [95% CI]", align="r"), Column("echoing", "Echoing", "int"),
        Column("recovered", "Recovered", "int"), Column("invalid_extracted", "Invalid extracted", "int")),
        tuple(shown))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    method = ("The original benchmark's measure, on the outputs of validity_syntax (usable outputs of code "
              f"clusters, n). Invalid: the reply as returned does not parse with Python {version}'s ast.parse; "
              "as returned means the whole reply, or, when the reply is exactly one Markdown fenced block, the "
              "text between its fence lines (a preamble, a note or a second block is parsed with the code). "
              "Echoing: invalid replies with a boundary-marker line (a line whose only words are BEGIN TEXT or "
              "END TEXT); recovered: invalid replies that parse once their marker lines are removed (read by "
              "the same rule). Invalid extracted: the kit's reading, the edited text (the scorer's extraction) "
              f"does not parse, as in validity_syntax. Invalid %: the share invalid as returned, in percent, "
              f"with its {options.confidence:.0%} Wilson interval; source 'all' pools the code sources. The CSV "
              "adds the final trace rows (outputs), the replies read without their fence (fenced) and the "
              "replies still invalid without marker lines.")
    return SYNTAX_AS_RETURNED.table("Syntactic validity of code as returned (the original measure)", rows,
                                    (method, *notes), display)


# ---------------------------------------------------------------- functional


def functional_outcomes(checked: list[Checked], tested: set[str], verdicts: dict[tuple[str, str], RunResult]
                        ) -> dict[tuple[str, str], dict[str, bool | None]]:
    """(model, condition) -> cluster -> passed, or None when the output is unusable; tested clusters only."""
    outcomes: dict[tuple[str, str], dict[str, bool | None]] = {}
    for c in checked:
        if c.output.cluster in tested:
            value = None if c.edited is None else verdicts[(c.output.model, c.output.id)].passed
            outcomes.setdefault((c.output.model, c.output.condition), {})[c.output.cluster] = value
    return outcomes


def functional_table(checked: list[Checked], tested: set[str], verdicts: dict[tuple[str, str], RunResult],
                     controls: dict[tuple[str, str], RunResult], limits: Limits, options: Options,
                     notes: list[str]) -> Table:
    group_of = [c for c in checked if c.output.cluster in tested]
    models = sorted({c.output.model for c in checked})
    conditions = order({c.output.condition for c in group_of}, options)
    rows, shown = [], []
    for model in models:
        for condition in conditions:
            group = [c for c in group_of if c.output.model == model and c.output.condition == condition]
            results = [verdicts[(model, c.output.id)] for c in group if c.edited is not None]
            counts = [sum(r.outcome == o for r in results) for o in OUTCOMES]
            result = proportion(counts[0], len(results), options.confidence)
            ci = result.confidence_interval
            rows.append((model, condition, len(group), len(results), *counts, result.statistic, ci.low, ci.high))
            shown.append((model, condition, len(results), *counts, interval_text(result.statistic, ci.low, ci.high)))
    display = Table("validity_functional", "", (
        Column("model", "Model"), Column("condition", "Condition"), Column("n", "n", "int"),
        *(Column(o, o.capitalize(), "int") for o in OUTCOMES),
        Column("rate", "Pass % [95% CI]", align="r")), tuple(shown))
    method = ("Usable outputs of clusters with unit tests (HumanEval), run in the sandbox as the edited code, "
              "the item's test code and check(entry_point). passed: every test ran; failed: an assertion "
              "failed; error: another exception (a missing import, a renamed function, a syntax error); "
              "timeout: the CPU or wall-clock limit; crashed: the process ended without a verdict. Pass %: the "
              f"share passed, in percent, with its {options.confidence:.0%} Wilson interval.")
    return FUNCTIONAL.table("Functional check of edited code (unit tests)", rows,
                            (method, *control_notes(controls, limits), *notes), display)



def control_notes(controls: dict[tuple[str, str], RunResult], limits: Limits) -> list[str]:
    """How the controls fared, the limits, and the protections that applied."""
    notes = []
    for kind, label in (("reference", "The benchmark's reference solutions"),
                        ("artifact", "The unedited artifacts")):
        results = {cluster: r for (k, cluster), r in controls.items() if k == kind}
        passed = sum(r.passed for r in results.values())
        failing = sorted(cluster for cluster, r in results.items() if not r.passed)
        text = f"{label} pass {passed} of {len(results)} items in the same sandbox"
        notes.append(text + (f" (not: {', '.join(failing)})." if failing else "."))
    notes.append(f"Limits per run: {limits.describe()}. PYTHONHASHSEED=0 and random.seed(0) in every run.")
    layers = sorted({r.isolation for r in controls.values()})
    for isolation in layers:
        notes.append("Protections: " + (", ".join(isolation) if isolation else "none reported") + ".")
    return notes


# ---------------------------------------------------------------- similarity


def similarity_table(checked: list[Checked], clusters: dict[str, Cluster], options: Options,
                     notes: list[str]) -> Table:
    scored = [c for c in checked if c.chrf is not None]
    with_reference = sorted({c.source for c in clusters.values() if c.reference})
    models = sorted({c.output.model for c in checked})
    conditions = order({c.output.condition for c in checked if clusters[c.output.cluster].reference}, options)
    defined = options.defined
    rows = []
    for model in models:
        for source in with_reference:
            mine = [c for c in scored if c.output.model == model and c.source == source]
            for condition in conditions:
                group = [c for c in mine if c.output.condition == condition]
                mean = math.fsum(c.chrf for c in group) / len(group) if group else NAN
                # a later turn edits the model's own reply: "unchanged from the artifact" means nothing for it
                unchanged = None if defined.get(condition).later else sum(bool(c.unchanged) for c in group)
                control = defined.control_of(condition)  # clean, or the treatment's own (later-control)
                if control is None:
                    rows.append((model, source, condition, len(group), mean, unchanged, None, None, None, None,
                                 None))
                    continue
                paired = {c.output.cluster: c.chrf for c in mine if c.output.condition == control}
                diffs = [c.chrf - paired[c.output.cluster] for c in group if c.output.cluster in paired]
                higher, lower = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
                rows.append((model, source, condition, len(group), mean, unchanged, len(diffs),
                             math.fsum(diffs) / len(diffs) if diffs else NAN, higher, lower,
                             mcnemar_exact(higher, lower).pvalue if diffs else None))
    baseline = []
    for source in with_reference:
        items = [c for c in clusters.values() if c.source == source and c.reference]
        score = math.fsum(similarity.chrf(c.artifact, c.reference) for c in items) / len(items)
        baseline.append(f"{source} {percent(score)}")
    method = ("Edit completion, a signal and not a verdict: chrF (character n-grams, n = 1..6, beta = 2, white "
              "space removed; Popovic 2015) between the edited text and the reference edit, averaged over "
              "usable outputs, shown x100 in Markdown and LaTeX. Unchanged: outputs identical to the artifact "
              "apart from white space. Diff vs clean: mean paired difference (treatment minus clean) on the "
              "clusters usable under both (Pairs); higher/lower: pairs where the treatment is closer/farther; "
              "p sign test: exact two-sided sign test on those.")
    base = ("An unedited artifact scores (mean chrF against the reference, x100): " + "; ".join(baseline) + "."
            if baseline else "No cluster has a reference edit.")
    own = sorted({f"{name} against {control}" for name in conditions
                  if (control := defined.control_of(name)) not in (None, "clean")})
    controls = ([f"Diff vs clean, pairs, higher, lower: a treatment with a control of its own is compared with that "
                 f"control, not clean ({', '.join(own)})."] if own else [])
    return SIMILARITY.table("Edit completion: chrF against the reference edit", rows,
                            (method, base, *controls, *later_notes(checked, options), *notes))


# ---------------------------------------------------------------- provenance


def _counted_text(pairs) -> str:
    return "; ".join(f"{name} ({count})" for name, count in pairs)


def provenance_table(entries: list[provenance.ConditionProvenance], expected: int, notes: list[str]) -> Table:
    rows, shown = [], []
    for e in entries:
        rows.append((e.model, e.condition, e.rows, max(0, expected - e.rows), e.ok, e.unusable, e.failed,
                     e.unusable / e.rows, e.failed / e.rows, format_time(e.first), format_time(e.median),
                     format_time(e.last), _counted_text(e.served), _counted_text(e.fingerprints)))
        shown.append((e.model, e.condition, e.rows, e.unusable / e.rows, e.failed / e.rows, format_time(e.first),
                       format_time(e.last), _counted_text(e.served)))
    display = Table("validity_provenance", "", (
        Column("model", "Model"), Column("condition", "Condition"), Column("rows", "Rows", "int"),
        Column("unusable", "Unusable %", "proportion"), Column("failed", "Failed %", "proportion"),
        Column("first", "First request"), Column("last", "Last request"), Column("served", "Served models")),
        tuple(shown))
    method = ("Rows: final trace rows per model and condition; unusable % and failed %: their shares. Times "
              "are attempt start times (UTC) read from the traces: first request = the earliest attempt, last "
              "request = the last of the attempts that gave each row its final answer. Served models: as "
              "reported by the provider, with the number of rows. The CSV adds the rows missing of the "
              f"benchmark's {expected} clusters, the median time of the answering attempts and the system "
              "fingerprints.")
    return PROVENANCE.table("Collection provenance per model and condition", rows, (method, *notes), display)


def flags_table(flags: list[provenance.ModelFlags], options: Options, notes: list[str]) -> Table:
    rows = tuple((f.model, f.conditions, "; ".join(f.served), f.served_differs,
                  "; ".join(f.served_missing) or None, f.gap_days,
                  " / ".join(f.gap_between) if f.gap_between else None, f.days_apart, f.flagged) for f in flags)
    method = ("Served differs: two conditions of the model were answered by different sets of served model "
              "identifiers. No served identifier: conditions that were answered but none of whose rows names the "
              "served model, so nothing shows which deployment answered them. Largest gap: the largest distance "
              f"between the median request times of two conditions (Between: which two); days apart: that gap "
              f"exceeds {options.max_days:g} days. Flagged: any of the three; a flagged model's contrasts may "
              "reflect a change of deployment rather than of condition.")
    return PROVENANCE_FLAGS.table("Collection provenance flags per model", rows, (method, *notes))
