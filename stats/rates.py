"""Proportions with Wilson score intervals.

Wilson's interval is used because, unlike the textbook Wald interval, it stays
inside [0, 1] and keeps close to its nominal coverage at rates near 0 or 1 and
at small n, which is where absorption rates of well-behaved models sit.

Wilson EB (1927). Probable inference, the law of succession, and statistical
inference. JASA 22:209-212. Newcombe RG (1998). Two-sided confidence intervals
for the single proportion: comparison of seven methods. Stat Med 17:857-872.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

NAN = float("nan")


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class Proportion:
    """`count` successes out of `n`; `statistic` is NaN and the interval (NaN, NaN) when n = 0."""

    count: int
    n: int
    statistic: float
    confidence_interval: Interval


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for a confidence level (1.959964 for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _check_counts(count: int, n: int) -> None:
    if n < 0 or count < 0 or count > n:
        raise ValueError(f"need 0 <= count <= n, got count={count}, n={n}")


def wilson_interval(count: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval: the p whose score test does not reject count/n.

    centre = (k + z^2/2) / (n + z^2),  half-width = z sqrt(k (n-k)/n + z^2/4) / (n + z^2).
    """
    _check_counts(count, n)
    if n == 0:
        return Interval(NAN, NAN)
    z = z_value(confidence)
    z2 = z * z
    centre = (count + z2 / 2) / (n + z2)
    half = z * math.sqrt(count * (n - count) / n + z2 / 4) / (n + z2)
    low = 0.0 if count == 0 else max(0.0, centre - half)
    high = 1.0 if count == n else min(1.0, centre + half)
    return Interval(low, high)


def proportion(count: int, n: int, confidence: float = 0.95) -> Proportion:
    _check_counts(count, n)
    return Proportion(count, n, count / n if n else NAN, wilson_interval(count, n, confidence))
