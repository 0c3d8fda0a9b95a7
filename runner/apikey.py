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

A server may also cut the key into pieces (the first half at the end of the
output, the second in another field), so that no string holds it whole. So
every run of at least `piece_length(key)` consecutive characters of the key
(12, or half a key shorter than 24 characters but at least 8), in those same
spellings, is redacted too, wherever it stands. A shorter piece is not: it
could be ordinary text, and the output is what the benchmark scores. The search
is linear in the text: the key's pieces of half that length that start every
`n - n//2 + 1` characters ("anchors": every run of n characters of the key
holds one) are looked for with `str.find`, and each hit is extended character
by character as far as it matches the key. Text holding a backslash is first
read without its backslash runs and with its \\uXXXX escapes decoded, keeping
where each character came from, so that the pieces are found in every spelling
and the whole of what spelled them is redacted.

The config's `[headers_env]` values (a gateway's key, say) are secrets too: `read_secrets` reads them with
the key into a `Secrets`, and every function here that takes a key takes a `Secrets` as well (or None),
redacting each of its values as it redacts the key. They are checked like the key before anything is sent
(printable ASCII, inner spaces allowed, at least MIN_REDACT_LENGTH characters: a shorter one could not be
redacted without mangling ordinary text) and enter only the headers of the request being sent
(`secret_headers`).
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from typing import Any

from common.errors import UserError
from runner import providers
from runner.config import ModelConfig

REDACTED = "<redacted>"
MIN_REDACT_LENGTH = 8  # a shorter "key" (e.g. "x" for a local server) would mangle ordinary text
PIECE_LENGTH = 12  # a run of this many characters of a (random) key in ordinary text: never by chance


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


class Secrets(tuple):
    """The run's secrets: the API key (if any), then the values of the config's `[headers_env]`, as a tuple of
    the strings to redact; `api_key` and `headers` (header -> value) say where each is sent."""

    api_key: str | None
    headers: dict[str, str]

    def __new__(cls, api_key: str | None = None, headers: dict[str, str] | None = None):
        headers = dict(headers or {})
        self = super().__new__(cls, tuple(value for value in (api_key, *headers.values()) if value))
        self.api_key, self.headers = api_key, headers
        return self


def read_secrets(config: ModelConfig) -> Secrets:
    """The key (`read_api_key`) and the `[headers_env]` values, read from the environment and checked before
    anything is sent; none of them is ever quoted in a message."""
    headers = {}
    for header, variable in config.headers_env.items():
        value = os.environ.get(variable, "")
        where = f"{config.path}: [headers_env] {header}"
        if not value.strip():
            raise UserError(f"{where} names the environment variable {variable}, which is not set; export "
                            f"{variable}=... or remove the header")
        problem = header_value_problem(value)
        if problem:
            raise UserError(f"{where}: the value of the environment variable {variable} holds {problem}; a header "
                            "value read from the environment is printable ASCII (spaces inside only) of at least "
                            f"{MIN_REDACT_LENGTH} characters (a shorter one cannot be kept out of the trace: give "
                            "a value that is no secret in [headers])")
        headers[header] = value
    return Secrets(read_api_key(config), headers)


def header_value_problem(value: str) -> str | None:
    """What is wrong with a secret header value, without quoting it; None when it can be sent and redacted."""
    if len(value) < MIN_REDACT_LENGTH:
        return f"only {len(value)} characters"
    if value[0] == " " or value[-1] == " ":
        return "a space at its start or end"
    return key_problem(value.replace(" ", "!"))


def secret_headers(provider, config: ModelConfig, secrets: str | Secrets | None) -> dict:
    """The headers carrying secrets, added to a request only when it is sent: the key's (the provider's auth
    header, or the config's `auth_header`) and the `[headers_env]` ones. `secrets` may be the key alone."""
    api_key = secrets.api_key if isinstance(secrets, Secrets) else secrets
    headers = {} if api_key is None else providers.key_headers(provider, config, api_key)
    if isinstance(secrets, Secrets):
        headers.update(secrets.headers)
    return headers


def placeholder_headers(provider, config: ModelConfig) -> dict:
    """The secret headers as `--dry-run` prints them: each value is the name of its variable, `${VARIABLE}`."""
    headers = {} if config.api_key_env is None else providers.key_headers(provider, config,
                                                                          f"${{{config.api_key_env}}}")
    headers.update({header: f"${{{variable}}}" for header, variable in config.headers_env.items()})
    return headers


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


def _keys(secrets: str | Secrets | None) -> tuple[str, ...]:
    """The strings to redact: the key alone, or each value of a `Secrets`, those long enough to redact."""
    if secrets is None:
        return ()
    if isinstance(secrets, str):
        return (secrets,) if _active(secrets) else ()
    return tuple(key for key in secrets if _active(key))


def redact(text: str, api_key: str | Secrets | None) -> str:
    """`text` with every spelling of the key (of each secret) replaced by <redacted>."""
    for key in _keys(api_key):
        text = _redact(text, key, _pattern(key))
    return text


