"""The steps of `seam.py compare`: check the inputs, score the user's traces, build the tables of each family
and merge them, then the report. Nothing is written under data/, and the output folder is written whole.

The released rows come from the released labels and traces themselves, built by the same code with the
same settings as `./reproduce.sh` (which checks that it gives data/tables/ byte for byte), so a released
row here is the released row; the user's rows come from their labels alone (`--family own`, the default),
or every model is one family (`--family panel`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common import outputs as common_outputs
from common.errors import UserError
from common.traces import model_of, read_final
from compare import outputs
from compare.merge import PANEL, RELEASED, YOURS, in_one_family, merged
from scorer.tiers import MODEL_TIER

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
FAMILIES = ("own", "panel")
FAMILY_NOTES = {
    "own": "Holm families (--family own): the released models form one, yours another, so that your p-values do not "
           "depend on what was released and the released rows keep their released values.",
    "panel": "Holm family (--family panel): the released models and yours form one, as the paper's panel did; the "
             "released rows' adjusted p-values then differ from the release's.",
}


@dataclass(frozen=True)
class Inputs:
    traces: tuple[Path, ...]  # the user's trace files
    models: tuple[str, ...]  # their models, in the same order
    released_traces: tuple[Path, ...]
    released_labels: Path


def check_out(out: Path) -> None:
    """Refuse an --out inside data/ (the release) or that is a file, before any work."""
    check_outside_data(out, f"--out {out}")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")


def check_outside_data(path: Path, named: str) -> None:
    """Refuse a path that is, or leads through a link, inside data/ (a link loop on the way is refused too)."""
    resolved = common_outputs.resolved(path)
    if resolved == DATA.resolve() or resolved.is_relative_to(DATA.resolve()):
        raise UserError(f"{named}: is inside {DATA} (the release, which compare never writes to); give a folder "
                        "of your own, e.g. runs/compare")


def read_inputs(traces: list[str]) -> Inputs:
    """The user's trace files and models, refused where they clash with each other or with the release."""
    released = tuple(sorted((DATA / "traces").glob("*.jsonl")))
    taken = {model_of(read_final(path)): path for path in released}
    models, seen = [], {}
    files = jsonl.files_named(traces, "trace")
    for path in files:
        model = model_of(read_final(path))  # one model per file, as the scorer requires
        if model is None:
            raise UserError(f"{path}: no trace rows")
        if model in taken:
            raise UserError(f"{path}: model {model!r} is a released model ({taken[model]}); give your model another "
                            "name in its config (name = ...), or compare against the release without it")
        if model in seen:
            raise UserError(f"{path}: model {model!r} is also in {seen[model]}; give each model's traces once")
        seen[model] = path
        models.append(model)
    return Inputs(tuple(files), tuple(models), released, DATA / "labels")


def score(inputs: Inputs, out: Path, conditions: str | None) -> None:
    """Score the user's traces into out/labels/, with the tiers the released labels were made with (lexical only
    when no released label ran the entailment tier), through the `score` command itself."""
    from scorer import cli as scorer_cli

    parser = argparse.ArgumentParser(prog="seam.py")
    scorer_cli.add_commands(parser.add_subparsers())
    check_outside_data(out / outputs.LABELS, str(out / outputs.LABELS))
    argv = ["score", *map(str, inputs.traces), "--out-dir", str(out / outputs.LABELS)]
    if conditions is not None:
        argv += ["--conditions", conditions]
    if not released_ran_entailment(inputs.released_labels):
        argv.append("--no-nli")
    args = parser.parse_args(argv)
    args.func(args)


def files_read(inputs: Inputs, conditions: str | None, prices: str | None) -> list[tuple[Path, str]]:
    """Every file compare reads, and what it is, for `outputs.refuse_overwritten`: the user's traces, prices
    and condition files, and the released traces and labels (never an output: those are outside data/)."""
    read = [(path, "trace file") for path in (*inputs.traces, *inputs.released_traces)]
    read += [(path, "released labels file") for path in sorted(inputs.released_labels.glob("*.jsonl"))]
    read += [(Path(path), what) for path, what in ((prices, "prices file"), (conditions, "condition file"))
             if path is not None]
    return read


