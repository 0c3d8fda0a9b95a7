"""Agreement between two raters of the same cases, for the review's two reviewers and the occurrence audit's
two readers alike: their answers crossed (`cross`), the raw agreement on the definite ones with a Wilson
interval, and Cohen's kappa (`cohens_kappa`), with one wording of the result and one record of it.

Kappa (Cohen 1960, Educational and Psychological Measurement 20:37) is the agreement beyond what the two
raters' own marginal shares would give by chance: (po - pe) / (1 - pe). Its large-sample standard error is
Fleiss, Cohen & Everitt's (1969, Psychological Bulletin 72:323), with a Wald interval clipped to [-1, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from common import jsonl
from stats.intervals import ConfidenceInterval
from stats.rates import NAN, Proportion, proportion, z_value
from stats.render import interval_text

CONFIDENCE = 0.95
KAPPA_METHOD = "Cohen (1960); Fleiss, Cohen & Everitt (1969) standard error; Wald interval"


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa with its Fleiss-Cohen-Everitt standard error and a Wald interval (clipped to [-1, 1]).

    >>> k = cohens_kappa([[9, 1], [1, 9]])
    >>> round(k.statistic, 2), round(k.observed_agreement, 2), round(k.expected_agreement, 2)
    (0.8, 0.9, 0.5)
    """

    statistic: float
    standard_error: float
    confidence_interval: ConfidenceInterval
    n: int
    observed_agreement: float
    expected_agreement: float


def cohens_kappa(table: list[list[int]], confidence_level: float = CONFIDENCE) -> Kappa:
    """Kappa of a square table of counts (rows: one rater's categories, columns: the other's, same order).

    Var = [sum_i p_ii ((1 - pe) - (p_i. + p_.i)(1 - po))^2 + (1 - po)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
           - (po pe - 2 pe + po)^2] / (n (1 - pe)^4)   (Fleiss, Cohen & Everitt 1969).

    >>> k = cohens_kappa([[20, 5], [10, 15]])
    >>> round(k.statistic, 4), round(k.standard_error, 4), k.n
    (0.4, 0.127, 50)
    >>> cohens_kappa([[0, 0], [0, 0]]).statistic
    nan
    """
    n = sum(map(sum, table))
    size = len(table)
    nan_ci = ConfidenceInterval(NAN, NAN, confidence_level)
    if n == 0:
        return Kappa(NAN, NAN, nan_ci, 0, NAN, NAN)
    p = [[count / n for count in row] for row in table]
    rows = [sum(p[i]) for i in range(size)]
    cols = [sum(p[i][j] for i in range(size)) for j in range(size)]
    po = sum(p[i][i] for i in range(size))
    pe = sum(rows[i] * cols[i] for i in range(size))
    if pe >= 1:  # both raters used one category only: kappa is undefined
        return Kappa(NAN, NAN, nan_ci, n, po, pe)
    kappa = (po - pe) / (1 - pe)
    diagonal = sum(p[i][i] * ((1 - pe) - (rows[i] + cols[i]) * (1 - po)) ** 2 for i in range(size))
    off = sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(size) for j in range(size) if i != j)
    variance = (diagonal + (1 - po) ** 2 * off - (po * pe - 2 * pe + po) ** 2) / (n * (1 - pe) ** 4)
    se = math.sqrt(max(variance, 0.0))
    z = z_value(confidence_level)
    ci = ConfidenceInterval(max(-1.0, kappa - z * se), min(1.0, kappa + z * se), confidence_level)
    return Kappa(kappa, se, ci, n, po, pe)


