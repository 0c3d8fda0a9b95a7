"""The `run` subcommand: ask a model the benchmark's requests and append the answers to a trace."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from pathlib import Path

from common.argtypes import condition_file, existing_file, names, positive_float, positive_int, selection_spellings
from common.plural import plural

RUN_EPILOG = """\
examples:
  # look first: the exact request bodies for two clusters, nothing sent (a released model's config)
  python seam.py run data/models/smollm2-135m.toml --first 2 --dry-run
  # what it will cost, before it starts (no network): requests and tokens
  python seam.py run data/models/smollm2-135m.toml --out runs/smollm2-135m.jsonl --estimate
  # the whole benchmark (1,800 requests) into a folder of yours (runs/ is git-ignored), from the local
  # llama.cpp server this config names (bash scripts/serve_local.sh starts it); rerun the same to resume
  python seam.py run data/models/smollm2-135m.toml --out runs/smollm2-135m.jsonl
  # some clusters and conditions only (the same selection options as seam.py prompts)
  python seam.py run data/models/smollm2-135m.toml --out runs/smollm2-part.jsonl --only clean,newline \\
      --sources austen,pyfaq --first 5
  python seam.py run data/models/smollm2-135m.toml --out runs/smollm2-part.jsonl \\
      --cluster-ids humaneval-011,austen-007
  # your own model: a config of yours (my-model.toml, every key: docs/RUNNER.md) and, for dollars, a
  # prices file of yours (prices.toml, USD per million tokens: seam.py usage --help shows one)
  python seam.py run my-model.toml --out runs/my-model.jsonl --estimate --prices prices.toml
  # refuse to start if the estimate's upper end (95th-percentile completions) is over $5
  python seam.py run my-model.toml --out runs/my-model.jsonl --prices prices.toml --max-cost 5
  # through the provider's batch API (OpenAI, Anthropic, Gemini): about half the price, within 24 h;
  # stopped (Ctrl+C, a kill) it resumes the same batch when the same command is run again
  python seam.py run my-model.toml --out runs/my-model.jsonl --batch
  python seam.py run my-model.toml --out runs/my-model.jsonl --batch --batch-cancel   # cancel it
  # request rows from a file instead of the benchmark (here two clusters' rows, as seam.py prompts writes them)
  python seam.py prompts --cluster-ids humaneval-011,austen-007 > my-requests.jsonl
  python seam.py run data/models/smollm2-135m.toml --requests my-requests.jsonl --out runs/my-requests.jsonl
  # the conditions of a condition file (docs/CONDITIONS.md), into a trace file of their own
  python seam.py run data/models/smollm2-135m.toml --conditions data/conditions/example.toml \\
      --only xml-tags,fenced,only-revised --out runs/example/traces/smollm2-135m.jsonl
  # later turns (docs/RUNNER.md, "System prompts and later turns"): each holds the model's own clean
  # reply, read from the trace of its clean run (here the released one); look at the bodies first
  python seam.py run data/models/qwen2.5-coder-0.5b.toml --conditions data/conditions/turns.toml \\
      --only later-turn,later-control --replies data/traces/qwen2.5-coder-0.5b.jsonl --first 2 --dry-run

