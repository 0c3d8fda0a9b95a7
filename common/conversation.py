"""What one request sends a model: an optional system prompt, earlier turns, and the last user message.

The paper's requests are one user message and nothing else, and a request of
the kit is still exactly that unless its condition says otherwise
(docs/CONDITIONS.md, `system`, `turns`). A conversation is the one shape every
provider builds its body from (`runner.providers`), the estimator prices and the
trace fingerprints, so that a system prompt or an earlier turn is never sent by
one stage and missed by another.

`message` is the last user message, the one the remark trails (or would trail,
for a control): what the guard marks, the scorer's message and a harness's
prompt. `earlier` holds the turns before it, user and assistant alternating,
starting with a user turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common import jsonl
from common.errors import UserError
from common.files import sha256_text
from common.rows import Record, exact_fields, items, one_of, text

ROLES = ("user", "assistant")
MAX_EARLIER = 100  # turns before the message a request row may hold: a conversation, not a chat log


@dataclass(frozen=True)
class Turn(Record):
    """One earlier turn of a conversation: who said it, and the text."""

    role: str  # one of ROLES
    text: str

    @classmethod
    def from_row(cls, row: Any, where: str) -> Turn:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a turn object (role, text)")
        exact_fields(row, cls, where)
        # never empty (`text`): Anthropic and Gemini refuse an empty turn with HTTP 400
        return cls(role=one_of(row, "role", ROLES, where), text=text(row, "text", where))


def read_conversation(row: dict, where: str) -> dict:
    """A request row's optional `system` and `earlier`, checked, as keyword arguments for `Request` (none when
    the row has neither: the paper's request)."""
    found: dict = {}
    if "system" in row:
        found["system"] = text(row, "system", where)
    if "earlier" in row:
        turns = items(row, "earlier", dict, where, "a list of turn objects (role, text), or no such field")
        if not 1 <= len(turns) <= MAX_EARLIER:
            raise UserError(f"{where}: field 'earlier' holds {len(turns):,} turns, expected 1 to {MAX_EARLIER}, or "
                            "no such field")
        earlier = tuple(Turn.from_row(turn, f"{where}: earlier turn {i + 1}") for i, turn in enumerate(turns))
        roles = tuple(turn.role for turn in earlier)
        if roles != ROLES * (len(roles) // 2) or len(roles) % 2:
            raise UserError(f"{where}: field 'earlier' holds turns of {', '.join(roles)}, expected user and "
                            "assistant alternating, from a user turn, ending with an assistant turn")
        found["earlier"] = earlier
    return found


@dataclass(frozen=True)
class Conversation:
    """A request's whole input. A bare message (no system prompt, no earlier turn) is the paper's request."""

    message: str
    system: str | None = None
    earlier: tuple[Turn, ...] = ()

    def __post_init__(self) -> None:
        roles = tuple(turn.role for turn in self.earlier)
        if roles != ROLES * (len(roles) // 2) or len(roles) % 2:
            raise ValueError(f"earlier turns must alternate user, assistant from a user turn, got {roles}")

    @property
    def bare(self) -> bool:
        """Whether this is one user message and nothing else."""
        return self.system is None and not self.earlier

    @property
    def turns(self) -> tuple[Turn, ...]:
        """Every turn in order, the last user message included (the system prompt is not a turn)."""
        return (*self.earlier, Turn("user", self.message))

    @property
    def parts(self) -> tuple[str, ...]:
        """Every text sent, in order, the system prompt first: what the estimator counts tokens of."""
        return ((self.system,) if self.system is not None else ()) + tuple(turn.text for turn in self.turns)

    @property
    def sha256(self) -> str:
        """The fingerprint a trace row records (`message_sha256`): of the message's UTF-8 bytes for a bare
        message, as every released trace has it, else of the canonical JSON of the system prompt and turns.

        >>> Conversation("hi").sha256 == sha256_text("hi")
        True
        >>> Conversation("hi", system="Be brief.").sha256 == Conversation("hi").sha256
        False
        """
        if self.bare:
            return sha256_text(self.message)
        # A lone surrogate (which a hand-made trace's reply may hold) is hashed as its JSON escape: never an error.
        return sha256_text(jsonl.canonical({"system": self.system, "turns": [t.to_row() for t in self.turns]}))
