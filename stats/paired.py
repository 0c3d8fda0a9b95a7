"""Paired comparisons of two conditions on the same clusters.

A contrast compares condition 1 with condition 2 for one model, on the clusters
where both are usable. The 2x2 table of those pairs has a (both absorbed),
b (only condition 1), c (only condition 2) and d (neither); the difference of
absorption rates is (b - c) / n. Only the discordant pairs b and c carry
information about it, which is what the tests below use:

* exact McNemar test: under "no difference" each discordant pair is equally
  likely to go either way, so b ~ Binomial(b + c, 1/2); two-sided p =
  min(1, 2 P(X <= min(b, c))), and p = 1 when there are no discordant pairs.
* sign-flip permutation test: under the same null the sign of each paired
  difference x_i - y_i is exchangeable, so the p-value is the share of the
  2^m sign assignments whose |sum| is at least the observed one. Its exact value
  equals the exact McNemar p-value for 0/1 outcomes; both are reported so that
  a reader can check that.
* Newcombe's hybrid score interval for the paired difference (method 10 of
  Newcombe 1998), built from the Wilson intervals of the two marginal rates.

Newcombe RG (1998). Improved confidence intervals for the difference between
binomial proportions based on paired data. Stat Med 17:2635-2650.
McNemar Q (1947). Note on the sampling error of the difference between
correlated proportions or percentages. Psychometrika 12:153-157.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cache

from stats import arguments
from stats.intervals import ConfidenceInterval
from stats.rates import NAN, wilson_interval

# Above this many (state x step) updates the exact sign-flip distribution is
# replaced by Monte Carlo. 0/1 outcomes never get near it (at most n^2 / 2).
EXACT_WORK_LIMIT = 10_000_000
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_SEED = 20250605


@dataclass(frozen=True)
class PairedTable:
    """Counts of the paired 2x2 table; 'first' and 'second' are the two conditions.

    >>> table = PairedTable(both=59, first_only=6, second_only=16, neither=80)
    >>> table.n, table.discordant, round(table.difference, 4)
    (161, 22, -0.0621)
    """

    both: int
    first_only: int  # b
    second_only: int  # c
    neither: int

    def __post_init__(self):
        counts = (self.both, self.first_only, self.second_only, self.neither)
        if any(isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0 for x in counts):
            raise ValueError("both, first_only, second_only, neither: expected whole numbers of at least 0, "
                             f"got {', '.join(map(repr, counts))}")

    @property
    def n(self) -> int:
        return self.both + self.first_only + self.second_only + self.neither

    @property
    def discordant(self) -> int:
        return self.first_only + self.second_only

    @property
    def difference(self) -> float:
        """Rate under the first condition minus rate under the second (NaN when n = 0)."""
        return (self.first_only - self.second_only) / self.n if self.n else NAN


def paired_table(first: dict[str, bool | None], second: dict[str, bool | None]) -> PairedTable:
    """The table over clusters usable (True/False, not None) under both conditions.

    >>> paired_table({"a": True, "b": True, "c": None}, {"a": True, "b": False, "c": False})
    PairedTable(both=1, first_only=1, second_only=0, neither=0)
    """
    a = b = c = d = 0
    for cluster, x in first.items():
        y = second.get(cluster)
        if x is None or y is None:
            continue
        if x and y:
            a += 1
        elif x:
            b += 1
        elif y:
            c += 1
        else:
            d += 1
    return PairedTable(a, b, c, d)


@cache
def binomial_half_cdf(m: int) -> tuple[float, ...]:
    """P(X <= t) for X ~ Binomial(m, 1/2), t = 0..m, each correctly rounded from exact integers.

    >>> binomial_half_cdf(3)
    (0.125, 0.5, 0.875, 1.0)
    """
    arguments.count("m", m)
    total = 1 << m
    cumulative, term, out = 0, 1, []
    for k in range(m + 1):
        cumulative += term
        out.append(cumulative / total)  # int / int: correctly rounded on every platform
        term = term * (m - k) // (k + 1)
    return tuple(out)


@dataclass(frozen=True)
class McNemarResult:
    """The exact McNemar test of one paired table.

    `statistic` is b, the discordant pairs that went the first way; under "no
    difference" it is Binomial(`discordant`, 1/2), and `pvalue` is two-sided.
    """

    statistic: int
    discordant: int  # b + c
    pvalue: float


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """Two-sided exact McNemar test: p = min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2).

    >>> result = mcnemar_exact(6, 16)  # Fagerland, Lydersen & Laake (2017), ch. 8: P = 0.052479
    >>> result.statistic, result.discordant, round(result.pvalue, 6)
    (6, 22, 0.052479)
    >>> mcnemar_exact(0, 0).pvalue  # no discordant pairs: nothing against "no difference"
    1.0
    """
    arguments.count("b", b)
    arguments.count("c", c)
    if b + c == 0:
        return McNemarResult(b, 0, 1.0)
    return McNemarResult(b, b + c, min(1.0, 2 * binomial_half_cdf(b + c)[min(b, c)]))


@dataclass(frozen=True)
class PermutationResult:
    """The sign-flip permutation test of paired differences."""

    statistic: int  # |sum of paired differences|
    pvalue: float
    method: str  # "exact" or "monte-carlo"
    permutations: int  # 2^m for exact, the number of random sign vectors otherwise
    seed: int | None  # None for exact


def _sign_flip_distribution(differences: list[int]) -> dict[int, int] | None:
    """{sum: number of sign vectors giving it} over all 2^m sign flips, or None if too costly.

    Pairs with the same |d| contribute |d| (2k - g) with multiplicity C(g, k) when k of
    their g signs are +, so the distribution is a convolution of one binomial per
    distinct |d|: exact, in integers, and cheap for 0/1 outcomes (one group).
    """
    groups: dict[int, int] = {}
    for d in differences:
        if d:
            groups[abs(d)] = groups.get(abs(d), 0) + 1
    distribution = {0: 1}
    work = 0
    for value, count in sorted(groups.items()):
        work += len(distribution) * (count + 1)
        if work > EXACT_WORK_LIMIT:
            return None
        step = {value * (2 * k - count): math.comb(count, k) for k in range(count + 1)}
        merged: dict[int, int] = {}
        for s, ways in distribution.items():
            for t, more in step.items():
                merged[s + t] = merged.get(s + t, 0) + ways * more
        distribution = merged
    return distribution


def sign_flip_test(differences, *, permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED,
                   exact: bool | None = None) -> PermutationResult:
    """Two-sided paired sign-flip permutation test of mean difference 0, on integer differences.

    Exact (full enumeration of the sign-flip distribution, grouped by sum) unless that
    would exceed `EXACT_WORK_LIMIT` or `exact=False`; then Monte Carlo with `permutations`
    random sign vectors from a numpy PCG64 generator seeded with `seed`, reporting
    (k + 1) / (R + 1) where k of the R vectors reach the observed |sum| (never 0, and
    a valid p-value: Phipson & Smyth 2010, Stat Appl Genet Mol Biol 9:39).

    >>> result = sign_flip_test([1, 1, 1, -1, 0])  # 4 non-zero: 10 of the 16 sign vectors reach |sum| 2
    >>> result.statistic, result.pvalue, result.method, result.permutations
    (2, 0.625, 'exact', 16)
    """
    values = [int(d) for d in differences]
    for value, given in zip(values, differences, strict=True):
        if value != given:
            raise ValueError(f"differences: expected whole numbers, got {given!r}")
    observed = abs(sum(values))
    nonzero = [v for v in values if v]
    if not nonzero:
        return PermutationResult(0, 1.0, "exact", 1, None)
    distribution = None if exact is False else _sign_flip_distribution(nonzero)
    if distribution is not None:
        hits = sum(ways for s, ways in distribution.items() if abs(s) >= observed)
        return PermutationResult(observed, hits / (1 << len(nonzero)), "exact", 1 << len(nonzero), None)
    arguments.count("permutations", permutations, minimum=1)
    arguments.count("seed", seed)
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(seed))
    magnitudes = np.array(nonzero, dtype=np.int64)
    hits, done, chunk = 0, 0, max(1, 2_000_000 // len(nonzero))
    while done < permutations:
        size = min(chunk, permutations - done)
        signs = rng.integers(0, 2, size=(size, len(nonzero)), dtype=np.int64) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ magnitudes) >= observed))
        done += size
    return PermutationResult(observed, (hits + 1) / (permutations + 1), "monte-carlo", permutations, seed)


def newcombe_paired_interval(table: PairedTable, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Newcombe's (1998) method 10 for p1 - p2 from paired data (hybrid score, no continuity correction
    of the Wilson limits).

    With Wilson limits (l1, u1) for p1 = (a+b)/n and (l2, u2) for p2 = (a+c)/n:
        L = D - sqrt((p1-l1)^2 - 2 phi (p1-l1)(u2-p2) + (u2-p2)^2)
        U = D + sqrt((p2-l2)^2 - 2 phi (p2-l2)(u1-p1) + (u1-p1)^2)
    where phi estimates the correlation of the two margins: with A = ad - bc and
    P = (a+b)(c+d)(a+c)(b+d), phi = (A - n/2)/sqrt(P) if A > n/2, 0 if 0 <= A <= n/2,
    A/sqrt(P) if A < 0, and 0 when P = 0.

    >>> ci = newcombe_paired_interval(PairedTable(59, 6, 16, 80))  # Fagerland et al. (2017): -0.1186 to -0.0046
    >>> round(ci.low, 4), round(ci.high, 4), ci.confidence_level
    (-0.1186, -0.0046, 0.95)
    """
    arguments.probability("confidence_level", confidence_level)
    n = table.n
    if n == 0:
        return ConfidenceInterval(NAN, NAN, confidence_level)
    a, b, c, d = table.both, table.first_only, table.second_only, table.neither
    p1, p2 = (a + b) / n, (a + c) / n
    w1, w2 = wilson_interval(a + b, n, confidence_level), wilson_interval(a + c, n, confidence_level)
    product = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if product:
        cross = a * d - b * c
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(product)
        elif cross < 0:
            phi = cross / math.sqrt(product)
    low1, high1 = p1 - w1.low, w1.high - p1
    low2, high2 = p2 - w2.low, w2.high - p2
    delta = math.sqrt(max(0.0, low1 ** 2 - 2 * phi * low1 * high2 + high2 ** 2))
    epsilon = math.sqrt(max(0.0, low2 ** 2 - 2 * phi * low2 * high1 + high1 ** 2))
    difference = (b - c) / n
    return ConfidenceInterval(max(-1.0, difference - delta), min(1.0, difference + epsilon), confidence_level)


