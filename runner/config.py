"""Read one model's TOML config into a frozen `ModelConfig`, rejecting anything unexpected.

A config is the record of how a model was asked, so a typo must not pass
silently: unknown keys, wrong types and out-of-range values are `UserError`s
naming the file, the key (with its line when it can be found) and what was
expected. The API key itself never appears here, only the name of the
environment variable that holds it (`runner.apikey` reads it).

Everything that would otherwise fail mid-run is refused here, in one line:
numbers a clock or a socket cannot take (`timeout_s` above a day,
`requests_per_minute` below one an hour), `[params]` values a JSON body cannot
carry (TOML dates and times, nan, inf) or nested more than 32 levels deep,
TOML that `tomllib` cannot read (an integer of more than 4,300 digits, arrays
nested past its recursion), and a `base_url` that does not parse
as an http(s) URL with a host and a port from 1 to 65535, or that holds
white space, credentials, a query or a fragment. Values are quoted cut short
(`common.records.shown`), credentials in a URL never.

What a gateway or a hosted deployment needs besides the body is refused here too when it could leak or
break the request: `[headers]` (literal values, recorded in every row, so a header named like a credential
is refused and must come from `[headers_env]`, whose values are read from the environment when sending and
never written), `[query]` (appended to every endpoint URL, recorded in it: no credential-like names either)
and `auth_header` (the header that carries the key instead of the provider's, e.g. Azure's `api-key`). A
header the runner or the HTTP library sets itself (Content-Type, User-Agent, Host, the provider's own such as
anthropic-version, the key's) may not be set.
"""

from __future__ import annotations

import datetime
import ipaddress
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from common import tomlfile
from common.errors import UserError
from common.records import shown
from runner import providers

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ENV_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")
MAX_CONCURRENCY = 256
MAX_TIMEOUT_S = 86400.0  # one day: far above any reply, far below what a socket or a clock overflows at
MIN_REQUESTS_PER_MINUTE = 1 / 3600  # one attempt an hour; fewer would wait past what a clock can take
HOST_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")  # a host name (after IDNA) or an IPv4 address
MAX_PARAMS_DEPTH = 32  # keys and array positions from [params] down to a value; real bodies nest a handful
# An HTTP header name (RFC 9110 "token"); a literal value: printable ASCII, inner spaces allowed.
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
HEADER_VALUE = re.compile(r"[!-~](?:[ -~]*[!-~])?")
MAX_HEADER_VALUE = 4096
# Names whose value is a secret: a literal [headers] value or a [query] value is written into every row.
CREDENTIAL_NAME = re.compile(r"auth|key|token|secret|passw|cookie|credential|^sig$", re.IGNORECASE)
# Headers the HTTP library sets (or must): never from the config.
TRANSPORT_HEADERS = ("host", "content-length", "transfer-encoding", "connection", "user-agent")
CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f-\xa0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]")


@dataclass(frozen=True)
class ModelConfig:
    """How one model is asked. `params` is merged into every request body (it may add, never override)."""

    path: str
    name: str
    provider: str
    model: str
    base_url: str
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int = 4096
    timeout_s: float = 120.0
    concurrency: int = 1
    max_retries: int = 6
    requests_per_minute: float | None = None
    max_tokens_field: str = "max_tokens"
    params: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)  # header -> literal value, sent and recorded
    headers_env: dict = field(default_factory=dict)  # header -> environment variable: sent, never recorded
    query: dict = field(default_factory=dict)  # query parameter -> value, appended to every endpoint URL
    auth_header: str | None = None  # the header carrying the key instead of the provider's (runner.apikey)


# key: (kind, required, what is expected)
KEYS: dict[str, tuple[str, bool, str]] = {
    "name": ("str", True, "a label of letters, digits, '.', '_' or '-' (used in file names and tables)"),
    "provider": ("str", True, "one of " + ", ".join(providers.NAMES)),
    "model": ("str", True, "the model identifier to request"),
    "base_url": ("str", False, "an http:// or https:// URL"),
    "api_key_env": ("str", False, "the name of an environment variable"),
    "temperature": ("number", False, "a number >= 0"),
    "max_tokens": ("int", True, "an integer >= 1 (the output limit)"),
    "timeout_s": ("number", False, f"a number of seconds > 0 and at most {MAX_TIMEOUT_S:g} (one day)"),
    "concurrency": ("int", False, f"an integer from 1 to {MAX_CONCURRENCY}"),
    "max_retries": ("int", False, "an integer >= 0"),
    "requests_per_minute": ("number", False, "a number >= 1/3600 (one attempt an hour)"),
    "max_tokens_field": ("str", False, "one of " + ", ".join(MAX_TOKENS_FIELDS) + " (openai only)"),
    "params": ("table", False, "a table of extra request-body parameters"),
    "headers": ("table", False, "a table of header names and literal (non-secret) values"),
    "headers_env": ("table", False, "a table of header names and the environment variables holding their values"),
    "query": ("table", False, "a table of query parameter names and values"),
    "auth_header": ("str", False, "the name of the header that carries the key (e.g. api-key)"),
}


