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
import numbers
from dataclasses import dataclass
from statistics import NormalDist

from stats import arguments
from stats.intervals import ConfidenceInterval

NAN = float("nan")


@dataclass(frozen=True)
class Proportion:
    """`count` successes out of `n`: the estimate `statistic` = count / n and its Wilson interval.

    Shaped like the result of scipy.stats.binomtest (`statistic` is the estimated
    proportion); `statistic` is NaN and the interval (NaN, NaN) when n = 0.
    """

    count: int
    n: int
    statistic: float
    confidence_interval: ConfidenceInterval


def z_value(confidence_level: float) -> float:
    """The two-sided normal quantile for a confidence level.

    >>> round(z_value(0.95), 6)
    1.959964
    """
    arguments.probability("confidence_level", confidence_level)
    return NormalDist().inv_cdf(0.5 + confidence_level / 2)


def _check_counts(count: int, n: int) -> None:
    arguments.count("n", n)
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or not 0 <= count <= n:
        raise ValueError(f"count: expected a whole number from 0 to n = {n}, got {count!r}")


def wilson_interval(count: int, n: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval: the p whose score test does not reject count/n.

    centre = (k + z^2/2) / (n + z^2),  half-width = z sqrt(k (n-k)/n + z^2/4) / (n + z^2).

    >>> ci = wilson_interval(81, 263)  # Newcombe (1998), Table II: 0.2553 to 0.3662
    >>> round(ci.low, 4), round(ci.high, 4), ci.confidence_level
    (0.2553, 0.3662, 0.95)
    >>> wilson_interval(0, 0)
    ConfidenceInterval(low=nan, high=nan, confidence_level=0.95)
    """
    _check_counts(count, n)
    z = z_value(confidence_level)
    if n == 0:
        return ConfidenceInterval(NAN, NAN, confidence_level)
    z2 = z * z
    centre = (count + z2 / 2) / (n + z2)
    half = z * math.sqrt(count * (n - count) / n + z2 / 4) / (n + z2)
    low = 0.0 if count == 0 else max(0.0, centre - half)
    high = 1.0 if count == n else min(1.0, centre + half)
    return ConfidenceInterval(low, high, confidence_level)


def proportion(count: int, n: int, confidence_level: float = 0.95) -> Proportion:
    """The rate count / n with its Wilson interval.

    >>> result = proportion(3, 10)
    >>> result.statistic
    0.3
    >>> round(result.confidence_interval.low, 4), round(result.confidence_interval.high, 4)
    (0.1078, 0.6032)
    """
    _check_counts(count, n)
    return Proportion(count, n, count / n if n else NAN, wilson_interval(count, n, confidence_level))
