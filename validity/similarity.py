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

import math
import re
from collections import Counter

ORDER = 6
BETA = 2.0
_WHITESPACE = re.compile(r"\s+")


def _ngrams(text: str, n: int) -> Counter:
    return Counter(text[i:i + n] for i in range(len(text) - n + 1))


def chrf(hypothesis: str, reference: str, *, order: int = ORDER, beta: float = BETA) -> float:
    """chrF of `hypothesis` against `reference`, in [0, 1] (see the module docstring)."""
    if order < 1 or beta <= 0:
        raise ValueError(f"need order >= 1 and beta > 0, got order={order}, beta={beta}")
    hyp = _WHITESPACE.sub("", hypothesis)
    ref = _WHITESPACE.sub("", reference)
    precisions, recalls = [], []
    for n in range(1, order + 1):
        hyp_grams, ref_grams = _ngrams(hyp, n), _ngrams(ref, n)
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
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def unchanged(edited: str, artifact: str) -> bool:
    """Whether the edit changed nothing but white space (the model handed the text back as it was)."""
    return _WHITESPACE.sub("", edited) == _WHITESPACE.sub("", artifact)
