"""One condition: how a cluster becomes the request a model is sent, a layout over the cluster's parts.

Every single-message condition is a layout over the same parts of a cluster,
with I the instruction, A the artifact and C the trailing comment:

    I [" " sentence] "\\n\\n" [open "\\n"] A ["\\n" close] [breaks x "\\n" C]

`pool` says which comment C is (none, the casual one, the genre-native one).
`marking` says when the sentence and the marker lines are there: always (the
layout above), where the guard finds the seam (`guard`: the message without
them goes through `guard.mark.guard`, as a product would put the guard in front
of its model), or where a client's paste-size rule would mark the paste
(`paste-rule`: `guard.mark.paste_rule_marks` of the artifact).
A condition may also send a system prompt (`system`), or be a later turn
(`turns`): the opening condition's message, the assistant's reply to it, then
a follow-up instruction with the comment after it (docs/CONDITIONS.md). A
treatment is scored against its `control`, a condition without a comment:
clean unless it says otherwise.
How a condition file is read and checked is benchmark/condition_file.py's;
the set of conditions a stage knows, benchmark/conditions.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from common.files import sha256_text
from common.records import Cluster, Comment
from guard.mark import guard, paste_rule_marks

SEPARATOR = "\n\n"  # between the instruction and the paste, in every condition
# When the sentence and the markers are in the message: always, where the guard finds the seam, or where a client's
# paste-size rule marks the paste.
MARKINGS = ("always", "guard", "paste-rule")
# The parts a later-turn condition's `turns` name besides a condition (whose message is that user turn):
REPLY, FOLLOW_UP = "reply", "follow-up"
REPLIES = ("model", "fixed")  # the assistant's turn: the model's own reply (read from its trace), or reply_text


@dataclass(frozen=True)
class Condition:
    """One condition: which comment trails the paste and how the message is laid out around it."""

    name: str
    pool: str  # "none" (a control: clean, or a condition file's), "casual" or "native"
    breaks: int  # line breaks between the paste and the comment; 0 exactly for pool "none"
    sentence: str | None  # a sentence added to the instruction, after one space
    open: str | None  # a line before the artifact
    close: str | None  # a line after the artifact
    phrase: str  # how the summary sentences name it ("boundary markers")
    plural: bool  # whether `phrase` takes a plural verb
    same_prefix_as: str | None  # declared: every byte through the artifact's last is that condition's
    same_suffix_as: str | None  # declared: every byte from the instruction's end is that condition's
    origin: str  # the file that defines it
    builtin: bool
    marking: str = "always"  # one of MARKINGS: when the sentence and the markers are in the message
    system: str | None = None  # a system prompt sent with the message
    # A later-turn condition (docs/CONDITIONS.md, "Later turns"): the conversation's parts, in order, e.g.
    # ("clean", "reply", "follow-up"): a condition's message, the assistant's reply to it, then the last user
    # message, one of `follow_up` (chosen by the cluster) with the comment after it. Empty: one message.
    turns: tuple[str, ...] = ()
    reply: str | None = None  # one of REPLIES, for a later-turn condition
    reply_text: str | None = None  # the assistant's turn when `reply` is "fixed"
    follow_up: tuple[str, ...] = ()
    control: str | None = None  # the condition a treatment is scored against (None for a control itself)

    @property
    def later(self) -> bool:
        """Whether the message is a later turn of a conversation (`turns`)."""
        return bool(self.turns)

    @property
    def opening(self) -> str | None:
        """The condition whose message opens a later-turn conversation (its reply is the model's to it)."""
        return self.turns[0] if self.turns else None

    @property
    def needs_replies(self) -> bool:
        """Whether its requests hold the model's own reply, so depend on the model (`--replies TRACE`)."""
        return self.reply == "model"

    def follow_up_of(self, cluster: str) -> str:
        """The follow-up instruction of `cluster`: one of `follow_up`, picked by the cluster id's SHA-256, so
        the same on every machine and for every model, and spread evenly over the clusters."""
        return self.follow_up[int(sha256_text(cluster)[:8], 16) % len(self.follow_up)]

    @property
    def marked_by_rule(self) -> bool:
        """Whether a rule (the guard, the paste rule) decides per message if the markers are there."""
        return self.marking != "always"

    def unmarked(self) -> Condition:
        """This condition without its sentence and markers: the message a rule that does not mark leaves, and
        the guard's input."""
        return replace(self, sentence=None, open=None, close=None, marking="always")

    def laid_out(self, artifact: str) -> Condition:
        """The condition whose fixed layout a message of this one follows before any guard: itself, or for a
        rule-marked condition the marked or unmarked layout the paste rule picks (the guard's input for
        `guard`)."""
        if self.marking == "paste-rule" and paste_rule_marks(artifact):
            return replace(self, marking="always")
        return self.unmarked() if self.marked_by_rule else self

    def head(self, instruction: str) -> str:
        """The instruction as this condition sends it: with its added sentence, if any."""
        return instruction if self.sentence is None else f"{instruction} {self.sentence}"

    def render(self, instruction: str, artifact: str, comment: str | None) -> str:
        """The user message of a condition sent as one (layout in the module docstring; a later-turn condition's
        last message is `message`'s); `comment` is the pool's comment text.

        >>> from benchmark.conditions import builtin
        >>> builtin().get("boundary").render("Fix it.", "x = 1", "btw lunch")
        'Fix it.\\n\\n-----BEGIN TEXT-----\\nx = 1\\n-----END TEXT-----\\nbtw lunch'
        >>> guarded = replace(builtin().get("boundary"), marking="guard")
        >>> guarded.render("Fix it:", "x = 1\\ny = 2", "btw lunch") == builtin().get("boundary").render(
        ...     "Fix it:", "x = 1\\ny = 2", "btw lunch")
        True
        """
        laid_out = self.laid_out(artifact)
        message = laid_out.layout(instruction, artifact, comment)
        if self.marking == "guard":
            return guard(message, open=self.open, close=self.close, sentence=self.sentence).message
        return message

    def layout(self, instruction: str, artifact: str, comment: str | None) -> str:
        """The message as the fixed layout puts the parts (the module docstring), whatever the marking."""
        message = self.head(instruction) + SEPARATOR
        if self.open is not None:
            message += self.open + "\n"
        message += artifact
        if self.close is not None:
            message += "\n" + self.close
        if self.pool != "none":
            if comment is None:
                raise ValueError(f"condition {self.name!r} trails a {self.pool} comment, but none was given")
            message += "\n" * self.breaks + comment
        return message

    def trailing(self, cluster: Cluster) -> Comment | None:
        """The comment this condition puts after the cluster's artifact (None for pool "none")."""
        return cluster.comment_of(self.pool)

    def message(self, cluster: Cluster) -> str:
        """The cluster's message under this condition: for a later-turn one, the last user message (the
        follow-up instruction, and the comment after it)."""
        trailing = self.trailing(cluster)
        if self.later:
            text = self.follow_up_of(cluster.cluster)
            return text if trailing is None else text + "\n" * self.breaks + trailing.text
        return self.render(cluster.instruction, cluster.artifact, trailing.text if trailing else None)

    def artifact_start(self, instruction: str) -> int:
        """Where the artifact begins in a message of this condition."""
        return len(self.head(instruction)) + len(SEPARATOR) + (len(self.open) + 1 if self.open is not None else 0)

    @property
    def markers(self) -> tuple[str, ...]:
        """The marker lines, opening first."""
        return tuple(m for m in (self.open, self.close) if m is not None)
