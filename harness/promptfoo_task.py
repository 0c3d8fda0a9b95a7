"""The files of `seam.py export --to promptfoo`: promptfoo's config, its tests, the prompt function and a README.

promptfoo renders nunjucks (`{{ }}`, `{% %}`, `{# #}`) in every test variable and again in the rendered prompt,
and strips one trailing newline from every variable before it renders; a condition file's markers or a
corpus's text may hold any of them. So the prompt is not a template: it is a function (`seam_prompt.cjs`) that
returns the chat messages, one user message whose content is the test's `message` variable as the function
receives it (before any of that is done to it), after the messages of its `preceding` variable where the
request's condition gives a system prompt or earlier turns (`harness.conversation.chat`: the system prompt, then
each turn). `preceding` is a list of objects, which promptfoo passes through whole: a list of strings would be
split into one test per string, and a string starting with `file://` or `package:` would be read as a file or a
package. The config sets PROMPTFOO_DISABLE_TEMPLATING in its own
`env`, which promptfoo reads before the process's environment, so that the JSON of those messages is not
rendered either. A template prompt (`{{message}}`) cannot be used with it: that switch also leaves
`{{message}}` unfilled. The config's `env` also blanks the variables that would otherwise change the body or
the server (OPENAI_API_HOST overrides `apiBaseUrl`; OPENAI_TOP_P and the two penalties add parameters).

`max_tokens` and `temperature` go in the provider's `passthrough`, which promptfoo merges into the body last:
its own `temperature` setting drops a temperature of 0 from the body (it tests the value's truth), and its own
`max_tokens` is dropped for model names it takes for reasoning models. Every value put into these files is a
number or a JSON-quoted string (JSON strings are YAML's double-quoted scalars), so no request, model name or
URL can change what the config does. promptfoo is the harness's own dependency, not the kit's: these files are
only written as text.
"""

from __future__ import annotations

import json
import re
import shlex

from common import jsonl
from common.errors import UserError
from common.records import Request
from harness.conversation import chat
from harness.templates import SERVER, conditions_option, file_name, replies_option

CONFIG = "promptfooconfig.yaml"
TESTS = "tests.jsonl"
PROMPT = "seam_prompt.cjs"  # CommonJS whatever package.json sits above the folder
DEFAULT_BASE_URL = SERVER
# Prefixes promptfoo takes a string variable for a reference by, with templating off too (its evaluator loads the
# file, or the package, and sends what it holds): a message starting so cannot be sent as text through it.
PROMPTFOO_REFERENCES = ("file://", "package:")
PRECEDING = "preceding"  # the test variable holding a conversation's messages before the last user message
TEMPLATE = re.compile(r"\{[{%#]")  # nunjucks: promptfoo renders it in a provider's id before templating is off
DESCRIPTION = "SEAM (absorption), written by seam.py export --to promptfoo"
# Set in the config's env, which promptfoo reads before the process's environment: templating off, and blank the
# variables that would send the requests elsewhere (OPENAI_API_HOST wins over apiBaseUrl) or add parameters.
ENV = {"PROMPTFOO_DISABLE_TEMPLATING": "true", "OPENAI_API_HOST": "", "OPENAI_TOP_P": "",
       "OPENAI_PRESENCE_PENALTY": "", "OPENAI_FREQUENCY_PENALTY": ""}

PROMPT_FILE = """\
// SEAM (absorption) for promptfoo, written by `seam.py export --to promptfoo`: the prompt, as a function.
//
// It returns the chat messages promptfoo's openai:chat provider sends: one user message whose content is the
// test's `message` variable exactly, after the messages of its `preceding` variable where the request's condition
// has a system prompt or earlier turns (none otherwise). It is a function, not a template, so that nothing in
// the messages is rendered as nunjucks; the config's env sets PROMPTFOO_DISABLE_TEMPLATING so that the JSON of
// these messages is not rendered either (README.md beside this file).
module.exports = ({ vars }) => {
  if (typeof vars.message !== "string") {
    throw new Error("seam_prompt.cjs: the test has no string variable 'message' (tests.jsonl of seam.py export)");
  }
  const preceding = vars.preceding === undefined ? [] : vars.preceding;
  if (!Array.isArray(preceding)) {
    throw new Error("seam_prompt.cjs: the test's variable 'preceding' is not a list of messages");
  }
  return [...preceding, { role: "user", content: vars.message }];
};
"""

