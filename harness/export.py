"""`seam.py export`: the selected requests in a harness's own input format, sent as the kit's runner sends them.

inspect_ai: `seam.jsonl` (one sample per request: `input` the exact message, or where the request's condition
gives a system prompt or earlier turns the whole conversation as inspect's chat messages, `harness.conversation.chat`;
`id` the kit's id, `metadata`), `seam_task.py` (the task, written as text) and a README; the OpenAI Batch API:
`batch_input.jsonl`, one line per request whose body is built by the runner's own OpenAI provider from the
request's conversation (`runner.providers.build`), so it is byte for byte the body `seam.py run --dry-run` prints
for a config of that model, temperature 0 and that limit; promptfoo: its config, a tests file, a prompt function
and a README (`harness.promptfoo_task`, which says how the message gets past promptfoo's templating unchanged);
lm-evaluation-harness: a dataset, a task YAML and a README (`harness.lmeval_task`, which says which of lm-eval's
defaults it overrides, and refuses a conversation, which its task cannot send). The files are written all or
none (`common.files.write_files`). What a target would not use is refused rather than ignored (`--base-url` for a
batch, whose server is OpenAI's; `--max-tokens-field` but for a batch), and so is a model name a target's files
cannot carry as it is (`check_model`): a line break for every target (each README's commands would break), and
what promptfoo's provider id or lm-eval's `--model_args` would change.
"""

from __future__ import annotations

from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import write_files
from common.records import Request, shown
from harness import BATCH_INPUT, DATASET, TARGETS, TASK_FILE, lmeval_task, promptfoo_task, templates
from harness.conversation import chat
from runner import providers
from runner.config import ModelConfig, url_problem

DATA = Path(__file__).resolve().parents[1] / "data"
DEFAULT_MAX_TOKENS = ModelConfig.max_tokens  # the runner's own default (its configs must set one)
PLACEHOLDER_MODEL = "MODEL"  # in the inspect README's commands when no --model is given


def dataset_row(request: Request) -> dict:
    """One inspect sample: the exact message as `input` (for a request with a system prompt or earlier turns, the
    chat messages of its whole conversation, inspect's dataset format for a chat input), the kit's id, and what the
    import checks it by (`message_sha256`: the conversation's, as its trace row's)."""
    conversation = request.conversation
    return {"id": request.id, "input": request.message if conversation.bare else chat(conversation),
            "metadata": {"cluster": request.cluster, "condition": request.condition, "source": request.source,
                         "benchmark_sha256": request.benchmark_sha256, "message_sha256": conversation.sha256}}


def batch_config(model: str, max_tokens: int, field: str = "max_tokens") -> ModelConfig:
    """The config the runner would be given for this export: OpenAI, temperature 0, no extra parameters."""
    return ModelConfig(path="seam.py export", name="export", provider="openai", model=model,
                       base_url=providers.get("openai").DEFAULT_BASE_URL, temperature=0.0, max_tokens=max_tokens,
                       max_tokens_field=field)


def batch_line(config: ModelConfig, request: Request) -> dict:
    """One line of a Batch API input file: the kit's id as `custom_id`, the runner's body for the request's whole
    conversation (its system prompt and earlier turns, where it has them, before the message)."""
    from runner.batch import openai as batch_openai

    _, _, body = providers.build(providers.get("openai"), config, request.conversation)
    return batch_openai.envelope(request.id, body)


def check_options(target: str, *, model: str | None, field: str | None, base_url: str | None) -> None:
    """Refuse, in one line, an option the target would not use and a model name its files cannot carry."""
    if base_url is not None and target == "openai-batch":
        raise UserError("--base-url: a batch goes to OpenAI's Batch API, whose server is not chosen here (the "
                        "README's commands name it); --base-url is for inspect, promptfoo and lm-eval")
    if field is not None and target != "openai-batch":
        raise UserError(f"--max-tokens-field {field}: only --to openai-batch names the limit's field (inspect, "
                        "promptfoo and lm-eval send max_tokens as the harness does)")
    if base_url is not None and (problem := url_problem(base_url)):
        raise UserError(f"--base-url {problem}")
    if model is not None:
        check_model(target, model)


