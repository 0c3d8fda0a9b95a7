"""A request's whole conversation as the harness routes send it, and the import's check that a log sent exactly that.

A condition may give a request a system prompt and earlier turns (docs/CONDITIONS.md; `common.conversation`):
the request is then a conversation, not one message, and a route that sent only its last message would have
asked another question. Every route that can carry one sends it as chat messages in OpenAI's shape (`chat`: the
system prompt first, then each turn as a user or assistant message, the last user message last): inspect's
dataset takes them as a sample's `input`, promptfoo's prompt function returns them, and a batch body is built by
the runner's own provider from the same conversation. lm-eval's task cannot carry one (`harness.lmeval_task`
refuses it).

`check_prompt` compares what a harness's log says it sent with the kit's request for that id, the whole of it:
the roles in order (a system message is accepted exactly when the request has a system prompt), then each text,
naming the first that differs and where, so that a row is never recorded for a question the kit did not ask. A
bare request (the paper's: one user message) is refused in the words it always was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from common.conversation import Conversation
from common.errors import UserError
from common.records import Request, shown

if TYPE_CHECKING:  # the exports use `chat` without the import's machinery
    from harness.rows import Collected

SHOWN_CHARS = 12  # of each text around a difference


def chat(conversation: Conversation) -> list[dict]:
    """The conversation as chat messages (`role`, `content`): the system prompt first, then every turn in order.

    >>> from common.conversation import Turn
    >>> chat(Conversation("Shorter.", "Be brief.", (Turn("user", "Edit: x"), Turn("assistant", "y"))))
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Edit: x'}, \
{'role': 'assistant', 'content': 'y'}, {'role': 'user', 'content': 'Shorter.'}]
    """
    system = [] if conversation.system is None else [{"role": "system", "content": conversation.system}]
    return system + [{"role": turn.role, "content": turn.text} for turn in conversation.turns]


def text_of(content, where: str) -> str:
    """A chat message's text: a string, or its text parts joined (as the runner joins a reply's)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        if all(part.get("type") == "text" and isinstance(part.get("text"), str) for part in content):
            return "".join(part["text"] for part in content)
    raise UserError(f"{where}: a message whose content is {shown(content)}, expected text (the exported task "
                    "sends the kit's message as text)")


def first_difference(sent: str, kit: str) -> int:
    """The index of the first character where two texts differ (the shorter's length when one extends the other).

    >>> first_difference("abc", "abd"), first_difference("ab", "abc")
    (2, 2)
    """
    for index, (a, b) in enumerate(zip(sent, kit, strict=False)):
        if a != b:
            return index
    return min(len(sent), len(kit))


def check_prompt(collected: Collected, request: Request) -> None:
    """Refuse, in one line, a log whose prompt for an id is not exactly the kit's conversation for it: the same
    roles in the same order (the system prompt where the request has one, and nowhere else), and every text equal,
    the first difference named (which message, which character)."""
    where, rid, conversation = collected.where, collected.id, request.conversation
    expected = chat(conversation)
    roles = [message.get("role") if isinstance(message, dict) else None for message in collected.messages]
    wanted = [message["role"] for message in expected]
    if roles != wanted:
        said = f"{rid} was sent as {len(roles)} message(s) with roles {', '.join(map(str, roles))}"
        if conversation.bare:
            raise UserError(f"{where}: {said}, expected the kit's one user message and no system prompt (seam.py "
                            "export's task adds none)")
        raise UserError(f"{where}: {said}, expected the kit's {len(wanted)} with roles {', '.join(wanted)} (its "
                        f"condition's {_parts(conversation)}, then its message: seam.py export's files send "
                        "exactly these)")
    for index, (message, kit) in enumerate(zip(collected.messages, expected, strict=True)):
        sent = text_of(message.get("content"), where)
        if sent != kit["content"]:
            at = first_difference(sent, kit["content"])
            part, kind = _named(index, expected, conversation)
            again = "the --conditions file and --replies trace" if conversation.earlier else "the --conditions file"
            raise UserError(f"{where}: the {part} of {rid} is not the kit's {kind} for it: they differ at character "
                            f"{at + 1:,} ({shown(sent[at:at + SHOWN_CHARS])} in the log, "
                            f"{shown(kit['content'][at:at + SHOWN_CHARS])} in the kit's); export again with seam.py "
                            f"export (and {again} it used)")


def _parts(conversation: Conversation) -> str:
    """What a conversation holds before its message, in words."""
    parts = ["system prompt"] if conversation.system is not None else []
    if conversation.earlier:
        parts.append(f"{len(conversation.earlier)} earlier turns")
    return " and ".join(parts)


def _named(index: int, expected: list[dict], conversation: Conversation) -> tuple[str, str]:
    """(the message at `index`, what the kit calls it) for a refusal: the last is "the prompt" and "message", as a
    bare request's always was."""
    if index == len(expected) - 1:
        return "prompt", "message"
    if expected[index]["role"] == "system":
        return "system prompt", "system prompt"
    turn = index + 1 - (conversation.system is not None)
    return f"earlier turn {turn} ({expected[index]['role']})", "turn"
