"""The row shapes of the chat-log corpora the screen reads: one conversation per object, its turns in order.

    sharegpt  {"id": …, "conversations": [{"from": "human"|"gpt"|…, "value": …}, …]}   (ShareGPT V3)
    wildchat  {"conversation_hash": …, "conversation": [{"role": "user"|"assistant", "content": …}, …], …}
    lmsys     {"conversation_id": …, "conversation": [{"role": "user"|"assistant", "content": …}, …], …}
    jsonl     {"id": …, "conversation" or "messages": [{"role": …, "content": …}, …], …}

A user turn is one whose speaker is "human" or "user" (ShareGPT uses both);
other fields of a row or a turn are ignored (WildChat and LMSYS carry many).
An id is a string (an integer is taken as its decimal string: generic exports
number their rows). A row that lacks what its shape needs is a `UserError`
naming file, line and field: the screen never skips a conversation silently.
The error says what kind of value it found, never the value: no message text
in a message either.
"""

from __future__ import annotations

from dataclasses import dataclass

from common import jsonl
from common.errors import UserError

FORMATS = ("sharegpt", "wildchat", "lmsys", "jsonl")
USER_ROLES = frozenset({"human", "user"})


@dataclass(frozen=True)
class Turn:
    role: str
    text: str

    @property
    def user(self) -> bool:
        return self.role in USER_ROLES


@dataclass(frozen=True)
class Conversation:
    index: int  # 0-based position of the conversation in the corpus
    id: str
    turns: tuple[Turn, ...]


def _found(row: dict, name: str) -> str:
    """What a field holds, for an error message: its JSON kind ("a string", "an array", "null") or "missing",
    never its value. A field that should hold a turn's text may hold the text in another shape (a list of
    parts), and an error message is no place for message text either."""
    return "missing" if name not in row else jsonl.kind(row[name])


def _id(row: dict, name: str, where: str) -> str:
    value = row.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        found = "''" if value == "" else _found(row, name)
        raise UserError(f"{where}: field {name!r} is {found}, expected the conversation's id (a non-empty "
                        "string)")
    return value


def _turns(row: dict, names: tuple[str, ...], speaker: str, text: str, where: str) -> tuple[Turn, ...]:
    listed = next((row[name] for name in names if name in row), None)
    if not isinstance(listed, list):
        found = _found(row, next((name for name in names if name in row), names[0]))
        raise UserError(f"{where}: field {names[0]!r} is {found}, expected a list of turns")
    turns = []
    for number, turn in enumerate(listed):
        if not isinstance(turn, dict):
            raise UserError(f"{where}: turn {number} is {jsonl.kind(turn)}, expected an object with {speaker!r} "
                            f"and {text!r}")
        role, value = turn.get(speaker), turn.get(text)
        if not isinstance(role, str):
            raise UserError(f"{where}: turn {number}: field {speaker!r} is {_found(turn, speaker)}, expected a "
                            "string")
        if not isinstance(value, str):
            raise UserError(f"{where}: turn {number}: field {text!r} is {_found(turn, text)}, expected a string")
        turns.append(Turn(role, value))
    return tuple(turns)


def conversation(row, fmt: str, index: int, where: str) -> Conversation:
    """The conversation a corpus object holds, read by the shape of `fmt`.

    >>> c = conversation({"id": "a1", "conversations": [{"from": "human", "value": "hi"}]}, "sharegpt", 0, "x")
    >>> c.id, [(t.role, t.user) for t in c.turns]
    ('a1', [('human', True)])
    """
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a conversation object, found {jsonl.kind(row)}")
    if fmt == "sharegpt":
        return Conversation(index, _id(row, "id", where), _turns(row, ("conversations",), "from", "value", where))
    if fmt == "wildchat":
        return Conversation(index, _id(row, "conversation_hash", where),
                            _turns(row, ("conversation",), "role", "content", where))
    if fmt == "lmsys":
        return Conversation(index, _id(row, "conversation_id", where),
                            _turns(row, ("conversation",), "role", "content", where))
    if fmt == "jsonl":
        return Conversation(index, _id(row, "id", where),
                            _turns(row, ("conversation", "messages"), "role", "content", where))
    raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
