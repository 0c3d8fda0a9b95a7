"""Wilson intervals against published values and closed forms."""

import math
from statistics import NormalDist

import pytest

from stats.rates import proportion, wilson_interval

Z = NormalDist().inv_cdf(0.975)


# Newcombe (1998), Stat Med 17:857-872, Table II, method 3 (Wilson score, no continuity correction).
@pytest.mark.parametrize("count, n, low, high", [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_matches_newcombe_1998_table(count, n, low, high):
    interval = wilson_interval(count, n)
    assert round(interval.low, 4) == low
    assert round(interval.high, 4) == high


@pytest.mark.parametrize("n", [1, 2, 7, 300])
def test_wilson_limits_at_zero_and_n_have_closed_forms(n):
    # with k = 0 the upper limit solves the score equation exactly: z^2 / (n + z^2)
    zero = wilson_interval(0, n)
    assert zero.low == 0.0
    assert zero.high == pytest.approx(Z * Z / (n + Z * Z), rel=1e-12)
    full = wilson_interval(n, n)
    assert full.high == 1.0
    assert full.low == pytest.approx(n / (n + Z * Z), rel=1e-12)


@pytest.mark.parametrize("count, n", [(0, 5), (3, 10), (17, 40), (299, 300)])
def test_wilson_is_mirror_symmetric_and_contains_the_estimate(count, n):
    a, b = wilson_interval(count, n), wilson_interval(n - count, n)
    assert a.low == pytest.approx(1 - b.high, abs=1e-12)
    assert a.high == pytest.approx(1 - b.low, abs=1e-12)
    assert a.low <= count / n <= a.high


def test_wilson_limits_are_roots_of_the_score_equation():
    # the limits are the p where (k/n - p)^2 = z^2 p (1 - p) / n
    k, n = 13, 37
    for p in (wilson_interval(k, n).low, wilson_interval(k, n).high):
        assert (k / n - p) ** 2 == pytest.approx(Z * Z * p * (1 - p) / n, rel=1e-9)


def test_wider_at_higher_confidence():
    assert wilson_interval(5, 20, 0.99).low < wilson_interval(5, 20, 0.95).low


def test_empty_sample_gives_nan_not_an_error():
    result = proportion(0, 0)
    assert math.isnan(result.statistic)
    assert math.isnan(result.confidence_interval.low) and math.isnan(result.confidence_interval.high)


def test_every_interval_carries_its_level():
    assert wilson_interval(5, 20).confidence_level == 0.95
    assert proportion(5, 20, 0.9).confidence_interval.confidence_level == 0.9
    assert proportion(0, 0, 0.99).confidence_interval.confidence_level == 0.99


@pytest.mark.parametrize("count, n, message", [
    (-1, 3, "count: expected a whole number from 0 to n = 3, got -1"),
    (4, 3, "count: expected a whole number from 0 to n = 3, got 4"),
    (0.5, 3, "count: expected a whole number from 0 to n = 3, got 0.5"),
    (0, -1, "n: expected a whole number of at least 0, got -1"),
])
def test_bad_counts_name_the_parameter(count, n, message):
    with pytest.raises(ValueError) as caught:
        wilson_interval(count, n)
    assert str(caught.value) == message


@pytest.mark.parametrize("level", [1.0, 0, 1.5, float("nan")])
def test_bad_confidence_level_is_rejected_even_without_data(level):
    for n in (2, 0):
        with pytest.raises(ValueError, match="^confidence_level: expected a number strictly between 0 and 1, got"):
            wilson_interval(0, n, level)