Rerunning the same command resumes: ids that already have a final row are skipped.
Exit status: 0 when every request asked got an answer (ok or unusable), 1 when some
failed, 2 for a usage or input error, or a run stopped early (401/403/404, server down).
Formats: docs/RUNNER.md.
"""


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="ask a model every benchmark request and append its answers to a trace file",
        description="Ask a model (OpenAI-compatible, Anthropic or Gemini) every selected request and "
                    "append one trace row per request to --out, resuming where a previous run stopped.",
        epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", metavar="CONFIG", help="the model's TOML config (docs/RUNNER.md)")
    parser.add_argument("--out", metavar="TRACES.jsonl",
                        help="trace file to append to (required unless --dry-run)")
    parser.add_argument("--requests", metavar="FILE.jsonl",
                        help="request rows to run instead of rendering the committed benchmark")
    parser.add_argument("--replies", metavar="TRACE", type=existing_file,
                        help="the model's own trace (the same config's run of the opening requests) whose outputs "
                             "a later-turn condition with reply = \"model\" puts back as the assistant's turn; "
                             "requests whose reply is missing or unusable there are left out, and counted; not "
                             "with --requests, whose rows hold their turns already")
    parser.add_argument("--conditions", metavar="FILE", type=condition_file,
                        help="a condition file (TOML) defining more conditions (docs/CONDITIONS.md); without it "
                             "only the built-in ones exist")
    parser.add_argument("--only", metavar="C[,C...]", type=names,
                        help="only these conditions (built-in: clean, newline, blank, boundary, mitigation, "
                             "native; or a condition file's)")
    parser.add_argument("--sources", metavar="S[,S...]", type=names, help="only clusters from these sources")
    parser.add_argument("--cluster-ids", metavar="ID[,ID...]", type=names,
                        help="only these clusters (ids such as humaneval-007)")
    parser.add_argument("--first", metavar="N", type=positive_int,
                        help="only the first N clusters (after the source and cluster filters)")
    selection_spellings(parser)  # --clusters N (now --first N), --source, --condition, --cluster: refused with a hint
    parser.add_argument("--dry-run", action="store_true",
                        help="print the exact requests (URL, headers without the key, body) and send nothing")
    parser.add_argument("--check-connection", action="store_true",
                        help="send the first request once (no retry) and say what came back, recording nothing "
                             "(it is paid for); with --dry-run the bodies are printed too")
    parser.add_argument("--retry-unusable", action="store_true",
                        help="ask again the requests whose final row is unusable (history kept)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="ask again the requests whose final row is failed (history kept)")
    parser.add_argument("--estimate", action="store_true",
                        help="print what the run would cost (requests, prompt and completion tokens, and with "
                             "--prices the cost) and send nothing; ids already final in --out are left out")
    parser.add_argument("--prices", metavar="FILE",
                        help="a prices file (TOML, USD per million tokens per model name; runner/prices.py)")
    parser.add_argument("--max-cost", metavar="USD", type=positive_float,
                        help="refuse to start when the estimate's upper end (the 95th-percentile completions) "
                             "costs more than this; needs --prices with a price for the model")
    parser.add_argument("--batch", action="store_true",
                        help="send the requests through the provider's batch API (openai, anthropic, gemini) and "
                             "wait for the results; the batch is journaled in OUT.batches, so rerunning the same "
                             "command resumes it and never submits an id twice")
    parser.add_argument("--batch-cancel", action="store_true",
                        help="with --batch: cancel this trace's open batches at the provider (what they finished is "
                             "still written), submitting nothing new")
    parser.add_argument("--batch-poll", metavar="SECONDS", type=positive_float,
                        help="with --batch: seconds between the first status checks, growing by half each time "
                             "up to 5 minutes (default 10)")
    parser.add_argument("--move-torn", action="store_true",
                        help="if the trace ends in a torn line (a crash mid-write), move it to "
                             "OUT.torn-<time> and continue (with --dry-run: show what would then be asked, "
                             "moving nothing)")
    parser.set_defaults(func=run_command)


def estimated(config, requests, args):
    """The estimate of what this run would send (the ids already final in --out left out)."""
    from pathlib import Path

    from common.errors import UserError
    from common.traces import scan, torn_message
    from runner.batch.journal import in_flight
    from runner.estimate import estimate, released_completions
    from runner.prices import load_prices
    from runner.run import plan

    todo, skipped = requests, 0
    if args.out:
        trace = scan(args.out)
        if trace.torn:
            raise UserError(torn_message(Path(args.out), trace.torn))
        todo, skipped = plan(config, requests, trace, retry_unusable=args.retry_unusable,
                             retry_failed=args.retry_failed)
        at_provider = in_flight(args.out)  # in a batch still open: paid for already, not sent again
        todo = [request for request in todo if request.id not in at_provider]
    price = load_prices(args.prices).get(config.name)
    return estimate(todo, skipped=skipped, max_tokens=config.max_tokens, price=price,
                    completions=released_completions(), batch=args.batch)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill PID`), raised in the main thread as Ctrl+C raises KeyboardInterrupt, so that a run stops
    the same way: the rows written are kept, requests in flight are asked again on the next run."""


