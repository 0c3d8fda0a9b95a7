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
"""

from __future__ import annotations

from dataclasses import dataclass

from common.errors import UserError
from common.records import shown

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


def _id(row: dict, name: str, where: str) -> str:
    value = row.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise UserError(f"{where}: field {name!r} is {shown(value)}, expected the conversation's id (a non-empty "
                        "string)")
    return value


def _turns(row: dict, names: tuple[str, ...], speaker: str, text: str, where: str) -> tuple[Turn, ...]:
    listed = next((row[name] for name in names if name in row), None)
    if not isinstance(listed, list):
        raise UserError(f"{where}: field {names[0]!r} is {shown(listed)}, expected a list of turns")
    turns = []
    for number, turn in enumerate(listed):
        if not isinstance(turn, dict):
            raise UserError(f"{where}: turn {number} is {shown(turn)}, expected an object with {speaker!r} and "
                            f"{text!r}")
        role, value = turn.get(speaker), turn.get(text)
        if not isinstance(role, str):
            raise UserError(f"{where}: turn {number}: field {speaker!r} is {shown(role)}, expected a string")
        if not isinstance(value, str):
            raise UserError(f"{where}: turn {number}: field {text!r} is {shown(value)}, expected a string")
        turns.append(Turn(role, value))
    return tuple(turns)


def conversation(row, fmt: str, index: int, where: str) -> Conversation:
    """The conversation a corpus object holds, read by the shape of `fmt`.

    >>> c = conversation({"id": "a1", "conversations": [{"from": "human", "value": "hi"}]}, "sharegpt", 0, "x")
    >>> c.id, [(t.role, t.user) for t in c.turns]
    ('a1', [('human', True)])
    """
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a conversation object, found {shown(row)}")
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
