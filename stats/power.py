"""Resolution: the smallest paired difference the design can detect.

For a paired design with n pairs and discordance rate psi = (b + c) / n, the
usual normal approximation to McNemar's test (conditioning on the discordant
pairs) detects a difference delta = (b - c) / n with power 1 - beta at two-sided
level alpha when

    delta = (z_{1 - alpha/2} + z_{1 - beta}) * sqrt(psi / n).

Here alpha is Holm's strictest threshold, 0.05 divided by the number of models
tested, because the first model Holm tests must pass exactly that. This form
drops the -delta^2 term of Connor's (1987) variance, sqrt(psi - delta^2), so it
is slightly conservative (it reports a slightly larger resolution). With 20
models, 300 pairs and psi = 0.27 it gives 11.6 percentage points, the figure the
original benchmark reported.

A paired difference can never exceed the discordance (|b - c| <= b + c), so when
the formula asks for more than psi (small n, or psi = 0) no difference is
detectable with that power, and the resolution is NaN rather than a number no
design could reach.

Connor RJ (1987). Sample size for testing differences in proportions for the
paired-sample design. Biometrics 43:207-211. Miettinen OS (1968). The matched
pairs design in the case of all-or-none responses. Biometrics 24:339-352.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from stats import arguments
from stats.rates import NAN


@dataclass(frozen=True)
class Resolution:
    """The design's resolution for one family of paired tests, with what it was computed from."""

    n_pairs: int
    discordance: float
    tests: int  # family size (number of models)
    alpha: float  # family-wise level
    threshold: float  # alpha / tests: Holm's strictest per-test level
    power: float
    difference: float  # the smallest detectable |p1 - p2|, as a proportion; NaN when there is none


def detectable_difference(n_pairs: int, discordance: float, *, tests: int = 1, alpha: float = 0.05,
                          power: float = 0.8) -> Resolution:
    """The smallest |p1 - p2| detectable two-sided at alpha/tests with the given power.

    >>> resolution = detectable_difference(300, 0.27, tests=20)  # the original benchmark's 11.6 points
    >>> round(100 * resolution.difference, 1), resolution.threshold
    (11.6, 0.0025)
    >>> detectable_difference(10, 0.0).difference  # no discordant pairs: nothing is detectable
    nan
    """
    arguments.count("n_pairs", n_pairs)
    arguments.share("discordance", discordance)
    arguments.count("tests", tests, minimum=1)
    arguments.probability("alpha", alpha)
    arguments.probability("power", power)
    threshold = alpha / tests
    value = NAN
    if n_pairs:
        normal = NormalDist()
        needed = (normal.inv_cdf(1 - threshold / 2) + normal.inv_cdf(power)) * math.sqrt(discordance / n_pairs)
        if 0 < needed <= discordance:
            value = needed
    return Resolution(n_pairs, discordance, tests, alpha, threshold, power, value)
