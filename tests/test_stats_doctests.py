"""The examples in the docstrings of stats/ run, pass, and cover every public function and class there."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import stats

MODULES = sorted(info.name for info in pkgutil.iter_modules(stats.__path__, "stats."))


def test_every_stats_module_is_checked():
    assert {"stats.contrasts", "stats.paired", "stats.rates", "stats.tables", "stats.clusters", "stats.design_limits",
            "stats.alternatives", "stats.sensitivity"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # examples must not depend on where they run, nor leave files behind
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (output above)"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", MODULES)
def test_every_public_function_has_an_example(name):
    module = importlib.import_module(name)
    missing = [attribute for attribute, value in vars(module).items()
               if inspect.isfunction(value) and value.__module__ == name and not attribute.startswith("_")
               and ">>>" not in (value.__doc__ or "")]
    assert missing == [], f"{name}: public functions without a doctested example: {missing}"
