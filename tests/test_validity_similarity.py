"""chrF against hand-computed values, and its documented choices (white space, beta, short texts)."""

import math

import pytest

from validity.similarity import chrf, unchanged


def test_identical_texts_score_one_and_disjoint_texts_zero():
    assert chrf("The quick brown fox.", "The quick brown fox.") == 1.0
    assert chrf("abc", "xyz") == 0.0


def test_hand_computed_value():
    # hyp "ab", ref "abc": n=1 P=2/2 R=2/3; n=2 P=1/1 R=1/2; n>=3 the hypothesis has none.
    # chrP = 1, chrR = 7/12, F2 = 5 * 1 * 7/12 / (4 * 1 + 7/12) = 7/11
    assert math.isclose(chrf("ab", "abc"), 7 / 11, rel_tol=1e-12)


def test_counts_are_clipped():
    # hyp "aaaa" vs ref "a": only order 1 applies; 1 of 4 hypothesis unigrams match. P = 1/4, R = 1.
    assert math.isclose(chrf("aaaa", "a"), 5 * 0.25 * 1 / (4 * 0.25 + 1), rel_tol=1e-12)


def test_white_space_is_ignored_case_is_not():
    assert chrf("the  cat\nsat", "thecat sat") == 1.0
    assert chrf("The cat", "the cat") < 1.0


def test_recall_weighs_more_than_precision():
    reference = "abcdefgh"
    missing_half = chrf("abcd", reference)  # precise but incomplete
    doubled = chrf("abcdefghzzzzzzzz", reference)  # complete but with extra text
    assert doubled > missing_half


def test_texts_without_any_ngram():
    assert chrf("", "") == 1.0
    assert chrf("   ", "") == 1.0
    assert chrf("", "abc") == 0.0


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        chrf("a", "a", order=0)
    with pytest.raises(ValueError):
        chrf("a", "a", beta=0)


def test_unchanged_ignores_only_white_space():
    assert unchanged("def f():\n    return 1\n", "def f():\n  return 1")
    assert not unchanged("def f():\n    return 2", "def f():\n    return 1")
