"""Checks of function arguments, worded one way across stats/: the parameter, what it allows, what it got.

A bad argument here is a programming mistake, not bad input (the CLI checks
its options with `common.argtypes` before they reach a function), so these
raise `ValueError`, e.g. "confidence_level: expected a number strictly between
0 and 1, got 1.5". A bool is never taken for a number.
"""

from __future__ import annotations

import numbers


def probability(name: str, value) -> float:
    """`value` if it is a number strictly between 0 and 1 (a confidence level, alpha, power).

    >>> probability("alpha", 0.05)
    0.05
    >>> probability("confidence_level", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: confidence_level: expected a number strictly between 0 and 1, got 1.5
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name}: expected a number strictly between 0 and 1, got {value!r}")
    return value


def share(name: str, value) -> float:
    """`value` if it is a number from 0 to 1, both included (a rate such as a discordance).

    >>> share("discordance", 0.0)
    0.0
    >>> share("discordance", 1.2)
    Traceback (most recent call last):
    ...
    ValueError: discordance: expected a number from 0 to 1, got 1.2
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(f"{name}: expected a number from 0 to 1, got {value!r}")
    return value


def count(name: str, value, minimum: int = 0) -> int:
    """`value` if it is a whole number of at least `minimum`.

    >>> count("n", 3)
    3
    >>> count("resamples", 0, minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: resamples: expected a whole number of at least 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: expected a whole number of at least {minimum}, got {value!r}")
    return value
