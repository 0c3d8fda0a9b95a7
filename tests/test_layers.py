"""The packages form layers: each imports only from the layers below it, and only public names.

    common  <-  benchmark  <-  runner  <-  scorer  <-  stats  <-  validity

so a change in the scorer can never change how the benchmark is built, and a
reader can learn the kit from the bottom up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("common", "benchmark", "runner", "scorer", "stats", "validity")


def _imports(path: Path):
    """(line, package, module path, imported names) for each import of a project package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0], alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0], node.module, [a.name for a in node.names]


def _modules(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", LAYERS)
def test_a_package_imports_only_from_the_layers_below_it(package):
    allowed = set(LAYERS[:LAYERS.index(package) + 1])
    wrong = [f"{path.relative_to(ROOT)}:{line}: imports {module}"
             for path in _modules(package)
             for line, top, module, _ in _imports(path)
             if top in LAYERS and top not in allowed]
    assert wrong == []


@pytest.mark.parametrize("package", LAYERS)
def test_a_package_uses_no_private_name_of_another(package):
    wrong = []
    for path in _modules(package):
        for line, top, module, names in _imports(path):
            if top not in LAYERS or top == package:
                continue
            private = [part for part in module.split(".") if part.startswith("_") and part != "__init__"]
            private += [name for name in names if name.startswith("_")]
            if private:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {module} {private}")
    assert wrong == []


def test_the_layers_are_the_stages_seam_py_wires_up():
    import seam

    assert tuple(stage.split(".")[0] for stage in seam.STAGES) == LAYERS[1:]