def check_written(path: Path, read: list[tuple[Path, str]]) -> None:
    """Each table file as it is about to be written: outside data/, and none of the files read (the plan made
    before scoring names every one; this keeps a table added later from ever replacing an input)."""
    check_outside_data(path, str(path))
    outputs.refuse_overwritten(read, [path])


def labels_of(folder: Path, models: tuple[str, ...]) -> list[Path]:
    """The label files in `folder` of these models (the scorer names each after its model)."""
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        first = next((row for _, row in jsonl.read(path)), None)
        if first is not None and first.get("model") in models:
            found.append(path)
    return found


def released_ran_entailment(folder: Path) -> bool:
    """Whether any released label ran the entailment tier."""
    for path in sorted(folder.glob("*.jsonl")):
        for _, row in jsonl.read(path):
            if MODEL_TIER in (row.get("tiers_run") or []):
                return True
    return False


def absorption(labels_paths, trace_paths, defined, usage, settings):
    """The labels and the absorption report (`stats.tables.build_report`) of one family."""
    from stats.evidence import read_evidence
    from stats.labels import load_labels
    from stats.tables import build_report

    labels, digest = load_labels(labels_paths, defined)
    report = build_report(labels, settings, labels_sha256=digest, evidence=read_evidence(trace_paths, defined),
                          conditions=defined, usage=usage)
    return labels, report


def compare(traces: list[str], out: str | Path, *, conditions: str | None = None, prices: str | None = None,
            family: str = "own", log=None) -> dict:
    """Everything `seam.py compare` writes into `out`; returns what was written (for the summary line)."""
    from benchmark import conditions as condition_sets
    from runner.prices import load_prices
    from stats import resample
    from stats.render import write_tables
    from stats.schema import notes_text
    from stats.settings import TableSettings
    from stats.usage import UsageSettings
    from validity import report as validity_report

    log = sys.stderr if log is None else log
    if family not in FAMILIES:
        raise UserError(f"--family {family!r}: expected one of {', '.join(FAMILIES)}")
    out = Path(out)
    check_out(out)
    inputs = read_inputs(traces)
    defined = condition_sets.load(conditions)
    usage = UsageSettings(load_prices(prices), None if prices is None else Path(prices).name)
    read = files_read(inputs, conditions, prices)
    planned = outputs.planned(out, inputs.models)
    for path in planned:  # before anything is written: a link into data/, or a link loop, where compare writes
        check_outside_data(path, str(path))
    outputs.refuse_overwritten(read, planned)
    settings = TableSettings(resamples=resample.DEFAULT_RESAMPLES, seed=resample.DEFAULT_SEED)
    print(f"compare: scoring {len(inputs.traces)} trace file(s): {', '.join(inputs.models)}", file=log)
    score(inputs, out, conditions)
    mine = labels_of(out / outputs.LABELS, inputs.models)  # this run's: an earlier run's other models are left out
    origins = {model: YOURS for model in inputs.models}
    note = FAMILY_NOTES[family]
    print("compare: building the absorption tables (released and yours)", file=log)
    if family == "own":
        rel_labels, rel_report = absorption([inputs.released_labels], inputs.released_traces, defined, usage,
                                            settings)
        _, your_report = absorption(mine, inputs.traces, defined, usage, settings)
        origins.update({model: RELEASED for model in rel_labels.models})
        by_name = {table.name: table for table in your_report.tables}
        tables = [merged(table.name, table, by_name.get(table.name), note) for table in rel_report.tables]
        tables += [merged(t.name, None, t, note) for t in your_report.tables if t.name not in
                   {r.name for r in rel_report.tables}]
        notes = tuple(dict.fromkeys((note, *rel_report.notes, *your_report.notes)))
        provenance = {"family": family, RELEASED: rel_report.provenance, YOURS: your_report.provenance}
    else:
        all_labels, all_report = absorption([inputs.released_labels, *mine],
                                            [*inputs.released_traces, *inputs.traces], defined, usage, settings)
        origins.update({model: RELEASED for model in all_labels.models if model not in origins})
        tables = [in_one_family(table, origins, note) for table in all_report.tables]
        notes = (note, *all_report.notes)
        provenance = {"family": family, PANEL: all_report.provenance}
    print("compare: building the validity tables (released and yours; the functional check is not run)", file=log)
    if conditions is not None:  # not yet merged with the release's here; seam.py validity reads them (VALIDITY.md)
        notes = (*notes, "Validity tables not built by compare with --conditions: run 'seam.py validity' on your "
                         "trace files with the same --conditions FILE.")
        items = ()
    elif family == "own":
        rel_validity = validity_report.build(inputs.released_traces, labels=[inputs.released_labels])
        your_validity = validity_report.build(inputs.traces, labels=mine)
        by_name = {table.name: table for table in your_validity.tables}
        tables += [merged(table.name, table, by_name.get(table.name), note) for table in rel_validity.tables]
        items = (*rel_validity.items, *your_validity.items)
    else:
        every = validity_report.build([*inputs.released_traces, *inputs.traces],
                                      labels=[inputs.released_labels, *mine])
        tables += [in_one_family(table, origins, note) for table in every.tables]
        items = every.items
    extra = {**marked_figures(tables, defined), outputs.NOTES: notes_text(notes),
             outputs.PROVENANCE: jsonl.dumps(provenance)}
    if items:
        extra[outputs.VALIDITY_ITEMS] = "".join(map(jsonl.dumps, items))
    check_outside_data(out / outputs.PAGE, str(out / outputs.PAGE))
    write_tables(out / outputs.TABLES, tables, command="python seam.py compare", extra=extra, what="compare tables",
                 check=lambda path: check_written(path, read),
                 replaces=[path.name for path in outputs.planned(out, ()) if path.parent == out / outputs.TABLES])
    print("compare: writing the report", file=log)
    page(inputs, out, conditions, mine)
    return {"models": inputs.models, "released": sorted(m for m, o in origins.items() if o == RELEASED),
            "tables": len(tables), "out": out}