def load_config(path: str | Path) -> ModelConfig:
    """Parse and check a model config file."""
    raw, text = tomlfile.load(path, "model config")
    return parse_config(raw, path=str(path), text=text)


def parse_config(raw: dict[str, Any], *, path: str, text: str = "") -> ModelConfig:
    """Check the parsed TOML `raw` (from file `path`, whose `text` locates keys) and build the config."""

    def fail(key: str, problem: str) -> UserError:
        line = _line_of(text, key)
        where = f"{path}:{line}" if line else path
        return UserError(f"{where}: {problem}")

    for key in raw:
        if key not in KEYS:
            raise fail(key, f"unknown key {shown(key)}; expected one of {', '.join(KEYS)}")
    for key, (kind, required, expected) in KEYS.items():
        if key not in raw:
            if required:
                raise UserError(f"{path}: missing required key {key!r} ({expected})")
            continue
        if not _has_kind(raw[key], kind):
            raise fail(key, f"key {key!r} must be {expected}, got {_describe(raw[key])}")

    values = dict(raw)
    if not NAME_PATTERN.fullmatch(values["name"]):
        raise fail("name", f"key 'name' must be {KEYS['name'][2]}, got {shown(values['name'])}")
    if values["provider"] not in providers.NAMES:
        raise fail("provider", f"key 'provider' must be {KEYS['provider'][2]}, got {shown(values['provider'])}")
    if not values["model"].strip():
        raise fail("model", "key 'model' must not be empty")
    if re.search(r"[\x00-\x1f\x7f]", values["model"]):
        raise fail("model", f"key 'model' must not contain control characters, got {shown(values['model'])}")
    provider = providers.get(values["provider"])
    base_url = values.get("base_url", provider.DEFAULT_BASE_URL).rstrip("/")
    problem = url_problem(base_url)
    if problem:
        raise fail("base_url", f"key 'base_url' {problem}")
    if "api_key_env" in values and not ENV_PATTERN.fullmatch(values["api_key_env"]):
        raise fail("api_key_env", f"key 'api_key_env' must be {KEYS['api_key_env'][2]}, "
                                  f"got {shown(values['api_key_env'])}")
    checks = {
        "temperature": lambda v: v >= 0,
        "max_tokens": lambda v: v >= 1,
        "timeout_s": lambda v: 0 < v <= MAX_TIMEOUT_S,
        "concurrency": lambda v: 1 <= v <= MAX_CONCURRENCY,
        "max_retries": lambda v: v >= 0,
        "requests_per_minute": lambda v: v >= MIN_REQUESTS_PER_MINUTE,
    }
    for key, ok in checks.items():
        if key in values and not ok(values[key]):
            raise fail(key, f"key {key!r} must be {KEYS[key][2]}, got {shown(values[key])}")
    if "max_tokens_field" in values:
        if values["provider"] != "openai":
            raise fail("max_tokens_field", "key 'max_tokens_field' applies to provider 'openai' only")
        if values["max_tokens_field"] not in MAX_TOKENS_FIELDS:
            raise fail("max_tokens_field", f"key 'max_tokens_field' must be {KEYS['max_tokens_field'][2]}, "
                                           f"got {shown(values['max_tokens_field'])}")
    too_deep = _too_deep(values.get("params", {}))
    if too_deep is not None:
        line = _line_of_param(text, too_deep)
        where = f"{path}:{line}" if line else path
        raise UserError(f"{where}: [params] key {_dotted(too_deep)!r} is nested more than {MAX_PARAMS_DEPTH} "
                        "levels deep")
    for key_path, problem in _json_problems(values.get("params", {})):
        line = _line_of_param(text, key_path)
        where = f"{path}:{line}" if line else path
        raise UserError(f"{where}: [params] key {_dotted(key_path)!r} is {problem}")

    config = ModelConfig(
        path=path,
        name=values["name"],
        provider=values["provider"],
        model=values["model"],
        base_url=base_url,
        api_key_env=values.get("api_key_env"),
        temperature=float(values["temperature"]) if "temperature" in values else None,
        max_tokens=values["max_tokens"],
        timeout_s=float(values.get("timeout_s", ModelConfig.timeout_s)),
        concurrency=values.get("concurrency", ModelConfig.concurrency),
        max_retries=values.get("max_retries", ModelConfig.max_retries),
        requests_per_minute=(float(values["requests_per_minute"])
                             if "requests_per_minute" in values else None),
        max_tokens_field=values.get("max_tokens_field", ModelConfig.max_tokens_field),
        params=values.get("params", {}),
    )
    try:  # a [params] entry that would override or break the request is caught now, not mid-run
        _, provider_headers, _ = provider.build_request(config, "")
    except ValueError as exc:
        raise fail("params", f"[params]: {exc}") from None
    extra = _request_extras(values, provider, provider_headers, path, text)
    return replace(config, **extra) if extra else config


