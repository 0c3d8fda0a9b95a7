"""Request ids as batch `custom_id`s and back: a reversible spelling in the alphabet every provider takes.

Anthropic requires a `custom_id` to match `^[a-zA-Z0-9_-]{1,64}$`, and a request id is
`<cluster>/<condition>`. Letters, digits and `-` stand for themselves; every other byte of the id's
UTF-8 (the `/`, a `.`, `_` itself) is `_` and two lower-case hex digits, so `humaneval-001/newline`
is `humaneval-001_2fnewline`: readable in a provider's console, and decoded without any table. One
spelling serves the three providers (OpenAI and Gemini take any string). Results are matched to
their requests by this id alone, never by their position in a results file.
"""

from __future__ import annotations

import re

from common.errors import UserError
from common.records import shown

MAX_LENGTH = 64  # Anthropic's limit; the longest built-in id (a 13-character cluster, `/mitigation`) takes 26
KEPT = re.compile(r"[A-Za-z0-9-]")
CUSTOM_ID = re.compile(r"(?:[A-Za-z0-9-]|_[0-9a-f]{2}){1,64}")


def custom_id(request_id: str) -> str:
    """The batch spelling of `request_id`.

    >>> custom_id("humaneval-001/newline")
    'humaneval-001_2fnewline'
    >>> custom_id("a_b.c/clean")
    'a_5fb_2ec_2fclean'
    """
    parts = []
    for char in request_id:
        parts.append(char if KEPT.fullmatch(char) else "".join(f"_{byte:02x}" for byte in char.encode("utf-8")))
    return "".join(parts)


def request_id(spelled: str) -> str | None:
    """The request id a `custom_id` spells, or None when it is no spelling `custom_id` makes.

    >>> request_id("humaneval-001_2fnewline")
    'humaneval-001/newline'
    >>> request_id("not/ours") is None, request_id("_zz") is None
    (True, True)
    """
    if not isinstance(spelled, str) or not CUSTOM_ID.fullmatch(spelled):
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
    return decoded if custom_id(decoded) == spelled else None  # one spelling per id: `_2d` for `-` is not ours


def check_spellable(request_ids: list[str]) -> None:
    """Refuse, before anything is sent, an id whose spelling is longer than a provider takes."""
    for request in request_ids:
        spelled = custom_id(request)
        if len(spelled) > MAX_LENGTH:
            raise UserError(f"request {shown(request)} spells a batch custom_id of {len(spelled)} characters, "
                            f"more than the {MAX_LENGTH} a provider takes; shorten its cluster or condition name, "
                            "or run it without --batch")
