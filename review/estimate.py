"""Estimators of the review: the kit's precision and recall over the whole population, from a stratified sample.

Each stratum h (model x kit verdict x genre x condition) holds N_h usable outputs,
of which m_h got a definite answer (absorbed or not absorbed; "unsure" and
unanswered cases are left out, i.e. taken to be missing at random within their
stratum). Each definite answer then stands for w = N_h / m_h outputs of its
stratum, and every quantity of the report is a weighted proportion over a domain
of the reviewed outputs (a ratio estimator of population totals):

    precision       domain: the kit's positives          share the reviewer judges absorbed
    recall          domain: judged absorbed by reviewer  share the kit calls absorbed
    miss rate       the same domain                      share the kit calls not absorbed (1 - recall)
    false omission  domain: the kit's negatives          share the reviewer judges absorbed
    agreement       every reviewed output                share where kit and reviewer agree
    true rate       every reviewed output                share the reviewer judges absorbed

estimate = sum(w y) / sum(w) over the domain. Its interval is Wilson's score
interval computed at Kish's effective sample size n_eff = (sum w)^2 / sum(w^2)
(the number of equally weighted outputs that would give the same precision;
Kish 1965, Survey Sampling), with x = estimate * n_eff. Why this: it is centred
on the estimate, stays inside [0, 1], is defined at 0 and 1 (where misses
usually are: a sample of negatives often finds none), and reduces to the
ordinary Wilson interval when all weights are equal; Wilson with an effective
sample size keeps close to nominal coverage for weighted proportions in
complex samples (Dean & Pagano 2015, Journal of Survey Statistics and
Methodology 3:484). Two alternatives were rejected: a stratified bootstrap,
which resamples no miss from a stratum where none was found and so reports
certainty ([1, 1]) exactly where misses hide; and a per-stratum Jeffreys
posterior, whose half pseudo-count per stratum dominates the many small strata
of this design and pulls the interval away from the estimate (with every
positive confirmed it would exclude a precision of 100%). The limitation of
n_eff is that the recall interval reflects the size of its domain, not directly
how many negatives were read: the false-omission row gives that directly (its
upper end times the kit's negatives bounds the misses that may hide there).

Cohen's kappa between two reviewers is `stats.agreement.cohens_kappa`, which the
occurrence audit's two readers share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stats.intervals import ConfidenceInterval
from stats.rates import NAN, z_value

CONFIDENCE = 0.95
METHOD = ("ratio estimator: each definite answer weighted by population / answered of its stratum; Wilson score "
          "interval at Kish's effective sample size (sum w)^2 / sum w^2")


@dataclass(frozen=True)
class Reviewed:
    """One definite answer: its weight, the kit's verdict and the reviewer's (True: absorbed)."""

    weight: float
    kit: bool
    reviewer: bool


@dataclass(frozen=True)
class Estimate:
    """A population share: the weighted estimate, its interval, the answers it rests on and their effective number."""

    statistic: float
    confidence_interval: ConfidenceInterval
    n: int
    effective_n: float


def _example() -> list[Reviewed]:
    """A stratum of 40 kit positives (10 reviewed, 9 confirmed) and one of 160 negatives (20 reviewed, 2 misses)."""
    return ([Reviewed(4.0, True, i < 9) for i in range(10)]
            + [Reviewed(8.0, False, i < 2) for i in range(20)])


def wilson(statistic: float, n: float, confidence_level: float = CONFIDENCE) -> ConfidenceInterval:
    """Wilson's score interval for a proportion observed as `statistic` out of a (possibly fractional) n.

    >>> ci = wilson(0.3, 10)  # as stats.rates.wilson_interval(3, 10)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.1078, 0.6032)
    """
    if not n > 0 or math.isnan(statistic):
        return ConfidenceInterval(NAN, NAN, confidence_level)
    z2 = z_value(confidence_level) ** 2
    centre = (statistic + z2 / (2 * n)) / (1 + z2 / n)
    half = math.sqrt(z2) * math.sqrt(statistic * (1 - statistic) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if statistic <= 0 else max(0.0, centre - half)
    high = 1.0 if statistic >= 1 else min(1.0, centre + half)
    return ConfidenceInterval(low, high, confidence_level)


def weighted_proportion(pairs, confidence_level: float = CONFIDENCE) -> Estimate:
    """sum(w y) / sum(w) over (w, y) pairs, with Wilson's interval at Kish's effective sample size.

    >>> result = weighted_proportion([(1.0, True)] * 3 + [(1.0, False)] * 7)  # equal weights: plain Wilson
    >>> result.statistic, result.effective_n, round(result.confidence_interval.low, 4)
    (0.3, 10.0, 0.1078)
    >>> result = weighted_proportion([(1.0, True), (9.0, False)])
    >>> result.statistic, round(result.effective_n, 3)
    (0.1, 1.22)
    >>> weighted_proportion([]).statistic
    nan
    """
    pairs = list(pairs)
    total = sum(w for w, _ in pairs)
    if not pairs or total <= 0:
        return Estimate(NAN, ConfidenceInterval(NAN, NAN, confidence_level), len(pairs), 0.0)
    statistic = sum(w for w, y in pairs if y) / total
    effective = total * total / sum(w * w for w, _ in pairs)
    return Estimate(statistic, wilson(statistic, effective, confidence_level), len(pairs), effective)


def precision(units: list[Reviewed]) -> Estimate:
    """The share of the kit's positives that are absorbed.

    >>> round(precision(_example()).statistic, 3)
    0.9
    """
    return weighted_proportion((u.weight, u.reviewer) for u in units if u.kit)


def recall(units: list[Reviewed]) -> Estimate:
    """The share of absorbed outputs that the kit calls absorbed.

    >>> result = recall(_example())  # 36 confirmed / (36 + 16 estimated misses)
    >>> round(result.statistic, 4), result.n
    (0.6923, 11)
    >>> ci = result.confidence_interval
    >>> 0.35 < ci.low < result.statistic < ci.high < 0.95
    True
    """
    return weighted_proportion((u.weight, u.kit) for u in units if u.reviewer)


def miss_rate(units: list[Reviewed]) -> Estimate:
    """The share of absorbed outputs that the kit calls not absorbed: 1 - recall.

    >>> round(miss_rate(_example()).statistic, 4)
    0.3077
    """
    return weighted_proportion((u.weight, not u.kit) for u in units if u.reviewer)


def false_omission(units: list[Reviewed]) -> Estimate:
    """The share of the kit's negatives that are absorbed (misses among them).

    >>> false_omission(_example()).statistic
    0.1
    """
    return weighted_proportion((u.weight, u.reviewer) for u in units if not u.kit)


def true_rate(units: list[Reviewed]) -> Estimate:
    """The share of outputs that are absorbed, as the reviewer would judge them all.

    >>> true_rate(_example()).statistic  # (36 + 16) / 200
    0.26
    """
    return weighted_proportion((u.weight, u.reviewer) for u in units)


def accuracy(units: list[Reviewed]) -> Estimate:
    """The share of outputs on which the kit and the reviewer agree.

    >>> accuracy(_example()).statistic  # (36 + 144) / 200
    0.9
    """
    return weighted_proportion((u.weight, u.kit == u.reviewer) for u in units)
