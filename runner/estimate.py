"""What a run will cost before it starts: `seam.py run CONFIG --estimate`, with no network.

* **Requests**: those the run would send (`runner.run.plan`: the ids already final in `--out` are left
  out, as a resumed run leaves them).
* **Prompt tokens** per request, estimated from what it sends by `estimate_prompt_tokens`: one token per
  run of letters, per digit and per other visible character of every part of its conversation (a
  condition's system prompt and earlier turns with the message: all are sent, all are billed), plus 32 for
  the chat template around it (the released Qwen2.5 models' median; SmolLM2's is 40). The 32 are counted
  once per request: the few tokens a template adds around each further turn are within the estimator's
  error, and a bare message's estimate stays what it always was. Its error against the prompt
  tokens the released traces recorded is measured by `estimator_error` (`python scripts/estimator_error.py`,
  docs/RUNNER.md gives the figures): tokenizers differ, so it is an estimate, not a count.
* **Completion tokens** per request as a range: the median and the 95th percentile of the completions the
  released traces recorded for the request's source (the three released models pooled), each capped at
  the config's `max_tokens`, and `max_tokens` itself as the ceiling no reply can pass. The released runs
  were cut at 1,024 tokens, the 95th percentile of five of the six sources: that figure says "if every
  reply were as long as a long released one", not the 95th percentile of a run's total.
* **Cost** at the prices of a prices file (`runner.prices`), for the median, the 95th percentile and the
  ceiling ("too large to price" where it is beyond a float: a config's max_tokens may have any size).
  `--max-cost USD` refuses to start a run whose 95th-percentile cost (the estimate's upper end) exceeds it.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.conversation import Conversation
from common.records import Request
from common.traces import read_final
from runner.prices import Price
from runner.usage import read_usage

PIECE = re.compile(r"[A-Za-z]+|\d|[^\sA-Za-z\d]")
TEMPLATE_TOKENS = 32  # the chat template and default system prompt around one user message
ROOT = Path(__file__).resolve().parents[1]
RELEASED_TRACES = ROOT / "data" / "traces"


def estimate_prompt_tokens(message: str | Conversation) -> int:
    """The prompt tokens one request is estimated to cost: a token per run of letters, per digit and per
    other visible character of each text it sends (a bare user message, or a conversation's system prompt
    and turns), and 32 for the chat template around them.

    >>> estimate_prompt_tokens("Fix this: x = 10")  # Fix, this, :, x, =, 1, 0 and the template
    39
    >>> estimate_prompt_tokens(Conversation("Fix this: x = 10", system="Be brief."))  # and Be, brief, .
    42
    """
    parts = (message,) if isinstance(message, str) else message.parts
    return sum(len(PIECE.findall(part)) for part in parts) + TEMPLATE_TOKENS


@dataclass(frozen=True)
class Completions:
    """The released completions' tokens per source: median and 95th percentile (nearest rank)."""

    median: dict[str, float]
    p95: dict[str, float]
    overall_median: float
    overall_p95: float

    def of(self, source: str | None) -> tuple[float, float]:
        return (self.median.get(source, self.overall_median), self.p95.get(source, self.overall_p95))


def percentile(values: list[int], share: float) -> float:
    """The nearest-rank percentile (the smallest value with at least `share` of the values at or below it).

    >>> percentile([1, 2, 3, 4, 100], 0.95), percentile([5], 0.5)
    (100, 5)
    """
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def released_completions(folder: Path = RELEASED_TRACES) -> Completions:
    """The completion tokens of every released trace row with a readable usage, by source."""
    by_source: dict[str, list[int]] = {}
    for path in jsonl.files_named([folder], "trace"):
        for row in read_final(path).final.values():
            usage = read_usage(row.usage)
            if usage is not None and row.source:
                by_source.setdefault(row.source, []).append(usage.completion_tokens)
    every = [value for values in by_source.values() for value in values] or [0]
    return Completions({s: statistics.median(v) for s, v in by_source.items()},
                       {s: percentile(v, 0.95) for s, v in by_source.items()},
                       statistics.median(every), percentile(every, 0.95))


