"""The `export` and `import` subcommands: the benchmark as a harness's task, and the harness's logs as traces."""

from __future__ import annotations

import argparse

from common.argtypes import condition_file, existing_file, names, positive_int, selection_spellings
from harness import TARGETS

EXPORT_EPILOG = """\
examples:
  # two clusters (12 requests) as an inspect_ai task: runs/inspect/seam.jsonl, seam_task.py and README.md,
  # whose command runs it against a local OpenAI-compatible server
  python seam.py export --to inspect --out runs/inspect --first 2 --max-tokens 1024
  # every request as an OpenAI Batch API input file (runs/batch/batch_input.jsonl) for one model
  python seam.py export --to openai-batch --out runs/batch --model gpt-4o-mini --max-tokens 4096
  # one cluster (6 requests) as a promptfoo config for a local server (README.md: promptfoo eval ... -o out.json)
  python seam.py export --to promptfoo --out runs/promptfoo --first 1 --model my-model \\
      --base-url http://127.0.0.1:8080/v1 --max-tokens 1024
  # one cluster as an lm-evaluation-harness task (runs/lmeval/seam.yaml, seam_requests.jsonl, README.md: run it
  # with lm_eval --model local-chat-completions --include_path runs/lmeval --tasks seam --apply_chat_template)
  python seam.py export --to lm-eval --out runs/lmeval --first 1 --model my-model --max-tokens 1024
  # a condition file's conditions (docs/CONDITIONS.md); the import then needs the same --conditions
  python seam.py export --to inspect --out runs/inspect-example --conditions data/conditions/example.toml \\
      --only xml-tags,fenced
  # later turns that hold a model's own clean replies, read from its trace (the import needs the same --replies)
  python seam.py export --to inspect --out runs/inspect-turns --conditions data/conditions/turns.toml \\
      --only later-turn,later-control --replies data/traces/qwen2.5-coder-0.5b.jsonl

Each request is sent as the kit's runner sends it: its conversation (one user message, or with a condition's
system prompt and earlier turns before it; lm-eval takes one message only), temperature 0, max_tokens as given,
no stop sequences. The README.md written beside the files says how to run them and
import what comes back (seam.py import). docs/HARNESSES.md.
"""

IMPORT_EPILOG = """\
examples:
  # an inspect_ai log (.eval, or .json) of the exported task, as a trace file; then beside the release
  python seam.py import runs/inspect/logs/*.eval --out runs/my-model.jsonl --model my-model
  python seam.py compare runs/my-model.jsonl --out runs/compare
  # lm-eval's --log_samples output (its results_*.json beside each samples file names the model and version)
  python seam.py import runs/lmeval/results/*/samples_seam_*.jsonl --out runs/my-model.jsonl --model my-model
  # an OpenAI batch: its input file (the prompts) with its output and error files
  python seam.py import runs/batch/batch_input.jsonl runs/batch/output.jsonl runs/batch/errors.jsonl \\
      --out runs/gpt-4o-mini.jsonl
  # promptfoo's output of the exported config (promptfoo eval ... -o out.json), the model named by its provider
  python seam.py import runs/promptfoo/out.json --out runs/my-model.jsonl

Every prompt is checked against the kit's request for its id (its whole conversation; --replies TRACE: the
trace a later turn's model replies were read from); a request found twice (two logs, two epochs) is refused
unless --epoch N picks one epoch. Rows are the runner's (status ok, unusable or failed by its rules), with the
harness, its version and its log in request.harness. Nothing is written unless every log reads whole.
inspect's .eval files are zstd-compressed: Python before 3.14 reads them with the optional package zstandard
(or convert the log: inspect log convert LOG --to json). docs/HARNESSES.md.
"""

REPLIES_HELP = ("the model's trace file whose outputs a later-turn condition with reply = \"model\" puts back as the "
                "assistant's turn (docs/CONDITIONS.md, later turns), as seam.py prompts --replies")


