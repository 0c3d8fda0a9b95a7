"""Holm's step-down correction for a family of tests (here: the models, per contrast).

Holm controls the family-wise error rate like Bonferroni but rejects more: with
the m p-values sorted ascending, the adjusted value of the i-th (1-based) is
    max over j <= i of min(1, (m - j + 1) p_(j)),
so the adjusted values keep the order of the raw ones (monotone) and the
smallest is compared with alpha/m, Holm's strictest threshold.

Holm S (1979). A simple sequentially rejective multiple test procedure.
Scand J Statist 6:65-70.
"""

from __future__ import annotations

import math


def holm_adjust(pvalues) -> list[float]:
    """Holm-adjusted p-values in the input order. NaN entries (no test) stay NaN and
    are not counted in the family.

    >>> holm_adjust([0.01, 0.04, 0.03, 0.005])  # 4 x 0.005, 3 x 0.01, max(2 x 0.03, ...), then monotone
    [0.03, 0.06, 0.06, 0.02]
    >>> holm_adjust([0.01, float("nan")])
    [0.01, nan]
    """
    values = [float(p) for p in pvalues]
    for p in values:
        if not math.isnan(p) and not 0.0 <= p <= 1.0:
            raise ValueError(f"pvalues: expected numbers from 0 to 1 (or NaN for no test), got {p!r}")
    tested = sorted((p, i) for i, p in enumerate(values) if not math.isnan(p))
    m = len(tested)
    adjusted = list(values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def holm_adjust_rows(matrix):
    """Holm-adjusted p-values for each row of a 2-D numpy array (one family per row).

    The vectorised twin of `holm_adjust`, used by the resampling, where each of
    thousands of resamples is its own family of models.

    >>> holm_adjust_rows([[0.01, 0.04, 0.03], [0.02, 0.01, 0.5]]).tolist()
    [[0.03, 0.06, 0.06], [0.04, 0.03, 0.5]]
    """
    import numpy as np

    p = np.asarray(matrix, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"matrix: expected a 2-D array (one family per row), got {p.ndim} dimension(s)")
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1)
    scaled = np.minimum(1.0, ranked * np.arange(m, 0, -1, dtype=np.float64))
    monotone = np.maximum.accumulate(scaled, axis=1)
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, monotone, axis=1)
    return adjusted
