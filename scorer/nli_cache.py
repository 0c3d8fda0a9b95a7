"""A content-addressed store of entailment logits, so rescoring never recomputes a pair.

The key is the SHA-256 of (model checksum, premise, hypothesis): a different
model file can never be served another model's numbers, and the same pair is
computed once however many rows, runs or trace files share it. Logits are
stored, not labels, so a reader can see how close a decision was. Because the
inference is bitwise independent of batching (scorer/nli.py), a cached value
is exactly the value a fresh run would compute on the same machine.

The store is one sqlite3 file (standard library, safe against a crash mid-write).
`path=None` keeps it in memory, for an audit that must recompute everything.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from common.errors import UserError
from common.files import make_parent

_SCHEMA = """
CREATE TABLE IF NOT EXISTS logits (
    key TEXT PRIMARY KEY,
    model_sha256 TEXT NOT NULL,
    premise TEXT NOT NULL,
    hypothesis TEXT NOT NULL,
    logits TEXT NOT NULL
)
"""


def pair_key(model_sha256: str, premise: str, hypothesis: str) -> str:
    """The cache key: unambiguous because the three parts are JSON-encoded together."""
    payload = json.dumps([model_sha256, premise, hypothesis], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class NliCache:
    """Logits by (model, premise, hypothesis), in a sqlite3 file or in memory."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            make_parent(self.path)
        try:
            self._db = sqlite3.connect(str(self.path) if self.path is not None else ":memory:")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: not a usable cache file ({exc}); delete it to start afresh") from None

    def get(self, model_sha256: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[float]]:
        """Cached logits of those `pairs` that are in the cache."""
        found = {}
        for pair in pairs:
            row = self._db.execute("SELECT logits FROM logits WHERE key = ?",
                                   (pair_key(model_sha256, *pair),)).fetchone()
            if row is not None:
                found[pair] = json.loads(row[0])
        return found

    def put(self, model_sha256: str, items: dict[tuple[str, str], list[float]]) -> None:
        """Store logits; one transaction, so a crash stores all of them or none."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO logits VALUES (?, ?, ?, ?, ?)",
                [(pair_key(model_sha256, p, h), model_sha256, p, h, json.dumps(values))
                 for (p, h), values in sorted(items.items())],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM logits").fetchone()[0]

    def close(self) -> None:
        self._db.close()