def add_commands(subparsers) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    export = subparsers.add_parser(
        "export", help="write the selected requests as a harness's task (inspect_ai, promptfoo, lm-eval) or batch "
                       "file (OpenAI Batch)",
        description="Write the selected requests in a harness's own input format into DIR, each request sent "
                    "as the kit's runner sends it, with a README.md saying how to run it and import the result.",
        epilog=EXPORT_EPILOG, formatter_class=raw)
    export.add_argument("--to", required=True, choices=TARGETS,
                        help="inspect: an inspect_ai dataset and task; openai-batch: an OpenAI Batch API input file; "
                             "promptfoo: a promptfoo config with its tests; lm-eval: an lm-evaluation-harness task "
                             "YAML with its dataset")
    export.add_argument("--out", required=True, metavar="DIR", help="the folder to write (not inside data/)")
    export.add_argument("--max-tokens", metavar="N", type=positive_int, default=None,
                        help="the output limit of every request (default 4096, as the runner's configs)")
    export.add_argument("--model", metavar="NAME",
                        help="the model: required for openai-batch and promptfoo (every body names it); for inspect, "
                             "only the README's commands name it (lm-eval: --model_args model=NAME)")
    export.add_argument("--base-url", metavar="URL",
                        help="the OpenAI-compatible server (default http://127.0.0.1:8080/v1): promptfoo's config asks "
                             "it (apiBaseUrl); the inspect and lm-eval READMEs' commands name it (not for "
                             "openai-batch)")
    export.add_argument("--max-tokens-field", choices=("max_tokens", "max_completion_tokens"), default=None,
                        help="openai-batch only: the body's name for the limit (default max_tokens; "
                             "max_completion_tokens for models that refuse max_tokens)")
    export.add_argument("--conditions", metavar="FILE", type=condition_file,
                        help="a condition file (TOML) defining more conditions (docs/CONDITIONS.md)")
    export.add_argument("--only", metavar="C[,C...]", type=names, help="only these conditions")
    export.add_argument("--sources", metavar="S[,S...]", type=names, help="only clusters from these sources")
    export.add_argument("--cluster-ids", metavar="ID[,ID...]", type=names,
                        help="only these clusters (ids such as humaneval-007)")
    export.add_argument("--first", metavar="N", type=positive_int,
                        help="only the first N clusters (after the source and cluster filters)")
    export.add_argument("--replies", metavar="TRACE", type=existing_file, help=REPLIES_HELP)
    selection_spellings(export)
    export.set_defaults(func=run_export)

    imported = subparsers.add_parser(
        "import", help="read a harness's logs (inspect_ai .eval/.json, OpenAI Batch files, promptfoo's out.json, "
                       "lm-eval's samples) into a trace file",
        description="Read one model's logs of an exported task and write them as the runner's trace rows, "
                    "every prompt checked against the kit's message for its id.",
        epilog=IMPORT_EPILOG, formatter_class=raw)
    imported.add_argument("logs", nargs="+", metavar="LOG",
                          help="inspect_ai logs (.eval, .json), OpenAI Batch files (.jsonl: input, output, errors) or "
                               "lm-eval's samples_seam_*.jsonl (its results_*.json is read from beside each, or given "
                               "too), or promptfoo's output (.json, promptfoo eval -o)")
    imported.add_argument("--out", required=True, metavar="TRACE.jsonl", help="the trace file to write (new)")
    imported.add_argument("--model", metavar="NAME",
                          help="the model's name in the trace (default: the log's, when it is one)")
    imported.add_argument("--conditions", metavar="FILE", type=condition_file,
                          help="the condition file the requests were exported with (docs/CONDITIONS.md)")
    imported.add_argument("--epoch", metavar="N", type=positive_int,
                          help="import this epoch of a task run with --epochs (SEAM asks each request once)")
    imported.add_argument("--replies", metavar="TRACE", type=existing_file,
                          help="the trace the export read a later turn's model replies from (its --replies)")
    imported.set_defaults(func=run_import)


def run_export(args) -> int:
    import sys

    from benchmark import conditions
    from benchmark.dataset import requests as rendered
    from benchmark.replies import Replies
    from harness.export import DEFAULT_MAX_TOKENS, export
    from runner.selection import check_text

    replies = Replies.read(args.replies) if args.replies else None
    requests = rendered(conditions=args.only, sources=args.sources, cluster_ids=args.cluster_ids, limit=args.first,
                        defined=conditions.load(args.conditions), replies=replies)
    for request in requests:  # a hand-made replies trace may hold what no request can carry, as `run` refuses
        if request.earlier:
            check_text(request, f"request {request.id}", f"the replies trace {args.replies}")
    left_out = replies.summary() if replies is not None else None
    if left_out:  # said before the export, which refuses an empty selection
        print(f"export: {left_out}", file=sys.stderr)
    max_tokens = args.max_tokens or DEFAULT_MAX_TOKENS
    written = export(args.to, args.out, requests, max_tokens=max_tokens, model=args.model,
                     field=args.max_tokens_field, conditions=args.conditions, base_url=args.base_url,
                     replies=args.replies)
    print(f"export: wrote {len(requests):,} requests for {args.to} (max_tokens {max_tokens}): "
          f"{', '.join(map(str, written))}", file=sys.stderr)
    return 0


def run_import(args) -> int:
    from harness.importer import import_logs

    import_logs(args.logs, args.out, model=args.model, conditions=args.conditions, epoch=args.epoch,
                replies=args.replies)
    return 0  # failed requests are counted in the summary line: the import itself went through
