"""The `compare` subcommand: your model's traces beside the released models', in a folder of your own."""

from __future__ import annotations

import argparse

from common.argtypes import condition_file

EPILOG = """\
example:
  # run your model (its config, my-model.toml: docs/RUNNER.md) into a folder of your own (git-ignored
  # runs/), then set it beside the release
  python seam.py run my-model.toml --out runs/my-model.jsonl
  python seam.py compare runs/my-model.jsonl --out runs/compare --prices prices.toml
  # the paper's way: one Holm family of every model, released and yours
  python seam.py compare runs/*.jsonl --out runs/compare-panel --family panel

Writes DIR/labels/ (your labels), DIR/tables/ (every table of the release, each row marked
origin = released or yours; usage with costs given --prices) and DIR/report.html (a filter
by origin). Never writes under data/: ./reproduce.sh keeps passing. docs/COMPARE.md.
"""


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="set your model's traces beside the released models' (tables and report, not in data/)",
        description="Score your trace files (one model each, as 'seam.py run' writes them) and build every\n"
                    "table the release has, with the released models as reference rows (column origin),\n"
                    "and the HTML report. Holm: your models form their own family by default, so that your\n"
                    "p-values do not depend on the release and the released rows keep their released values.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="your trace files (or folders of *.jsonl)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder to write (not inside data/)")
    parser.add_argument("--conditions", default=None, metavar="FILE", type=condition_file,
                        help="a condition file, when your traces hold its conditions (docs/CONDITIONS.md)")
    parser.add_argument("--prices", default=None, metavar="FILE",
                        help="a prices file (TOML, USD per million tokens per model name): costs in the usage table")
    parser.add_argument("--family", choices=("own", "panel"), default="own",
                        help="Holm family: own (default: yours apart from the released) or panel (all in one)")
    parser.set_defaults(func=run_compare)


def run_compare(args) -> int:
    from compare.build import compare

    done = compare(args.traces, args.out, conditions=args.conditions, prices=args.prices, family=args.family)
    print(f"compare: {', '.join(done['models'])} beside {', '.join(done['released'])} ({args.family} Holm "
          f"family): wrote {done['tables']} tables to {done['out']}/tables, labels to {done['out']}/labels and "
          f"{done['out']}/report.html")
    return 0
