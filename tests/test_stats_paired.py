"""McNemar, sign-flip permutation and Newcombe's paired interval on hand-computable cases."""

import itertools
import math
from fractions import Fraction
from statistics import NormalDist

import pytest

from stats.paired import (
    PairedTable,
    compare_paired,
    mcnemar_exact,
    newcombe_paired_interval,
    paired_table,
    sign_flip_test,
)

Z = NormalDist().inv_cdf(0.975)


def binomial_two_sided(b, c):
    """Exact McNemar p from first principles, in fractions: 2 * sum_{k<=min} C(m, k) / 2^m, capped at 1."""
    m = b + c
    if m == 0:
        return Fraction(1)
    tail = sum(Fraction(math.comb(m, k), 2 ** m) for k in range(min(b, c) + 1))
    return min(Fraction(1), 2 * tail)


@pytest.mark.parametrize("b, c, expected", [
    (0, 0, Fraction(1)),          # no discordant pairs
    (0, 5, Fraction(2, 32)),      # all discordant one way: 2 * (1/2)^5
    (5, 0, Fraction(2, 32)),
    (1, 5, Fraction(14, 64)),     # 2 * (1 + 6) / 64
    (3, 3, Fraction(1)),          # balanced: capped at 1
    (0, 1, Fraction(1)),          # n = 1: 2 * 1/2
    (2, 8, Fraction(2 * (1 + 10 + 45), 1024)),
])
def test_mcnemar_hand_computed_tails(b, c, expected):
    result = mcnemar_exact(b, c)
    assert result.pvalue == float(expected)
    assert (result.statistic, result.discordant) == (b, b + c)


def test_mcnemar_matches_fraction_tails_over_a_grid():
    for b in range(0, 30, 3):
        for c in range(0, 30, 4):
            assert mcnemar_exact(b, c).pvalue == float(binomial_two_sided(b, c))


def test_mcnemar_published_example():
    # Cavo et al. (2012) in Fagerland, Lydersen & Laake (2017), Statistical Analysis of
    # Contingency Tables, ch. 8: exact conditional McNemar P = 0.052479 for b = 6, c = 16.
    assert round(mcnemar_exact(6, 16).pvalue, 6) == 0.052479


@pytest.mark.parametrize("b, c, message", [
    (-1, 2, "b: expected a whole number of at least 0, got -1"),
    (2, 1.5, "c: expected a whole number of at least 0, got 1.5"),
])
def test_mcnemar_rejects_bad_counts_naming_them(b, c, message):
    with pytest.raises(ValueError) as caught:
        mcnemar_exact(b, c)
    assert str(caught.value) == message


def brute_force_sign_flip(differences):
    """Enumerate every one of the 2^m sign vectors."""
    observed = abs(sum(differences))
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(differences)):
        total += 1
        hits += abs(sum(s * d for s, d in zip(signs, differences, strict=True))) >= observed
    return Fraction(hits, total)


@pytest.mark.parametrize("differences", [
    [1, 1, 1, -1, 0, 0, 1],
    [1, -1],
    [2, -1, 3, 0, 1, 1, -2],
    [5],
    [1] * 9 + [-1] * 2,
])
def test_exact_sign_flip_equals_brute_force_enumeration(differences):
    result = sign_flip_test(differences)
    assert result.method == "exact"
    assert result.pvalue == float(brute_force_sign_flip(differences))


@pytest.mark.parametrize("b, c, zeros", [(0, 0, 4), (0, 7, 3), (6, 16, 139), (12, 12, 0), (1, 0, 0),
                                         (40, 81, 170), (150, 150, 0)])
def test_exact_sign_flip_equals_exact_mcnemar(b, c, zeros):
    differences = [1] * b + [-1] * c + [0] * zeros
    assert sign_flip_test(differences).pvalue == mcnemar_exact(b, c).pvalue


def test_monte_carlo_sign_flip_is_seeded_and_close_to_exact():
    differences = [1] * 14 + [-1] * 5 + [0] * 10
    exact = sign_flip_test(differences).pvalue
    first = sign_flip_test(differences, exact=False, permutations=4000, seed=7)
    again = sign_flip_test(differences, exact=False, permutations=4000, seed=7)
    assert first == again
    assert first.method == "monte-carlo" and first.seed == 7 and first.permutations == 4000
    # (k + 1)/(R + 1): a whole number of hits
    hits = first.pvalue * 4001 - 1
    assert abs(hits - round(hits)) < 1e-6
    assert abs(first.pvalue - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000) + 1 / 4001


def test_monte_carlo_p_value_is_never_zero():
    result = sign_flip_test([1] * 60, exact=False, permutations=500, seed=1)
    assert result.pvalue == 1 / 501


def test_sign_flip_rejects_bad_arguments_naming_them():
    with pytest.raises(ValueError, match=r"^differences: expected whole numbers, got 0\.5$"):
        sign_flip_test([0.5, 1])
    with pytest.raises(ValueError, match=r"^permutations: expected a whole number of at least 1, got 0$"):
        sign_flip_test([1, 1, -1], exact=False, permutations=0)


def test_newcombe_published_example():
    # Fagerland, Lydersen & Laake (2017), ch. 8, Cavo et al. (2012) data [[59, 6], [16, 80]]:
    # Newcombe square-and-add interval -0.0621 (95% CI -0.1186 to -0.0046).
    table = PairedTable(59, 6, 16, 80)
    interval = newcombe_paired_interval(table)
    assert round(table.difference, 4) == -0.0621
    assert round(interval.low, 4) == -0.1186
    assert round(interval.high, 4) == -0.0046


