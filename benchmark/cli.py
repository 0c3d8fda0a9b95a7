"""Subcommands `build`, `check` and `prompts`."""

from __future__ import annotations

import argparse
import sys
import time

from common.argtypes import condition_file, existing_file, names, positive_int, selection_spellings

BUILD_EXAMPLE = """example:
  pip install --no-deps -r requirements-build.txt && bash scripts/fetch_debian_sources.sh
  python seam.py build --verify   # rebuild in memory, compare with data/benchmark/ byte for byte
"""
CHECK_EXAMPLE = """example:
  python seam.py check
  python seam.py check --conditions data/conditions/example.toml   # also a condition file's layouts
"""
PROMPTS_EXAMPLE = """example:
  python seam.py prompts --sources humaneval --only newline,clean | head -n 2
  python seam.py prompts --cluster-ids humaneval-011,austen-007 > part.jsonl   # given clusters, every condition
  python seam.py prompts --conditions data/conditions/example.toml --only xml-tags,fenced,only-revised \\
      > example-requests.jsonl                                     # 900 rows of a condition file's conditions
  python seam.py prompts --conditions data/conditions/turns.toml --only later-turn,later-control \\
      --replies data/traces/qwen2.5-coder-0.5b.jsonl > turns.jsonl # later turns hold that model's clean replies
"""
CONDITIONS_HELP = "a condition file (TOML) defining more conditions and contrasts (docs/CONDITIONS.md)"


def add_commands(subparsers) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    build = subparsers.add_parser("build", help="regenerate data/benchmark/ from the installed source packages",
                                  description="Regenerate the benchmark from the source packages, byte for byte.",
                                  epilog=BUILD_EXAMPLE, formatter_class=raw)
    build.add_argument("--verify", action="store_true",
                       help="do not write; exit 1 if the rebuilt files differ from the committed ones")
    build.set_defaults(func=run_build)

    check = subparsers.add_parser("check", help="verify the committed benchmark's counts, invariants and checksums",
                                  description="Verify data/benchmark/ and print a short summary.",
                                  epilog=CHECK_EXAMPLE, formatter_class=raw)
    check.add_argument("--conditions", metavar="FILE", type=condition_file,
                       help=CONDITIONS_HELP + "; their layouts are checked on every cluster too")
    check.set_defaults(func=run_check)

    prompts = subparsers.add_parser("prompts", help="write every rendered request as JSON Lines to stdout",
                                    description="One row per (cluster, condition); fields in docs/FORMATS.md.",
                                    epilog=PROMPTS_EXAMPLE, formatter_class=raw)
    prompts.add_argument("--conditions", metavar="FILE", type=condition_file, help=CONDITIONS_HELP)
    prompts.add_argument("--only", metavar="C[,C...]", type=names,
                         help="keep these conditions (default: every condition defined)")
    prompts.add_argument("--sources", metavar="S[,S...]", type=names, help="keep clusters from these sources")
    prompts.add_argument("--cluster-ids", metavar="ID[,ID...]", type=names,
                         help="keep these clusters (ids such as humaneval-007)")
    prompts.add_argument("--first", metavar="N", type=positive_int,
                         help="keep the first N clusters (after the source and cluster filters)")
    prompts.add_argument("--replies", metavar="TRACE", type=existing_file,
                         help="the model's trace file whose outputs a later-turn condition with reply = \"model\" "
                              "puts back as the assistant's turn (docs/CONDITIONS.md, later turns)")
    selection_spellings(prompts)  # --source, --condition, --cluster: refused, naming the option to use
    prompts.set_defaults(func=run_prompts)


def run_build(args) -> int:
    from benchmark.build import build_files, differences, write
    from benchmark.dataset import DATA_DIR

    started = time.monotonic()
    print("reading the source packages:", file=sys.stderr)
    files = build_files()
    if args.verify:
        found = differences(files)
        for line in found:
            print(line, file=sys.stderr)
        verdict = "differs" if found else "is byte-identical to the rebuild"
        print(f"data/benchmark/ {verdict} ({time.monotonic() - started:.1f} s)", file=sys.stderr)
        return 1 if found else 0
    write(files)
    print(f"wrote {len(files)} files to {DATA_DIR} ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    return 0


def run_check(args) -> int:
    from benchmark import conditions
    from benchmark.check import check

    result = check(conditions=conditions.load(args.conditions))
    for line in result.summary:
        print(line)
    for problem in result.problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"check: {'FAILED, ' + str(len(result.problems)) + ' problem(s)' if result.problems else 'ok'}")
    return 1 if result.problems else 0


def run_prompts(args) -> int:
    from benchmark import conditions
    from benchmark.dataset import requests
    from benchmark.replies import Replies
    from common.jsonl import dumps

    replies = Replies.read(args.replies) if args.replies else None
    chosen = requests(sources=args.sources, conditions=args.only, cluster_ids=args.cluster_ids, limit=args.first,
                      defined=conditions.load(args.conditions), replies=replies)
    out = sys.stdout
    for request in chosen:
        out.write(dumps(request.to_row()))
    out.flush()
    left_out = replies.summary() if replies is not None else None
    if left_out:
        print(f"prompts: {left_out}", file=sys.stderr)
    return 0