@dataclass(frozen=True)
class PairedComparison:
    """One contrast for one model: the table, the difference p1 - p2 with its Newcombe interval, and
    the two tests of "no difference" (exact McNemar, sign-flip permutation)."""

    table: PairedTable
    difference: float  # p1 - p2 = (b - c) / n; NaN when n = 0
    confidence_interval: ConfidenceInterval
    mcnemar: McNemarResult
    permutation: PermutationResult


def compare_paired(first: dict[str, bool | None], second: dict[str, bool | None], *,
                   confidence_level: float = 0.95, permutations: int = DEFAULT_PERMUTATIONS,
                   seed: int = DEFAULT_SEED) -> PairedComparison:
    """Everything the contrasts table reports for two conditions of one model.

    >>> first = {"a": True, "b": True, "c": True, "d": False}
    >>> second = {"a": False, "b": False, "c": True, "d": None}
    >>> result = compare_paired(first, second)
    >>> result.table.n, round(result.difference, 4), result.mcnemar.pvalue, result.permutation.pvalue
    (3, 0.6667, 0.5, 0.5)
    """
    table = paired_table(first, second)
    differences = [int(x) - int(second[k]) for k, x in sorted(first.items())
                   if x is not None and second.get(k) is not None]
    return PairedComparison(
        table=table,
        difference=table.difference,
        confidence_interval=newcombe_paired_interval(table, confidence_level),
        mcnemar=mcnemar_exact(table.first_only, table.second_only),
        permutation=sign_flip_test(differences, permutations=permutations, seed=seed),
    )
