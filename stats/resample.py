"""Comment-pool resampling: does a reduction survive a different draw of casual comments?

The clusters share a small pool of casual comments, so clusters carrying the
same comment are not independent evidence: one unusually "absorbable" comment
could drive a contrast. Resampling the comments with replacement (each drawn
comment bringing all its clusters, as many times as it was drawn), recomputing
every model's exact McNemar test and Holm's correction across models, and
counting how often a model's reduction stays significant, shows how much a
conclusion depends on the particular pool.

The resamples are vectorised: per model and comment we count the discordant
pairs once; a resample is then a vector of draw counts per comment, and its
b and c for every model are one integer matrix product. Integer counts and
exact binomial tails keep the result identical on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass

from stats import arguments
from stats.holm import holm_adjust_rows
from stats.labels import LabelSet
from stats.paired import DEFAULT_SEED, binomial_half_cdf, mcnemar_exact, paired_table

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class ModelResampling:
    model: str
    n_pairs: int
    b: int
    c: int
    observed_significant: bool  # in the labels as they are (Holm across models, b > c)
    significant_resamples: int  # resamples in which the reduction is significant after Holm
    resamples: int

    @property
    def share(self) -> float:
        return self.significant_resamples / self.resamples

    @property
    def majority(self) -> bool:
        return 2 * self.significant_resamples > self.resamples

    @property
    def keeps(self) -> bool:
        """The model keeps its reduction: significant on the labels as they are *and* in a majority of
        resamples. A reduction that is not significant on the observed data is not one the pool could
        keep, however often a resample happens to make it significant."""
        return self.observed_significant and self.majority


@dataclass(frozen=True)
class ResamplingResult:
    first: str
    second: str
    resamples: int
    seed: int
    alpha: float
    comments: int  # size of the comment pool that was resampled
    clusters: int  # clusters carrying one of those comments
    models: tuple[ModelResampling, ...]

    @property
    def majority_models(self) -> int:
        """Models whose reduction is significant in more than half of the resamples (observed or not)."""
        return sum(m.majority for m in self.models)

    @property
    def kept_models(self) -> int:
        """Models that keep their reduction (`ModelResampling.keeps`): the count the summary reports."""
        return sum(m.keeps for m in self.models)


def mcnemar_matrix(b, c):
    """Exact McNemar p-values for integer arrays b and c of the same shape (the vectorised twin of
    `stats.paired.mcnemar_exact`, for thousands of resamples at once).

    >>> mcnemar_matrix([[6, 0], [5, 1]], [[16, 0], [0, 5]]).round(6).tolist()
    [[0.052479, 1.0], [0.0625, 0.21875]]
    """
    import numpy as np

    b = np.asarray(b, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    m = b + c
    low = np.minimum(b, c)
    width = int(m.max(initial=0)) + 1
    codes, inverse = np.unique(m * width + low, return_inverse=True)
    values = np.empty(len(codes), dtype=np.float64)
    for i, code in enumerate(codes.tolist()):
        total, smaller = divmod(code, width)
        values[i] = 1.0 if total == 0 else min(1.0, 2 * binomial_half_cdf(total)[smaller])
    return values[inverse.reshape(m.shape)]


def comment_pool_resampling(labels: LabelSet, first: str = "newline", second: str = "boundary", *,
                            resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                            alpha: float = 0.05) -> ResamplingResult:
    """Per model, how often the first-vs-second reduction stays significant after Holm.

    >>> from stats.labels import label_set_of
    >>> from stats.synthetic import label_row
    >>> rows = [label_row(model, f"humaneval-{i:03d}", condition, condition == "newline" or model == "flat",
    ...                   comment_id=f"casual-{i % 5:02d}")
    ...         for model in ("flat", "strong") for i in range(40) for condition in ("newline", "boundary")]
    >>> result = comment_pool_resampling(label_set_of(rows), resamples=200, seed=1)
    >>> [(m.model, m.b, m.c, m.observed_significant, m.share) for m in result.models]
    [('flat', 0, 0, False, 0.0), ('strong', 40, 0, True, 1.0)]
    >>> result.comments, result.clusters, result.majority_models, result.kept_models
    (5, 40, 1, 1)
    """
    import numpy as np

    arguments.count("resamples", resamples, minimum=1)
    arguments.count("seed", seed)
    arguments.probability("alpha", alpha)
    comments = sorted({info.casual_comment for info in labels.clusters.values() if info.casual_comment})
    index = {comment: g for g, comment in enumerate(comments)}
    family = []
    for model in labels.models:
        table = paired_table(labels.outcome(model, first), labels.outcome(model, second))
        if table.n:
            family.append((model, table))
    groups = len(comments)
    # discordant counts per model and comment
    b_by_group = np.zeros((len(family), groups), dtype=np.int64)
    c_by_group = np.zeros((len(family), groups), dtype=np.int64)
    for j, (model, _) in enumerate(family):
        one, two = labels.outcome(model, first), labels.outcome(model, second)
        for cluster, x in one.items():
            y = two.get(cluster)
            comment = labels.clusters[cluster].casual_comment
            if x is None or y is None or x == y or comment is None:
                continue
            (b_by_group if x else c_by_group)[j, index[comment]] += 1
    clusters = sum(1 for info in labels.clusters.values() if info.casual_comment)

    observed_p = [mcnemar_exact(t.first_only, t.second_only).pvalue for _, t in family]
    observed_holm = holm_adjust_rows(np.array([observed_p]))[0] if family else np.zeros(0)

    counts = np.zeros(len(family), dtype=np.int64)
    if family and groups:
        rng = np.random.Generator(np.random.PCG64(seed))
        chunk = max(1, 200_000 // groups)
        done = 0
        while done < resamples:
            size = min(chunk, resamples - done)
            draws = rng.integers(0, groups, size=(size, groups), dtype=np.int64)
            weights = np.zeros((size, groups), dtype=np.int64)
            np.add.at(weights, (np.repeat(np.arange(size), groups), draws.ravel()), 1)
            b = weights @ b_by_group.T
            c = weights @ c_by_group.T
            adjusted = holm_adjust_rows(mcnemar_matrix(b, c))
            counts += np.count_nonzero((adjusted < alpha) & (b > c), axis=0)
            done += size
    models = tuple(
        ModelResampling(model=model, n_pairs=table.n, b=table.first_only, c=table.second_only,
                        observed_significant=bool(observed_holm[j] < alpha
                                                  and table.first_only > table.second_only),
                        significant_resamples=int(counts[j]), resamples=resamples)
        for j, (model, table) in enumerate(family))
    return ResamplingResult(first=first, second=second, resamples=resamples, seed=seed, alpha=alpha,
                            comments=groups, clusters=clusters, models=models)
