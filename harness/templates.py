"""The text files an export writes besides its data: inspect_ai's task file and each target's README.

They are written as text, never imported by the kit: inspect_ai is the harness's own dependency, not the
kit's. Every value put into them is a number or a JSON/shell-quoted string, so no request or path can change
what the task does.
"""

from __future__ import annotations

import json
import shlex

from harness import BATCH_INPUT, DATASET, TASK_FILE, TASK_NAME

SERVER = "http://127.0.0.1:8080/v1"  # the local server the inspect, promptfoo and lm-eval READMEs name by default

TASK = '''\
"""SEAM (absorption) as an inspect_ai task, written by `seam.py export --to inspect` ({count} requests).

Each sample is one request of the kit: `input` is the exact user message (or, for a condition with a system
prompt or earlier turns, the whole conversation as chat messages: system, user, assistant, user), `id` the kit's
request id. It is sent as the kit's runner sends it: that conversation and nothing else (no system prompt of
inspect's), temperature 0, max_tokens {max_tokens}, no stop sequences. There is no scorer: `seam.py import` reads
the log, checks every prompt against the kit's request and writes the kit's trace rows, which `seam.py compare`
scores (README.md beside this file).
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.solver import generate

DATASET = Path(__file__).resolve().parent / {dataset}
MESSAGES = {{"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}}


def record_to_sample(record: dict) -> Sample:
    given = record["input"]  # the message, or the conversation's chat messages (role, content)
    chat = given if isinstance(given, str) else [MESSAGES[m["role"]](content=m["content"]) for m in given]
    return Sample(input=chat, id=record["id"], metadata=record["metadata"])


@task
def {task}():
    return Task(
        dataset=json_dataset(str(DATASET), record_to_sample),
        solver=generate(),
        config=GenerateConfig(temperature=0, max_tokens={max_tokens}),
        epochs=1,
        fail_on_error=False,  # as the kit's runner: a request that fails is recorded and the run goes on
    )
'''

INSPECT_README = """\
# SEAM for inspect_ai: {count} requests

Written by `python seam.py export --to inspect` (the kit's docs/HARNESSES.md). `{dataset}` holds one sample
per request of the kit (`input`: the exact user message, or a condition's whole conversation as chat messages;
`id`: the kit's request id; `metadata`: its cluster, condition, source and checksums); `{task_file}` is the task:
each request's messages and nothing more, temperature 0, max_tokens {max_tokens}, no stop sequences, no scorer.

Run it from this folder (inspect 0.3.285 on Python 3.11 refuses an absolute path to a task file) against an
OpenAI-compatible server (llama-server, vLLM, Ollama; here at {server}):

    cd {out}
    LOCAL_API_KEY=none inspect eval {task_file} --model openai-api/local/{model} \\
        --model-base-url {server_arg} --max-connections 1 --log-dir logs

Against OpenAI itself, use the Chat Completions API as the kit's runner does (inspect's `openai/` provider
uses the Responses API by default, which llama-server does not serve):

    inspect eval {task_file} --model openai/{model} -M responses_api=false --log-dir logs

`--max-connections 1` keeps a single-slot local server from batching requests together (which changes its
outputs); a hosted API can take more. Do not add `--epochs`, a system message or stop sequences: the import
refuses a log whose prompts are not the kit's and imports one epoch (`--epoch N`). Then, from the kit:

    python seam.py import {logs}/*.eval --out runs/{name}.jsonl --model {name}{conditions}{replies}
    python seam.py compare runs/{name}.jsonl --out runs/compare{conditions}
"""

BATCH_README = """\
# SEAM for the OpenAI Batch API: {count} requests

Written by `python seam.py export --to openai-batch` (the kit's docs/HARNESSES.md). `{batch_input}` is a
Batch API input file: one line per request of the kit, `custom_id` its request id, `body` the exact body the
kit's runner sends to `/v1/chat/completions` (model {model_json}, the request's messages: one user message, or a
condition's system prompt and earlier turns before it; temperature 0, {field} {max_tokens}, no stop sequences).

Submit it, wait for it, and fetch its output (and error) file:

    KEY="Authorization: Bearer $OPENAI_API_KEY"
    curl https://api.openai.com/v1/files -H "$KEY" -F purpose=batch -F file=@{input_path}    # its "id": FILE_ID
    curl https://api.openai.com/v1/batches -H "$KEY" -H "Content-Type: application/json" \\
        -d '{{"input_file_id": "FILE_ID", "endpoint": "/v1/chat/completions", "completion_window": "24h"}}'
    curl https://api.openai.com/v1/batches/BATCH_ID -H "$KEY"    # again until "status": "completed"
    curl https://api.openai.com/v1/files/OUTPUT_FILE_ID/content -H "$KEY" > output.jsonl
    curl https://api.openai.com/v1/files/ERROR_FILE_ID/content -H "$KEY" > errors.jsonl    # if it has one

Then import the input file (it holds the prompts, which the import checks against the kit's messages) with the
output and error files:

    python seam.py import {input_path} output.jsonl errors.jsonl --out runs/{model}.jsonl{conditions}{replies}
    python seam.py compare runs/{model}.jsonl --out runs/compare{conditions}

(`python seam.py run CONFIG --batch` does all of this itself, resuming after a kill.)
"""


def task_file(*, count: int, max_tokens: int) -> str:
    return TASK.format(count=f"{count:,}", max_tokens=int(max_tokens), dataset=json.dumps(DATASET), task=TASK_NAME)


def inspect_readme(*, count: int, max_tokens: int, out: str, model: str, conditions: str | None,
                   server: str = SERVER, replies: str | None = None) -> str:
    return INSPECT_README.format(count=f"{count:,}", dataset=DATASET, task_file=TASK_FILE, max_tokens=max_tokens,
                                 out=shlex.quote(out), model=shlex.quote(model), logs=shlex.quote(f"{out}/logs"),
                                 server=server, server_arg=shlex.quote(server), name=shlex.quote(file_name(model)),
                                 conditions=conditions_option(conditions), replies=replies_option(replies))


def batch_readme(*, count: int, max_tokens: int, field: str, out: str, model: str, conditions: str | None,
                 replies: str | None = None) -> str:
    return BATCH_README.format(count=f"{count:,}", batch_input=BATCH_INPUT, model_json=json.dumps(model),
                               field=field, max_tokens=max_tokens, input_path=shlex.quote(f"{out}/{BATCH_INPUT}"),
                               model=shlex.quote(file_name(model)), conditions=conditions_option(conditions),
                               replies=replies_option(replies))


def conditions_option(path: str | None) -> str:
    """The README commands' ` --conditions FILE`, when the export used one (the import needs the same)."""
    return f" --conditions {shlex.quote(path)}" if path else ""


def replies_option(path: str | None) -> str:
    """The README import command's ` --replies TRACE`, when the export read a later turn's replies from one (the
    import renders the same requests from it to check the logs' conversations)."""
    return f" --replies {shlex.quote(path)}" if path else ""


def file_name(model: str) -> str:
    """A model name as a file and trace model name in every README's commands (a hosted model's may hold '/' or
    ':', which neither can).

    >>> file_name("qwen/2.5:7b"), file_name("")
    ('qwen-2.5-7b', 'model')
    """
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in model) or "model"
