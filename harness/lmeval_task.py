"""The files of `seam.py export --to lm-eval`: a JSON Lines dataset, lm-evaluation-harness's task YAML and a README.

lm-eval's defaults would change every request (checked against lm-eval 0.4.13 and the kit's fake server), so the
task sets each of them: `doc_to_text` names the `message` field (any other text is rendered as a Jinja template,
and a message holding `{{ }}` or `{% %}` would arrive changed); `generation_kwargs` gives `until: []` (the default
is the few-shot delimiter, a blank line, which every SEAM message holds), `max_gen_toks` (the default is 256),
temperature 0, and `stop: null` and `seed: null`, which replace the `"stop": []` and `"seed": 1234` that its
`local-chat-completions` model otherwise puts in every body (`null` is "not given" in the OpenAI API; an empty
list is not read as none by every server); no description and no few-shot examples, so the one user message is
the message as it is. The `bypass` metric scores nothing: the kit scores.

The texts are written, never imported by the kit (lm-eval is the harness's dependency, not the kit's). Every
value put in them is a number or a quoted string, so no request or path changes what the task does: the dataset's
path a YAML double-quoted string with its glob characters escaped (lm-eval's `datasets` reads `data_files` as a
glob pattern, so a folder named `lm[1]` would name `lm1`), the model in `--model_args` a double-quoted value
(lm-eval would read `1.5`, `true`, `None` or `[x]` as a number, a boolean, nothing or a list), the whole
command shell-quoted. A model name that `--model_args` cannot carry at all (a comma or `=`, where lm-eval splits
it; a quote or backslash) is refused (`model_problem`), and so is a request whose condition gives a system prompt
or earlier turns (`check_bare`): the task sends each document as one templated user message, and lm-eval's own
`--system_instruction` would put one system prompt before every request, where a condition gives some requests one.
"""

from __future__ import annotations

import glob
import json
import shlex
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_text
from common.records import Request
from harness import TASK_NAME
from harness.templates import SERVER, conditions_option, file_name

DATASET = "seam_requests.jsonl"
TASK_FILE = "seam.yaml"
UNCARRIED = ',="\\'  # what --model_args cannot carry in a value: lm-eval splits at "," and "=", and reads quotes

TASK = """\
# SEAM (absorption) as an lm-evaluation-harness task, written by `seam.py export --to lm-eval` ({count} requests).
# Each request is sent as the kit's runner sends it: one user message (the `message` field as it is), no system
# prompt, temperature 0, max_tokens {max_tokens}, no stop sequences. Run it with --model local-chat-completions
# --apply_chat_template (README.md beside this file); `seam.py import` reads its --log_samples output.
task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {dataset}
test_split: test
output_type: generate_until
doc_to_text: message  # a field's name: its text as it is (any other string is rendered as a Jinja template)
doc_to_target: id
description: ""
num_fewshot: 0
generation_kwargs:
  until: []  # lm-eval's default is the few-shot delimiter, a blank line
  max_gen_toks: {max_tokens}  # the output limit (lm-eval's default: 256)
  temperature: 0.0
  do_sample: false
  stop: null  # sent as "stop": null ("not given") instead of lm-eval's "stop": []
  seed: null  # sent as "seed": null instead of lm-eval's "seed": 1234
metric_list:
  - metric: bypass  # no score here: seam.py import and seam.py compare score the replies
    aggregation: bypass
    higher_is_better: true
"""

README = """\
# SEAM for lm-evaluation-harness: {count} requests

Written by `python seam.py export --to lm-eval` (the kit's docs/HARNESSES.md). `{dataset}` holds one row per
request of the kit (`id`, the exact `message`, its `cluster`, `condition`, `source` and checksums); `{task_file}`
is the task `{task}`: `generate_until` on the `message` field as it is, no description, no few-shot examples, so
one user message and no system prompt, temperature 0, max_tokens {max_tokens}, no stop sequences, no scoring. The
task names its dataset by its absolute path: export again rather than move this folder.

Run it with lm-eval's `local-chat-completions` model against an OpenAI-compatible server (llama-server, vLLM,
Ollama; here at {server}):

    lm_eval --model local-chat-completions \\
        --model_args {model_args} \\
        --tasks {task} --include_path {out} --apply_chat_template --log_samples --output_path {results}

`--apply_chat_template` makes it send chat messages (without it that model stops before sending anything);
`num_concurrent=1` keeps a single-slot local server from batching requests together (which changes its
outputs). lm-eval gives up on the whole run, writing nothing, when one request fails three times (its
`max_retries`; an HTTP error or a reply slower than its `timeout`, 300 s, is a failure): for a slow local model
add `timeout=1800` to --model_args. Against a hosted API, set OPENAI_API_KEY and give its URL as base_url. Do
not add `--gen_kwargs`, `--num_fewshot` or `--system_instruction`: the import refuses prompts that are not the
kit's and requests sent with stop sequences.

Then, from the kit (lm-eval writes the samples and their `results_*.json` under a folder named after the model):

    python seam.py import {results}/*/samples_{task}_*.jsonl --out runs/{name}.jsonl --model {name}{conditions}
    python seam.py compare runs/{name}.jsonl --out runs/compare{conditions}

lm-eval keeps only the text of each reply: no finish reason, usage or times. A reply cut by the token limit
is imported as a whole one (docs/HARNESSES.md).
"""


