"""The model's own replies a later-turn conversation holds, read from its trace file (`--replies TRACE`).

A later-turn condition with `reply = "model"` (docs/CONDITIONS.md) puts the
model's answer to the opening request, e.g. its clean output, back in the
conversation as the assistant's turn, so its requests depend on the model and
on that trace. A request whose reply is missing or unusable there cannot be
built; `Replies` records each such request id and why, so that `prompts` and
`run` say how many they left out, instead of sending a conversation the model
never had.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from common.plural import plural
from common.records import TraceRow
from common.traces import model_of, read_final


@dataclass
class Replies:
    """Request id → final trace row of one model, and the ids asked for that had no usable reply."""

    rows: dict[str, TraceRow]
    source: str  # the trace file, for messages
    model: str | None = None
    # The requests left out: id -> what the reply they would hold is in the trace ("missing", "unusable" or "a reply
    # to another message").
    missed: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str | Path) -> Replies:
        """The final rows of the trace file `path` (a torn tail is refused, as everywhere)."""
        file = read_final(path)
        return cls(dict(file.final), str(path), model_of(file))

    def get(self, request_id: str, asked_by: str, asked_sha256: str | None = None) -> str | None:
        """The model's usable reply to `request_id`, or None, recording that the request `asked_by` (the one the
        reply would be a turn of) is left out. Given `asked_sha256` (of the message the reply must answer, as its
        condition renders it now), a row that answered another message (the layout or the benchmark changed since,
        or a hand-made request file was run) is not taken."""
        row = self.rows.get(request_id)
        if row is None:
            self.missed[asked_by] = "missing"
        elif row.status != "ok" or row.output is None:
            self.missed[asked_by] = "unusable"
        elif asked_sha256 is not None and row.message_sha256 is not None and row.message_sha256 != asked_sha256:
            self.missed[asked_by] = "a reply to another message"
        else:
            return row.output
        return None

    def summary(self) -> str | None:
        """One line saying what was left out and why, or None when nothing was.

        >>> replies = Replies({}, "m.jsonl")
        >>> replies.get("humaneval-001/clean", "humaneval-001/later-turn") is None
        True
        >>> print(replies.summary())
        1 later-turn request left out: the model's reply it holds is missing (1) in m.jsonl; collect the missing \
ones (seam.py run), then build these again
        """
        if not self.missed:
            return None
        counts = Counter(self.missed.values())
        why = " or ".join(f"{how} ({n:,})" for how, n in sorted(counts.items()))
        left = len(self.missed)
        fix = {"missing": "collect the missing ones (seam.py run)",
               "unusable": "retry the unusable ones (seam.py run --retry-unusable)",
               "a reply to another message": "rerun the opening requests as their condition renders them now"}
        return (f"{left:,} {plural(left, 'later-turn request')} left out: the model's reply it holds is {why} in "
                f"{self.source}; {', '.join(fix[how] for how in sorted(counts))}, then build these again")
