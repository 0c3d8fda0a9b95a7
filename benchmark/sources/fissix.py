"""Python 2 snippets from fissix's fixer tests, as "port this to Python 3" requests.

What is read: `fissix/tests/test_fixers.py` from the PyPI package `fissix`
24.4.24 (a maintained fork of lib2to3), parsed with `ast`, never imported.
Licence PSF-2.0, so every item is in the permissive partition.

How a test becomes an editing task. In each test method, every call
`self.check(X, Y, ...)` or `self.warns(X, Y, ...)` whose first two arguments
are names is one before/after pair: X and Y are resolved to the string most
recently assigned to those names earlier in the method (so the two tests that
assign `a` as the before and `b` as the after are read the right way round).
Only statements directly in the method body count; the few pairs generated in
`for` loops from templates are one-liners and are skipped. `warns` pairs are
kept: their after is still the fixer's port, the warning only asks a human to
double-check it.

The artifact is the before, laid out as the test itself uses it (fissix
dedents it with `textwrap.dedent`), with leading blank lines and the end
stripped. A few snippets start on the line of their opening quotes, so
dedenting cannot see their indentation; for those the lines after the first
are dedented as a block and, if the first line opens a block (ends with a
colon), indented by four spaces, which is recorded as a transformation. The
reference is the after, laid out the same way. Identical befores are kept
once (the first in file order). Instruction: one of INSTRUCTIONS, chosen with
`random.Random(f"seam-v1:fissix:{item_id}")`.

item_id: `test_fixers.py:<Class>.<method>`, plus `#<n>` (the pair's 1-based
position among the method's pairs) when a method checks several pairs.

Length bounds, on the artifact: at least MIN_NONBLANK_LINES = 3 non-blank
lines (most pairs are one-liners, which read as a single expression rather
than code someone would paste for porting) and at most MAX_LINES = 25 lines (a
screenful; the longest snippet in the file has 10 non-blank lines, so this
only guards against a changed corpus). That leaves 65 pairs in 24.4.24: the
corpus has no more, which is fewer than the 100 aimed for elsewhere but above
the 50 needed.

Order: file order of the check calls.
"""

from __future__ import annotations

import ast
import random
import textwrap
from dataclasses import dataclass

from benchmark.sources import SourceItem, locate
from common.errors import UserError

SOURCE = "fissix"
PACKAGE = "fissix"
DATA_PATH = "fissix/tests/test_fixers.py"
FILE_LABEL = "test_fixers.py"
LICENSE = "PSF-2.0"
PARTITION = "permissive"
GENRE = "code"
REGISTER = "code"

MIN_NONBLANK_LINES = 3
MAX_LINES = 25

PAIR_CALLS = ("check", "warns")
INSTRUCTIONS = (
    "Port this Python 2 code to Python 3.",
    "Convert this Python 2 snippet to Python 3.",
    "Update this code from Python 2 to Python 3.",
)
REINDENTED = "re-indented the lines after the first (the test string starts on its opening quotes)"


@dataclass(frozen=True)
class Pair:
    """One before/after pair from a test method, as written in the test file."""

    test_class: str
    method: str
    position: int  # 1-based among the method's pairs
    lineno: int  # of the check call
    before: str
    after: str


@dataclass(frozen=True)
class Snippet:
    text: str
    reindented: bool


def _string_assignment(statement: ast.stmt) -> tuple[str, str] | None:
    if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)):
        return statement.targets[0].id, statement.value.value
    return None


def _pair_call(statement: ast.stmt) -> ast.Call | None:
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    call = statement.value
    func = call.func
    if (isinstance(func, ast.Attribute) and func.attr in PAIR_CALLS and isinstance(func.value, ast.Name)
            and func.value.id == "self" and len(call.args) >= 2
            and all(isinstance(arg, ast.Name) for arg in call.args[:2])):
        return call
    return None


def read_pairs(source_text: str) -> list[Pair]:
    """Every before/after pair of the test file, in file order."""
    tree = ast.parse(source_text)
    pairs = []
    for test_class in tree.body:
        if not isinstance(test_class, ast.ClassDef):
            continue
        for method in test_class.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            strings: dict[str, str] = {}
            found = []
            for statement in method.body:
                assignment = _string_assignment(statement)
                if assignment:
                    strings[assignment[0]] = assignment[1]
                    continue
                call = _pair_call(statement)
                if call is None:
                    continue
                before_name, after_name = call.args[0].id, call.args[1].id
                if before_name in strings and after_name in strings:
                    found.append((call.lineno, strings[before_name], strings[after_name]))
            for position, (lineno, before, after) in enumerate(found, 1):
                pairs.append(Pair(test_class.name, method.name, position, lineno, before, after))
    return pairs


def item_id(pair: Pair, pairs_in_method: int) -> str:
    base = f"{FILE_LABEL}:{pair.test_class}.{pair.method}"
    return f"{base}#{pair.position}" if pairs_in_method > 1 else base


def layout(raw: str) -> Snippet:
    """A test string as a user would paste it (see the module docstring for the rule)."""
    lines = raw.split("\n")
    text = textwrap.dedent(raw)
    if lines[0].strip() and len(lines) > 1:  # starts on its opening quotes: indentation unknown
        rest = textwrap.dedent("\n".join(lines[1:])).split("\n")
        if lines[0].rstrip().endswith(":"):
            rest = ["    " + line if line.strip() else line for line in rest]
        text = "\n".join([lines[0]] + rest)
    reindented = text != textwrap.dedent(raw)
    kept = text.split("\n")
    while kept and not kept[0].strip():
        kept.pop(0)
    return Snippet("\n".join(kept).rstrip(), reindented)


def nonblank_lines(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.strip())


def candidates() -> list[SourceItem]:
    """All multi-line before/after pairs within the bounds, in file order."""
    path, provenance = locate.pypi_file(PACKAGE, DATA_PATH)
    try:
        source_text = path.read_text(encoding="utf-8")
        pairs = read_pairs(source_text)
    except (UnicodeDecodeError, SyntaxError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path}:{line}" if line else str(path)
        raise UserError(f"{where}: expected fissix's test_fixers.py, a Python file ({exc})") from None
    per_method: dict[tuple[str, str], int] = {}
    for pair in pairs:
        key = (pair.test_class, pair.method)
        per_method[key] = per_method.get(key, 0) + 1
    items = []
    seen_befores = set()
    for pair in pairs:
        before, after = layout(pair.before), layout(pair.after)
        if nonblank_lines(before.text) < MIN_NONBLANK_LINES or len(before.text.split("\n")) > MAX_LINES:
            continue
        if before.text in seen_befores:
            continue
        seen_befores.add(before.text)
        identifier = item_id(pair, per_method[(pair.test_class, pair.method)])
        instruction = random.Random(f"seam-v1:{SOURCE}:{identifier}").choice(INSTRUCTIONS)
        items.append(SourceItem(
            source=SOURCE, item_id=identifier, license=LICENSE, partition=PARTITION, genre=GENRE,
            register=REGISTER, provenance=provenance, instruction=instruction, artifact=before.text,
            reference=after.text, transformations=(REINDENTED,) if before.reindented else (),
        ))
    return items
