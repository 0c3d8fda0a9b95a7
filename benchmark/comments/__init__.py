"""The comment pools, written for SEAM: 24 casual comments and genre-native ones per register.

Casual comments (`casual.jsonl`) are what a person types after a paste: about
their day, the text's audience or a deadline, never about the edit itself.
Native comments (`native.jsonl`) fit the artifact's genre (a code comment after
code, a sentence in a paper's register after an abstract), so they are harder
to tell from the pasted text; their meaning differs from every casual comment.

Each comment has a `witness`, a distinctive multi-word phrase taken from its
text (the scorer's first tier looks for it), and a `proposition`, its idea as
one sentence (the entailment hypothesis).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.normalize import contains_phrase
from common.records import Comment

HERE = Path(__file__).resolve().parent
REGISTERS = ("code", "encyclopedic", "literary", "scientific", "technical")


@dataclass(frozen=True)
class PoolComment:
    """A comment in a pool; `record()` is the comment a cluster carries (`common.records.Comment`)."""

    id: str
    text: str
    witness: str
    proposition: str
    register: str | None = None  # native comments only

    def record(self) -> Comment:
        return Comment(self.id, self.text, self.witness, self.proposition)


def _load(path: Path, native: bool) -> list[PoolComment]:
    comments = []
    for number, row in jsonl.read(path):
        expected = {"id", "text", "witness", "proposition"} | ({"register"} if native else set())
        if set(row) != expected or not all(isinstance(v, str) and v for v in row.values()):
            raise UserError(f"{path}:{number}: expected non-empty string fields {sorted(expected)}")
        comment = PoolComment(**row)
        if not contains_phrase(comment.text, comment.witness) or len(comment.witness.split()) < 2:
            raise UserError(f"{path}:{number}: witness {comment.witness!r} must be a phrase of two or more "
                            "words from the comment's text")
        if native and comment.register not in REGISTERS:
            raise UserError(f"{path}:{number}: register {comment.register!r} is not one of {REGISTERS}")
        comments.append(comment)
    return comments


def casual_pool(path: Path = HERE / "casual.jsonl") -> list[PoolComment]:
    return _load(path, native=False)


def native_pools(path: Path = HERE / "native.jsonl") -> dict[str, list[PoolComment]]:
    pools: dict[str, list[PoolComment]] = {register: [] for register in REGISTERS}
    for comment in _load(path, native=True):
        pools[comment.register].append(comment)
    return pools
