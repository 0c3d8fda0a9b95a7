"""Read a TOML file the kit takes from its user (a model config, a prices file): every way it can fail is one
line naming the file (and the line, where it can be found), never a traceback out of tomllib.

tomllib raises more than `TOMLDecodeError`: `ValueError` for an integer longer than Python reads (4,300
digits unless configured otherwise) and `RecursionError` for arrays or inline tables nested past its
recursion. `load` turns each into a `UserError`; `line_of` finds where a key is assigned, for the errors
that the readers raise about values.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from common.errors import UserError
from common.reading import SMALL_FILE_BYTES, read_file
from common.records import shown

KEY_AT_LINE_START = re.compile(r"[ \t]*([A-Za-z0-9_.\"' -]+?)[ \t]*=[ \t]*[+-]?[0-9]")


def load(path: str | Path, what: str) -> tuple[dict[str, Any], str]:
    """The parsed TOML of `path` and its text; `what` names the file in the errors ("model config").

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = open(os.path.join(tmp, "p.toml"), "w").write("a = [[[[1]]]")
    ...     load(os.path.join(tmp, "p.toml"), "prices file")
    Traceback (most recent call last):
    common.errors.UserError: .../p.toml: not valid TOML (Unclosed array ...)
    """
    path = Path(path)
    try:
        text = read_file(path, f"a {what} (TOML)", limit=SMALL_FILE_BYTES).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start + 1}), expected a {what} (TOML)") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    except ValueError:  # an integer past Python's digit limit for reading one (int() inside tomllib)
        raise UserError(long_integer(path, text)) from None
    except RecursionError:  # tomllib reads nested arrays and inline tables recursively
        raise UserError(f"{path}: not valid TOML (nested too deeply to read)") from None


# A run of digits as a TOML integer writes them (single underscores between digits), matched from its first digit
# only: never after a digit or an underscore, where no TOML integer starts. Each run is read once, so finding the
# first long one takes time in proportion to the text; the unanchored pattern, `[0-9](?:_?[0-9]){4300,}`, tried
# again from every digit of every run: 86 s of CPU for 200 values of 4,290 digits (tests/test_tomlfile_long_integer).
DIGIT_RUN = re.compile(r"(?<![0-9_])[0-9](?:_?[0-9])*")


def long_integer(path: Path, text: str) -> str:
    """The message for a TOML integer longer than Python reads: its line and, when it starts one, its key."""
    digits = sys.get_int_max_str_digits()
    match = next((run for run in DIGIT_RUN.finditer(text) if len(run.group()) - run.group().count("_") > digits),
                 None)
    problem = f"an integer of more than {digits:,} digits, which Python cannot read"
    if match is None:
        return f"{path}: not valid TOML ({problem})"
    start = text.rfind("\n", 0, match.start()) + 1
    line = text.count("\n", 0, start) + 1
    key = KEY_AT_LINE_START.match(text, start, match.start() + 1)
    if key:
        return f"{path}:{line}: key {shown(key.group(1))} holds {problem}"
    return f"{path}:{line}: {problem}"


def line_of(text: str, key: str, after: int = 0) -> int | None:
    """The line where `key` is assigned (or opens a table) in the TOML text, from offset `after` on.

    >>> line_of("a = 1\\n[b]\\nc = 2\\n", "c"), line_of("a = 1\\n[b]\\n", "b"), line_of("a = 1", "z")
    (3, 2, None)
    """
    pattern = re.compile(rf"^[ \t]*(?:\[[ \t]*)?[\"']?{re.escape(key)}[\"']?[ \t]*(?:=|\])", re.MULTILINE)
    match = pattern.search(text, after)
    return text.count("\n", 0, match.start()) + 1 if match else None


def table_start(text: str, name: str) -> int:
    """The offset of the `[name]` table header in the TOML text (0 when there is none)."""
    match = re.search(rf"^[ \t]*\[[ \t]*[\"']?{re.escape(name)}[\"']?[ \t]*\]", text, re.MULTILINE)
    return match.start() if match else 0
