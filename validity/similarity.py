"""How close an edited text is to the reference edit: a character n-gram F-score (chrF).

A signal, not a verdict: it shows whether a condition changes how much (or
how well) the model edits, where the benchmark has a reference edit
(wikipedia: the passage before the typos were injected; humaneval: the
original function; fissix: the 2to3 output). Returning the artifact unchanged
already scores high when the task is a small fix, which is why the tables also
give that baseline and count unchanged outputs.

Definition (Popović 2015, the original chrF):
* all white space is removed from both texts (as sacrebleu's default does), no
  other normalisation: case and punctuation count;
* for n = 1..6, the character n-grams of each text are counted, and
  P_n = matched / hypothesis n-grams, R_n = matched / reference n-grams, where
  matched n-grams are clipped counts (min of the two counts per n-gram);
* chrP and chrR are the plain averages of P_n and R_n over the orders n for
  which both texts have at least one n-gram;
* chrF = (1 + beta^2) chrP chrR / (beta^2 chrP + chrR) with beta = 2 (recall
  weighs twice as much as precision); 0 when chrP + chrR = 0. When no order
  applies (a text shorter than one character after removing white space), the
  score is 1 if the two texts are equal and 0 otherwise.
This is also what sacrebleu computes by default (sentence chrF, /100); only its
`eps_smoothing=True` option averages per-order F-scores instead. Where no order
applies, sacrebleu gives 0 even to two equal texts.

Popović M (2015). chrF: character n-gram F-score for automatic MT evaluation.
WMT 2015, 392-395.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter

ORDER = 6
BETA = 2.0
_WHITESPACE = re.compile(r"\s+")


def chrf(hypothesis: str, reference: str, *, order: int = ORDER, beta: float = BETA) -> float:
    """chrF of `hypothesis` against `reference`, in [0, 1] (see the module docstring)."""
    if order < 1 or beta <= 0:
        raise ValueError(f"need order >= 1 and beta > 0, got order={order}, beta={beta}")
    return _chrf(hypothesis, reference, order, beta)


# The validity tables score the same pair more than once (an output repeated across conditions or models, an
# artifact handed back unchanged and the unedited baseline): the last 4,096 distinct pairs are remembered.
@functools.lru_cache(maxsize=4096, typed=True)
def _chrf(hypothesis: str, reference: str, order: int, beta: float) -> float:
    hyp = _WHITESPACE.sub("", hypothesis)
    ref = _WHITESPACE.sub("", reference)
    prefix, suffix = _common_ends(hyp, ref)
    precisions, recalls = [], []
    for n in range(1, order + 1):
        hyp_total, ref_total = len(hyp) - n + 1, len(ref) - n + 1
        if hyp_total <= 0 or ref_total <= 0:
            continue
        matched = _matched(hyp, ref, n, prefix, suffix)
        precisions.append(matched / hyp_total)
        recalls.append(matched / ref_total)
    if not precisions:
        return 1.0 if hyp == ref else 0.0
    precision = math.fsum(precisions) / len(precisions)
    recall = math.fsum(recalls) / len(recalls)
    if precision + recall == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


# How the matches are counted. The floats above are computed from exact integers (n-gram totals and clipped
# matches), so any way of counting the same integers gives bit-for-bit the same score; this one avoids
# building most n-grams. An edit usually keeps the start and end of its text: the n-grams lying wholly
# inside the common prefix (or wholly inside the common suffix) are the same n-grams in both texts and
# each matches itself, so they are counted without being built, and only the n-grams in between are
# counted one by one (min(a + c, b + c) = c + min(a, b) for the c copies both sides share).


def _common_ends(a: str, b: str) -> tuple[int, int]:
    """The lengths of the longest common prefix and, in what is left, the longest common suffix."""
    prefix = _common_prefix(a, b)
    rest = min(len(a), len(b)) - prefix
    return prefix, _common_prefix(a[:-rest - 1:-1], b[:-rest - 1:-1])  # the last `rest` characters, reversed


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (a binary search on slices: compared in C, not per character)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _matched(hyp: str, ref: str, n: int, prefix: int, suffix: int) -> int:
    """The clipped n-gram matches: over every n-gram, the smaller of its counts in the two texts.

    Only an n-gram of both texts can match, so the longer text's n-grams are counted only where the shorter
    text has them: the n-grams kept are at most those of the shorter text, however long the other is (a
    5 MB reply against a reference of a few hundred characters once took gigabytes of n-grams).
    """
    shared = max(0, prefix - n + 1) + max(0, suffix - n + 1)
    short, long = sorted((_between(hyp, n, prefix, suffix), _between(ref, n, prefix, suffix)), key=len)
    ours = _ngrams(short, n)
    theirs = Counter(filter(ours.__contains__, _each_ngram(long, n)))
    return shared + sum(map(min, map(ours.__getitem__, theirs), theirs.values()))


def _between(text: str, n: int, prefix: int, suffix: int) -> str:
    """The part of `text` whose n-grams are exactly those not wholly inside the common prefix or suffix."""
    first = max(0, prefix - n + 1)  # the first n-gram that ends past the prefix
    last = min(len(text) - n, len(text) - suffix - 1)  # the last that starts before the suffix
    return text[first:last + n] if last >= first else ""


def _ngrams(text: str, n: int) -> Counter:
    """The n-grams of `text` counted (`_each_ngram`)."""
    return Counter(_each_ngram(text, n))


def _each_ngram(text: str, n: int):
    """The n-grams of `text` one by one, each as a tuple of characters (zip builds them in C, faster than
    slicing): the text shifted by 0..n-1 characters, zipped up to the shortest shift. The shifts are iterators
    over the text, not copies of it."""
    return zip(*(itertools.islice(text, k, None) for k in range(n)), strict=False)


def unchanged(edited: str, artifact: str) -> bool:
    """Whether the edit changed nothing but white space (the model handed the text back as it was)."""
    return _WHITESPACE.sub("", edited) == _WHITESPACE.sub("", artifact)
