"""The `report` subcommand: one self-contained HTML page of the results, the specimens and every case."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from common import nogc
from common.argtypes import condition_file
from common.errors import UserError


def add_commands(subparsers) -> None:
    """Add `report` to seam.py's subcommands.

    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["report", "--labels", "l", "--traces", "t", "--tables", "x", "--out", "r.html"])
    >>> args.labels, args.traces, args.tables, args.review, args.out, args.conditions
    (['l'], ['t'], 'x', None, 'r.html', None)
    """
    parser = subparsers.add_parser(
        "report", help="write one self-contained HTML page: results, figures, specimens, a case browser",
        description="Write one HTML file that opens from disk in any browser (inline CSS, SVG and script, no\n"
                    "external assets): the headline sentences and rates, the figures, a specimen gallery per\n"
                    "model, a browser of every treatment case (filters, search, shareable #cluster/condition\n"
                    "links), and the validity tables and review report. The same inputs give the same bytes.",
        epilog="example:\n"
               "  # the released page again, into a folder of yours (./reproduce.sh compares it with\n"
               "  # data/report.html)\n"
               "  python seam.py report --labels data/labels --traces data/traces --tables data/tables \\\n"
               "      --review data/review --occurrence data/occurrence/sharegpt-v3-prefix --out runs/report.html\n"
               "  # a condition file's study beside the same model's built-in conditions (docs/CONDITIONS.md)\n"
               "  python seam.py report --conditions data/conditions/example.toml \\\n"
               "      --labels data/labels/qwen2.5-coder-0.5b.jsonl data/studies/example/labels \\\n"
               "      --traces data/traces/qwen2.5-coder-0.5b.jsonl data/studies/example/traces \\\n"
               "      --tables data/studies/example/tables --out runs/example/report.html",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", required=True, metavar="DIR", nargs="+",
                        help="folders of label files (*.jsonl), or label files; a model's labels may be split "
                             "over several")
    parser.add_argument("--traces", required=True, metavar="DIR", nargs="+",
                        help="folders of the trace files the labels were made from, or trace files")
    parser.add_argument("--conditions", metavar="FILE", type=condition_file, default=None,
                        help="a condition file (TOML) defining the labels' other conditions (docs/CONDITIONS.md)")
    parser.add_argument("--tables", required=True, metavar="DIR",
                        help="the tables of 'seam.py tables' (rates.csv at least) and 'seam.py validity'")
    parser.add_argument("--review", default=None, metavar="DIR",
                        help="a folder of review reports, one subfolder per model as 'seam.py review report' "
                             "writes them (optional)")
    parser.add_argument("--occurrence", default=None, metavar="DIR",
                        help="the occurrence audit's report folder, as 'seam.py occurrence report' writes it "
                             "(optional)")
    parser.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write (replaced whole)")
    parser.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from benchmark import conditions, dataset
    from common.files import write_text
    from common.jsonl import files_named
    from report import cases
    from report.page import Inputs, page
    from report.tables import read_folder

    started = time.monotonic()
    for values, option in ((args.labels, "--labels"), (args.traces, "--traces")):
        for value in values:
            if not Path(value).exists():
                raise UserError(f"{option} {value}: no such file or directory")
    defined = conditions.load(args.conditions)
    tables = _folder(args.tables, "--tables")
    if not (tables / "rates.csv").is_file():  # the headline is made of it: without it, most likely the wrong folder
        raise UserError(f"--tables {args.tables}: no rates.csv in it (write the tables with 'seam.py tables')")
    folder = read_folder(tables)  # every table once, checked against its spec, before the long read below
    review = _folder(args.review, "--review") if args.review is not None else None
    occurrence = _folder(args.occurrence, "--occurrence") if args.occurrence is not None else None
    if Path(args.out).is_dir():
        raise UserError(f"--out {args.out}: is a directory; give the HTML file to write")
    print("report: reading the benchmark, labels and traces", file=sys.stderr)
    with nogc.paused():  # millions of long-lived objects and no cycles worth collecting: 2 of 5 s at 20 models
        benchmark = dataset.load()
        models = cases.load(files_named(args.labels, "label"), files_named(args.traces, "trace"), benchmark,
                            defined)
        for path in folder.unknown:
            print(f"report: warning: {path}: not a table of 'seam.py tables' or 'seam.py validity'; left out of "
                  "the page", file=sys.stderr)
        if warning := _other_models(folder, tuple(m.model for m in models)):
            print(f"report: warning: {warning}", file=sys.stderr)
        text = page(Inputs(models, benchmark, folder, review, defined, occurrence))
    write_text(args.out, text)  # a failure says the old page is unchanged (or that none was written)
    total = sum(len(m.cases) for m in models)
    size = len(text.encode("utf-8"))
    counted = f"{len(models)} model" + ("" if len(models) == 1 else "s")
    print(f"wrote {args.out}: {counted}, {total} cases, {size / 1e6:.1f} MB "
          f"({time.monotonic() - started:.1f} s)")
    return 0


def _other_models(folder, models: tuple[str, ...]) -> str | None:
    """What is wrong when the tables are not those of the labels' models (the page would mix two releases).

    A warning, not an error: a page of more models than the tables (perf/report_page.py's stand-in) is useful.
    """
    from stats.schema import records

    in_tables = sorted({row.model for row in records(folder.rates)})
    if in_tables == sorted(models):
        return None
    return (f"{folder.path / 'rates.csv'} has the models {', '.join(in_tables) or 'none'}, the labels "
            f"{', '.join(sorted(models))}: the headline and figures are not those of the cases shown")


def _folder(value: str, option: str) -> Path:
    path = Path(value)
    if not path.is_dir():
        raise UserError(f"{option} {value}: no such directory")
    return path