def _request_extras(values: dict, provider, provider_headers: dict, path: str, text: str) -> dict:
    """The checked `headers`, `headers_env`, `query` and `auth_header` of a config (only those it sets)."""

    def fail(table: str, key: str | None, problem: str) -> UserError:
        line = (tomlfile.line_of(text, key, tomlfile.table_start(text, table)) if key is not None else None) \
            or _line_of(text, table)
        return UserError(f"{path}:{line}: {problem}" if line else f"{path}: {problem}")

    extra: dict[str, Any] = {}
    if "auth_header" in values:
        auth = values["auth_header"]
        if not HEADER_NAME.fullmatch(auth):
            raise fail("auth_header", None, f"key 'auth_header' must be an HTTP header name, got {shown(auth)}")
        if "api_key_env" not in values:
            raise fail("auth_header", None, "key 'auth_header' names the header that carries the key, but the "
                                             "config names no api_key_env to read the key from")
        extra["auth_header"] = auth
    key_header = (extra.get("auth_header") or provider.AUTH_HEADER) if "api_key_env" in values else None
    own = {name.lower(): "the runner sets it" for name in provider_headers}
    own.update({name: "the HTTP library sets it" for name in TRANSPORT_HEADERS})
    if extra.get("auth_header", "").lower() in own:
        raise fail("auth_header", None, f"key 'auth_header' may not be {shown(extra['auth_header'])}: "
                                         f"{own[extra['auth_header'].lower()]}")
    if key_header:
        own[key_header.lower()] = "it carries the key (api_key_env)"
    seen: dict[str, str] = {}
    for table in ("headers", "headers_env"):
        for name, value in values.get(table, {}).items():
            where = f"[{table}] {shown(name)}"
            if not HEADER_NAME.fullmatch(name):
                raise fail(table, name, f"{where} is not an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)")
            if name.lower() in own:
                raise fail(table, name, f"{where} may not be set: {own[name.lower()]}")
            if name.lower() in seen:
                raise fail(table, name, f"{where} is set twice (also in [{seen[name.lower()]}]; header names are "
                                        "case-insensitive)")
            seen[name.lower()] = table
            if not isinstance(value, str):
                raise fail(table, name, f"{where} must be a string, got {_describe(value)}")
            if table == "headers":
                if CREDENTIAL_NAME.search(name):
                    raise fail(table, name, f"{where} is named like a credential, and a literal value is written "
                                            "into every trace row: give it through [headers_env] (the name of an "
                                            "environment variable holding it), whose values are never written")
                if len(value) > MAX_HEADER_VALUE or not HEADER_VALUE.fullmatch(value):
                    raise fail(table, name, f"{where} must be printable ASCII (spaces inside only), at most "
                                            f"{MAX_HEADER_VALUE:,} characters, got {shown(value)}")
            elif not ENV_PATTERN.fullmatch(value):
                raise fail(table, name, f"{where} must be the name of an environment variable, got {shown(value)}")
        if values.get(table):
            extra[table] = dict(values[table])
    for name, value in values.get("query", {}).items():
        where = f"[query] {shown(name)}"
        if not name or CONTROL_OR_SPACE.search(name):
            raise fail("query", name, f"{where} must be a name without white space or control characters")
        if CREDENTIAL_NAME.search(name):
            raise fail("query", name, f"{where} is named like a credential, and the URL is written into every trace "
                                      "row: send a secret in a header ([headers_env] or api_key_env, with "
                                      "auth_header if needed)")
        if not isinstance(value, str):
            raise fail("query", name, f"{where} must be a string, got {_describe(value)}")
        if CONTROL_OR_SPACE.search(value.replace(" ", "")):
            raise fail("query", name, f"{where} must not contain control characters, got {shown(value)}")
    if values.get("query"):
        extra["query"] = dict(values["query"])
    return extra


