#!/usr/bin/env python3
"""What the sandbox costs per program, measured side by side with a bare interpreter start.

    python perf/validity_sandbox.py [--repeats 30]

Runs the same small HumanEval-style program (a function and its tests), interleaved, as:
a bare `python -S` child (the floor: starting an interpreter), the sandbox with no
protections, with the guard only, and with every protection (the default). Prints
the median wall time per program and the ratio to the bare start, then the offline
checks' speed (chrF and ast.parse on realistic texts).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validity.functional import program  # noqa: E402
from validity.sandbox import Limits, run_program  # noqa: E402
from validity.similarity import chrf  # noqa: E402
from validity.syntax import parse_error  # noqa: E402

CODE = "def add(a: int, b: int) -> int:\n    return a + b\n"
TESTS = {"entry_point": "add", "test": "def check(candidate):\n" + "".join(
    f"    assert candidate({i}, {i}) == {2 * i}\n" for i in range(20))}
MODES = {"sandbox, no protection": {"kernel": "off", "guard": False},
         "sandbox, guard only": {"kernel": "off", "guard": True},
         "sandbox, all protections": {}}


def bare() -> None:
    source = CODE + TESTS["test"] + "check(add)\n"
    subprocess.run([sys.executable, "-S", "-c", source], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    parts = program(CODE, TESTS)
    runs = {"bare python -S": bare, **{name: (lambda layers=layers: run_program(parts, limits=Limits(), **layers))
                                        for name, layers in MODES.items()}}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):  # interleaved, so that the machine's load hits every variant alike
        for name, run in runs.items():
            start = time.perf_counter()
            result = run()
            times[name].append(time.perf_counter() - start)
            assert result is None or result.passed, result
    floor = statistics.median(times["bare python -S"])
    print(f"{'variant':<28} {'median ms':>10} {'x bare':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<28} {1000 * median:>10.1f} {median / floor:>8.2f}")
    text = ("Digital anthropology is the study of the relationship between humans and digital-era technology, "
            "and extends to various areas where anthropology and technology intersect. ") * 3
    edited = text.replace("study", "stuty").replace("various", "many")
    # chrF remembers the pairs it scored, so each call is given a pair it has not seen: a number put beside the
    # first edit, where the two texts already differ.
    calls = iter(range(10**9))
    for label, fn in (("chrF, 500-character passage", lambda: chrf(edited.replace("stuty", f"stuty{next(calls)}", 1),
                                                                    text)),
                      ("ast.parse, 40-line function", lambda: parse_error(CODE * 20))):
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(200):
                fn()
            samples.append((time.perf_counter() - start) / 200)
        print(f"{label:<28} {1e6 * statistics.median(samples):>10.1f} µs")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
