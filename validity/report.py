"""Run every validity check on a set of traces and write the tables, byte for byte the same each time.

`build` reads traces and clusters, runs the offline checks (syntax,
similarity, provenance) and, only when asked, the functional check in the
sandbox; `write` puts each table into a directory as CSV, Markdown and LaTeX
(through `stats.render`, like the absorption tables), plus one JSON Lines file
per output for auditing. Nothing here reads a clock or a random source: the
only times in the output are those read from the traces.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from benchmark import dataset
from benchmark.conditions import ConditionSet
from common import jsonl
from common.records import Cluster
from stats.labels import load_labels
from stats.render import Table, table_files, write_tables
from validity import functional, provenance, specs
from validity.checked import Checked, Options, check_outputs, data_notes, marker_notes, parse_notes
from validity.contrasts import clean_contrast_rows, clean_contrasts_table, versus
from validity.inputs import read_outputs
from validity.sandbox import DEFAULT_LIMITS, Limits
from validity.sensitivity import provenance_sensitivity_table
from validity.tables import (
    flags_table,
    functional_outcomes,
    functional_table,
    provenance_table,
    similarity_table,
    syntax_as_returned_table,
    syntax_outcomes,
    syntax_table,
)

DEFAULT_OPTIONS = Options()
FUNCTIONAL_FILES = ("validity_functional", "validity_functional_contrasts", "validity_functional_items")


@dataclass(frozen=True)
class ValidityReport:
    """What `build` found: the tables and the audit rows, ready for `write`."""

    tables: tuple[Table, ...]
    items: tuple[dict, ...]  # validity_items.jsonl: one row per output a check applies to
    functional_items: tuple[dict, ...] | None  # None when the functional check did not run
    models: tuple[str, ...]
    outputs: int


def build(paths, *, execute: bool = False, options: Options = DEFAULT_OPTIONS, limits: Limits = DEFAULT_LIMITS,
          kernel: str = "auto", data_dir: Path = dataset.DATA_DIR, progress=None, labels=None,
          conditions: ConditionSet | None = None) -> ValidityReport:
    """The validity tables of the traces in `paths`; with `labels` (label files or directories) also the
    sensitivity of the absorption contrasts to the provenance-flagged models (`validity.sensitivity`).

    `conditions` (`benchmark.conditions.load`, default the built-ins) are the conditions the traces may hold:
    a condition file's are checked like the built-in ones, each treatment against its own control; give a
    study's trace file together with the model's built-in one, whose clean rows its treatments pair with."""
    if conditions is not None:
        options = replace(options, conditions=conditions)
    defined = options.defined
    benchmark = dataset.load(data_dir)
    clusters = benchmark.by_name
    outputs = read_outputs(paths, benchmark, defined)
    checked = check_outputs(outputs, clusters, defined)
    notes = data_notes(checked, options)
    models = tuple(sorted({o.model for o in outputs}))
    code_sources = tuple(sorted({c.source for c in benchmark.clusters if c.genre == "code"}))
    entries = provenance.by_condition(outputs, defined)
    model_flags = provenance.flags(entries, options.max_days)
    syntax_notes = [*notes, *parse_notes(checked)]
    echo_notes = [*marker_notes(checked, options), *syntax_notes]  # what an echo is: the two syntax tables
    invalid = clean_contrast_rows(syntax_outcomes(checked), models, options)
    returned = clean_contrast_rows(syntax_outcomes(checked, as_returned=True), models, options)
    tables = [
        syntax_table(checked, code_sources, options, echo_notes),
        clean_contrasts_table(specs.SYNTAX_CONTRASTS, f"Invalid code: each condition vs {versus(invalid)}",
                              invalid, "the edited code does not parse", options, syntax_notes),
        syntax_as_returned_table(checked, code_sources, options, echo_notes),
        clean_contrasts_table(specs.SYNTAX_AS_RETURNED_CONTRASTS,
                              f"Code invalid as returned: each condition vs {versus(returned)}",
                              returned, "the reply as returned does not parse", options, syntax_notes),
        similarity_table(checked, clusters, options, notes),
        provenance_table(entries, len(clusters), notes),
        flags_table(model_flags, options, notes),
    ]
    if labels is not None:
        tables.append(provenance_sensitivity_table(load_labels(labels, defined)[0], model_flags, options))
    functional_items = None
    if execute:
        tested = {c.cluster for c in benchmark.clusters if c.tests}
        verdicts, controls = run_functional(checked, clusters, tested, limits, kernel, progress)
        passing = clean_contrast_rows(functional_outcomes(checked, tested, verdicts), models, options)
        tables += [
            functional_table(checked, tested, verdicts, controls, limits, options, notes),
            clean_contrasts_table(specs.FUNCTIONAL_CONTRASTS, f"Passing the unit tests: each condition vs "
                                  f"{versus(passing)}", passing, "the edited function passes its unit tests",
                                  options, notes),
        ]
        functional_items = tuple(
            [{"kind": "output", "model": model, "id": rid, "outcome": r.outcome, "detail": r.detail}
             for (model, rid), r in sorted(verdicts.items())]
            + [{"kind": kind, "model": None, "id": f"{cluster}/{kind}", "outcome": r.outcome, "detail": r.detail}
               for (kind, cluster), r in sorted(controls.items())])
    return ValidityReport(tables=tuple(sorted(tables, key=lambda t: t.name)), items=tuple(item_rows(checked)),
                          functional_items=functional_items, models=models, outputs=len(outputs))


def run_functional(checked: list[Checked], clusters: dict[str, Cluster], tested: set[str], limits: Limits,
                   kernel: str, progress=None):
    """Sandbox verdicts for every usable tested output, and the two controls of each tested cluster present."""
    programs = {("output", c.output.model, c.output.id):
                functional.program(c.edited, clusters[c.output.cluster].tests)
                for c in checked if c.output.cluster in tested and c.edited is not None}
    for name in sorted({c.output.cluster for c in checked} & tested):  # controls for the clusters present
        cluster = clusters[name]
        programs[("reference", "", name)] = functional.program(cluster.reference, cluster.tests, "reference")
        programs[("artifact", "", name)] = functional.program(cluster.artifact, cluster.tests, "artifact")
    results = functional.run_all(programs, limits=limits, kernel=kernel, progress=progress)
    verdicts = {(model, rid): r for (kind, model, rid), r in results.items() if kind == "output"}
    controls = {(kind, rid): r for (kind, _, rid), r in results.items() if kind != "output"}
    return verdicts, controls


def item_rows(checked: list[Checked]) -> list[dict]:
    """One audit row per output that a check applies to (code clusters, clusters with a reference)."""
    rows = []
    for c in checked:
        if c.genre != "code" and not c.has_reference:
            continue
        s, r = c.syntax, c.reply_syntax
        rows.append({
            "model": c.output.model, "id": c.output.id, "source": c.source, "condition": c.output.condition,
            "status": c.output.status, "usable": c.usable,
            "parses": None if s is None else s.parses, "syntax_error": None if s is None else s.error,
            "echoes_marker": None if s is None else s.echoes_marker,
            "marker_in_text": None if s is None else s.marker_in_text,
            "parses_without_markers": None if s is None else s.parses_without_markers,
            "returned_fenced": None if r is None else r.fenced,
            "returned_parses": None if r is None else r.parses,
            "returned_error": None if r is None else r.error,
            "returned_parses_without_markers": None if r is None else r.parses_without_markers,
            "chrf": None if c.chrf is None else round(c.chrf, 6), "unchanged": c.unchanged,
        })
    return rows


def write(report: ValidityReport, out: Path) -> list[Path]:
    """Write every table (CSV, Markdown, LaTeX) and the item files into `out`, all or (a full disk) none;
    return the paths."""
    items = {"validity_items.jsonl": "".join(map(jsonl.dumps, report.items))}
    if report.functional_items is not None:
        items["validity_functional_items.jsonl"] = "".join(map(jsonl.dumps, report.functional_items))
    return write_tables(out, report.tables, command="python seam.py validity", extra=items, what="validity tables",
                        replaces=table_files(spec.name for spec in specs.TABLES if spec.name not in FUNCTIONAL_FILES))
