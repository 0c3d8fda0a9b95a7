"""The entailment tier as the cascade sees it: pairs in, ENTAILMENT-or-not out, cache in between.

score.py and placebo.py only need `sha256` and `entails(pairs)`; the tests pass
a stand-in with the same two members. Here the real one: it looks every
unique pair up in the cache, sends the rest to the model in batches, stores
their logits after each chunk (a crash loses at most one chunk), and counts
what it did so the calls the cache saved can be reported.

The model is opened lazily, on the first pair the cache lacks: opening means
hashing the 1.6 GB model file against its manifest (seconds) and loading it
(more seconds, and memory), all wasted on a rescore the cache answers in full.
Until then only the manifest and labels.json are read (model_dir.identify):
the manifest's SHA-256 is the model's identity in labels and cache keys, and
labels.json says which output is ENTAILMENT.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from common.errors import UserError
from common.jsonl import LONE_SURROGATE
from scorer import model_dir, nli
from scorer.nli_cache import NliCache

CHUNK = 256  # pairs computed between two cache writes
_SURROGATE = LONE_SURROGATE


class Entailer(Protocol):
    sha256: str

    def entails(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], bool]: ...


def first_entailed(entailer: Entailer, waiting: dict[int, list[tuple[str, str]]]) -> dict[int, str | None]:
    """For each row's (premise, hypothesis) pairs, the first entailed premise or None: every row's pairs
    decided in one batch, each distinct pair once (score and placebo alike)."""
    if not waiting:
        return {}
    verdicts = entailer.entails(sorted({pair for pairs in waiting.values() for pair in pairs}))
    return {index: next((premise for premise, hypothesis in pairs if verdicts[(premise, hypothesis)]), None)
            for index, pairs in waiting.items()}


def unicode_text(text: str) -> str:
    """`text` with each lone surrogate (a JSON escape such as "\\udc80" in an old trace) as U+FFFD, the
    replacement character: what the tokenizer and the cache can take, and the same text otherwise."""
    return _SURROGATE.sub("\ufffd", text)


def argmax(values: list[float]) -> int:
    """Index of the largest value; the lowest index on a tie (as numpy does)."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


@dataclass
class ModelEntailer:
    """The real tier: a model directory (opened on the first cache miss), a cache, and counters."""

    directory: str | os.PathLike
    cache: NliCache
    threads: int = nli.DEFAULT_THREADS
    batch_size: int = nli.DEFAULT_BATCH_SIZE
    progress: Callable[[int, int], None] | None = None
    requested: int = 0  # unique pairs asked for
    cache_hits: int = 0
    computed: int = 0
    logits: dict = field(default_factory=dict)  # pair -> logits, of every pair asked for
    info: model_dir.ModelInfo = field(init=False)  # from the manifest and labels.json, checked
    session: nli.NliSession | None = field(init=False, default=None)  # None until a pair is not in the cache

    def __post_init__(self) -> None:
        self.directory = Path(self.directory)
        self.info = model_dir.identify(self.directory)

    @property
    def sha256(self) -> str:
        return self.info.sha256

    def entails(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], bool]:
        read_as = {pair: (unicode_text(pair[0]), unicode_text(pair[1])) for pair in set(pairs)}
        unique = sorted(set(read_as.values()))
        found = self.cache.get(self.sha256, unique)
        missing = [pair for pair in unique if pair not in found]
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start: start + CHUNK]
            values = nli.logits(self._opened(), chunk, self.batch_size)
            new = {pair: [float(x) for x in row] for pair, row in zip(chunk, values.tolist(), strict=True)}
            self.cache.put(self.sha256, new)
            found.update(new)
            if self.progress:
                self.progress(start + len(chunk), len(missing))
        self.requested += len(unique)
        self.cache_hits += len(unique) - len(missing)
        self.computed += len(missing)
        self.logits.update(found)
        index = self.info.entailment_index
        return {pair: argmax(found[text]) == index for pair, text in read_as.items()}

    def _opened(self) -> nli.NliSession:
        """The model session, verified against its manifest and opened the first time it is needed."""
        if self.session is None:
            session = nli.load(self.directory, threads=self.threads)  # checks every file's SHA-256 first
            if session.info != self.info:
                raise UserError(f"{self.directory / model_dir.MANIFEST}: changed while scoring (SHA-256 "
                                f"{self.info.sha256} when first read, {session.sha256} now); score again")
            self.session = session
        return self.session
