"""A noun in the number a count asks for: "1 request", "2 requests", never "1 requests"."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`noun` when `count` is 1, else `nouns` (default: `noun` + "s"); the caller writes the count itself.

    >>> [f"{n} {plural(n, 'request')}" for n in (0, 1, 2)]
    ['0 requests', '1 request', '2 requests']
    >>> f"{1:,} {plural(1, 'batch', 'batches')}, {1800:,} {plural(1800, 'batch', 'batches')}"
    '1 batch, 1,800 batches'
    """
    return noun if count == 1 else (nouns or noun + "s")
