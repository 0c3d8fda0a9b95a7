"""Functional check: does the edited HumanEval function still pass the item's unit tests?

Beyond the original benchmark, which only parsed the code: an edit that adds a
docstring or type hints must leave the function working, and a condition that
makes models break it (or drop an import the hints need) shows up here. Each
usable output of a cluster with `tests` is run as three parts in one namespace,
in the sandbox (`validity.sandbox`): the edited code, the item's test code
(which defines `check`), and `check(<entry_point>)`.

Two controls run the same way once per cluster: the benchmark's reference (the
original function) and the unedited artifact. Both should pass every item; if
they do not, the sandbox's limits, not the models, are at fault, and the table
notes say so. Identical programs are run once (the verdict is deterministic).
"""

from __future__ import annotations

from collections.abc import Callable

from validity.sandbox import DEFAULT_LIMITS, Limits, RunResult, run_program


def program(code: str, tests: dict, label: str = "edited code") -> list[tuple[str, str]]:
    """The sandbox parts for `code` against a cluster's `tests` ({"entry_point", "test"})."""
    return [(label, code), ("tests", tests["test"]), ("check", f"check({tests['entry_point']})\n")]


def run_all(programs: dict, *, limits: Limits = DEFAULT_LIMITS, kernel: str = "auto",
            progress: Callable[[int, int], None] | None = None) -> dict:
    """Verdicts for {key: parts}; identical parts are run once. Keys are sorted for a stable order."""
    verdicts: dict[tuple, RunResult] = {}
    results = {}
    keys = sorted(programs)
    for done, key in enumerate(keys, start=1):
        parts = tuple(tuple(p) for p in programs[key])
        if parts not in verdicts:
            verdicts[parts] = run_program(parts, limits=limits, kernel=kernel)
        results[key] = verdicts[parts]
        if progress:
            progress(done, len(keys))
    return results