@dataclass(frozen=True)
class Estimate:
    requests: int
    skipped: int  # already final in --out
    prompt_tokens: int
    completion_median: int
    completion_p95: int
    completion_ceiling: int
    price: Price | None
    batch: bool = False  # sent through a provider's batch API: priced at its batch prices where given
    conversations: bool = False  # some request sends a system prompt or earlier turns, counted with its message

    def cost(self, completion_tokens: int) -> float | None:
        return None if self.price is None else self.price.cost(self.prompt_tokens, completion_tokens, batch=self.batch)

    @property
    def upper_cost(self) -> float | None:
        """The estimate's upper end: the cost at the 95th-percentile completions."""
        return self.cost(self.completion_p95)

    def lines(self, model: str, max_tokens: int) -> list[str]:
        """The estimate as the lines `run --estimate` prints."""
        requests = f"{self.requests:,} request" + ("" if self.requests == 1 else "s")
        skipped = f" ({self.skipped:,} already final in --out, left out)" if self.skipped else ""
        turns = " with their system prompts and earlier turns" if self.conversations else ""
        out = [f"estimate for {model}: {requests} to send{skipped}; nothing is sent",
               f"  prompt tokens:     ~{self.prompt_tokens:,} (estimated from the messages{turns}: runs of letters, "
               f"digits and other characters, plus {TEMPLATE_TOKENS} per request for the chat template)",
               f"  completion tokens: ~{self.completion_median:,} if every reply is as long as the released median "
               f"reply of its source, ~{self.completion_p95:,} if as long as the 95th-percentile one (the released "
               f"runs were cut at 1,024), at most {self.completion_ceiling:,} (max_tokens {max_tokens:,})"]
        if self.price is None:
            out.append("  cost: no price for this model (--prices FILE with a table for it): tokens only")
        else:
            priced = ""
            if self.batch:
                priced = (" (at the batch prices)" if self.price.batch_input_per_mtok is not None else
                          " (the prices file gives no batch prices: at the synchronous ones)")
            out.append(f"  cost (USD): {dollars(self.cost(self.completion_median))} at the median, "
                       f"{dollars(self.upper_cost)} at the 95th percentile, at most "
                       f"{dollars(self.cost(self.completion_ceiling))}{priced}")
        return out


def dollars(amount: float) -> str:
    """An amount in USD, with cents, or to four places below a cent; words for one beyond a float (a cost of
    token counts of hundreds of digits: `Price.cost`), never "$inf".

    >>> dollars(12.345), dollars(0.00042), dollars(math.inf)
    ('$12.35', '$0.0004', 'too large to price')
    """
    if not math.isfinite(amount):
        return "too large to price"
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


def estimate(requests: list[Request], *, skipped: int, max_tokens: int, price: Price | None,
             completions: Completions, batch: bool = False) -> Estimate:
    """The estimate of asking `requests` (those a run would send).

    >>> c = Completions({"humaneval": 100}, {"humaneval": 400}, 100, 400)
    >>> from benchmark.dataset import requests
    >>> chosen = requests(sources=["humaneval"], conditions=["clean"], limit=2)
    >>> e = estimate(chosen, skipped=0, max_tokens=300, price=Price(1.0, 2.0), completions=c)
    >>> e.requests, e.completion_median, e.completion_p95, e.completion_ceiling
    (2, 200, 600, 600)
    """
    median = p95 = 0.0
    for request in requests:
        low, high = completions.of(request.source)
        median += min(low, max_tokens)
        p95 += min(high, max_tokens)
    return Estimate(requests=len(requests), skipped=skipped,
                    prompt_tokens=sum(estimate_prompt_tokens(request.conversation) for request in requests),
                    completion_median=round(median), completion_p95=round(p95),
                    completion_ceiling=max_tokens * len(requests), price=price, batch=batch,
                    conversations=any(not request.conversation.bare for request in requests))


@dataclass(frozen=True)
class EstimatorError:
    model: str
    rows: int
    median: float  # relative error |estimate - recorded| / recorded, per request
    worst: float


def estimator_error(messages: dict[str, str], folder: Path = RELEASED_TRACES) -> list[EstimatorError]:
    """The prompt-token estimator's relative error per request against the prompt tokens each released trace
    recorded (`messages`: request id -> rendered message), per model."""
    found = []
    for path in jsonl.files_named([folder], "trace"):
        errors, model = [], None
        for row_id, row in read_final(path).final.items():
            usage = read_usage(row.usage)
            if usage is None or row_id not in messages or not usage.prompt_tokens:
                continue
            model = row.model
            errors.append(abs(estimate_prompt_tokens(messages[row_id]) - usage.prompt_tokens) / usage.prompt_tokens)
        if errors:
            found.append(EstimatorError(model, len(errors), statistics.median(errors), max(errors)))
    return found
