"""The docstring examples of every package but stats/ and occurrence/ (which have their own test files)
run and pass: an example that drifted from its code fails here, not in a reader's hands."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("common", "guard", "benchmark", "runner", "harness", "scorer", "validity", "review", "report", "compare")
MODULES = sorted(info.name for package in PACKAGES  # walk_packages: subpackages (runner.batch) too
                 for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."))


def test_the_new_modules_are_among_them():
    assert {"common.tomlfile", "runner.estimate", "runner.prices", "runner.usage", "compare.merge",
            "runner.batch.ids", "runner.batch.client"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # examples must not depend on where they run, nor leave files behind
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (output above)"
    assert list(tmp_path.iterdir()) == []
