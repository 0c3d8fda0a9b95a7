"""The entailment tier as the cascade sees it: pairs in, ENTAILMENT-or-not out, cache in between.

score.py and placebo.py only need `sha256` and `entails(pairs)`; the tests pass
a stand-in with the same two members. Here the real one: it looks every
unique pair up in the cache, sends the rest to the model in batches, stores
their logits after each chunk (a crash loses at most one chunk), and counts
what it did so the calls the cache saved can be reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from scorer import nli
from scorer.nli_cache import NliCache

CHUNK = 256  # pairs computed between two cache writes


class Entailer(Protocol):
    sha256: str

    def entails(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], bool]: ...


def argmax(values: list[float]) -> int:
    """Index of the largest value; the lowest index on a tie (as numpy does)."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


@dataclass
class ModelEntailer:
    """The real tier: an opened model, a cache, and counters."""

    session: nli.NliSession
    cache: NliCache
    batch_size: int = nli.DEFAULT_BATCH_SIZE
    progress: Callable[[int, int], None] | None = None
    requested: int = 0  # unique pairs asked for
    cache_hits: int = 0
    computed: int = 0
    logits: dict = field(default_factory=dict)  # pair -> logits, of every pair asked for

    @property
    def sha256(self) -> str:
        return self.session.sha256

    def entails(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], bool]:
        unique = sorted(set(pairs))
        found = self.cache.get(self.sha256, unique)
        missing = [pair for pair in unique if pair not in found]
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start: start + CHUNK]
            values = nli.logits(self.session, chunk, self.batch_size)
            new = {pair: [float(x) for x in row] for pair, row in zip(chunk, values.tolist(), strict=True)}
            self.cache.put(self.sha256, new)
            found.update(new)
            if self.progress:
                self.progress(start + len(chunk), len(missing))
        self.requested += len(unique)
        self.cache_hits += len(unique) - len(missing)
        self.computed += len(missing)
        self.logits.update(found)
        index = self.session.info.entailment_index
        return {pair: argmax(found[pair]) == index for pair in unique}
