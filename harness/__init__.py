"""SEAM where evaluations already run: the benchmark exported as a harness's task, and its logs imported as traces.

`seam.py export --to inspect|openai-batch|promptfoo|lm-eval --out DIR` writes the selected requests in a harness's
own input format (inspect_ai: a JSON Lines dataset and a task file; the OpenAI Batch API: its JSONL input file;
promptfoo: a config, its tests and a prompt function, `harness.promptfoo_task`; lm-eval: a task YAML and its
dataset, `harness.lmeval_task`), each request sent exactly as the kit's runner sends it: its conversation (one user
message, or a condition's system prompt and earlier turns before it: `harness.conversation`; lm-eval's task takes
one message only), temperature 0, the token limit given, no stop sequences (`harness.export`). `seam.py import
LOG... --out TRACE` reads what the harness wrote (inspect_ai's `.eval` and `.json` logs: `harness.inspect_log`;
OpenAI Batch input, output and error files: `harness.batch_log`; promptfoo's `-o out.json`: `harness.promptfoo_log`,
told from an inspect `.json` by `harness.jsonlog`; lm-eval's `--log_samples` files: `harness.lmeval_log`), checks
every prompt against the kit's request for its id, the whole conversation, and writes the trace rows the runner
writes, judged by the runner's own rules and with no credential a log holds (`harness.rows`), so that `score`,
`usage` and `compare` read them as any run. Each row names the harness, its version and its log in
`request.harness`. docs/HARNESSES.md.
"""

# Recorded in every imported row's request.harness.importer; bump it whenever the rows `seam.py import` writes for
# a log it read before would differ. (Conversations, a system prompt and earlier turns, import since version 3
# without a bump: such logs were refused before, and every log that imported then imports to the same bytes but
# the rows' runner_version, which is the runner's row builder's, 5 since then.)
IMPORTER_VERSION = "3"
TASK_NAME = "seam"  # the inspect task the exported seam_task.py defines; a log of another task is refused
DATASET = "seam.jsonl"  # the exported inspect dataset
TASK_FILE = "seam_task.py"
BATCH_INPUT = "batch_input.jsonl"  # the exported OpenAI Batch input file
TARGETS = ("inspect", "openai-batch", "promptfoo", "lm-eval")