@pytest.mark.parametrize("n", [1, 3, 50])
def test_newcombe_all_discordant_one_way(n):
    # p1 = 1, p2 = 0, phi = 0: L = 1 - sqrt(2) z^2/(n + z^2), U = 1
    interval = newcombe_paired_interval(PairedTable(0, n, 0, 0))
    assert interval.low == pytest.approx(1 - math.sqrt(2) * Z * Z / (n + Z * Z), rel=1e-12)
    assert interval.high == 1.0
    mirrored = newcombe_paired_interval(PairedTable(0, 0, n, 0))
    assert mirrored.low == -1.0
    assert mirrored.high == pytest.approx(-interval.low, rel=1e-12)


@pytest.mark.parametrize("n", [1, 10, 300])
def test_newcombe_no_discordant_pairs(n):
    # all pairs "neither": both margins 0, phi = 0, limits -/+ z^2/(n + z^2)
    interval = newcombe_paired_interval(PairedTable(0, 0, 0, n))
    assert interval.low == pytest.approx(-Z * Z / (n + Z * Z), rel=1e-12)
    assert interval.high == pytest.approx(Z * Z / (n + Z * Z), rel=1e-12)
    # concordant pairs of both kinds: the interval still contains 0 and has positive width
    mixed = newcombe_paired_interval(PairedTable(n, 0, 0, n))
    assert mixed.low < 0 < mixed.high


def newcombe_by_the_paper(a, b, c, d):
    """Method 10 written out from Newcombe (1998), with the phi branches spelled as in the paper."""
    n = a + b + c + d
    def wilson(k):
        centre = (2 * k + Z * Z) / (2 * (n + Z * Z))
        half = Z * math.sqrt(Z * Z + 4 * k * (1 - k / n)) / (2 * (n + Z * Z))
        return centre - half, centre + half
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b), wilson(a + c)
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    if denominator == 0:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(denominator)
    elif cross >= 0:
        phi = 0.0
    else:
        phi = cross / math.sqrt(denominator)
    dl1, du1, dl2, du2 = p1 - l1, u1 - p1, p2 - l2, u2 - p2
    diff = p1 - p2
    return (diff - math.sqrt(dl1 ** 2 - 2 * phi * dl1 * du2 + du2 ** 2),
            diff + math.sqrt(dl2 ** 2 - 2 * phi * dl2 * du1 + du1 ** 2))


@pytest.mark.parametrize("a, b, c, d", [
    (1, 1, 7, 12),   # 0 <= ad - bc <= n/2: phi = 0
    (3, 9, 2, 1),    # ad - bc < 0
    (20, 5, 9, 30),  # ad - bc > n/2
    (5, 1, 1, 5),
    (0, 4, 3, 0),
])
def test_newcombe_every_phi_branch_against_the_paper_formula(a, b, c, d):
    interval = newcombe_paired_interval(PairedTable(a, b, c, d))
    low, high = newcombe_by_the_paper(a, b, c, d)
    assert interval.low == pytest.approx(low, abs=1e-12)
    assert interval.high == pytest.approx(high, abs=1e-12)
    assert interval.low <= (b - c) / (a + b + c + d) <= interval.high


def test_newcombe_swapping_conditions_negates_the_interval():
    forward = newcombe_paired_interval(PairedTable(10, 7, 2, 40))
    backward = newcombe_paired_interval(PairedTable(10, 2, 7, 40))
    assert backward.low == pytest.approx(-forward.high, abs=1e-12)
    assert backward.high == pytest.approx(-forward.low, abs=1e-12)


def test_newcombe_empty_table_is_nan():
    interval = newcombe_paired_interval(PairedTable(0, 0, 0, 0))
    assert math.isnan(interval.low) and math.isnan(interval.high)


def test_paired_table_uses_only_clusters_usable_under_both():
    first = {"a": True, "b": True, "c": False, "d": False, "e": None, "f": True}
    second = {"a": True, "b": False, "c": True, "d": False, "e": True, "f": None}  # "g" absent in first
    second["g"] = True
    assert paired_table(first, second) == PairedTable(1, 1, 1, 1)


def test_compare_paired_reports_consistent_pieces():
    first = {f"k{i}": i % 3 != 0 for i in range(30)}
    second = {f"k{i}": i % 5 == 0 for i in range(30)}
    result = compare_paired(first, second)
    table = result.table
    assert table.n == 30
    assert result.difference == (table.first_only - table.second_only) / 30
    assert result.mcnemar == mcnemar_exact(table.first_only, table.second_only)
    assert result.mcnemar.pvalue == result.permutation.pvalue
    assert result.confidence_interval.low <= result.difference <= result.confidence_interval.high
    assert result.confidence_interval.confidence_level == 0.95
    narrower = compare_paired(first, second, confidence_level=0.8).confidence_interval
    assert narrower.confidence_level == 0.8
    assert result.confidence_interval.low < narrower.low < narrower.high < result.confidence_interval.high


def test_negative_counts_are_rejected():
    with pytest.raises(ValueError, match="^both, first_only, second_only, neither: expected whole numbers of at "
                                         "least 0, got 1, -1, 0, 0$"):
        PairedTable(1, -1, 0, 0)


def test_newcombe_and_wilson_share_one_interval_type():
    from stats.intervals import ConfidenceInterval
    from stats.rates import wilson_interval
    paired = newcombe_paired_interval(PairedTable(3, 2, 1, 4), confidence_level=0.9)
    assert type(paired) is type(wilson_interval(3, 10)) is ConfidenceInterval
    assert paired.confidence_level == 0.9
    with pytest.raises(ValueError, match="^confidence_level: expected a number strictly between 0 and 1, got 1.5$"):
        newcombe_paired_interval(PairedTable(0, 0, 0, 0), confidence_level=1.5)
