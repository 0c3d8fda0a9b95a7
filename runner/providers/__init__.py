"""The provider registry and what every provider module shares.

A provider is a module that satisfies `Provider` below. It builds its body from
a `Conversation` (common/conversation.py): the user message, and where a
condition says so a system prompt and earlier turns, each placed as the
provider's API expects; a bare message gives the body every released trace
was collected with. Keeping the key out of
`build_request` means nothing that prints or records a request (--dry-run,
traces) can ever see it. To add a provider, write such a module and list it in
`NAMES` below (see docs/RUNNER.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import quote, urlencode

from common.conversation import Conversation

if TYPE_CHECKING:  # runner.config imports this package for NAMES and get()
    from runner.config import ModelConfig

NAMES = ("openai", "anthropic", "gemini")
_MODULES = {name: f"runner.providers.{name}" for name in NAMES}


class ResponseShapeError(ValueError):
    """A 2xx response whose JSON is not the provider's documented shape."""


@dataclass(frozen=True)
class Reply:
    """What a provider said, normalised. `problem` is None for a usable output, else why it is unusable."""

    output: str | None
    finish_reason: str | None
    served_model: str | None
    usage: dict | None  # as the provider sent it; anything but an object is dropped (the raw response keeps it)
    response_id: str | None
    problem: str | None


@runtime_checkable
class Provider(Protocol):
    """What the runner needs of a provider module (each module in `_MODULES` is one)."""

    DEFAULT_BASE_URL: str
    AUTH_HEADER: str  # the header that carries the key
    FORBIDDEN_PARAMS: tuple[str, ...]  # body keys [params] may not set
    CONVERSATION_KEYS: tuple[str, ...]  # body keys the conversation fills: recorded by message_sha256, not as params

    def build_request(self, config: ModelConfig, conversation: Conversation | str) -> tuple[str, dict, dict]:
        """(url, headers WITHOUT the key, body) for one conversation (a str: one bare user message)."""
        ...

    def auth_headers(self, api_key: str) -> dict:
        """The secret header(s), added only when sending."""
        ...

    def parse_response(self, data: Any) -> Reply:
        """The reply in a 2xx response's parsed JSON; a ResponseShapeError for a foreign shape."""
        ...


def get(name: str) -> Provider:
    module = importlib.import_module(_MODULES[name])
    if not isinstance(module, Provider):  # a provider module missing part of the protocol is a bug
        raise TypeError(f"{module.__name__} does not provide everything runner.providers.Provider lists")
    return module


def as_conversation(conversation: Conversation | str) -> Conversation:
    """A bare user message as a `Conversation`; a conversation as it is."""
    return Conversation(conversation) if isinstance(conversation, str) else conversation


def build(provider: Provider, config: ModelConfig, conversation: Conversation | str) -> tuple[str, dict, dict]:
    """The provider's request for one conversation (a str: one bare user message) with the config's `[query]`
    appended to the URL and its literal `[headers]` added: (url, headers WITHOUT any secret, body). Without
    either, exactly the provider's.
    Every request the runner sends or prints is built here (the key's and `[headers_env]`'s headers are added
    only when sending: `runner.apikey.secret_headers`)."""
    url, headers, body = provider.build_request(config, conversation)
    if config.query:
        url = f"{url}?{urlencode(config.query, quote_via=quote)}"
    if config.headers:
        headers = {**headers, **config.headers}
    return url, headers, body


def key_headers(provider: Provider, config: ModelConfig, api_key: str) -> dict:
    """The header that carries the key: the provider's (`auth_headers`), or the config's `auth_header` with the
    key as is (Azure OpenAI's `api-key`); `auth_header = "Authorization"` sends `Bearer KEY`."""
    if config.auth_header is None:
        return provider.auth_headers(api_key)
    if config.auth_header.lower() == "authorization":
        return {config.auth_header: f"Bearer {api_key}"}
    return {config.auth_header: api_key}


def merge_params(body: dict, params: dict, forbidden: tuple[str, ...] = ()) -> dict:
    """`body` with the config's [params] deep-merged in; a param may add keys but never override one.

    Overriding is refused because the runner's own keys (model, message, output
    limit, temperature) are recorded from the config; a silent override would
    make the trace lie about what was sent.
    """
    for key in forbidden:
        if key in params:
            raise ValueError(f"{key!r} may not be set: each request is its condition's conversation, "
                             "non-streamed (a system prompt or earlier turns come from a condition file: "
                             "docs/CONDITIONS.md)")
    merged = dict(body)
    for key, value in params.items():
        if key not in merged:
            merged[key] = value
        elif isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = merge_params(merged[key], value)
        else:
            raise ValueError(f"{key!r} is already set by the runner; set it through the config's own key")
    return merged


def require(data: Any, kind: type, what: str) -> Any:
    """`data` if it is a `kind`, else a ResponseShapeError naming `what` was expected."""
    if not isinstance(data, kind):
        raise ResponseShapeError(f"expected {what} to be {kind.__name__}, got {type(data).__name__}")
    return data


def optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def optional_dict(value: Any) -> dict | None:
    """`value` if it is a JSON object: a trace row's `usage` is an object or null (common.records.TraceRow)."""
    return value if isinstance(value, dict) else None


def classify(output: str | None, *, filtered: str | None = None, truncated: str | None = None,
             unexpected: str | None = None) -> str | None:
    """The reason an output is unusable, or None. The order matters: a filtered or truncated reply
    with no text is reported as filtered or truncated, which is the cause, not as empty."""
    if filtered:
        return f"blocked by a content filter or refused ({filtered})"
    if truncated:
        return f"stopped by the output limit ({truncated})"
    if output is None or not output.strip():
        return "empty output"
    if unexpected:
        return f"unexpected stop ({unexpected})"
    return None
