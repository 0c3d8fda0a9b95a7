"""How much of a reference remedy's reduction another remedy recovers: a ratio of two paired differences.

The guard study asks what inferring the seam buys against knowing it: on the same clusters, the base layout
(`newline`) absorbs at rate p_base, the oracle remedy (`boundary`, markers exactly where the paste ends) at
p_oracle, and the candidate (`guarded`, markers where the guard finds the seam) at p_candidate. The share of
the oracle's reduction the candidate recovers is

    share = (p_base - p_candidate) / (p_base - p_oracle)

1 when the candidate does all the oracle does, 0 when it does nothing, above 1 or below 0 when it does more
than the oracle or harm. Per cluster i, x_i = base_i - candidate_i and y_i = base_i - oracle_i (each -1, 0 or
1) are paired, so share = mean(x) / mean(y), and its interval is Fieller's (1954) for a ratio of two correlated
means: the shares theta that a z-test of mean(x - theta y) = 0 does not reject, which uses the covariance of x
and y (the pairing) and needs no resampling, so it is the same on every machine.

The set is a bounded interval only when the oracle's own reduction is distinguishable from 0 at the same
level (mean(y)^2 > z^2 Var(mean(y))); otherwise no interval is honest (the set is the whole line or two
rays), `bounded` is False and the interval's ends are NaN, and a table says "unbounded". The clusters used are
those usable under all three conditions. The quantile is the normal one (a large-sample interval; the study
has 300 clusters per model). Being a large-sample interval, it says little when the candidate's outcome differs
from the oracle's (or the base's) on only a handful of clusters (`discordant`, reported beside it): at none,
x = share * y on every cluster and the interval shrinks to the point itself, though the data cannot rule out a
share a few clusters away. Read `discordant` with it.

Fieller EC (1954). Some problems in interval estimation. JRSS B 16:175-185.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stats import arguments
from stats.intervals import ConfidenceInterval
from stats.rates import NAN, z_value
from stats.render import MISSING, Column, Table, interval_text, percent
from stats.settings import TableSettings
from stats.specs import RECOVERED

METHOD = "Fieller (1954) interval for a ratio of paired means, normal quantile"


@dataclass(frozen=True)
class RecoveredShare:
    """The share of the oracle's reduction the candidate recovers, on `n` clusters usable under all three.

    Shaped like a scipy.stats result: `statistic` is the share (NaN when n = 0 or the oracle reduces
    nothing on average), `confidence_interval` its Fieller interval (ends NaN when not `bounded`).
    """

    n: int
    base_absorbed: int
    candidate_absorbed: int
    oracle_absorbed: int
    discordant: int  # clusters where the candidate's outcome is not the oracle's
    statistic: float
    confidence_interval: ConfidenceInterval
    bounded: bool

    @property
    def reduction(self) -> float:
        """p_base - p_candidate: what the candidate buys (NaN when n = 0)."""
        return (self.base_absorbed - self.candidate_absorbed) / self.n if self.n else NAN

    @property
    def oracle_reduction(self) -> float:
        """p_base - p_oracle: what the oracle buys (NaN when n = 0)."""
        return (self.base_absorbed - self.oracle_absorbed) / self.n if self.n else NAN


def _outcomes(name: str, values: Sequence) -> tuple[int, ...]:
    out = []
    for index, value in enumerate(values):
        if value not in (0, 1) or isinstance(value, float):
            raise ValueError(f"{name}: expected 0/1 or False/True outcomes, got {value!r} at position {index}")
        out.append(int(value))
    return tuple(out)


def recovered_share(base: Sequence, candidate: Sequence, oracle: Sequence, *,
                    confidence_level: float = 0.95) -> RecoveredShare:
    """The share of the oracle's reduction from `base` that `candidate` recovers, with Fieller's interval.

    The three sequences hold one 0/1 outcome (absorbed or not) per cluster, in the same cluster order.

    >>> base, candidate, oracle = [1] * 40 + [0] * 60, [1] * 16 + [0] * 84, [1] * 10 + [0] * 90
    >>> result = recovered_share(base, candidate, oracle)
    >>> round(result.statistic, 4), result.bounded, round(result.confidence_interval.low, 3)
    (0.8, True, 0.649)
    >>> recovered_share([1, 0], [1, 0], [1, 0]).bounded  # the oracle buys nothing here: no interval
    False
    >>> recovered_share([1], [1, 0], [0])
    Traceback (most recent call last):
    ...
    ValueError: base, candidate, oracle: expected one outcome per cluster in each, got 1, 2 and 1
    """
    arguments.probability("confidence_level", confidence_level)
    base, candidate, oracle = (_outcomes(name, values) for name, values in
                               (("base", base), ("candidate", candidate), ("oracle", oracle)))
    if not len(base) == len(candidate) == len(oracle):
        raise ValueError("base, candidate, oracle: expected one outcome per cluster in each, got "
                         f"{len(base)}, {len(candidate)} and {len(oracle)}")
    n = len(base)
    counts = (n, sum(base), sum(candidate), sum(oracle), sum(c != o for c, o in zip(candidate, oracle, strict=True)))
    unbounded = ConfidenceInterval(NAN, NAN, confidence_level)
    if n < 2:
        share = (counts[1] - counts[2]) / (counts[1] - counts[3]) if counts[1] != counts[3] else NAN
        return RecoveredShare(*counts, share, unbounded, False)
    x = [b - c for b, c in zip(base, candidate, strict=True)]
    y = [b - o for b, o in zip(base, oracle, strict=True)]
    # Integer sums keep the moments exact up to the one division each: the same bits on every machine.
    sx, sy = sum(x), sum(y)
    sxx, syy, sxy = (sum(u * v for u, v in zip(p, q, strict=True)) for p, q in ((x, x), (y, y), (x, y)))
    mean_x, mean_y = sx / n, sy / n
    # Variances and covariance of the two means: the sample (co)variance, divisor n - 1, over n.
    vxx, vyy, vxy = ((n * s - a * b) / (n * n * (n - 1)) for s, a, b in ((sxx, sx, sx), (syy, sy, sy), (sxy, sx, sy)))
    share = sx / sy if sy else NAN
    z2 = z_value(confidence_level) ** 2
    # theta is in the set when (mean_x - theta mean_y)^2 <= z^2 (vxx - 2 theta vxy + theta^2 vyy), i.e.
    # a theta^2 - 2 b theta + c <= 0 with:
    a, b, c = mean_y * mean_y - z2 * vyy, mean_x * mean_y - z2 * vxy, mean_x * mean_x - z2 * vxx
    if a <= 0:  # the oracle's reduction is not distinguishable from 0: the set is not a bounded interval
        return RecoveredShare(*counts, share, unbounded, False)
    root = math.sqrt(max(b * b - a * c, 0.0))  # >= 0 in exact arithmetic: the estimate itself is in the set
    low, high = (b - root) / a, (b + root) / a
    return RecoveredShare(*counts, share, ConfidenceInterval(min(low, share), max(high, share), confidence_level),
                          True)


def recovered_share_of(base: Mapping[str, bool | None], candidate: Mapping[str, bool | None],
                       oracle: Mapping[str, bool | None], *, confidence_level: float = 0.95) -> RecoveredShare:
    """`recovered_share` on the clusters usable (True/False, not None) under all three conditions, as
    `outcomes[(model, condition)]` holds them (cluster id to outcome), in sorted cluster order.

    >>> recovered_share_of({"a": True, "b": True, "c": None}, {"a": False, "b": True, "c": True},
    ...                    {"a": False, "b": False, "c": False}).n
    2
    """
    clusters = sorted(k for k, v in base.items() if v is not None and candidate.get(k) is not None
                      and oracle.get(k) is not None)
    return recovered_share([base[k] for k in clusters], [candidate[k] for k in clusters],
                           [oracle[k] for k in clusters], confidence_level=confidence_level)


def recovered_name(candidate: str, base: str, oracle: str) -> str:
    """How a share is named in a condition file and the tables.

    >>> recovered_name("guarded", "newline", "boundary")
    'guarded of newline vs boundary'
    """
    return f"{candidate} of {base} vs {oracle}"


def recovered_table(outcomes: Mapping[tuple[str, str], Mapping[str, bool | None]], models: Sequence[str],
                    shares: Sequence[tuple[str, str, str]], settings: TableSettings, notes: Sequence[str]) -> Table:
    """recovered.csv: per share (candidate, base, oracle) whose three conditions the labels hold, per model.

    `outcomes[(model, condition)][cluster]` is True/False when usable, None when not (`LabelSet.outcomes`).

    >>> outcomes = {("m", "newline"): dict.fromkeys("abcd", True), ("m", "boundary"): dict.fromkeys("abcd", False),
    ...             ("m", "guarded"): {"a": True, "b": False, "c": False, "d": False}}
    >>> table = recovered_table(outcomes, ["m"], [("guarded", "newline", "boundary")], TableSettings(), [])
    >>> table.rows[0][5:13], table.display.rows[0][-1]  # a share's interval may pass 100%
    ((4, 4, 1, 0, 1, 0.75, 1.0, 0.75), '75.0 [26.0, 124.0]')
    """
    present = {condition for _, condition in outcomes}
    raw, shown = [], []
    for candidate, base, oracle in shares:
        if not {candidate, base, oracle} <= present:
            continue
        name = recovered_name(candidate, base, oracle)
        for model in models:
            r = recovered_share_of(*(outcomes.get((model, c), {}) for c in (base, candidate, oracle)),
                                   confidence_level=settings.confidence_level)
            if r.n == 0:  # the model lacks one of the three conditions, or no cluster is usable under all
                continue
            ci = r.confidence_interval
            raw.append((model, name, candidate, base, oracle, r.n, r.base_absorbed, r.candidate_absorbed,
                        r.oracle_absorbed, r.discordant, r.reduction, r.oracle_reduction, r.statistic, ci.low,
                        ci.high, r.bounded))
            share = (interval_text(r.statistic, ci.low, ci.high) if r.bounded else
                     MISSING if math.isnan(r.statistic) else f"{percent(r.statistic)}, unbounded")
            shown.append((name, model, r.n, r.base_absorbed, r.candidate_absorbed, r.oracle_absorbed, r.discordant,
                          r.reduction, r.oracle_reduction, share))
    level = f"{settings.confidence_level:.0%}"
    display = Table(RECOVERED.name, "", (
        Column("recovered", "Recovered"), Column("model", "Model"), Column("n", "n", "int"),
        Column("base", "Base absorbed", "int"), Column("candidate", "Candidate absorbed", "int"),
        Column("oracle", "Oracle absorbed", "int"), Column("discordant", "Candidate is not oracle", "int"),
        Column("reduction", "Candidate reduces (pp)", "proportion"),
        Column("oracle_reduction", "Oracle reduces (pp)", "proportion"),
        Column("share", f"Share recovered [{level} CI]", align="r")), tuple(shown))
    method = ("\"CANDIDATE of BASE vs ORACLE\": of the reduction in absorption from BASE to ORACLE (Oracle reduces, "
              "in percentage points), the share CANDIDATE recovers (Candidate reduces / Oracle reduces; 100% = all "
              "of it, 0% = none, below 0% = harm), per model on the n clusters usable under all three conditions. "
              f"{level} interval: Fieller (1954) for the ratio of the two paired mean differences, with their "
              "covariance over clusters and the normal quantile; 'unbounded' where the oracle's own reduction is "
              f"not distinguishable from 0 at {level}, so that no share is estimable. The reading holds where the "
              "oracle reduces absorption (Oracle reduces > 0); where it raises it, the ratio is no share of a "
              "reduction. Candidate is not oracle: clusters whose outcome under the candidate differs from the "
              "oracle's; with few of them the large-sample interval says little (none: a point). A share whose "
              "conditions a model lacks has no row (stats/recovered.py).")
    return RECOVERED.table("Share of the oracle's reduction recovered", raw, (method, *notes), display)