@dataclass(frozen=True)
class Crossing:
    """Two raters' answers to the same cases crossed: `table[i][j]` counts the cases the first answered
    `categories[i]` and the second `categories[j]`; agreement and kappa are on the definite categories only.

    >>> c = cross({1: "yes", 2: "no", 3: "unsure"}, {1: "yes", 2: "yes", 3: "no", 4: "no"}, ("yes", "no", "unsure"))
    >>> c.table, c.both, c.definite, c.agreement.count, c.disagreements
    (((1, 0, 0), (1, 0, 0), (0, 1, 0)), 3, 2, 1, ((2, 'no', 'yes'), (3, 'unsure', 'no')))
    """

    categories: tuple[str, ...]
    table: tuple[tuple[int, ...], ...]
    both: int  # cases both raters answered
    definite: int  # … both in a definite category
    agreement: Proportion  # raw agreement on those, with a Wilson interval
    kappa: Kappa
    disagreements: tuple[tuple[int, str, str], ...]  # (case, first's answer, second's answer)

    def summary(self, definite_words: str = "definite", on: str = "the definite ones") -> str:
        """One sentence for a table's notes and the terminal; `definite_words` names the definite categories, `on`
        the cases agreement is measured on.

        >>> print(cross({1: "a", 2: "b"}, {1: "a", 2: "b"}, ("a", "b")).summary())  # doctest: +NORMALIZE_WHITESPACE
        Cases answered by both: 2; both definite: 2. Raw agreement on the definite ones: 100.0 [34.2, 100.0] %
        (Wilson). Cohen's kappa: 1.000 (n = 2; standard error 0: no Wald interval).
        """
        ci, kappa = self.agreement.confidence_interval, self.kappa
        if kappa.statistic != kappa.statistic:
            told = f"not defined (n = {kappa.n})"
        elif kappa.standard_error == 0:
            told = f"{kappa.statistic:.3f} (n = {kappa.n}; standard error 0: no Wald interval)"
        else:
            kci = kappa.confidence_interval
            told = (f"{kappa.statistic:.3f} [{kci.low:.3f}, {kci.high:.3f}] (n = {kappa.n}; Fleiss-Cohen-Everitt "
                    f"standard error {kappa.standard_error:.3f}, Wald interval)")
        return (f"Cases answered by both: {self.both}; both {definite_words}: {self.definite}. Raw agreement on "
                f"{on}: {interval_text(self.agreement.statistic, ci.low, ci.high)} % (Wilson). Cohen's kappa: {told}.")

    def record(self) -> dict:
        """The numbers as a provenance file holds them.

        >>> sorted(cross({1: "a"}, {1: "a"}, ("a", "b")).record())
        ['agreement', 'agreement_ci', 'both', 'both_definite', 'kappa', 'kappa_ci', 'kappa_method', 'kappa_se']
        """
        ci, kci = self.agreement.confidence_interval, self.kappa.confidence_interval
        return {"both": self.both, "both_definite": self.definite, "agreement": jsonl.number(self.agreement.statistic),
                "agreement_ci": [jsonl.number(ci.low), jsonl.number(ci.high)],
                "kappa": jsonl.number(self.kappa.statistic),
                "kappa_ci": [jsonl.number(kci.low), jsonl.number(kci.high)],
                "kappa_se": jsonl.number(self.kappa.standard_error), "kappa_method": KAPPA_METHOD}


def cross(first: dict[int, str], second: dict[int, str], categories: tuple[str, ...], definite: int = 2,
          confidence_level: float = CONFIDENCE) -> Crossing:
    """Cross two raters' answers (case -> category) on the cases both answered; the first `definite` categories
    are the definite ones (the rest, such as "unsure", are counted and left out of agreement and kappa).

    >>> cross({1: "a"}, {1: "c"}, ("a", "b"))
    Traceback (most recent call last):
    ...
    ValueError: categories: 'c' is not one of ('a', 'b')
    """
    both = sorted(set(first) & set(second))
    for answer in (*(first[n] for n in both), *(second[n] for n in both)):
        if answer not in categories:
            raise ValueError(f"categories: {answer!r} is not one of {categories}")
    table = tuple(tuple(sum(first[n] == u and second[n] == v for n in both) for v in categories) for u in categories)
    square = [list(row[:definite]) for row in table[:definite]]
    n_definite = sum(map(sum, square))
    agree = proportion(sum(square[i][i] for i in range(definite)), n_definite, confidence_level)
    disagreements = tuple((n, first[n], second[n]) for n in both if first[n] != second[n])
    return Crossing(categories, table, len(both), n_definite, agree, cohens_kappa(square, confidence_level),
                    disagreements)
