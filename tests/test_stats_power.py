"""Resolution: the reference figure, a hand value, and the exact power it promises."""

import math

import pytest

from stats.paired import mcnemar_exact
from stats.power import detectable_difference


def test_reproduces_the_original_benchmarks_figure():
    # 11.6 percentage points at 300 pairs across 20 models, discordance about 0.27
    assert round(100 * detectable_difference(300, 0.27, tests=20).difference, 1) == 11.6


def test_hand_value_with_tabulated_quantiles():
    # z_0.975 = 1.959964, z_0.80 = 0.841621 (normal tables); sqrt(0.25 / 100) = 0.05
    result = detectable_difference(100, 0.25, tests=1)
    assert result.difference == pytest.approx((1.959964 + 0.841621) * 0.05, abs=1e-6)
    assert result.threshold == 0.05


def exact_power(n, psi, delta, level):
    """Power of the exact McNemar test, summing over the number of discordant pairs."""
    q = (psi + delta) / (2 * psi)  # chance a discordant pair goes the first way
    total = 0.0
    for m in range(n + 1):
        weight = math.comb(n, m) * psi ** m * (1 - psi) ** (n - m)
        if weight < 1e-14:
            continue
        for b in range(m // 2 + 1, m + 1):
            if mcnemar_exact(b, m - b).pvalue < level:
                total += weight * math.comb(m, b) * q ** b * (1 - q) ** (m - b)
    return total


@pytest.mark.parametrize("n, psi, tests", [(300, 0.27, 20), (100, 0.25, 1), (200, 0.1, 5)])
def test_the_resolution_gives_about_the_promised_power(n, psi, tests):
    result = detectable_difference(n, psi, tests=tests)
    assert 0.72 < exact_power(n, psi, result.difference, result.threshold) < 0.88


def test_more_models_or_fewer_pairs_mean_coarser_resolution():
    base = detectable_difference(300, 0.27, tests=5).difference
    assert detectable_difference(300, 0.27, tests=20).difference > base
    assert detectable_difference(100, 0.27, tests=5).difference > base
    assert detectable_difference(300, 0.10, tests=5).difference < base


@pytest.mark.parametrize("n, psi", [(11, 3 / 11), (12, 0.25), (10, 0.0)])
def test_no_resolution_when_no_difference_that_large_can_exist(n, psi):
    # |b - c| <= b + c, so a detectable difference above the discordance (or any at discordance 0)
    # does not exist: the exact McNemar test reaches 80% power at no feasible difference
    assert all(exact_power(n, psi, psi * k / 20, 0.05) < 0.8 for k in range(1, 21) if psi)
    assert math.isnan(detectable_difference(n, psi).difference)


def test_no_pairs_gives_nan():
    assert math.isnan(detectable_difference(0, 0.3, tests=3).difference)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_pairs=10, discordance=1.5), "discordance: expected a number from 0 to 1, got 1.5"),
    (dict(n_pairs=10, discordance=0.2, tests=0), "tests: expected a whole number of at least 1, got 0"),
    (dict(n_pairs=-1, discordance=0.2), "n_pairs: expected a whole number of at least 0, got -1"),
    (dict(n_pairs=10, discordance=0.2, power=1), "power: expected a number strictly between 0 and 1, got 1"),
    (dict(n_pairs=10, discordance=0.2, alpha=True), "alpha: expected a number strictly between 0 and 1, got True"),
])
def test_bad_arguments_name_the_parameter_and_what_it_allows(kwargs, message):
    with pytest.raises(ValueError) as caught:
        detectable_difference(**kwargs)
    assert str(caught.value) == message
