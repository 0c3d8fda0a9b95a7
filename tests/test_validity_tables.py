"""The validity contrasts: Holm's adjustment runs across the models of each contrast."""

from validity.tables import Options, clean_contrast_rows

CLUSTERS = [f"humaneval-{i:03d}" for i in range(1, 7)]


def test_contrasts_are_holm_adjusted_across_models():
    outcomes = {
        ("a", "clean"): dict.fromkeys(CLUSTERS, False), ("a", "boundary"): dict.fromkeys(CLUSTERS, True),
        ("b", "clean"): dict.fromkeys(CLUSTERS, False),
        ("b", "boundary"): {c: i < 2 for i, c in enumerate(CLUSTERS)},
    }
    rows = {row.model: row for row in clean_contrast_rows(outcomes, ["a", "b"], Options())}
    # exact McNemar: a has 6 discordant pairs, all one way: 2 * (1/2)^6 = 1/32; b has 2: 2 * (1/2)^2 = 1/2.
    # Holm over the two models: a 2 * 1/32 = 1/16, no longer below 0.05; b max(1/16, 1 * 1/2) = 1/2
    assert rows["a"].result.mcnemar.pvalue == 1 / 32
    assert (rows["a"].adjusted_pvalue, rows["a"].significant) == (1 / 16, False)
    assert (rows["b"].adjusted_pvalue, rows["b"].significant) == (1 / 2, False)
    assert (rows["a"].first, rows["a"].second) == ("boundary", "clean")


def test_a_model_without_pairs_is_left_out_of_the_holm_family():
    outcomes = {("a", "clean"): dict.fromkeys(CLUSTERS, False), ("a", "boundary"): dict.fromkeys(CLUSTERS, True),
                ("b", "clean"): dict.fromkeys(CLUSTERS), ("b", "boundary"): dict.fromkeys(CLUSTERS)}
    rows = {row.model: row for row in clean_contrast_rows(outcomes, ["a", "b"], Options())}
    assert (rows["a"].adjusted_pvalue, rows["a"].significant) == (1 / 32, True)  # a family of one
    assert rows["b"].significant is None