def marked_figures(tables, defined) -> dict[str, str]:
    """rates.svg and contrasts.svg of the compare tables, every model marked "(yours)" or "(released)" as the
    page marks them: drawn by the page's own code (report/figures.py) from the two tables as their CSV files
    hold them, so that each file is the figure the page shows, byte for byte."""
    from report.figures import contrasts_svg, rates_svg
    from stats.schema import as_written, origin_of, records
    from stats.specs import CONTRASTS, RATES

    by_name = {table.name: table for table in tables}
    rates, contrasts = as_written(by_name[RATES.name]), as_written(by_name[CONTRASTS.name])
    origins = {row.model: origin_of(row) for row in records(rates) if origin_of(row)}
    return {outputs.RATES_FIGURE: rates_svg(rates, defined),
            outputs.CONTRASTS_FIGURE: contrasts_svg(contrasts, origins)}


def page(inputs: Inputs, out: Path, conditions: str | None, mine: list[Path]) -> None:
    """out/report.html: the released cases and yours (`mine`, this run's label files), through the `report`
    command itself."""
    from report import cli as report_cli

    parser = argparse.ArgumentParser(prog="seam.py")
    report_cli.add_commands(parser.add_subparsers())
    argv = ["report", "--labels", str(inputs.released_labels), *map(str, mine),
            "--traces", *map(str, inputs.released_traces), *map(str, inputs.traces),
            "--tables", str(out / outputs.TABLES), "--out", str(out / outputs.PAGE)]
    if (DATA / "review").is_dir():
        argv += ["--review", str(DATA / "review")]
    if conditions is not None:
        argv += ["--conditions", conditions]
    args = parser.parse_args(argv)
    args.func(args)
