"""When to try again and how long to wait: bounded exponential backoff with jitter, Retry-After first.

Retried: HTTP 408, 429 and 5xx, timeouts, dropped connections and a 2xx whose
body is not JSON (a body cut short on the way). Not retried: other 4xx, which
the same request would only get again. The jitter is drawn from a generator
seeded by the request id and attempt number, so the waits are spread across
requests yet the same on every rerun.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

RETRYABLE_STATUSES = frozenset({408, 429})
FATAL_STATUSES = frozenset({401, 403, 404})  # every other request would fail the same way (so would 3xx)


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt; waits double from `base_s` up to `cap_s`."""

    max_retries: int = 6
    base_s: float = 1.0
    cap_s: float = 60.0
    max_retry_after_s: float = 600.0


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None if absent or unreadable.

    `now` is the current Unix time; a date in the past means "now" (0 s).
    """
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
        if when is None or when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def retry_wait_s(policy: RetryPolicy, retry_number: int, retry_after_s: float | None,
                 jitter_key: str) -> float:
    """Seconds to wait before retry number `retry_number` (1 for the first retry).

    A server's Retry-After is honoured (capped at `max_retry_after_s`); otherwise
    "equal jitter": half the exponential step fixed, half drawn at random.
    """
    if retry_after_s is not None:
        return round(min(retry_after_s, policy.max_retry_after_s), 3)
    step = min(policy.cap_s, policy.base_s * 2.0 ** min(retry_number - 1, 64))  # no overflow at retry 1,025
    draw = random.Random(f"{jitter_key}#{retry_number}").random()
    return round(step / 2 + draw * step / 2, 3)