README = """\
# SEAM for promptfoo: {count} requests

Written by `python seam.py export --to promptfoo` (the kit's docs/HARNESSES.md). `{tests}` holds one test per
request of the kit (`vars`: its `id` and its exact `message`, and `preceding`, the messages before it where
its condition gives a system prompt or earlier turns; `metadata`: its cluster, condition, source and checksums);
`{prompt}` is the prompt, a function returning those messages and one user message whose content is the message
exactly; `{config}` asks the model {model_json} at {base_url_json} with promptfoo's `openai:chat` provider:
no other system prompt, temperature 0, max_tokens {max_tokens}, no stop sequences, no assertions.

Run it (promptfoo 0.118.0 is the last release for Node.js 20) against that OpenAI-compatible server
(llama-server, vLLM, Ollama), one request at a time and without promptfoo's cache:

    promptfoo eval -c {config_path} -o {output} -j 1 --no-cache

Against another server, change `apiBaseUrl` in the config (or export again with `--base-url URL`). promptfoo
sends `Authorization: Bearer $OPENAI_API_KEY` to it (`Bearer undefined` when that is not set); a hosted API
needs the key there. Keep the prompt function and the config's `env`: promptfoo renders `{{{{ }}}}` and `{{% %}}`
inside a message otherwise, which changes what is sent (the import refuses such an output). `-j 1` keeps a
single-slot local server from batching requests together (which changes its outputs); `--no-cache` makes
promptfoo ask the server rather than reuse an earlier answer. Do not add `--repeat`: SEAM asks each request once,
and the import refuses a request found twice. Then, from the kit:

    python seam.py import {output} --out runs/{name}.jsonl --model {name}{conditions}{replies}
    python seam.py compare runs/{name}.jsonl --out runs/compare{conditions}
"""


def test_row(request: Request) -> dict:
    """One promptfoo test: the kit's id and exact message as variables (with the messages before it, `preceding`,
    where the request has a system prompt or earlier turns), and what the import checks it by."""
    conversation = request.conversation
    if request.message.startswith(PROMPTFOO_REFERENCES):
        raise UserError(f"--to promptfoo: {request.id} (condition {request.condition}) has a message that starts "
                        f"with {request.message.split('//')[0].split(':')[0]}:, which promptfoo reads as a file or "
                        "package to load instead of the text; export it --to inspect or openai-batch")
    variables = {"id": request.id, "message": request.message}
    if not conversation.bare:
        variables[PRECEDING] = chat(conversation)[:-1]
    return {"vars": variables,
            "metadata": {"cluster": request.cluster, "condition": request.condition,
                         "source": request.source, "benchmark_sha256": request.benchmark_sha256,
                         "message_sha256": conversation.sha256}}


def config_text(*, model: str, base_url: str, max_tokens: int) -> str:
    """promptfooconfig.yaml: the provider, the prompt function, the tests file, the env that keeps text exact."""
    quoted = json.dumps  # ASCII only, so a YAML double-quoted scalar that reads back as the same string
    env = "".join(f"  {name}: {quoted(value)}\n" for name, value in ENV.items())
    return (f"# SEAM (absorption) for promptfoo, written by seam.py export --to promptfoo (README.md beside it).\n"
            f"description: {quoted(DESCRIPTION)}\n"
            f"env:\n{env}"
            f"prompts:\n  - {quoted('file://' + PROMPT)}\n"
            f"providers:\n"
            f"  - id: {quoted('openai:chat:' + model)}\n"
            f"    config:\n"
            f"      apiBaseUrl: {quoted(base_url)}\n"
            f"      apiKeyRequired: false\n"
            f"      showThinking: false\n"
            f"      max_tokens: {int(max_tokens)}\n"
            f"      passthrough:\n"
            f"        max_tokens: {int(max_tokens)}\n"
            f"        temperature: 0\n"
            f"tests: {quoted('file://' + TESTS)}\n"
            f"evaluateOptions:\n  maxConcurrency: 1\n")


def model_problem(model: str) -> str | None:
    """Why the provider id cannot name this model, or None: promptfoo renders nunjucks in a provider's id before
    it reads the config's env (which turns templating off), so `m{{ 7*7 }}x` would send the model "m49x"."""
    if TEMPLATE.search(model):
        return ("holds nunjucks syntax ({{, {% or {#), which promptfoo renders in its provider's id before templating "
                "is turned off: the requests would name another model")
    return None


def readme(*, count: int, model: str, base_url: str, max_tokens: int, out: str, conditions: str | None,
           replies: str | None = None) -> str:
    return README.format(count=f"{count:,}", tests=TESTS, prompt=PROMPT, config=CONFIG, model_json=json.dumps(model),
                         base_url_json=json.dumps(base_url), max_tokens=int(max_tokens),
                         config_path=shlex.quote(f"{out}/{CONFIG}"), output=shlex.quote(f"{out}/out.json"),
                         name=shlex.quote(file_name(model)), conditions=conditions_option(conditions),
                         replies=replies_option(replies))


def files(requests: list[Request], *, model: str, base_url: str, max_tokens: int, out: str,
          conditions: str | None, replies: str | None = None) -> dict[str, bytes]:
    """Every file of the export by name (in the export's folder)."""
    return {CONFIG: config_text(model=model, base_url=base_url, max_tokens=max_tokens).encode("utf-8"),
            TESTS: jsonl.lines_bytes(test_row(r) for r in requests),
            PROMPT: PROMPT_FILE.encode("utf-8"),
            "README.md": readme(count=len(requests), model=model, base_url=base_url, max_tokens=max_tokens, out=out,
                                conditions=conditions, replies=replies).encode("utf-8")}
