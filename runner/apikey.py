"""The API key: read from the environment variable the config names, and kept out of every record.

The key lives only in memory and in the auth header of the request being sent.
`redact` is the last line of defence for text that came from elsewhere (an
error body that echoes the key, an exception message) before it is written.
"""

from __future__ import annotations

import os

from common.errors import UserError
from runner.config import ModelConfig

REDACTED = "<redacted>"
MIN_REDACT_LENGTH = 8  # a shorter "key" (e.g. "x" for a local server) would mangle ordinary text


def read_api_key(config: ModelConfig) -> str | None:
    """The key named by `api_key_env`, or None when the config names none (local servers).

    A named but unset variable is an error before anything is sent, because every
    request would otherwise fail with 401 one by one.
    """
    if config.api_key_env is None:
        return None
    key = os.environ.get(config.api_key_env, "")
    if not key.strip():
        raise UserError(f"{config.path}: api_key_env names {config.api_key_env}, which is not set in the "
                        f"environment; export {config.api_key_env}=... or remove api_key_env for a server "
                        "that needs no key")
    return key


def redact(text: str, api_key: str | None) -> str:
    if api_key and len(api_key) >= MIN_REDACT_LENGTH and api_key in text:
        return text.replace(api_key, REDACTED)
    return text
