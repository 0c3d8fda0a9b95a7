"""validity.similarity.chrf gives bit-for-bit the floats of chrF computed the plain way.

The plain way is written out below, as the module docstring defines chrF: count every n-gram of both
texts, clip, average, combine. `chrf` counts the same integers by a shorter road (the common start and
end of the two texts are not counted gram by gram; a pair already scored is remembered), so its floats
must be equal, not close: the comparisons are `==`, on random texts made to share starts, ends and
repeats, and on the edge cases (empty, white space only, one character, equal texts, one inside the
other, a common start and end that overlap).
"""

import math
import random
import re
from collections import Counter

import pytest

from validity.similarity import chrf

WHITESPACE = re.compile(r"\s+")


def plain_chrf(hypothesis: str, reference: str, order: int = 6, beta: float = 2.0) -> float:
    hyp, ref = WHITESPACE.sub("", hypothesis), WHITESPACE.sub("", reference)
    precisions, recalls = [], []
    for n in range(1, order + 1):
        hyp_grams = Counter(hyp[i:i + n] for i in range(len(hyp) - n + 1))
        ref_grams = Counter(ref[i:i + n] for i in range(len(ref) - n + 1))
        hyp_total, ref_total = sum(hyp_grams.values()), sum(ref_grams.values())
        if not hyp_total or not ref_total:
            continue
        matched = sum(min(count, ref_grams[gram]) for gram, count in hyp_grams.items())
        precisions.append(matched / hyp_total)
        recalls.append(matched / ref_total)
    if not precisions:
        return 1.0 if hyp == ref else 0.0
    precision = math.fsum(precisions) / len(precisions)
    recall = math.fsum(recalls) / len(recalls)
    if precision + recall == 0:
        return 0.0
    return (1 + beta * beta) * precision * recall / (beta * beta * precision + recall)


EDGES = ["", " ", "\n\t ", "a", "b", "aa", "ab", "aba", "abba", "aaaa", "abab", "a b", "b a", "abcabc", "abcdef",
         "fedcba", "xabcx", "ab\u00a0cd", "\u2003", "é", "中文", "aXa", "aXXa", "The cat sat.", "The  cat\nsat.",
         "def f():\n    return 1\n", "def f():\n    return 2\n"]
ALPHABETS = ["ab", "abc", "ab \n", "a.b,c", "xyz\t", "aé中\u00a0", "abcdefghij"]


def edited(rng: random.Random, text: str, alphabet: str) -> str:
    """`text` with a few characters replaced, inserted or deleted: mostly the same start and end."""
    chars = list(text)
    for _ in range(rng.randint(0, 3)):
        where = rng.randint(0, len(chars))
        action = rng.choice("rid")
        if action == "i" or not chars:
            chars.insert(where, rng.choice(alphabet))
        elif action == "r":
            chars[min(where, len(chars) - 1)] = rng.choice(alphabet)
        else:
            del chars[min(where, len(chars) - 1)]
    return "".join(chars)


def random_pairs(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        alphabet = rng.choice(ALPHABETS)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        shape = rng.randrange(5)
        if shape == 0:  # unrelated
            other = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        elif shape == 1:  # an edit of it
            other = edited(rng, text, alphabet)
        elif shape == 2:  # it repeated, or with a piece added at either end
            other = rng.choice([text * 2, text + text[: rng.randint(0, len(text))], text[rng.randint(0, 5):] + text])
        elif shape == 3:  # a piece of it
            start = rng.randint(0, len(text))
            other = text[start:rng.randint(start, len(text))]
        else:
            other = text
        yield (text, other) if rng.random() < 0.5 else (other, text)


@pytest.mark.parametrize("order, beta", [(6, 2.0), (6, 2), (1, 2.0), (2, 1.0), (3, 0.5), (8, 3.7)])
def test_equal_to_the_plain_computation_on_edge_cases(order, beta):
    for hyp in EDGES:
        for ref in EDGES:
            want = plain_chrf(hyp, ref, order, beta)
            assert chrf(hyp, ref, order=order, beta=beta) == want, (hyp, ref, order, beta)


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_the_plain_computation_on_random_texts(seed):
    orders = [(6, 2.0), (1, 2.0), (3, 1.0), (7, 0.8)]
    for number, (hyp, ref) in enumerate(random_pairs(1500, seed)):
        order, beta = orders[number % len(orders)]
        want = plain_chrf(hyp, ref, order, beta)
        got = chrf(hyp, ref, order=order, beta=beta)
        assert got == want and type(got) is float, (hyp, ref, order, beta, got, want)
        assert chrf(hyp, ref, order=order, beta=beta) == want  # a second time: the pair is remembered


def test_equal_to_the_plain_computation_on_long_edited_texts():
    """Texts of the size of an edited passage, edited in a few places (so a long common start and end)."""
    rng = random.Random(7)
    words = "the of a study digital humans and technology area where intersect def return self x = 1 ( ) :".split()
    for _ in range(60):
        reference = " ".join(rng.choice(words) for _ in range(rng.randint(50, 150)))
        hypothesis = edited(rng, reference, "abcdefghijklmnop .")
        assert chrf(hypothesis, reference) == plain_chrf(hypothesis, reference), (hypothesis, reference)
