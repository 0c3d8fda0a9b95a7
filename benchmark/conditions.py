"""The conditions a stage knows: the built-in six, and those of the user's condition file.

The six built-in conditions are defined in benchmark/conditions.toml; a
condition file of the user's (`--conditions FILE`, docs/CONDITIONS.md) adds
conditions and paired contrasts in the same format, read by the same code
(benchmark/condition_file.py), so that a user's condition is rendered, checked,
run, scored, tabled and shown exactly as a built-in one. There is no other
definition of the layouts (benchmark/condition.py): the built-ins' messages are
byte-identical to the benchmark's ever since (a test renders all 300 clusters
and compares a digest).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark.condition import SEPARATOR as SEPARATOR  # re-exported: where the stages have always found it
from benchmark.condition import Condition
from benchmark.condition_file import BUILTIN_FILE, listed, read_file, read_toml
from common.conversation import Conversation, Turn
from common.errors import UserError
from common.records import CONDITIONS, Cluster, Request, request_id, shown

if TYPE_CHECKING:
    from benchmark.replies import Replies

# The project's condition files: a row naming a condition none of the files given defines is refused naming the
# one here that defines it, if any, so that the fix is one option away.
PROJECT_FILES = BUILTIN_FILE.parents[1] / "data" / "conditions"
HINT = "the condition file that defines it (docs/CONDITIONS.md)"
__all__ = ["Condition", "ConditionSet", "builtin", "builtin_only", "defining_files", "load"]


@dataclass(frozen=True)
class ConditionSet:
    """The conditions a stage knows: the built-ins, then those of the user's condition file, if one was given."""

    conditions: tuple[Condition, ...]
    contrasts: tuple[tuple[str, str], ...]  # (first, second), the built-in ones first
    files: tuple[str, ...] = ()  # the user's condition files read (none: the built-ins only)
    # For a stage that reads the built-in conditions only (review): why it refuses any other, which
    # no --conditions FILE would change, so the refusal must not suggest one (`builtin_only`).
    refusal: str | None = None
    # (candidate, base, oracle): the share of the reduction from base to oracle that candidate recovers
    # (a condition file's `recovered`; stats/recovered.py). The built-in file lists none.
    recovered: tuple[tuple[str, str, str], ...] = ()

    @cached_property
    def by_name(self) -> dict[str, Condition]:
        return {c.name: c for c in self.conditions}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.conditions)

    @property
    def treatments(self) -> tuple[str, ...]:
        """The conditions a comment trails: every one but clean, in order."""
        return tuple(c.name for c in self.conditions if c.pool != "none")

    @property
    def user(self) -> tuple[Condition, ...]:
        return tuple(c for c in self.conditions if not c.builtin)

    def has(self, name: str) -> bool:
        return name in self.by_name

    def get(self, name: str, where: str | None = None) -> Condition:
        """The condition named `name`; a `UserError` (prefixed with `where`) saying where it could be defined."""
        try:
            return self.by_name[name]
        except KeyError:
            prefix = f"{where}: " if where else ""
            raise UserError(f"{prefix}{self.undefined(name)}") from None

    def undefined(self, name: str) -> str:
        """The one-line message for a condition this set does not define, naming the project's condition file
        that defines it when there is one (data/conditions/)."""
        if self.refusal is not None:
            return f"condition {shown(name)} is not a built-in one; {self.refusal} (docs/CONDITIONS.md)"
        given = {Path(file).resolve() for file in self.files}
        defining = [path for path in defining_files(name) if Path(path).resolve() not in given]
        hint = (f"pass --conditions {defining[0]}, {HINT}" if len(defining) == 1 else
                f"pass --conditions with {HINT}: one of {', '.join(defining)}" if defining else
                f"pass --conditions FILE, {HINT}")
        if not self.files:
            return f"condition {shown(name)} is not defined (built-in: {', '.join(CONDITIONS)}); {hint}"
        return (f"condition {shown(name)} is not defined, neither built in nor in {', '.join(self.files)} "
                f"(which defines {listed([c.name for c in self.user])})"
                + (f"; {hint}" if defining else ""))

    def check(self, names, where: str | None = None) -> tuple[str, ...]:
        """`names` in the order given, each checked to be defined."""
        return tuple(self.get(name, where).name for name in names)

    def order(self, names) -> tuple[str, ...]:
        """`names` in this set's order; names it does not define come after, by name.

        >>> builtin().order({"native", "zz", "newline", "aa"})
        ('newline', 'native', 'aa', 'zz')
        """
        names = set(names)
        return tuple([c for c in self.names if c in names] + sorted(names - set(self.names)))

    def control_of(self, name: str) -> str | None:
        """The condition a treatment `name` is scored against (its `control`, by default clean); None for a
        control itself or a condition this set does not define."""
        condition = self.by_name.get(name)
        return condition.control if condition is not None else None

    def conversation(self, name: str, cluster: Cluster, replies: Replies | None = None) -> Conversation | None:
        """What a request of condition `name` on `cluster` sends: its message with its system prompt and, for a
        later-turn condition, the turns before it. None where the model's own reply the conversation holds is
        not in `replies` (missing or unusable there: `replies` records which)."""
        condition = self.get(name)
        message = condition.message(cluster)
        if not condition.later:
            return Conversation(message, condition.system)
        opening = self.get(condition.turns[0])
        if condition.reply == "fixed":
            reply = condition.reply_text
        elif replies is None:
            raise UserError(f"condition {name!r} holds the model's own reply to its {opening.name} request "
                            f"(reply = \"model\" in {condition.origin}): pass --replies TRACE, the model's trace "
                            f"file with its {opening.name} outputs")
        else:
            asked = Conversation(opening.message(cluster))  # what the reply must answer
            reply = replies.get(request_id(cluster.cluster, opening.name), request_id(cluster.cluster, name),
                                asked.sha256)
        if reply is None:
            return None
        earlier = (Turn("user", opening.message(cluster)), Turn("assistant", reply))
        return Conversation(message, condition.system, earlier)

    def check_request(self, request: Request, where: str, model: str | None = None) -> Condition:
        """The condition of a request row read from a file, checked to be what that condition sends: a comment
        exactly for a treatment, its system prompt, earlier turns exactly for a later turn (the follow-up and
        comment as the last message; a fixed reply as the assistant's turn) and, for a later turn holding the
        model's own reply, that `model`'s (a run's config). A row edited by hand, or rendered from another
        condition file, is refused in one line instead of being sent as something else."""
        condition = self.get(request.condition, where)
        at = f"{where}: a {request.condition} request"
        if request.treated != (condition.pool != "none"):
            raise UserError(f"{at} " + ("has a comment, but the condition is a control (pool none); its comment "
                                        "fields are null" if request.treated else
                                        "needs its comment, comment_id, witness and proposition (strings): the "
                                        f"condition trails a {condition.pool} comment"))
        if request.system != condition.system:
            raise UserError(f"{at} " + (f"has no system prompt, but the condition sends one ({condition.origin})"
                                        if request.system is None else
                                        "has a system prompt the condition does not send" if condition.system is None
                                        else f"has another system prompt than the condition's ({condition.origin})"))
        if bool(request.earlier) != condition.later:
            raise UserError(f"{at} " + ("has earlier turns, but the condition is sent as one message"
                                        if request.earlier else
                                        "has no earlier turns, but the condition is a later turn: render it with "
                                        "seam.py prompts --replies TRACE"))
        if condition.later:
            follow_up = condition.follow_up_of(request.cluster)
            expected = follow_up if request.comment is None else follow_up + "\n" * condition.breaks + request.comment
            if request.message != expected or len(request.earlier or ()) != 2:
                raise UserError(f"{at} is not the condition's later turn: expected two earlier turns and the "
                                "follow-up " + ("and the comment " if request.comment else "") + "as its message")
            if condition.reply == "fixed" and request.earlier[1].text != condition.reply_text:
                raise UserError(f"{at}: its assistant turn is not the condition's reply_text")
            if condition.needs_replies and request.reply_model is None:
                raise UserError(f"{at} does not say whose reply it holds (no reply_model): render it with seam.py "
                                "prompts --replies TRACE")
            if condition.needs_replies and model is not None and request.reply_model != model:
                raise UserError(f"{at} holds model {shown(request.reply_model)}'s own reply, not {shown(model)}'s: "
                                "render the requests with this model's trace (seam.py prompts --replies TRACE)")
        return condition

    def phrase(self, name: str) -> tuple[str, bool]:
        """(noun phrase, plural?) naming what a condition puts after the paste; "the NAME condition" when unknown."""
        condition = self.by_name.get(name)
        return (condition.phrase, condition.plural) if condition else (f"the {name} condition", False)


