"""The `tables` subcommand: labels in, tables (CSV, Markdown, LaTeX), figures and notes out."""

from __future__ import annotations

import argparse

from common.argtypes import condition_file, fraction, non_negative_int, positive_int, probability

COMMAND = "python seam.py tables"  # named in the first line of every .tex file it writes


def add_commands(subparsers) -> None:
    """Add `tables` to seam.py's subcommands.

    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["tables", "data/labels", "--out", "out", "--seed", "0"])
    >>> args.labels, args.seed, args.resamples, args.top, args.power, args.discordance, args.traces, args.exclusions
    (['data/labels'], 0, None, 10, 0.8, None, None, None)
    >>> args.conditions is None
    True
    """
    parser = subparsers.add_parser(
        "tables",
        help="compute rates, paired contrasts and resampling from labels and write the tables and figures",
        description="Compute absorption rates, paired contrasts (exact McNemar, sign-flip permutation,\n"
                    "Newcombe intervals, Holm across models), source and cluster tables, comment-pool\n"
                    "resampling, the design's resolution, the headline counts (summary) and the\n"
                    "sensitivity analyses (sensitivity; with --traces also those that read the trace\n"
                    "outputs). Write each table as CSV, Markdown and LaTeX, plus the figures rates.svg and\n"
                    "contrasts.svg, notes.md and provenance.json. Same labels (and traces), same bytes.\n"
                    "See docs/STATISTICS.md.",
        epilog="example:\n"
               "  # the released tables again, into a folder of yours (./reproduce.sh compares them with "
               "data/tables/)\n"
               "  python seam.py tables data/labels --out runs/tables --traces data/traces\n"
               "  # two models only, more resamples, another seed\n"
               "  python seam.py tables data/labels/smollm2-135m.jsonl data/labels/qwen2.5-coder-1.5b.jsonl \\\n"
               "      --out runs/tables-two --resamples 5000 --seed 7\n"
               "  # a condition file's conditions and contrasts beside the built-in ones (docs/CONDITIONS.md)\n"
               "  python seam.py tables data/labels/qwen2.5-coder-0.5b.jsonl data/studies/example/labels \\\n"
               "      --conditions data/conditions/example.toml --out runs/example/tables",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("labels", nargs="+", metavar="LABELS",
                        help="label files (JSON Lines) or directories holding *.jsonl label files")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write the tables into")
    parser.add_argument("--resamples", type=positive_int, default=None,
                        help="comment-pool resamples (default 2000; fewer only for quick looks)")
    parser.add_argument("--seed", type=non_negative_int, default=None,
                        help="seed for the resampling (and any Monte Carlo permutation test); recorded")
    parser.add_argument("--top", type=positive_int, default=10, help="clusters listed at each end (default 10)")
    parser.add_argument("--discordance", type=fraction, default=None,
                        help="discordance rate for the resolution table (default: the observed one)")
    parser.add_argument("--power", type=probability, default=0.8, help="power for the resolution (default 0.8)")
    parser.add_argument("--traces", nargs="+", metavar="TRACES", default=None,
                        help="the trace files (or directories of them) the labels were scored from: the "
                             "sensitivity analyses then also count excluded outputs that hold the witness phrase")
    parser.add_argument("--conditions", default=None, metavar="FILE", type=condition_file,
                        help="a condition file (TOML): the labels' other conditions, the contrasts to add and "
                             "the phrases of the summary sentences (docs/CONDITIONS.md)")
    parser.add_argument("--prices", default=None, metavar="FILE",
                        help="a prices file (TOML, USD per million tokens per model; runner/prices.py): the usage "
                             "table, written with --traces, then has costs")
    parser.add_argument("--exclusions", default=None, metavar="FILE",
                        help="adjudicated false positives (JSON Lines: id, model, reason; docs/FORMATS.md), "
                             "counted as not absorbed; every table says so")
    parser.set_defaults(func=run_tables)

    usage = subparsers.add_parser(
        "usage", help="total the requests, tokens, time and cost of trace files, per model and condition",
        description="Read the usage every trace row recorded (OpenAI, Anthropic and Gemini shapes) and the\n"
                    "latency of every attempt, and total them per model and condition and per model (condition\n"
                    "'all'): requests, rows whose usage cannot be read (counted, never 0), prompt, completion,\n"
                    "reasoning and cached tokens, time spent, and with --prices the cost in USD. Prints the\n"
                    "table; --out also writes usage.csv, usage.md and usage.tex.",
        epilog="example:\n  python seam.py usage data/traces\n"
               "  python seam.py usage runs/gpt-4o-mini.jsonl --prices prices.toml --out runs/usage\n"
               "prices file (TOML, USD per million tokens; a model without one gets no cost):\n"
               "  [gpt-4o-mini]\n  input_per_mtok = 0.15\n  output_per_mtok = 0.60",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    usage.add_argument("traces", nargs="+", metavar="TRACES", help="trace files, or directories of *.jsonl files")
    usage.add_argument("--prices", default=None, metavar="FILE", help="a prices file (TOML; runner/prices.py)")
    usage.add_argument("--out", default=None, metavar="DIR", help="also write usage.csv, .md and .tex here")
    usage.add_argument("--conditions", default=None, metavar="FILE", type=condition_file,
                       help="a condition file, for the order of its conditions (docs/CONDITIONS.md)")
    usage.set_defaults(func=run_usage)


def run_usage(args) -> int:
    """Print the usage table of the trace files (and write it with --out).

    >>> import io, contextlib, tempfile
    >>> from common import jsonl
    >>> from scorer.synthetic import trace_row
    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()) as out:
    ...     jsonl.write(f"{tmp}/m.jsonl", [trace_row("humaneval-001", "clean", "x", model="m").to_row()])
    ...     status = run_usage(parser.parse_args(["usage", tmp]))
    >>> status, "| m | all | 1 |" in out.getvalue()
    (0, True)
    """
    from pathlib import Path

    from benchmark import conditions
    from runner.prices import load_prices
    from stats.evidence import read_outputs
    from stats.render import to_markdown, write_tables
    from stats.usage import UsageSettings, usage_table

    outputs, files = read_outputs(args.traces)
    settings = UsageSettings(load_prices(args.prices), None if args.prices is None else Path(args.prices).name)
    table = usage_table(list(outputs.values()), conditions.load(args.conditions).names, settings)
    print(to_markdown(table), end="")
    if args.out is not None:
        out = Path(args.out)
        write_tables(out, [table], command="python seam.py usage", what="usage table")
        print(f"wrote usage.csv, usage.md and usage.tex to {out} ({len(files)} trace file(s))")
    return 0


def run_tables(args) -> int:
    """Read the labels, write every table, the figures, the notes and provenance.json, print a summary.

    >>> import tempfile
    >>> from common import jsonl
    >>> from stats.synthetic import synthetic_labels
    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> with tempfile.TemporaryDirectory() as tmp:  # doctest: +ELLIPSIS
    ...     jsonl.write(f"{tmp}/labels.jsonl", synthetic_labels(models=2, clusters=12, comments=4))
    ...     run_tables(parser.parse_args(["tables", f"{tmp}/labels.jsonl", "--out", f"{tmp}/out"]))
    2 models, 5 conditions, 12 clusters: wrote 31 files to .../out
    models: 2 (model-00, model-01); conditions: newline, blank, boundary, mitigation, native
    ...
    0
    """
    import hashlib
    from pathlib import Path

    from benchmark import conditions
    from common import jsonl
    from stats import resample
    from stats.evidence import read_evidence
    from stats.labels import load_labels
    from stats.render import table_files, write_tables
    from stats.schema import notes_text
    from stats.settings import TableSettings
    from stats.specs import TABLES
    from stats.summary import summary_lines
    from stats.tables import build_report

    defined = conditions.load(args.conditions)
    labels, digest = load_labels(args.labels, defined)
    seed = resample.DEFAULT_SEED if args.seed is None else args.seed
    resamples = resample.DEFAULT_RESAMPLES if args.resamples is None else args.resamples
    settings = TableSettings(resamples=resamples, seed=seed, top=args.top, discordance=args.discordance,
                             power=args.power)
    evidence = read_evidence(args.traces, defined)
    exclusions = None
    if args.exclusions is not None:
        from stats.exclusions import load_exclusions

        exclusions = load_exclusions(args.exclusions)
    recorded = None
    if args.conditions is not None:  # its name, not its folder: the same file gives the same provenance anywhere
        recorded = {"file": Path(args.conditions).name,
                    "sha256": hashlib.sha256(Path(args.conditions).read_bytes()).hexdigest()}
    from runner.prices import load_prices
    from stats.usage import UsageSettings

    usage = UsageSettings(load_prices(args.prices), None if args.prices is None else Path(args.prices).name)
    report = build_report(labels, settings, labels_sha256=digest, evidence=evidence, exclusions=exclusions,
                          conditions=defined, conditions_file=recorded, usage=usage)
    out = Path(args.out)
    extra = {"rates.svg": report.figure, "contrasts.svg": report.contrasts_figure,
             "notes.md": notes_text(report.notes), "provenance.json": jsonl.dumps(report.provenance)}
    written = write_tables(out, report.tables, command=COMMAND, extra=extra, what="tables",
                           replaces=table_files(spec.name for spec in TABLES))
    print(f"{len(labels.models)} models, {len(labels.conditions)} conditions, "
          f"{len(labels.clusters)} clusters: wrote {len(written)} files to {out}")
    if exclusions is not None:
        print(f"exclusions: {len(exclusions.rows)} adjudicated false positives from {args.exclusions} counted as "
              "not absorbed (every table's notes say so)")
    for line in summary_lines({table.name: table for table in report.tables}, report.notes, out / "notes.md"):
        print(line)  # from the tables just computed, not read back from the files just written
    return 0
