"""The packages form layers: each imports only from the layers below it, and only public names.

    common <- guard <- benchmark <- runner <- harness <- scorer <- stats <- validity <- review <- occurrence
        <- report <- compare

so a change in the scorer can never change how the benchmark is built, and a
reader can learn the kit from the bottom up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("common", "guard", "benchmark", "runner", "harness", "scorer", "stats", "validity", "review", "occurrence",
          "report", "compare")


def _imports(path: Path):
    """(line, package, module path, imported names) for each import of a module, wherever it stands,
    including `importlib.import_module("x.y")` and `__import__("x.y")` with a literal name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0], alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0], node.module, [a.name for a in node.names]
        elif (isinstance(node, ast.Call) and _called(node.func) in ("import_module", "__import__") and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value.split(".")[0], node.args[0].value, []


def _called(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


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


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_time_edges(path: Path) -> set[str]:
    """Project modules imported when `path` is imported: module-level imports, not those inside
    functions (run later) or under `if TYPE_CHECKING:` (never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in LAYERS}


def test_no_module_imports_itself_back_at_import_time():
    modules = {_module_name(path): path for package in LAYERS for path in _modules(package)}
    edges = {name: {target for target in _import_time_edges(path) if target in modules and target != name}
             for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        if name in trail:
            raise AssertionError("import cycle: " + " -> ".join((*trail[trail.index(name):], name)))
        if name in done:
            return
        for target in sorted(edges[name]):
            visit(target, (*trail, name))
        done.add(name)

    for name in sorted(modules):
        visit(name, ())

