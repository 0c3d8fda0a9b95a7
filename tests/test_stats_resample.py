"""Comment-pool resampling: the vectorised version against a plain loop over the same draws."""

import numpy as np
import pytest

from stats.holm import holm_adjust
from stats.labels import label_set_of
from stats.paired import mcnemar_exact
from stats.resample import comment_pool_resampling, mcnemar_matrix
from stats.synthetic import label_row, synthetic_labels


def label_set(rows):
    return label_set_of(rows)


def slow_resampling(labels, resamples, seed, alpha=0.05):
    """Draw the same comments, rebuild each resample's clusters and test model by model."""
    comments = sorted({c.casual_comment for c in labels.clusters.values() if c.casual_comment})
    by_comment = {c: [k for k, info in labels.clusters.items() if info.casual_comment == c] for c in comments}
    models = [m for m in labels.models
              if any(x is not None and labels.outcome(m, "boundary").get(k) is not None
                     for k, x in labels.outcome(m, "newline").items())]
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = rng.integers(0, len(comments), size=(resamples, len(comments)), dtype=np.int64)
    counts = dict.fromkeys(models, 0)
    for row in draws:
        clusters = [k for g in row for k in by_comment[comments[g]]]
        tables = []
        for model in models:
            one, two = labels.outcome(model, "newline"), labels.outcome(model, "boundary")
            b = sum(1 for k in clusters if one.get(k) is True and two.get(k) is False)
            c = sum(1 for k in clusters if one.get(k) is False and two.get(k) is True)
            tables.append((b, c))
        adjusted = holm_adjust([mcnemar_exact(b, c).pvalue for b, c in tables])
        for model, (b, c), p in zip(models, tables, adjusted, strict=True):
            counts[model] += p < alpha and b > c
    return counts


def test_vectorised_resampling_matches_a_plain_loop():
    labels = label_set(synthetic_labels(4, 48, comments=8, seed=11))
    result = comment_pool_resampling(labels, resamples=60, seed=9)
    expected = slow_resampling(labels, 60, 9)
    assert {m.model: m.significant_resamples for m in result.models} == expected
    assert result.comments == 8 and result.clusters == 48 and result.resamples == 60


def test_same_seed_same_result_and_seed_is_recorded():
    labels = label_set(synthetic_labels(3, 36, comments=6, seed=2))
    first = comment_pool_resampling(labels, resamples=200, seed=4)
    assert first == comment_pool_resampling(labels, resamples=200, seed=4)
    assert first.seed == 4


def rows_for(model, outcomes_newline, outcomes_boundary):
    rows = []
    for i, (x, y) in enumerate(zip(outcomes_newline, outcomes_boundary, strict=True)):
        for condition, absorbed in (("newline", x), ("boundary", y)):
            rows.append(label_row(model, f"humaneval-{i:03d}", condition, absorbed, comment_id=f"casual-{i % 5:02d}"))
    return rows


def test_clear_reduction_survives_and_no_difference_never_does():
    n = 60
    strong = rows_for("strong", [True] * n, [False] * n)
    flat = rows_for("flat", [i % 2 == 0 for i in range(n)], [i % 2 == 0 for i in range(n)])
    reverse = rows_for("reverse", [False] * n, [True] * n)
    result = comment_pool_resampling(label_set(strong + flat + reverse), resamples=300, seed=1)
    by_model = {m.model: m for m in result.models}
    strong_result = by_model["strong"]
    assert strong_result.share == 1.0 and strong_result.majority and strong_result.observed_significant
    assert by_model["flat"].significant_resamples == 0 and not by_model["flat"].majority
    assert by_model["reverse"].significant_resamples == 0  # significant, but an increase, not a reduction
    assert result.majority_models == 1


def test_mcnemar_matrix_matches_the_scalar_test():
    b = np.array([[0, 3, 10], [7, 0, 40]])
    c = np.array([[0, 9, 10], [1, 5, 2]])
    expected = [[mcnemar_exact(x, y).pvalue for x, y in zip(rb, rc, strict=True)]
                for rb, rc in zip(b, c, strict=True)]
    assert mcnemar_matrix(b, c).tolist() == expected


@pytest.mark.parametrize("kwargs, message", [
    ({"resamples": 0}, "resamples: expected a whole number of at least 1, got 0"),
    ({"seed": -1}, "seed: expected a whole number of at least 0, got -1"),
    ({"alpha": 0.0}, "alpha: expected a number strictly between 0 and 1, got 0.0"),
])
def test_bad_arguments_name_the_parameter(kwargs, message):
    with pytest.raises(ValueError) as caught:
        comment_pool_resampling(label_set(synthetic_labels(1, 6, comments=2)), **kwargs)
    assert str(caught.value) == message
