"""The `tables` subcommand: labels in, tables (CSV, Markdown, LaTeX), figure and notes out."""

from __future__ import annotations

import argparse


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser(
        "tables",
        help="compute rates, paired contrasts and resampling from labels and write the tables and figure",
        description="Compute absorption rates, paired contrasts (exact McNemar, sign-flip permutation,\n"
                    "Newcombe intervals, Holm across models), source and cluster tables, comment-pool\n"
                    "resampling and the design's resolution. Write each table as CSV, Markdown and\n"
                    "LaTeX, plus rates.svg, notes.md and provenance.json. Same labels, same bytes.\n"
                    "See docs/STATISTICS.md.",
        epilog="example:\n  python seam.py tables data/labels --out data/tables\n"
               "  python seam.py tables data/labels/gpt.jsonl data/labels/claude.jsonl --out /tmp/t "
               "--resamples 5000 --seed 7",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("labels", nargs="+", metavar="LABELS",
                        help="label files (JSON Lines) or directories holding *.jsonl label files")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write the tables into")
    parser.add_argument("--resamples", type=int, default=None,
                        help="comment-pool resamples (default 2000; fewer only for quick looks)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed for the resampling (and any Monte Carlo permutation test); recorded")
    parser.add_argument("--top", type=int, default=10, help="clusters listed at each end (default 10)")
    parser.add_argument("--discordance", type=float, default=None,
                        help="discordance rate for the resolution table (default: the observed one)")
    parser.add_argument("--power", type=float, default=0.8, help="power for the resolution (default 0.8)")
    parser.set_defaults(func=run_tables)


def run_tables(args) -> int:
    from pathlib import Path

    from common import jsonl
    from common.errors import UserError
    from stats import resample
    from stats.labels import load_labels
    from stats.render import write_table, write_text
    from stats.summary import summary_lines
    from stats.tables import Options, build_report

    if args.resamples is not None and args.resamples < 1:
        raise UserError(f"--resamples must be at least 1, got {args.resamples}")
    if args.top < 0:
        raise UserError(f"--top must be non-negative, got {args.top}")
    if args.discordance is not None and not 0 <= args.discordance <= 1:
        raise UserError(f"--discordance must lie in [0, 1], got {args.discordance}")
    if args.seed is not None and args.seed < 0:
        raise UserError(f"--seed must be a non-negative integer, got {args.seed}")
    if not 0 < args.power < 1:
        raise UserError(f"--power must lie strictly between 0 and 1, got {args.power}")
    labels, digest = load_labels(args.labels)
    seed = resample.DEFAULT_SEED if args.seed is None else args.seed
    resamples = resample.DEFAULT_RESAMPLES if args.resamples is None else args.resamples
    options = Options(resamples=resamples, seed=seed, top=args.top, discordance=args.discordance,
                      power=args.power)
    report = build_report(labels, options, labels_sha256=digest)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a directory")
    written = []
    for table in report.tables:
        written += write_table(out, table)
    write_text(out / "rates.svg", report.figure)
    notes = "\n".join(f"- {n}" for n in report.notes) if report.notes else "- No data notes."
    write_text(out / "notes.md", f"# Notes on the tables\n\n{notes}\n")
    write_text(out / "provenance.json", jsonl.dumps(report.provenance))
    written += [out / "rates.svg", out / "notes.md", out / "provenance.json"]
    print(f"{len(labels.models)} models, {len(labels.conditions)} conditions, "
          f"{len(labels.clusters)} clusters: wrote {len(written)} files to {out}")
    for line in summary_lines(out):
        print(line)
    return 0