def _has_kind(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":  # TOML allows inf and nan; neither is a usable setting (nor valid JSON in a trace)
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "table":
        return isinstance(value, dict)
    raise AssertionError(kind)


def _describe(value: Any) -> str:
    kinds = {bool: "a boolean", str: "a string", int: "an integer", float: "a number", dict: "a table",
             list: "an array"}
    return f"{kinds.get(type(value), type(value).__name__)} ({shown(value)})"


def _line_of(text: str, key: str) -> int | None:
    """The line where `key` is assigned at the top level of the TOML text (or its table header)."""
    return tomlfile.line_of(text, key)


def url_problem(url: str) -> str | None:
    """Why `url` is no usable base URL (the text after "key 'base_url' "), or None.

    Parsed with urllib.parse, as the HTTP library will parse it: scheme http or
    https, a host (a name, an IPv4 address or a bracketed IPv6 one), a port
    from 1 to 65535 if any, no credentials, query or fragment (the runner
    appends the endpoint's path), and no white space or control character
    anywhere (urllib.parse would silently drop some of them).
    """
    quoted = shown(masked(url))
    expected = "must be an http:// or https:// URL with a host and, if any, a port from 1 to 65535"
    if CONTROL_OR_SPACE.search(url):
        return f"must not contain white space or control characters, got {quoted}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{expected}, got {quoted} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{expected}, got {quoted}"
    if "@" in parts.netloc:
        return ("must not hold credentials (user:password@), which would be written into every trace row; "
                f"give the key through api_key_env; got {quoted}")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        return (f"must not have a query (?...) or fragment (#...): the endpoint's path is appended to it (query "
                f"parameters go in [query]); got {quoted}")
    if port == 0:
        return f"{expected}, got {quoted} (port 0)"
    host = parts.hostname or ""
    if parts.netloc.startswith("["):
        try:
            ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            return f"{expected}, got {quoted} (not an IPv6 address: {shown(host)})"
    else:
        try:
            ascii_host = host.encode("idna").decode("ascii")
        except UnicodeError:
            ascii_host = ""
        if not HOST_PATTERN.fullmatch(ascii_host):
            return f"{expected}, got {quoted} (not a host name: {shown(host)})"
    return None


def masked(url: str) -> str:
    """`url` with any user:password@ replaced by <credentials>@, for messages."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@", r"\1<credentials>@", url)


def _too_deep(params: dict) -> tuple | None:
    """The key path of the first [params] value nested more than MAX_PARAMS_DEPTH keys and array positions
    deep (`a.b` is 2, `stop[0]` is 2), or None. Iterative: a 2,000-part dotted key must not exhaust the stack."""
    stack: list[tuple[Any, tuple]] = [(params, ())]
    while stack:
        value, key_path = stack.pop()
        if len(key_path) > MAX_PARAMS_DEPTH:
            return key_path
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend((inner, (*key_path, key)) for key, inner in reversed(list(items)))
    return None


def _json_problems(value: Any, key_path: tuple = ()):
    """(key path, problem) for each [params] value a JSON body cannot carry: TOML dates and times, nan, inf."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _json_problems(inner, (*key_path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _json_problems(inner, (*key_path, index))
    elif isinstance(value, datetime.date | datetime.time):
        yield key_path, f"a TOML date/time ({value}), which JSON cannot carry; write it as a string"
    elif isinstance(value, float) and not math.isfinite(value):
        yield key_path, f"{value}, which JSON cannot carry"


def _dotted(key_path: tuple) -> str:
    """A [params] key path as TOML would write it (`a.b`), list positions as `[i]`."""
    text = ""
    for part in key_path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else '"' + part.replace('"', '\\"') + '"'
            text += ("." if text else "") + name
    return text if len(text) <= 60 else f"{text[:60]}… ({len(text):,} characters)"


def _line_of_param(text: str, key_path: tuple) -> int | None:
    """The line of a [params] entry: its last key's assignment after the [params...] header, or the header."""
    header = re.search(r"^[ \t]*\[[ \t]*params\b", text, re.MULTILINE)
    if header is None:
        return _line_of(text, "params")
    names = [part for part in key_path if isinstance(part, str)]
    if names:
        last = re.escape(names[-1])
        pattern = re.compile(rf"^[ \t]*(?:[^=\n]*\.)?[\"']?{last}[\"']?[ \t]*=|[{{,][ \t]*[\"']?{last}[\"']?[ \t]*=",
                             re.MULTILINE)
        match = pattern.search(text, header.start())
        if match:
            return text.count("\n", 0, match.start()) + 1
    return text.count("\n", 0, header.start()) + 1
