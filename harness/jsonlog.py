"""The `.json` logs `seam.py import` reads whole, inspect_ai's `.json` log and promptfoo's output, and which is which.

Both are one JSON document with every request in it, so each is read whole (`read_document`: the size checked
before anything is read, then read and parsed once), up to `MAX_JSON_BYTES`: promptfoo writes its output as one
JavaScript string, which V8 caps at about 512 MiB, and an inspect log that large can be imported as `.eval`, which
is read a sample at a time. Which harness wrote a `.json` is told from its first key (`kind`: inspect's logs begin
with `version`, promptfoo's outputs with `evalId`), else, for a file whose keys were put in another order (a tool
that rewrote it), from its keys once read; one that is neither is refused in one line naming both and what each
holds (`EXPECTED`), whatever it is (empty, `[]`, `{}`, a byte order mark, another tool's JSON).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from common import jsonl
from common.errors import UserError
from common.reading import read_bytes

MAX_JSON_BYTES = 256 << 20
PEEK_BYTES = 4096
FIRST_KEYS = (("promptfoo", re.compile(rb'\s*\{\s*"evalId"\s*:')), ("inspect", re.compile(rb'\s*\{\s*"version"\s*:')))
EXPECTED = ("expected an inspect log (an object with eval, plan and samples, as inspect eval writes with "
            "--log-format json or inspect log convert --to json) or promptfoo's output (an object with evalId and "
            "results.results, as promptfoo eval -o out.json writes)")
SPLIT = ("import an inspect log as .eval, which is read a sample at a time (inspect log convert LOG --to eval "
         "--output-dir DIR); export fewer requests per promptfoo eval (seam.py export --sources or --first) and "
         "import the outputs together")


def kind(path: Path) -> str:
    """"inspect" or "promptfoo": the harness whose `.json` this is, by its first key, else by its keys once read."""
    try:
        with open(path, "rb") as file:
            head = file.read(PEEK_BYTES)
    except OSError:
        head = b""  # read_document below says why it cannot be read
    for name, first in FIRST_KEYS:
        if first.match(head):
            return name
    document = read_document(path, "a .json log", SPLIT, EXPECTED)
    found = kind_of(document)
    if found is None:
        raise UserError(f"{path}: {_described(document)}; {EXPECTED}")
    return found


def _described(document: Any) -> str:
    """What a JSON document is, for a message: "an object with the keys 'a', 'b'", "an empty array"."""
    if isinstance(document, dict) and document:
        return f"an object with the keys {', '.join(repr(key) for key in list(document)[:6])}"
    if isinstance(document, dict | list) and not document:
        return f"an empty {'object' if isinstance(document, dict) else 'array'}"
    return jsonl.kind(document)


def kind_of(document: Any) -> str | None:
    """Which harness wrote a parsed `.json` log, by the keys each always writes; None for neither."""
    if isinstance(document, dict):
        if "evalId" in document and isinstance(document.get("results"), dict):
            return "promptfoo"
        if isinstance(document.get("eval"), dict) and ("samples" in document or "version" in document):
            return "inspect"
    return None


def read_document(path: Path, what: str, too_big: str, broken: str) -> Any:
    """The parsed JSON of a log read whole; one larger than MAX_JSON_BYTES is refused unread (with `too_big`: what
    to do instead), one that cannot be read or parsed in one line naming it (with `broken`: what it should be)."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise UserError(f"{path}: {what} is read whole, and this one is larger than {MAX_JSON_BYTES:,} bytes; "
                            f"{too_big}")
        data = read_bytes(path, what, limit=MAX_JSON_BYTES)
    except OSError as exc:
        raise UserError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        return jsonl.parse(data)
    except jsonl.BadJson as exc:
        line = f" (line {exc.lineno:,})" if exc.lineno else ""
        raise UserError(f"{path}: {exc.reason}{line}; {broken}") from None
