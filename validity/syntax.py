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

The original benchmark itself parsed code outputs *as returned*, not after
an extraction: `check_reply` is that reading (`as_returned` says exactly what
is parsed: the whole reply, less one Markdown fence wrapping all of it), with
the same reparse once marker lines are removed. Both readings go into the
tables, so a reader sees how much of "invalid" is the code and how much the
talk around it.

Code longer than `MAX_PARSED_CHARS` is not parsed (`parsable`): `ast.parse` keeps
a few hundred bytes of memory per character of dense code (one 5 MB reply once
took 2.2 GB), and no edit of the benchmark's artifacts (at most a few thousand
characters) comes near the bound. Such an output has neither reading and is left
out of the syntax tables' n, which say how many were (`validity.tables.parse_notes`).

A marker line is what the scorer cuts at (`scorer.extract.is_marker_line`): by
default (every built-in condition) a line that normalises to "begin text" or
"end text", so any case and any punctuation around or between the two words:
`-----END TEXT-----`, `**BEGIN TEXT**`, `# --- END TEXT ---`. A condition
file's condition is read with its own `Markers` too (its open and close lines,
as the extraction cuts at them: `<document>`, restyled or not), so that an
echo is counted by the same lines the labels' extraction cut at; code fences
are not among them (`scorer.markercut.Markers.of`): models fence code under
every condition, and the as-returned reading already removes a fence that
wraps the whole reply. The scorer's extraction already cuts at the first
opening and the last closing marker line, so a marker line left in the edited
text is a misplaced or repeated one.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from scorer.extract import is_marker_line
from scorer.markercut import BOUNDARY, Markers

# The longest reply whose code is parsed: at a few hundred bytes per character, some tens of megabytes at most.
MAX_PARSED_CHARS = 100_000


def parsable(reply: str) -> bool:
    """Whether a reply is short enough to be parsed (its edited text is a part of it): at most MAX_PARSED_CHARS."""
    return len(reply) <= MAX_PARSED_CHARS


@dataclass(frozen=True)
class SyntaxCheck:
    parses: bool
    error: str | None  # "line 3: invalid syntax" when it does not parse
    echoes_marker: bool  # the reply has a marker line (inside or outside the edited text)
    marker_in_text: bool  # the edited text itself keeps one
    parses_without_markers: bool

    @property
    def recovered(self) -> bool:
        """The edited text is invalid, and valid once its marker lines are gone."""
        return not self.parses and self.parses_without_markers


@dataclass(frozen=True)
class ReplyCheck:
    """The original benchmark's measure: the reply as returned (`as_returned`), not the scorer's extraction."""

    fenced: bool  # the reply is one fenced block, parsed without its two fence lines
    parses: bool
    error: str | None
    echoes_marker: bool  # the reply has a marker line
    parses_without_markers: bool  # the reply less its marker lines, read by the same rule, parses

    @property
    def recovered(self) -> bool:
        """Invalid as returned, valid once the echoed marker lines are removed (the original's "became parseable")."""
        return not self.parses and self.parses_without_markers


def has_marker_line(text: str, markers: Markers = BOUNDARY) -> bool:
    """Whether `text` has a line that is one of `markers` (default: BEGIN TEXT or END TEXT), restyled or not."""
    return any(is_marker_line(line, markers) for line in text.splitlines())


def remove_marker_lines(text: str, markers: Markers = BOUNDARY) -> str:
    """`text` without its lines that are one of `markers`, the other lines in order."""
    return "\n".join(line for line in text.splitlines() if not is_marker_line(line, markers))


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


# A fence line as CommonMark has it: up to three spaces, three or more backticks or tildes, an info string.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def as_returned(reply: str) -> tuple[str, bool]:
    r"""(the text to parse, whether a fence was removed) for the reply as the model returned it.

    The whole reply, with one exception: when the reply is exactly one fenced
    block (blank lines aside, its first line opens a fence and the first line
    that closes that fence is its last), the text between the two fence lines.
    That wrapper is Markdown's way of saying "this is code" and removing it
    takes no judgement; anything else the model wrote (a preamble, a note after
    the code, a second block, text after the closing fence) was returned with
    the code and is parsed with it. Line endings are read as "\n", as the
    scorer reads them.

    >>> as_returned("```python\nx = 1\n```\n")
    ('x = 1', True)
    >>> as_returned("Here it is:\n```python\nx = 1\n```")
    ('Here it is:\n```python\nx = 1\n```', False)
    """
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) < 2:
        return text, False
    first, last = filled[0], filled[-1]
    opening = _FENCE.fullmatch(lines[first])
    if opening is None or (opening.group(1)[0] == "`" and "`" in opening.group(2)):
        return text, False  # not a fence line (a backtick fence's info string has no backtick)
    fence = opening.group(1)
    for i in range(first + 1, last + 1):
        closing = _FENCE.fullmatch(lines[i])
        if (closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence)
                and not closing.group(2).strip()):
            return ("\n".join(lines[first + 1: last]), True) if i == last else (text, False)
    return text, False  # never closed: the opening fence is part of what was returned


def check_reply(reply: str, markers: Markers = BOUNDARY) -> ReplyCheck:
    r"""The reply as returned: does it parse, and does it once its echoed marker lines (of `markers`, the
    condition's) are removed?

    The second reading applies `as_returned` to the reply less its marker lines,
    so a pair of markers echoed around a fenced block is as removable as one
    echoed inside it.

    >>> check_reply("<document>\nx = 1\n</document>", Markers.of("<document>", "</document>")).recovered
    True
    >>> check_reply("<document>\nx = 1\n</document>").echoes_marker  # not a boundary marker
    False
    """
    text, fenced = as_returned(reply)
    error = parse_error(text)
    echoes = has_marker_line(reply, markers)
    return ReplyCheck(
        fenced=fenced, parses=error is None, error=error, echoes_marker=echoes,
        parses_without_markers=(error is None) if not echoes
        else parse_error(as_returned(remove_marker_lines(reply, markers))[0]) is None)


def check(reply: str, edited: str, markers: Markers = BOUNDARY) -> SyntaxCheck:
    """The three measures for one usable output: the raw reply and its extracted edited text; a marker line is
    one of `markers`, those of the condition the reply answers (default: BEGIN TEXT and END TEXT)."""
    error = parse_error(edited)
    in_text = has_marker_line(edited, markers)
    return SyntaxCheck(
        parses=error is None,
        error=error,
        echoes_marker=in_text or has_marker_line(reply, markers),
        marker_in_text=in_text,
        parses_without_markers=(error is None) if not in_text
        else parse_error(remove_marker_lines(edited, markers)) is None,
    )
