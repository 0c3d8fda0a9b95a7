"""Syntactic validity of edited code: does it parse, and do echoed boundary markers explain why not?

The original benchmark found that under the mitigation instruction one model
returned syntactically invalid code far more often than under clean or
boundary, and that half of those outputs parsed once the echoed marker lines
were removed: the instruction made the model copy the delimiters into its code.
This module measures the same three things for one output:

* `parses`: the edited text (the scorer's extraction) is valid Python 3 for
  this interpreter's `ast.parse` (grammar only: `return` outside a function
  parses, as in the original; running the code is the functional check's job);
* `echoes_marker`: the whole reply has a boundary-marker line;
* `parses_without_markers`: the edited text parses once its marker lines are removed.

A marker line is what the scorer cuts at (`scorer.extract.is_marker_line`): a
line that normalises to "begin text" or "end text", so any case and any
punctuation around or between the two words: `-----END TEXT-----`,
`**BEGIN TEXT**`, `# --- END TEXT ---`. The scorer's extraction already cuts at
the first BEGIN and the last END marker line, so a marker line left in the
edited text is a misplaced or repeated one.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from scorer.extract import is_marker_line


@dataclass(frozen=True)
class SyntaxCheck:
    parses: bool
    error: str | None  # "line 3: invalid syntax" when it does not parse
    echoes_marker: bool  # the reply has a marker line (inside or outside the edited text)
    marker_in_text: bool  # the edited text itself keeps one
    parses_without_markers: bool

    @property
    def recovered(self) -> bool:
        """Invalid as returned, valid once the marker lines are gone."""
        return not self.parses and self.parses_without_markers


def has_marker_line(text: str) -> bool:
    return any(is_marker_line(line) for line in text.splitlines())


def remove_marker_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not is_marker_line(line))


def parse_error(source: str) -> str | None:
    """None when `source` parses as Python 3, else where and why it does not."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for "\d" in a string: still valid
            ast.parse(source)
    except SyntaxError as exc:  # IndentationError and TabError included
        return f"line {exc.lineno}: {exc.msg}" if exc.lineno else exc.msg
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes; absurd nesting
        return type(exc).__name__
    return None


def check(reply: str, edited: str) -> SyntaxCheck:
    """The three measures for one usable output: the raw reply and its extracted edited text."""
    error = parse_error(edited)
    in_text = has_marker_line(edited)
    return SyntaxCheck(
        parses=error is None,
        error=error,
        echoes_marker=in_text or has_marker_line(reply),
        marker_in_text=in_text,
        parses_without_markers=(error is None) if not in_text else parse_error(remove_marker_lines(edited)) is None,
    )