def check_model(target: str, model: str) -> None:
    """A model name every file of the target can carry as it is: no line break or other control character (each
    README's commands would break there), and what promptfoo's provider id or lm-eval's --model_args read as
    something else (`promptfoo_task.model_problem`, `lmeval_task.model_problem`)."""
    if not model.isprintable():
        raise UserError(f"--model {shown(model)}: holds a line break or another control character, which a "
                        "command (the README's) cannot carry; give the model's name on one line")
    problem = {"promptfoo": promptfoo_task.model_problem, "lm-eval": lmeval_task.model_problem}.get(
        target, lambda _: None)(model)
    if problem:
        raise UserError(f"--model {shown(model)}: {problem}; give the model's name without them")


def files(target: str, out: Path, requests: list[Request], *, max_tokens: int, model: str | None,
          field: str | None = None, conditions: str | None = None, base_url: str | None = None,
          replies: str | None = None) -> dict[Path, bytes]:
    """Every file of one export, by path (`conditions` and `replies`: the files the requests were rendered with,
    which the READMEs' import commands name again)."""
    if target not in TARGETS:
        raise UserError(f"--to {target}: expected one of {', '.join(TARGETS)}")
    check_options(target, model=model, field=field, base_url=base_url)
    if not requests:
        raise UserError("no requests selected")
    count, shown_out = len(requests), str(out)
    if target == "inspect":
        readme = templates.inspect_readme(count=count, max_tokens=max_tokens, out=shown_out,
                                          model=model or PLACEHOLDER_MODEL, conditions=conditions, replies=replies,
                                          server=(base_url or templates.SERVER).rstrip("/"))
        return {out / DATASET: jsonl.lines_bytes(dataset_row(r) for r in requests),
                out / TASK_FILE: templates.task_file(count=count, max_tokens=max_tokens).encode("utf-8"),
                out / "README.md": readme.encode("utf-8")}
    if target == "lm-eval":
        return lmeval_task.files(out, requests, max_tokens=max_tokens, model=model or PLACEHOLDER_MODEL,
                                 conditions=conditions, base_url=base_url)
    if target == "promptfoo":
        return _promptfoo(out, requests, max_tokens=max_tokens, model=model, conditions=conditions,
                          base_url=base_url, replies=replies)
    if not model:
        raise UserError("--to openai-batch needs --model NAME: the model every request's body names")
    field = field or "max_tokens"
    config = batch_config(model, max_tokens, field)
    readme = templates.batch_readme(count=count, max_tokens=max_tokens, field=field, out=shown_out, model=model,
                                    conditions=conditions, replies=replies)
    return {out / BATCH_INPUT: jsonl.lines_bytes(batch_line(config, r) for r in requests),
            out / "README.md": readme.encode("utf-8")}


def _promptfoo(out: Path, requests: list[Request], *, max_tokens: int, model: str | None, conditions: str | None,
               base_url: str | None, replies: str | None = None) -> dict[Path, bytes]:
    """promptfoo's config, tests, prompt function and README (`harness.promptfoo_task`)."""
    if not model:
        raise UserError("--to promptfoo needs --model NAME: the model promptfoo's openai:chat provider names in "
                        "every body")
    base_url = base_url or promptfoo_task.DEFAULT_BASE_URL
    written = promptfoo_task.files(requests, model=model, base_url=base_url.rstrip("/"), max_tokens=max_tokens,
                                   out=str(out), conditions=conditions, replies=replies)
    return {out / name: data for name, data in written.items()}


def export(target: str, out: str | Path, requests: list[Request], **options) -> list[Path]:
    """Write one export into `out` (made if need be; never under data/, the release); the files written."""
    out = Path(out)
    resolved = out.resolve()
    if resolved == DATA.resolve() or resolved.is_relative_to(DATA.resolve()):
        raise UserError(f"--out {out}: is inside {DATA} (the release); give a folder of your own, e.g. runs/inspect")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    written = files(target, out, requests, **options)
    write_files(written, "export files")
    return list(written)
