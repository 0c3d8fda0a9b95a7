"""The one confidence-interval type of stats/: every interval is a `ConfidenceInterval`.

Wilson's interval for a rate (`stats.rates`) and Newcombe's for a paired
difference (`stats.paired`) come back as the same small object, like the shared
`ConfidenceInterval` of scipy.stats results, and carry the level they were
computed at, so a caller never has to remember which level an interval had.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stats import arguments


@dataclass(frozen=True)
class ConfidenceInterval:
    """[low, high] at `confidence_level`; both ends NaN when there was nothing to estimate from.

    >>> ConfidenceInterval(0.25, 0.5, 0.95)
    ConfidenceInterval(low=0.25, high=0.5, confidence_level=0.95)
    >>> ConfidenceInterval(0.5, 0.25, 0.95)
    Traceback (most recent call last):
    ...
    ValueError: low, high: expected low <= high (or both NaN), got low=0.5, high=0.25
    """

    low: float
    high: float
    confidence_level: float

    def __post_init__(self):
        arguments.probability("confidence_level", self.confidence_level)
        if math.isnan(self.low) != math.isnan(self.high) or self.low > self.high:
            raise ValueError(f"low, high: expected low <= high (or both NaN), got low={self.low!r}, "
                             f"high={self.high!r}")