@contextlib.contextmanager
def sigterm_stops():
    """While the block runs, SIGTERM raises `Terminated`; a second SIGTERM kills as it always did."""
    def terminated(signum, frame):
        signal.signal(signal.SIGTERM, previous)
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread (a caller's): SIGTERM keeps its own handling
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def within_budget(found, max_cost: float, model: str) -> tuple[bool, str]:
    """Whether a run with this estimate would start under --max-cost, and the line that says so."""
    from runner.estimate import dollars
    from runner.prices import quoted

    if found.price is None:
        return False, (f"--max-cost needs a price for model {model!r}: give --prices FILE with a "
                       f"[{quoted(model)}] table")
    upper = found.upper_cost
    if upper > max_cost:
        return False, (f"the estimate's upper end is {dollars(upper)} (95th-percentile completions; "
                       f"{dollars(found.cost(found.completion_median))} at the median), over --max-cost "
                       f"{dollars(max_cost)}: nothing was sent (see --estimate)")
    return True, f"the estimate's upper end, {dollars(upper)}, is within --max-cost {dollars(max_cost)}"


def _same_file(a, b) -> bool:
    try:
        return Path(a).samefile(b)
    except OSError:  # the trace does not exist yet
        return False


def run_command(args) -> int:
    from benchmark import conditions
    from common.errors import UserError
    from runner import selection
    from runner.config import load_config
    from runner.run import dry_run, run

    if (args.batch_cancel or args.batch_poll is not None) and not args.batch:
        raise UserError("--batch-cancel and --batch-poll go with --batch")
    if args.check_connection and (args.estimate or args.batch):
        raise UserError("--check-connection sends one request to the synchronous endpoint: it goes without "
                        "--estimate (which sends nothing) and --batch")
    config = load_config(args.config)
    sends = not (args.dry_run or args.estimate or args.check_connection)
    if sends and args.move_torn and args.replies and args.out and _same_file(args.replies, args.out):
        # The replies are read from the trace this run appends to: its torn last line is moved aside first, as
        # the run would move it, or reading the replies would refuse the torn line that --move-torn is for.
        from runner.run import settle_torn

        settle_torn(Path(args.out), sys.stderr)
    requests, left_out = selection.chosen(
        model=config.name, requests_file=args.requests, replies_file=args.replies, conditions=args.only,
        sources=args.sources, cluster_ids=args.cluster_ids, limit=args.first, defined=conditions.load(args.conditions))
    if left_out:  # the others go ahead: a rerun with the replies collected adds the rest
        print(f"run: {left_out}", file=sys.stderr)
    if args.estimate or args.max_cost is not None:
        found = estimated(config, requests, args)
        if args.estimate:
            for line in found.lines(config.name, config.max_tokens):
                print(line)
            if args.max_cost is not None:  # what the same command without --estimate would do
                starts, why = within_budget(found, args.max_cost, config.name)
                print(f"  --max-cost: {why}: the run would {'start' if starts else 'be refused'}")
            return 0
        starts, why = within_budget(found, args.max_cost, config.name)
        if not starts:
            raise UserError(why)
    if args.dry_run or args.check_connection:
        if args.dry_run:
            count = dry_run(config, requests, args.out, sys.stdout, retry_unusable=args.retry_unusable,
                            retry_failed=args.retry_failed, move_torn=args.move_torn, log=sys.stderr)
            print(f"run: dry run, {count} {plural(count, 'request')} printed, none sent", file=sys.stderr)
        if args.check_connection:
            from runner.check import check_connection
            from runner.run import to_send

            todo = to_send(config, requests, args.out, retry_unusable=args.retry_unusable,
                           retry_failed=args.retry_failed, move_torn=args.move_torn,
                           log=None if args.dry_run else sys.stderr)
            print(check_connection(config, todo, requests), file=sys.stderr)
        return 0
    if not args.out:
        raise UserError("--out TRACES.jsonl is required (or use --dry-run)")
    try:
        with sigterm_stops():
            if args.batch:
                from runner.batch.run import PollPolicy, run_batch

                summary = run_batch(config, requests, args.out, retry_unusable=args.retry_unusable,
                                    retry_failed=args.retry_failed, move_torn=args.move_torn,
                                    cancel=args.batch_cancel,
                                    poll=PollPolicy(first_s=args.batch_poll or PollPolicy.first_s))
            else:
                summary = run(config, requests, args.out, retry_unusable=args.retry_unusable,
                              retry_failed=args.retry_failed, move_torn=args.move_torn)
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl+C"
        print(f"run: stopped by {how}; the rows written so far are kept in {args.out}, and requests in flight "
              "are asked again (seam.py usage counts them as sent): run the same command again to resume",
              file=sys.stderr)
        if isinstance(exc, Terminated):
            return 128 + signal.SIGTERM
        raise
    if summary.unreachable:  # nothing was sent or recorded: one line says why
        raise UserError(summary.stopped)
    counts = summary.counts
    print(f"run: wrote {summary.asked} {plural(summary.asked, 'row')} to {args.out} (ok {counts.get('ok', 0)}, "
          f"unusable {counts.get('unusable', 0)}, failed {counts.get('failed', 0)}); {summary.skipped} already done",
          file=sys.stderr)
    if summary.stopped and args.batch:
        print(f"run: {summary.stopped}; rerun the same command to ask those requests again", file=sys.stderr)
        return 1
    if summary.stopped:
        raise UserError(f"run stopped early, the other requests would fail the same way: {summary.stopped}; "
                        "fix it, then rerun with --retry-failed")
    if counts.get("unusable"):
        print("run: rerun with --retry-unusable to ask the unusable ones again", file=sys.stderr)
    if counts.get("failed"):
        print("run: rerun with --retry-failed to ask the failed ones again", file=sys.stderr)
        return 1
    return 0

