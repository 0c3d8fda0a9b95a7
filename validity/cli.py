"""The `validity` subcommand: traces in, validity tables (CSV, Markdown, LaTeX) out."""

from __future__ import annotations

import argparse

from common.argtypes import condition_file, positive_float


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser(
        "validity",
        help="check that edits survive the conditions and that conditions were collected alike",
        description="Validity reports from traces: syntactic validity of edited code (and echoed boundary\n"
                    "markers), edit completion against reference edits (chrF), collection provenance\n"
                    "(times, served models, unusable shares, flags) and, with --execute only, a\n"
                    "functional check that runs edited HumanEval functions against their unit tests in\n"
                    "a sandbox. With --labels, also the absorption contrasts with the provenance-flagged\n"
                    "models left out (validity_sensitivity). With --conditions FILE, a condition file's\n"
                    "conditions too: give the study's trace file with the model's built-in one, and each\n"
                    "treatment is compared with its control (clean, or the file's own, e.g. later-control).\n"
                    "Writes validity_*.{csv,md,tex} and validity_items.jsonl into DIR.\n"
                    "Same traces, same bytes. See docs/VALIDITY.md.",
        epilog="example:\n"
               "  # the released validity tables again, into a folder of yours (but the functional check's)\n"
               "  python seam.py validity data/traces --out runs/validity --labels data/labels\n"
               "  # one model's, with the functional check (--execute, below)\n"
               "  python seam.py validity data/traces/qwen2.5-coder-1.5b.jsonl --out runs/validity-1.5b --execute \\\n"
               "      --max-days 14\n"
               "  # a study's conditions beside the built-in ones: its trace file and the model's built-in one\n"
               "  python seam.py validity data/traces/qwen2.5-coder-0.5b.jsonl \\\n"
               "      data/studies/example/traces/qwen2.5-coder-0.5b.jsonl \\\n"
               "      --conditions data/conditions/example.toml --out runs/example/validity\n\n"
               "--execute runs model output as code. It is isolated (namespaces, read-only file system,\n"
               "no network, resource limits; docs/VALIDITY.md says which protection applies where),\n"
               "but only pass it for traces you are willing to execute.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("traces", nargs="+", metavar="TRACES",
                        help="trace files (JSON Lines) or directories holding *.jsonl trace files")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write the tables into")
    parser.add_argument("--execute", action="store_true",
                        help="also run edited HumanEval functions against their unit tests (executes model "
                             "output, in a sandbox)")
    parser.add_argument("--max-days", type=positive_float, default=7.0, metavar="DAYS",
                        help="flag a model whose conditions' median request times lie more than DAYS apart "
                             "(a number above 0; default 7)")
    parser.add_argument("--conditions", default=None, metavar="FILE", type=condition_file,
                        help="a condition file (TOML) defining the traces' other conditions, their markers and "
                             "controls (docs/CONDITIONS.md); pass its traces with the model's built-in trace file: "
                             "each treatment is compared with its control's outputs (clean's are there)")
    parser.add_argument("--labels", nargs="+", metavar="LABELS", default=None,
                        help="label files (or directories of them) scored from these traces: also write "
                             "validity_sensitivity, the absorption contrasts with the flagged models left out")
    parser.set_defaults(func=run_validity)


def run_validity(args) -> int:
    import sys
    from pathlib import Path

    from benchmark import conditions
    from common.errors import UserError
    from validity import report
    from validity.sandbox import SandboxError, available
    from validity.summary import summary_lines
    from validity.tables import Options

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a directory")
    if args.execute and available():
        raise UserError(f"--execute: {available()}")

    def progress(done: int, total: int) -> None:
        if done == total or done % 50 == 0:
            print(f"validity: functional check {done}/{total} programs", file=sys.stderr)

    try:
        result = report.build(args.traces, execute=args.execute, options=Options(max_days=args.max_days),
                              progress=progress, labels=args.labels,
                              conditions=None if args.conditions is None else conditions.load(args.conditions))
    except SandboxError as exc:  # the sandbox could not run (its limits, no temporary directory): no verdicts
        raise UserError(f"--execute: {exc}") from None
    if result.outputs == 0:  # empty tables would silently replace real ones in --out
        raise UserError(f"{', '.join(map(str, args.traces))}: no trace rows; nothing written to {out}")
    written = report.write(result, out)
    print(f"{len(result.models)} models, {result.outputs} outputs: wrote {len(written)} files to {out}")
    if not args.execute:
        print("functional check not run: it executes model output; pass --execute to run it in the sandbox")
        stale = sorted(p.name for name in report.FUNCTIONAL_FILES for p in out.glob(f"{name}.*"))
        if stale:
            print(f"note: {out} still holds functional tables from an earlier --execute run, not updated now: "
                  f"{', '.join(stale)}")
    for line in summary_lines({table.name: table for table in result.tables}):
        print(line)  # from the tables just computed, not read back from the files just written
    return 0
