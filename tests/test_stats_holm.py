"""Holm's step-down adjustment: hand example, monotonicity, the rejection rule, NaN handling."""

import math
import random

import numpy as np
import pytest

from stats.holm import holm_adjust, holm_adjust_rows


def test_hand_computed_example():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_single_test_is_unchanged_and_caps_at_one():
    assert holm_adjust([0.2]) == [0.2]
    assert holm_adjust([0.6, 0.7]) == [1.0, 1.0]


def step_down_rejections(pvalues, alpha):
    """Holm's procedure as stated: reject while p_(i) <= alpha / (m - i + 1), then stop."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = set()
    for rank, i in enumerate(order):
        if pvalues[i] <= alpha / (len(pvalues) - rank):
            rejected.add(i)
        else:
            break
    return rejected


def test_monotone_bounded_and_equivalent_to_the_step_down_rule():
    rng = random.Random(3)
    for _ in range(300):
        m = rng.randint(1, 12)
        p = [rng.choice([rng.random(), rng.random() ** 4, 0.01, 0.0125]) for _ in range(m)]
        adjusted = holm_adjust(p)
        for i in range(m):
            assert p[i] <= adjusted[i] <= min(1.0, m * p[i]) + 1e-15
            for j in range(m):
                if p[i] <= p[j]:
                    assert adjusted[i] <= adjusted[j]  # monotone in the raw p-values
        for alpha in (0.05, 0.01):
            assert {i for i in range(m) if adjusted[i] <= alpha} == step_down_rejections(p, alpha)


def test_nan_is_left_out_of_the_family():
    adjusted = holm_adjust([0.01, float("nan"), 0.02])
    assert math.isnan(adjusted[1])
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.02)


def test_row_version_agrees_with_the_scalar_version():
    rng = np.random.default_rng(5)
    matrix = rng.random((50, 7)) ** 3
    matrix[3] = [0.01] * 7  # ties
    rows = holm_adjust_rows(matrix)
    for raw, adjusted in zip(matrix, rows, strict=True):
        assert adjusted.tolist() == pytest.approx(holm_adjust(raw.tolist()), abs=0)


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_out_of_range_p_values_are_rejected(bad):
    with pytest.raises(ValueError) as caught:
        holm_adjust([0.2, bad])
    assert str(caught.value) == f"pvalues: expected numbers from 0 to 1 (or NaN for no test), got {bad}"


def test_rows_need_two_dimensions():
    with pytest.raises(ValueError, match=r"^matrix: expected a 2-D array \(one family per row\), got 1 dimension"):
        holm_adjust_rows([0.1, 0.2])
