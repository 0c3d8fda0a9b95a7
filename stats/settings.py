"""The settings of the absorption tables (and of the contrasts the validity tables borrow).

One frozen object, checked when it is made, so a table builder never meets a
level outside (0, 1) or a count below what it needs; `seam.py tables` fills it
from its options and provenance.json records it.
"""

from __future__ import annotations

from dataclasses import dataclass

from stats import arguments
from stats.paired import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from stats.resample import DEFAULT_RESAMPLES


@dataclass(frozen=True)
class TableSettings:
    """What the tables are computed with.

    >>> TableSettings(resamples=500).alpha
    0.05
    >>> TableSettings(power=1.0)
    Traceback (most recent call last):
    ...
    ValueError: power: expected a number strictly between 0 and 1, got 1.0
    """

    confidence_level: float = 0.95
    alpha: float = 0.05
    power: float = 0.8
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED  # of the resampling and of any Monte Carlo permutation test
    permutations: int = DEFAULT_PERMUTATIONS  # only used if a permutation test is not exact
    top: int = 10  # clusters listed at each end of the extremes table
    discordance: float | None = None  # resolution at this discordance instead of the observed one

    def __post_init__(self):
        for name in ("confidence_level", "alpha", "power"):
            arguments.probability(name, getattr(self, name))
        arguments.count("resamples", self.resamples, minimum=1)
        arguments.count("seed", self.seed)
        arguments.count("permutations", self.permutations, minimum=1)
        arguments.count("top", self.top)
        if self.discordance is not None:
            arguments.share("discordance", self.discordance)
