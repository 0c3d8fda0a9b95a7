"""The `review` subcommand: `review sample`, `review serve` and `review report` (docs/REVIEW.md)."""

from __future__ import annotations

import argparse

from common.argtypes import fraction, non_negative_int, port, positive_int

DEFAULT_PORT = 8765


def add_commands(subparsers) -> None:
    """Add `review` with its three steps to seam.py's subcommands.

    >>> parser = argparse.ArgumentParser(prog="seam.py")
    >>> add_commands(parser.add_subparsers())
    >>> args = parser.parse_args(["review", "sample", "l.jsonl", "t.jsonl", "--n", "150", "--seed", "1",
    ...                           "--out", "r.jsonl"])
    >>> args.labels, args.traces, args.n, args.seed, args.positives_share
    ('l.jsonl', 't.jsonl', 150, 1, 0.3)
    """
    parser = subparsers.add_parser(
        "review",
        help="blinded human review of the kit's verdicts: draw a sample, judge it on a local page, report",
        description="A blinded review measures the scorer's precision and recall on your own traces:\n"
                    "  sample  draws a stratified sample of usable treatment outputs into a review file\n"
                    "  serve   shows one case at a time on http://127.0.0.1 (no verdict shown) and appends\n"
                    "          each answer to the review file as it is given\n"
                    "  report  joins the kit's verdicts and writes precision, weighted recall, agreement,\n"
                    "          per-condition miss rates and (with --second) Cohen's kappa\n"
                    "See docs/REVIEW.md.",
        epilog="examples (a review of the released SmolLM2 labels, in a folder of yours; each step's --help has "
               "more):\n"
               "  python seam.py review sample data/labels/smollm2-135m.jsonl data/traces/smollm2-135m.jsonl \\\n"
               "      --n 150 --seed 1 --out runs/smollm2.review.jsonl\n"
               "  python seam.py review serve runs/smollm2.review.jsonl --reviewer ada   # then open "
               "http://127.0.0.1:8765/\n"
               "  python seam.py review report runs/smollm2.review.jsonl --labels data/labels/smollm2-135m.jsonl \\\n"
               "      --out runs/smollm2-review",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    steps = parser.add_subparsers(dest="step", metavar="STEP", required=True)

    sample = steps.add_parser(
        "sample", help="draw the stratified sample into a new review file",
        description="Draw a stratified random sample (model x kit verdict x genre x condition) of usable\n"
                    "treatment outputs. The file records the seed, the design and each stratum's population\n"
                    "and draw, and the SHA-256 of the labels and traces; it holds no kit verdict per case.",
        epilog="example:\n  python seam.py review sample data/labels/smollm2-135m.jsonl "
               "data/traces/smollm2-135m.jsonl \\\n      --n 150 --seed 1 --out runs/smollm2.review.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sample.add_argument("labels", metavar="LABELS", help="a label file, or a directory of *.jsonl label files")
    sample.add_argument("traces", metavar="TRACES", help="the trace file the labels were made from, or a "
                                                          "directory of them (one per model)")
    sample.add_argument("--n", type=positive_int, required=True, help="cases to draw")
    sample.add_argument("--seed", type=non_negative_int, required=True, help="seed of the draw (recorded)")
    sample.add_argument("--positives-share", type=fraction, default=0.3, metavar="F",
                        help="share of the cases drawn from the kit's positives (default 0.3: more negatives, "
                             "where misses hide)")
    sample.add_argument("--requests", default=None, metavar="FILE",
                        help="request rows the traces answered (default: the committed benchmark)")
    sample.add_argument("--out", required=True, metavar="REVIEW.jsonl", help="the review file to create (never "
                                                                            "overwritten)")
    sample.set_defaults(func=run_sample)

    serve = steps.add_parser(
        "serve", help="serve the review page on 127.0.0.1 and save each answer as it is given",
        description="Serve the review page for one reviewer on 127.0.0.1. Each answer is appended to the\n"
                    "review file (fsync) before the page moves on; stop at any time and start again to\n"
                    "continue at the first unanswered case. The page shows no verdict, tier or evidence,\n"
                    "and the condition only with --show-condition.",
        epilog="example:\n  python seam.py review serve runs/smollm2.review.jsonl --reviewer ada\n"
               "  then open http://127.0.0.1:8765/ (keys: a / n / u, 1-7, t, Enter; listed on the page)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("review", metavar="REVIEW.jsonl", help="the review file (from 'review sample')")
    serve.add_argument("--port", type=port, default=DEFAULT_PORT,
                       help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.add_argument("--reviewer", default=None, metavar="NAME",
                       help="who answers (needed for the first answer; must match the file's reviewer after)")
    serve.add_argument("--show-condition", action="store_true",
                       help="also show each case's condition and request id (unblinds the condition)")
    serve.set_defaults(func=run_serve)

    report = steps.add_parser(
        "report", help="unblind: precision, weighted recall, agreement and miss rates per condition",
        description="Join the kit's verdicts from the labels the sample was drawn from (checked by SHA-256)\n"
                    "and write review_*.csv and .md and review_provenance.json into DIR. Same files in,\n"
                    "same bytes out. With --rescored, the verdicts come from other labels of the same\n"
                    "outputs (a rescore), measured on the same review; the design stays the draw's.",
        epilog="example:\n"
               "  # your review (review sample, then serve), against the labels it was drawn from\n"
               "  python seam.py review report runs/smollm2.review.jsonl --labels data/labels/smollm2-135m.jsonl \\\n"
               "      --out runs/smollm2-review\n"
               "  # with a second reviewer's copy of the same sample: adds Cohen's kappa between the two\n"
               "  python seam.py review report runs/smollm2.review.jsonl --labels data/labels/smollm2-135m.jsonl \\\n"
               "      --second runs/smollm2.review.bob.jsonl --out runs/smollm2-review-two\n"
               "  # a review of labels rescored since the draw (the released one): drawn from the labels of the\n"
               "  # draw, measured on the rescored ones\n"
               "  python seam.py review report data/review/smollm2-135m.review.jsonl \\\n"
               "      --labels data/review/smollm2-135m.drawn-labels.jsonl --rescored "
               "data/labels/smollm2-135m.jsonl \\\n"
               "      --out runs/smollm2-review-released",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    report.add_argument("review", metavar="REVIEW.jsonl", help="the answered review file")
    report.add_argument("--labels", required=True, nargs="+", metavar="LABELS",
                        help="the label file(s) the sample was drawn from")
    report.add_argument("--rescored", default=None, nargs="+", metavar="LABELS",
                        help="other labels of the same outputs (e.g. rescored by a later scorer_version): the "
                             "kit's verdicts, tiers and evidence are taken from them, the strata and weights from "
                             "--labels; every case must be in them; every table says so")
    report.add_argument("--second", default=None, metavar="OTHER.jsonl",
                        help="a second reviewer's copy of the same sample, for agreement and Cohen's kappa")
    report.add_argument("--out", required=True, metavar="DIR", help="directory for the report files")
    report.set_defaults(func=run_report)


def run_sample(args) -> int:
    from pathlib import Path

    from common.errors import UserError
    from common.files import write_bytes
    from common.jsonl import dumps
    from review import inputs
    from review.records import FileRef
    from review.sample import check_outputs, draw_sample

    out = Path(args.out)
    if out.exists():
        raise UserError(f"{out}: exists; a review file is never overwritten (it may hold answers): choose "
                        "another --out")
    labels, label_refs = inputs.load_labels([args.labels])
    traces, trace_refs = inputs.load_traces([args.traces])
    requests = Path(args.requests) if args.requests else None
    asked, benchmark_sha256 = inputs.load_asked(requests)
    request_ref = None if requests is None else FileRef(requests.as_posix(), inputs.sha256_of(requests))
    missing = sorted({model for model, _ in labels} - set(traces))
    if missing:
        raise UserError(f"{args.traces}: no trace file for model(s) {', '.join(missing)} of the labels")
    used = tuple(ref for ref in trace_refs if any(model == ref.model for model, _ in labels))
    sample = draw_sample(labels, n=args.n, seed=args.seed, positives_share=args.positives_share,
                         label_refs=label_refs, trace_refs=used, requests=request_ref,
                         benchmark_sha256=benchmark_sha256)
    check_outputs(sample, traces, asked, benchmark_sha256)
    write_bytes(out, "".join(dumps(row) for row in sample.rows()).encode("utf-8"))
    strata = sample.header.strata
    positives = sum(s.drawn for s in strata if s.verdict == "absorbed")
    print(f"review: drew {len(sample.cases)} cases ({positives} of the kit's positives, "
          f"{len(sample.cases) - positives} of its negatives) from {sum(s.population for s in strata)} usable "
          f"outputs in {sum(s.drawn > 0 for s in strata)} of {len(strata)} strata; wrote {out}")
    print(f"next: python seam.py review serve {out} --reviewer NAME")
    return 0


def run_serve(args) -> int:
    import sys

    from common.answerserver import AnswerServer
    from review import store
    from review.server import open_session

    with store.locked(args.review):  # before reading: a torn tail is only moved aside when no server writes
        session = open_session(args.review, args.reviewer, show_condition=args.show_condition)
        if session.moved_aside is not None:
            print(f"review: moved a torn last line (never saved as an answer) to {session.moved_aside}",
                  file=sys.stderr)
        server = AnswerServer(session, args.port)
        blind = "condition shown" if args.show_condition else "blinded"
        server.serve_until_stopped(f"review: {session.path}, reviewer {session.reviewer}, {len(session.latest)} of "
                                   f"{session.total} answered ({blind}): open {server.url}  (Ctrl+C stops; every "
                                   "answer is already saved)")
    print(f"review: stopped; {len(session.latest)} of {session.total} answered", flush=True)
    return 0


def run_report(args) -> int:
    from pathlib import Path

    from review.report import build, write

    report = build(args.review, args.labels, args.second, args.rescored)
    out = Path(args.out)
    written = write(report, out)
    for line in report.summary:
        print(line)
    print(f"wrote {len(written)} files to {out}")
    return 0
