"""Request ids as batch `custom_id`s and back: a reversible spelling in the alphabet every provider takes.

Anthropic requires a `custom_id` to match `^[a-zA-Z0-9_-]{1,64}$`, and a request id is
`<cluster>/<condition>`. Letters, digits and `-` stand for themselves; every other byte of the id's
UTF-8 (the `/`, a `.`, `_` itself) is `_` and two lower-case hex digits, so `humaneval-001/newline`
is spelt `humaneval-001_2fnewline`: readable in a provider's console, and decoded without any table.
A custom_id is that spelling after the submission's tag (8 hex digits of its token) and a `-`:
`3f2a9c1e-humaneval-001_2fnewline`. The tag makes a result carry the submission it belongs to, so
that a batch found again after a kill (runner.batch.anthropic: by its size and time alone) is proved
to be this run's by its results, and another run's results for the same benchmark ids are never
written into this trace. One spelling serves the three providers (OpenAI and Gemini take any
string). Results are matched to their requests by this id alone, never by their position.
"""

from __future__ import annotations

import re

from common.errors import UserError
from common.records import shown

MAX_LENGTH = 64  # Anthropic's limit; the longest built-in id (a 13-character cluster, `/mitigation`) takes 26 + 9
TAG = re.compile(r"[0-9a-f]{8}")
KEPT = re.compile(r"[A-Za-z0-9-]")
SPELLING = re.compile(r"(?:[A-Za-z0-9-]|_[0-9a-f]{2}){1,64}")


def custom_id(tag: str, request_id: str) -> str:
    """The custom_id of `request_id` in the submission tagged `tag`.

    >>> custom_id("3f2a9c1e", "humaneval-001/newline")
    '3f2a9c1e-humaneval-001_2fnewline'
    """
    return f"{tag}-{spell(request_id)}"


def parse(custom: str) -> tuple[str, str] | None:
    """(tag, request id) of a custom_id `custom_id` made, or None for any other string.

    >>> parse("3f2a9c1e-humaneval-001_2fnewline")
    ('3f2a9c1e', 'humaneval-001/newline')
    >>> parse("humaneval-001_2fnewline") is None, parse("3f2a9c1e-not/ours") is None
    (True, True)
    """
    if not isinstance(custom, str) or len(custom) < 10 or custom[8] != "-" or not TAG.fullmatch(custom[:8]):
        return None
    found = request_id(custom[9:])
    return None if found is None else (custom[:8], found)


def spell(request_id: str) -> str:
    """The reversible spelling of `request_id`.

    >>> spell("humaneval-001/newline")
    'humaneval-001_2fnewline'
    >>> spell("a_b.c/clean")
    'a_5fb_2ec_2fclean'
    """
    parts = []
    for char in request_id:
        parts.append(char if KEPT.fullmatch(char) else "".join(f"_{byte:02x}" for byte in char.encode("utf-8")))
    return "".join(parts)


def request_id(spelled: str) -> str | None:
    """The request id a spelling spells, or None when it is no spelling `spell` makes.

    >>> request_id("humaneval-001_2fnewline")
    'humaneval-001/newline'
    >>> request_id("not/ours") is None, request_id("_zz") is None
    (True, True)
    """
    if not isinstance(spelled, str) or not SPELLING.fullmatch(spelled):
        return None
    data = bytearray()
    position = 0
    while position < len(spelled):
        if spelled[position] == "_":
            data.append(int(spelled[position + 1:position + 3], 16))
            position += 3
        else:
            data += spelled[position].encode("ascii")
            position += 1
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decoded if spell(decoded) == spelled else None  # one spelling per id: `_2d` for `-` is not ours


def check_spellable(request_ids: list[str]) -> None:
    """Refuse, before anything is sent, an id whose spelling is longer than a provider takes."""
    for request in request_ids:
        spelled = custom_id("0" * 8, request)
        if len(spelled) > MAX_LENGTH:
            raise UserError(f"request {shown(request)} spells a batch custom_id of {len(spelled)} characters, "
                            f"more than the {MAX_LENGTH} a provider takes; shorten its cluster or condition name, "
                            "or run it without --batch")