@lru_cache(maxsize=1)
def builtin() -> ConditionSet:
    """The built-in conditions (benchmark/conditions.toml), checked to be CONDITIONS in their order."""
    conditions, contrasts, _ = read_file(BUILTIN_FILE, known=(), builtin=True)
    names = tuple(c.name for c in conditions)
    if names != CONDITIONS:
        raise UserError(f"{BUILTIN_FILE}: defines {', '.join(names)}, expected {', '.join(CONDITIONS)} in this "
                        "order (common/records.py)")
    return ConditionSet(tuple(conditions), tuple(contrasts))


def builtin_only(refusal: str) -> ConditionSet:
    """The built-in conditions, for a stage that reads no others: any other is refused saying `refusal` (why).

    >>> builtin_only("a review reads the built-in ones only").undefined("xml-tags")
    "condition 'xml-tags' is not a built-in one; a review reads the built-in ones only (docs/CONDITIONS.md)"
    """
    return replace(builtin(), refusal=refusal)


def defining_files(name: str) -> list[str]:
    """The project's condition files (data/conditions/*.toml) that define a condition `name`, as paths from the
    working directory; a file that cannot be read is passed over (`seam.py check --conditions` reports it).

    >>> [Path(path).name for path in defining_files("xml-tags")], defining_files("sideways")
    (['example.toml'], [])
    """
    found = []
    for path in sorted(PROJECT_FILES.glob("*.toml")):
        try:
            tables = read_toml(path).get("conditions")
        except UserError:
            continue
        if isinstance(tables, dict) and name in tables:
            found.append(os.path.relpath(path))
    return found


def load(path: str | Path | None) -> ConditionSet:
    """The built-in conditions, plus those of the condition file `path` when one is given."""
    base = builtin()
    if path is None:
        return base
    conditions, contrasts, recovered = read_file(Path(path), known=base.conditions, known_contrasts=base.contrasts)
    return ConditionSet(base.conditions + tuple(conditions), base.contrasts + tuple(contrasts), (str(path),),
                        recovered=tuple(recovered))