def piece_length(api_key: str) -> int:
    """The shortest run of the key's characters that is redacted on its own: 12, or for a key shorter than
    24 characters half its length, but never less than 8 (MIN_REDACT_LENGTH)."""
    return min(PIECE_LENGTH, max(MIN_REDACT_LENGTH, len(api_key) // 2))


@functools.lru_cache(maxsize=8)
def _pieces(key: str) -> tuple[str, int, tuple[tuple[int, str], ...]]:
    """(the key without backslashes, n = piece_length, the anchors: (position, the key's m = n // 2
    characters there) every n - m + 1 characters). A run of n characters of the key starting at a holds the
    anchor at the first multiple q of the step from a on: q <= a + n - m, so q + m <= a + n."""
    plain = key.replace("\\", "")  # a backslash of the key is no character of the text's reading (_reading)
    n = piece_length(key)
    if len(plain) < n:
        return plain, n, ()
    m = n // 2
    return plain, n, tuple((q, plain[q:q + m]) for q in range(0, len(plain) - m + 1, n - m + 1))


def _runs(text: str, key: str) -> list[tuple[int, int]]:
    """The spans of `text` (merged, in order) that are runs of at least n consecutive characters of the key."""
    plain, n, anchors = _pieces(key)
    found = []
    for q, gram in anchors:
        at = text.find(gram)
        while at >= 0:
            left, right = 0, len(gram)
            while left < q and left < at and text[at - left - 1] == plain[q - left - 1]:
                left += 1
            while q + right < len(plain) and at + right < len(text) and text[at + right] == plain[q + right]:
                right += 1
            if left + right >= n:
                found.append((at - left, at + right))
                at = text.find(gram, max(at + 1, at + right - len(gram) + 1))  # no hit inside the run again
            else:
                at = text.find(gram, at + 1)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


ESCAPES = re.compile(r"\\+(?:u([0-9a-fA-F]{4}))?")


def _reading(text: str) -> tuple[str, list[tuple[int, int, int, int]]]:
    """`text` read as the key's spellings allow: every run of backslashes dropped and every \\uXXXX escape
    (after any number of backslashes) decoded; with, for each piece of that reading, (its start there, its
    start in `text`, the start in `text` of the backslashes before it, its end in `text`, for an escape)."""
    parts: list[str] = []
    pieces: list[tuple[int, int, int, int]] = []  # (start in the reading, start, start with backslashes, end)
    length = position = 0
    lead = None
    for match in ESCAPES.finditer(text):
        if match.start() > position:
            parts.append(text[position:match.start()])
            pieces.append((length, position, position if lead is None else lead, -1))
            length += match.start() - position
            lead = None
        char = chr(int(match.group(1), 16)) if match.group(1) else "\\"
        if char == "\\":  # dropped: the backslashes before the next character are spelling
            lead = match.start() if lead is None else lead
        else:
            parts.append(char)
            pieces.append((length, match.start(), match.start() if lead is None else lead, match.end()))
            length += 1
            lead = None
        position = match.end()
    if position < len(text):
        parts.append(text[position:])
        pieces.append((length, position, position if lead is None else lead, -1))
    return "".join(parts), pieces


def _read(text: str) -> str:
    """`_reading(text)` without the map: without a \\u, no more than the text without its backslashes."""
    return text.replace("\\", "") if "\\u" not in text else _reading(text)[0]


def _redact_pieces(text: str, api_key: str) -> str:
    """`text` with every run of at least n characters of the key, in any spelling, replaced by <redacted>."""
    if "\\" not in text:
        spans = _runs(text, api_key)
    elif not _runs(_read(text), api_key):  # the common case, found without building the map
        return text
    else:
        reading, pieces = _reading(text)
        starts = [piece[0] for piece in pieces]

        def where(index: int, end: bool) -> int:
            at, start, lead, escape_end = pieces[bisect.bisect_right(starts, index - end) - 1]
            if escape_end >= 0:  # one character, spelled by the whole escape
                return escape_end if end else lead
            return start + index - at if end or index > at else lead

        spans = [(where(start, False), where(end, True)) for start, end in _runs(reading, api_key)]
    if not spans:
        return text
    out, position = [], 0
    for start, end in spans:
        out += [text[position:start], REDACTED]
        position = end
    return "".join(out) + text[position:]


def _redact(text: str, api_key: str, pattern: re.Pattern) -> str:
    if "\\" not in text:  # without a backslash the only spelling is the key itself: a plain search is enough
        text = text.replace(api_key, REDACTED) if api_key in text else text
    else:
        text = pattern.sub(REDACTED, text)
    return _redact_pieces(text, api_key)


def redact_value(value: Any, api_key: str | Secrets | None) -> Any:
    """A JSON value (a row) with `redact` applied to every string in it, object keys included."""
    keys = _keys(api_key)
    if not keys:
        return value
    patterns = [(key, _pattern(key)) for key in keys]

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            for key, pattern in patterns:
                item = _redact(item, key, pattern)
            return item
        if isinstance(item, dict):
            return {walk(key): walk(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [walk(inner) for inner in item]
        return item

    return walk(value)


def leaks(text: str, api_key: str | Secrets | None) -> bool:
    """Whether `text` (e.g. a dumped row) still spells the key (or a secret), or a run of at least `piece_length`
    of its characters, in any of the ways `redact` knows."""
    return any(_leaks(text, key) for key in _keys(api_key))


def _leaks(text: str, api_key: str) -> bool:
    if "\\" not in text:
        return api_key in text or bool(_runs(text, api_key))
    return _pattern(api_key).search(text) is not None or bool(_runs(_read(text), api_key))
