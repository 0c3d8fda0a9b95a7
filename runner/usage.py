"""The tokens a reply cost, read from the `usage` its provider sent, whatever the provider's shape.

Each provider names them differently:

* OpenAI (chat completions): `prompt_tokens`, `completion_tokens` (reasoning included),
  `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`; its Responses API
  and Anthropic say `input_tokens`, `output_tokens` instead;
* Anthropic: `input_tokens` (the uncached part), `cache_creation_input_tokens`, `cache_read_input_tokens`,
  `output_tokens` (thinking included);
* Gemini (`usageMetadata`): `promptTokenCount`, `candidatesTokenCount` (the visible reply),
  `thoughtsTokenCount` (thinking, billed as output), `cachedContentTokenCount`.

`read_usage` gives them one shape: prompt tokens (all input, cached included), completion tokens (all
output billed, reasoning included), and the reasoning and cached parts where the provider reports them.
A usage it cannot read (absent, not an object, a runner-version-1 row's other JSON, counts that are not
whole numbers, any whole number in it above MAX_COUNT) is None: counted as unknown by the caller, never as 0.
The usage is the server's word, recorded as sent: a count above a trillion tokens (or of 310 digits, past
what a float holds) is no reply's, and taking it would make every total and cost meaningless or overflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_COUNT = 10**12  # tokens in one reply's usage: a hundred thousand times the longest context window


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int | None  # the part of completion_tokens spent thinking, where reported
    cached_tokens: int | None  # the part of prompt_tokens read from a cache, where reported


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _holds_too_large_count(usage: Any) -> bool:
    """Whether any whole number anywhere in the usage is above MAX_COUNT: such a usage is not a reply's,
    whichever field it is in (a cache count is added to the prompt's). Walked without recursion, as a
    hostile server's object may be nested as deep as JSON parsing allows."""
    stack = [usage]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, int) and not isinstance(value, bool) and value > MAX_COUNT:
            return True
    return False


def _get(usage: dict, *path: str) -> int | None:
    value: Any = usage
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return _count(value)


def read_usage(usage: Any) -> Usage | None:
    """One shape for every provider's usage, or None when it cannot be read.

    >>> read_usage({"prompt_tokens": 90, "completion_tokens": 174, "prompt_tokens_details": {"cached_tokens": 0}})
    Usage(prompt_tokens=90, completion_tokens=174, reasoning_tokens=None, cached_tokens=0)
    >>> read_usage({"input_tokens": 10, "cache_read_input_tokens": 80, "output_tokens": 5})
    Usage(prompt_tokens=90, completion_tokens=5, reasoning_tokens=None, cached_tokens=80)
    >>> read_usage({"promptTokenCount": 12, "candidatesTokenCount": 30, "thoughtsTokenCount": 70})
    Usage(prompt_tokens=12, completion_tokens=100, reasoning_tokens=70, cached_tokens=None)
    >>> read_usage(None), read_usage([1, 2]), read_usage({"prompt_tokens": "90", "completion_tokens": 1})
    (None, None, None)
    >>> read_usage({"prompt_tokens": 10**400, "completion_tokens": 1})  # a hostile server's count
    """
    if not isinstance(usage, dict) or _holds_too_large_count(usage):
        return None
    if "promptTokenCount" in usage or "candidatesTokenCount" in usage:  # Gemini's usageMetadata
        prompt, visible = _get(usage, "promptTokenCount"), _get(usage, "candidatesTokenCount")
        thoughts = _get(usage, "thoughtsTokenCount")
        if prompt is None or (visible is None and thoughts is None):
            return None
        return Usage(prompt, (visible or 0) + (thoughts or 0), thoughts, _get(usage, "cachedContentTokenCount"))
    if "prompt_tokens" in usage:  # OpenAI's chat completions (and compatible servers)
        prompt, completion = _get(usage, "prompt_tokens"), _get(usage, "completion_tokens")
        if prompt is None or completion is None:
            return None
        return Usage(prompt, completion, _get(usage, "completion_tokens_details", "reasoning_tokens"),
                     _get(usage, "prompt_tokens_details", "cached_tokens"))
    if "input_tokens" in usage:  # Anthropic's Messages, OpenAI's Responses
        uncached, completion = _get(usage, "input_tokens"), _get(usage, "output_tokens")
        if uncached is None or completion is None:
            return None
        created, read = _get(usage, "cache_creation_input_tokens"), _get(usage, "cache_read_input_tokens")
        if created is not None or read is not None:  # Anthropic: input_tokens excludes the cached parts
            return Usage(uncached + (created or 0) + (read or 0), completion, None, read)
        return Usage(uncached, completion, _get(usage, "output_tokens_details", "reasoning_tokens"),
                     _get(usage, "input_tokens_details", "cached_tokens"))
    return None
