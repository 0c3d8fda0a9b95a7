"""The API key: read from the environment variable the config names, and kept out of every record.

The key lives only in memory and in the auth header of the request being sent.
It is checked before anything is sent: a header carries printable ASCII, so a
key with a line break, a tab, a space or a non-ASCII character (typically
copied along with it) is refused in one line that names the variable and
never quotes the key; sent, it would fail in the HTTP library with a message
that quotes it, at every attempt.

`redact` is the last line of defence for text that came from elsewhere (an
error body that echoes the key, an exception message, a reply that repeats it)
before it is written. Such text may spell the key otherwise than the key
itself: JSON-escaped (a key holding `"` or `\\`), escaped again when a JSON
body is quoted inside a JSON string, or as \\uXXXX escapes (some encoders
escape `<`, `&` and the like). One pattern matches all of these at once: each
character of the key may be preceded by backslashes or written as a \\uXXXX
escape. `redact_value` applies it to every string of a row (object keys
included) before the row is dumped, and `leaks` checks the dumped line.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from common.errors import UserError
from runner.config import ModelConfig

REDACTED = "<redacted>"
MIN_REDACT_LENGTH = 8  # a shorter "key" (e.g. "x" for a local server) would mangle ordinary text


def read_api_key(config: ModelConfig) -> str | None:
    """The key named by `api_key_env`, or None when the config names none (local servers).

    A named but unset variable, or a key no HTTP header can carry, is an error
    before anything is sent, because every request would otherwise fail one by one.
    """
    if config.api_key_env is None:
        return None
    key = os.environ.get(config.api_key_env, "")
    if not key.strip():
        raise UserError(f"{config.path}: api_key_env names {config.api_key_env}, which is not set in the "
                        f"environment; export {config.api_key_env}=... or remove api_key_env for a server "
                        "that needs no key")
    problem = key_problem(key)
    if problem:
        raise UserError(f"{config.path}: the key in the environment variable {config.api_key_env} (api_key_env) "
                        f"holds {problem}, which an HTTP header cannot carry; an API key is printable ASCII "
                        "without spaces: set the variable again without it (a line break or space copied "
                        "along with the key?)")
    return key


def key_problem(key: str) -> str | None:
    """What is wrong with the key's characters, without quoting any of them; None when all are printable ASCII."""
    for position, char in enumerate(key, 1):
        if "!" <= char <= "~":
            continue
        names = {"\r": "a carriage return", "\n": "a line feed", "\t": "a tab", " ": "a space"}
        if char in names:
            kind = names[char]
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            kind = "a control character"
        elif char.isspace():
            kind = "white space"
        else:
            kind = "a non-ASCII character"
        return f"{kind} (character {position} of {len(key)})"
    return None


@functools.lru_cache(maxsize=8)
def _pattern(key: str) -> re.Pattern:
    """Every spelling of `key` that escaping can produce: each character as itself, after any number of
    backslashes, or as a \\uXXXX escape (either case, its backslash itself escaped any number of times).

    A run of backslashes in the key is one unit that matches any run. The quantifiers are possessive,
    so a hostile body (a long run of backslashes) is scanned in linear time.
    """
    units: list[str] = []
    previous = None
    for char in key:
        hex_digits = "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{ord(char):04x}")
        escape = rf"\\++u{hex_digits}"
        if char == "\\":
            if previous != "\\":
                units.append(rf"(?:{escape}|\\++)")
        else:
            units.append(rf"(?:\\*+{re.escape(char)}|{escape})")
        previous = char
    first = re.escape(key[0])
    return re.compile(rf"(?=[\\{first}])" + "".join(units))  # the lookahead lets the scan skip ahead fast


def _active(api_key: str | None) -> bool:
    return bool(api_key) and len(api_key) >= MIN_REDACT_LENGTH


def redact(text: str, api_key: str | None) -> str:
    """`text` with every spelling of the key replaced by <redacted>."""
    if not _active(api_key):
        return text
    return _redact(text, api_key, _pattern(api_key))


def _redact(text: str, api_key: str, pattern: re.Pattern) -> str:
    if "\\" not in text:  # without a backslash the only spelling is the key itself: a plain search is enough
        return text.replace(api_key, REDACTED) if api_key in text else text
    return pattern.sub(REDACTED, text)


def redact_value(value: Any, api_key: str | None) -> Any:
    """A JSON value (a row) with `redact` applied to every string in it, object keys included."""
    if not _active(api_key):
        return value
    pattern = _pattern(api_key)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _redact(item, api_key, pattern)
        if isinstance(item, dict):
            return {walk(key): walk(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [walk(inner) for inner in item]
        return item

    return walk(value)


def leaks(text: str, api_key: str | None) -> bool:
    """Whether `text` (e.g. a dumped row) still spells the key in any of the ways `redact` knows."""
    if not _active(api_key):
        return False
    if "\\" not in text:
        return api_key in text
    return _pattern(api_key).search(text) is not None
