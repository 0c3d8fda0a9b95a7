"""What a run cost: requests, tokens, time and money per model and condition, from the trace rows' usage.

Every trace row records the `usage` its provider sent (`runner.usage.read_usage` reads every shape) and
the latency of each attempt. The usage table totals them per model and condition and per model over all
conditions (condition `all`): requests (final rows), the rows whose usage cannot be read (counted, never
taken as 0), prompt and completion tokens, the reasoning and cached parts where a provider reports them,
the time spent waiting (the sum of every attempt's latency), and the cost at the prices of a prices file
(`runner.prices`). Earlier rows of a request asked again (`previous`, kept in the final row) were paid
for too and are counted with it. A model without a price gets its tokens and an empty cost.

An attempt sent by a run that was stopped (killed, Ctrl+C, SIGTERM) before it recorded the answer was perhaps
paid for: the next ask of the request records it at the start of its row's attempts (`runner.sent`). Each such
attempt is counted with the usage unknown (never as 0, never as nothing), and a note says how many.

A latency counts when it is a number of seconds from 0 to LONGEST_ATTEMPT_S. Any other (negative, NaN,
Infinity, 400 digits, or 1e308, which a second one overflows) is left out of the time, which could otherwise
be `inf` (refused by the table's own reader) or a float of 400 digits (a traceback). A row's own attempts
are checked when read (docs/FORMATS.md), but not the earlier rows kept in `previous`, nor rows made in code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from common.records import TraceRow
from runner.prices import Price
from runner.sent import is_lost
from runner.usage import read_usage
from stats.render import Column, Table
from stats.specs import USAGE

ALL = "all"  # the condition of a model's total row
LONGEST_ATTEMPT_S = 1e9  # about 32 years: far above any attempt (a request times out within a day)


@dataclass
class Tally:
    """The totals of one (model, condition)."""

    requests: int = 0
    unknown: int = 0
    prompt: int = 0
    completion: int = 0
    reasoning: int | None = None
    cached: int | None = None
    seconds: float = 0.0
    batch_prompt: int = 0
    batch_completion: int = 0
    known: int = 0  # replies whose usage was read
    lost: int = 0  # attempts sent whose answer a stopped run lost (also in `unknown`)

    def add(self, usage, latencies: list[float], *, batch: bool = False, replied: bool = True, lost: int = 0) -> None:
        """One reply (its usage, or None when unreadable) and the latencies of its attempts; a request that
        got no reply (`replied` False: failed) was not paid for and its missing usage is not unknown. `lost`:
        its attempts sent by a run stopped before the answer was recorded, each counted as unknown."""
        self.seconds += sum(latencies)
        self.lost += lost
        self.unknown += lost
        if usage is None:
            self.unknown += replied
            return
        self.known += 1
        self.prompt += usage.prompt_tokens
        self.completion += usage.completion_tokens
        if batch:
            self.batch_prompt += usage.prompt_tokens
            self.batch_completion += usage.completion_tokens
        if usage.reasoning_tokens is not None:
            self.reasoning = (self.reasoning or 0) + usage.reasoning_tokens
        if usage.cached_tokens is not None:
            self.cached = (self.cached or 0) + usage.cached_tokens

    def cost(self, price: Price | None) -> float | None:
        """USD at `price` (batch-collected tokens at its batch prices), or None without a price or without a
        single reply whose usage could be read (a cost of 0 would be a guess)."""
        if price is None or (self.unknown and not self.known):
            return None
        plain = price.cost(self.prompt - self.batch_prompt, self.completion - self.batch_completion)
        return plain + price.cost(self.batch_prompt, self.batch_completion, batch=True)


def _latencies(attempts) -> list[float]:
    found = []
    for attempt in attempts:
        latency = attempt.get("latency_s") if isinstance(attempt, dict) else attempt.latency_s
        # compared before any float(): NaN fails both comparisons, Infinity and 400 digits the second
        if isinstance(latency, int | float) and not isinstance(latency, bool) and 0 <= latency <= LONGEST_ATTEMPT_S:
            found.append(float(latency))
    return found


def _lost(attempts) -> int:
    """How many of the attempts were sent by a run stopped before it recorded their answer (runner.sent)."""
    return sum(is_lost(attempt) for attempt in attempts)


def collected_by_batch(row: TraceRow) -> bool:
    """Whether the row was collected through a provider's batch API (priced at batch prices): its `request`
    record has a true `batch`, which `seam.py run --batch` sets (runner.batch.run) and the synchronous path
    never does, so no released row is one.

    >>> from scorer.synthetic import trace_row
    >>> collected_by_batch(trace_row("humaneval-001", "clean", "x"))
    False
    """
    return row.request.get("batch") is True


def tally_rows(rows: list[TraceRow]) -> dict[tuple[str, str], Tally]:
    """Totals per (model, condition) and per (model, "all") of the final rows given.

    >>> from scorer.synthetic import trace_row
    >>> import dataclasses
    >>> one = dataclasses.replace(trace_row("humaneval-001", "clean", "x", model="m"),
    ...                           usage={"prompt_tokens": 10, "completion_tokens": 4})
    >>> two = dataclasses.replace(trace_row("humaneval-001", "newline", "x", model="m"), usage="?")
    >>> totals = tally_rows([one, two])
    >>> totals[("m", "all")].requests, totals[("m", "all")].prompt, totals[("m", "all")].unknown
    (2, 10, 1)
    """
    totals: dict[tuple[str, str], Tally] = {}
    for row in rows:
        batch = collected_by_batch(row)
        for key in ((row.model, row.condition), (row.model, ALL)):
            tally = totals.setdefault(key, Tally())
            tally.requests += 1
            tally.add(read_usage(row.usage), _latencies(row.attempts), batch=batch, replied=row.status != "failed",
                      lost=_lost(row.attempts))
            for earlier in row.previous:  # asked before, and paid for when it got a reply (each at its own price)
                asked = earlier.get("request") if isinstance(earlier.get("request"), dict) else {}
                attempts = earlier.get("attempts") if isinstance(earlier.get("attempts"), list) else []
                tally.add(read_usage(earlier.get("usage")), _latencies(attempts),
                          batch=asked.get("batch") is True, replied=earlier.get("status") != "failed",
                          lost=_lost(attempts))
    return totals


@dataclass(frozen=True)
class UsageSettings:
    prices: dict[str, Price] = field(default_factory=dict)
    prices_file: str | None = None  # its name, for the note


def usage_table(rows: list[TraceRow], conditions: tuple[str, ...], settings: UsageSettings = UsageSettings()
                ) -> Table:
    """The usage table: one row per model and condition (in `conditions`' order), then the model's total.

    >>> from scorer.synthetic import trace_row
    >>> import dataclasses
    >>> from runner.prices import Price
    >>> row = dataclasses.replace(trace_row("humaneval-001", "clean", "x", model="m"),
    ...                           usage={"prompt_tokens": 1_000_000, "completion_tokens": 10})
    >>> table = usage_table([row], ("clean",), UsageSettings({"m": Price(2.0, 8.0)}))
    >>> table.rows[-1][:6], round(table.rows[-1][-1], 6)
    (('m', 'all', 1, 0, 1000000, 10), 2.00008)
    """
    totals = tally_rows(rows)
    models = sorted({model for model, _ in totals})
    table_rows, shown = [], []
    for model in models:
        present = [c for c in conditions if (model, c) in totals]
        present += sorted(c for m, c in totals if m == model and c not in conditions and c != ALL)
        for condition in (*present, ALL):
            tally = totals[(model, condition)]
            cost = tally.cost(settings.prices.get(model))
            table_rows.append((model, condition, tally.requests, tally.unknown, tally.prompt, tally.completion,
                               tally.reasoning, tally.cached, round(tally.seconds, 3), cost))
            shown.append((model, condition, f"{tally.requests:,}", f"{tally.unknown:,}", f"{tally.prompt:,}",
                          f"{tally.completion:,}", f"{tally.seconds / 3600:.2f}",
                          "\u2014" if cost is None else f"{cost:,.2f}"))
    notes = ["Requests: final trace rows (failed requests got no reply and are not paid for). Prompt and "
             "completion tokens as the provider reported them "
             "(completion includes reasoning; reasoning and cached tokens where the provider reports them); "
             "earlier rows of a request asked again are counted with it. Time: the sum of every attempt's "
             "latency, in seconds (hours in the display)."]
    lost = sum(totals[(model, ALL)].lost for model in models)
    unknown = sum(totals[(model, ALL)].unknown for model in models) - lost
    if unknown:
        notes.append(f"{unknown:,} replies have a usage that cannot be read: their tokens are not in the sums, "
                     "which are lower bounds (never counted as 0).")
    if lost:
        notes.append(f"{lost:,} requests were sent by a run stopped (killed, Ctrl+C, SIGTERM) before it recorded "
                     "the answer, then asked again: each may have been paid for, so each is counted as unknown "
                     "and the sums are lower bounds.")
    if settings.prices_file is None:
        notes.append("No prices file given: no costs.")
    else:
        unpriced = [model for model in models if model not in settings.prices]
        notes.append(f"Costs at the prices of {settings.prices_file} (USD per million tokens; cached tokens at the "
                     "input price)"
                     + (f"; no price for {', '.join(unpriced)}: cost left empty." if unpriced else "."))
    display = Table("usage", "", (Column("model", "Model"), Column("condition", "Condition"),
                                  Column("requests", "Requests", align="r"), Column("unknown", "Unknown", align="r"),
                                  Column("prompt", "Prompt tokens", align="r"),
                                  Column("completion", "Completion tokens", align="r"),
                                  Column("hours", "Hours", align="r"), Column("cost", "Cost (USD)", align="r")),
                    tuple(shown))
    return USAGE.table("Requests, tokens, time and cost per model and condition", table_rows, notes, display)