def dataset_row(request: Request) -> dict:
    """One document of the task: the kit's id, the exact message, and what the import checks it by."""
    return {"id": request.id, "message": request.message, "cluster": request.cluster, "condition": request.condition,
            "source": request.source, "benchmark_sha256": request.benchmark_sha256,
            "message_sha256": sha256_text(request.message)}


def check_bare(requests: list[Request]) -> None:
    """Refuse, in one line naming the first, a request that is more than one user message: lm-eval's task cannot
    send its conversation, and a request sent without its system prompt or earlier turns is another question."""
    for request in requests:
        conversation = request.conversation
        if not conversation.bare:
            holds = " and ".join((["a system prompt"] if conversation.system is not None else [])
                                 + (["earlier turns"] if conversation.earlier else []))
            raise UserError(f"--to lm-eval: {request.id} (condition {request.condition}) has {holds}, which lm-eval's "
                            "task cannot send (its YAML sends each request as one templated user message); leave "
                            "that condition out (--only), or export it --to inspect, promptfoo or openai-batch")


def task_file(*, count: int, max_tokens: int, dataset: Path) -> str:
    where = str(dataset)
    if not where.isprintable():
        raise UserError(f"--out {dataset.parent}: its path holds a character a task file cannot name (a control "
                        "character); export into another folder")
    return TASK.format(count=f"{count:,}", max_tokens=int(max_tokens), task=TASK_NAME,  # a YAML double-quoted
                       dataset=json.dumps(glob.escape(where), ensure_ascii=False))  # string, read as a glob


def model_problem(model: str) -> str | None:
    """Why --model_args cannot carry this model name, or None."""
    found = sorted({char for char in model if char in UNCARRIED})
    if found:
        return (f"holds {' and '.join(map(repr, found))}, which lm-eval's --model_args cannot carry in a value "
                "(it splits them at commas and '=', and reads quotes and backslashes)")
    return None


def readme(*, count: int, max_tokens: int, out: str, model: str, conditions: str | None, server: str) -> str:
    endpoint = f"{server}/chat/completions"  # lm-eval posts to base_url as it is given
    return README.format(count=f"{count:,}", dataset=DATASET, task_file=TASK_FILE, task=TASK_NAME, server=server,
                         max_tokens=int(max_tokens), out=shlex.quote(out), results=shlex.quote(f"{out}/results"),
                         model_args=shlex.quote(f'model="{model}",base_url={endpoint},num_concurrent=1'),
                         name=shlex.quote(file_name(model)), conditions=conditions_option(conditions))


def files(out: Path, requests: list[Request], *, max_tokens: int, model: str, conditions: str | None,
          base_url: str | None = None) -> dict[Path, bytes]:
    """The export's three files by path; the task names the dataset by its absolute path (lm-eval resolves a
    relative one against the folder it is started from, not the task's)."""
    dataset = out.resolve() / DATASET
    server = (base_url or SERVER).rstrip("/")  # checked as a URL by harness.export
    if "," in server:  # lm-eval splits --model_args at commas
        raise UserError(f"--base-url {server}: holds a comma, which lm-eval's --model_args cannot carry")
    if problem := model_problem(model):
        raise UserError(f"--model {model}: {problem}; give the model's name without them")
    check_bare(requests)
    return {out / DATASET: jsonl.lines_bytes(dataset_row(r) for r in requests),
            out / TASK_FILE: task_file(count=len(requests), max_tokens=max_tokens, dataset=dataset).encode("utf-8"),
            out / "README.md": readme(count=len(requests), max_tokens=max_tokens, out=str(out), model=model,
                                      conditions=conditions, server=server).encode("utf-8")}
