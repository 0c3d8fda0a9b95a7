"""Read one model's TOML config into a frozen `ModelConfig`, rejecting anything unexpected.

A config is the record of how a model was asked, so a typo must not pass
silently: unknown keys, wrong types and out-of-range values are `UserError`s
naming the file, the key (with its line when it can be found) and what was
expected. The API key itself never appears here, only the name of the
environment variable that holds it (`runner.apikey` reads it).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import UserError
from runner import providers

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ENV_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")
MAX_CONCURRENCY = 256


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


# key: (kind, required, what is expected)
KEYS: dict[str, tuple[str, bool, str]] = {
    "name": ("str", True, "a label of letters, digits, '.', '_' or '-' (used in file names and tables)"),
    "provider": ("str", True, "one of " + ", ".join(providers.NAMES)),
    "model": ("str", True, "the model identifier to request"),
    "base_url": ("str", False, "an http:// or https:// URL"),
    "api_key_env": ("str", False, "the name of an environment variable"),
    "temperature": ("number", False, "a number >= 0"),
    "max_tokens": ("int", True, "an integer >= 1 (the output limit)"),
    "timeout_s": ("number", False, "a number of seconds > 0"),
    "concurrency": ("int", False, f"an integer from 1 to {MAX_CONCURRENCY}"),
    "max_retries": ("int", False, "an integer >= 0"),
    "requests_per_minute": ("number", False, "a number > 0"),
    "max_tokens_field": ("str", False, "one of " + ", ".join(MAX_TOKENS_FIELDS) + " (openai only)"),
    "params": ("table", False, "a table of extra request-body parameters"),
}


def load_config(path: str | Path) -> ModelConfig:
    """Parse and check a model config file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such model config") from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the model config ({exc})") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(raw, path=str(path), text=text)


def parse_config(raw: dict[str, Any], *, path: str, text: str = "") -> ModelConfig:
    """Check the parsed TOML `raw` (from file `path`, whose `text` locates keys) and build the config."""

    def fail(key: str, problem: str) -> UserError:
        line = _line_of(text, key)
        where = f"{path}:{line}" if line else path
        return UserError(f"{where}: {problem}")

    for key in raw:
        if key not in KEYS:
            raise fail(key, f"unknown key {key!r}; expected one of {', '.join(KEYS)}")
    for key, (kind, required, expected) in KEYS.items():
        if key not in raw:
            if required:
                raise UserError(f"{path}: missing required key {key!r} ({expected})")
            continue
        if not _has_kind(raw[key], kind):
            raise fail(key, f"key {key!r} must be {expected}, got {_describe(raw[key])}")

    values = dict(raw)
    if not NAME_PATTERN.fullmatch(values["name"]):
        raise fail("name", f"key 'name' must be {KEYS['name'][2]}, got {values['name']!r}")
    if values["provider"] not in providers.NAMES:
        raise fail("provider", f"key 'provider' must be {KEYS['provider'][2]}, got {values['provider']!r}")
    if not values["model"].strip():
        raise fail("model", "key 'model' must not be empty")
    provider = providers.get(values["provider"])
    base_url = values.get("base_url", provider.DEFAULT_BASE_URL).rstrip("/")
    if not re.match(r"https?://[^/\s]+", base_url):
        raise fail("base_url", f"key 'base_url' must be {KEYS['base_url'][2]}, got {values['base_url']!r}")
    if "api_key_env" in values and not ENV_PATTERN.fullmatch(values["api_key_env"]):
        raise fail("api_key_env", f"key 'api_key_env' must be {KEYS['api_key_env'][2]}, "
                                  f"got {values['api_key_env']!r}")
    checks = {
        "temperature": lambda v: v >= 0,
        "max_tokens": lambda v: v >= 1,
        "timeout_s": lambda v: v > 0,
        "concurrency": lambda v: 1 <= v <= MAX_CONCURRENCY,
        "max_retries": lambda v: v >= 0,
        "requests_per_minute": lambda v: v > 0,
    }
    for key, ok in checks.items():
        if key in values and not ok(values[key]):
            raise fail(key, f"key {key!r} must be {KEYS[key][2]}, got {values[key]!r}")
    if "max_tokens_field" in values:
        if values["provider"] != "openai":
            raise fail("max_tokens_field", "key 'max_tokens_field' applies to provider 'openai' only")
        if values["max_tokens_field"] not in MAX_TOKENS_FIELDS:
            raise fail("max_tokens_field", f"key 'max_tokens_field' must be {KEYS['max_tokens_field'][2]}, "
                                           f"got {values['max_tokens_field']!r}")

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
        provider.build_request(config, "")
    except ValueError as exc:
        raise fail("params", f"[params]: {exc}") from None
    return config


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
    return f"{kinds.get(type(value), type(value).__name__)} ({value!r})"


def _line_of(text: str, key: str) -> int | None:
    """The line where `key` is assigned at the top level of the TOML text (or its table header)."""
    pattern = re.compile(rf"^[ \t]*(?:\[[ \t]*)?[\"']?{re.escape(key)}[\"']?[ \t]*(?:=|\])", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None
