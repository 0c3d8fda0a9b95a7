"""A progress line on stderr for the corpus readers: how far, how fast, how long still.

On a terminal the line is redrawn in place; elsewhere (a log, CI) a full line
is printed at most every `interval_s` seconds and once at the end. The rate is
in the unit that matters to the user (messages screened per second), the ETA
from the share of the corpus's bytes read.
"""

from __future__ import annotations

import time

from runner.progress import format_duration


class Progress:
    def __init__(self, stream, what: str, total: int, unit: str, interval_s: float = 10.0,
                 clock=time.monotonic) -> None:
        self.stream = stream
        self.what = what
        self.total = total
        self.unit = unit
        self.clock = clock
        self.start = clock()
        self.interval_s = interval_s
        self.last = None
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def update(self, done: int, items: int, counts: str, *, final: bool = False) -> None:
        """`done` of `total` read, `items` units handled so far (the rate's numerator)."""
        if self.stream is None:
            return
        now = self.clock()
        if not final and self.last is not None and now - self.last < (0.5 if self.tty else self.interval_s):
            return
        self.stream.write(("\r\033[K" if self.tty else "") + self.text(done, items, counts, now - self.start, final)
                          + ("\n" if final or not self.tty else ""))
        self.stream.flush()
        self.last = now

    def text(self, done: int, items: int, counts: str, elapsed: float, final: bool) -> str:
        """The line's text.

        >>> Progress(None, "screen", 200, "messages/s").text(50, 1000, "3 candidates", 2.0, False)
        'screen: 25.0 % of the corpus · 3 candidates · 500 messages/s · ETA 0m06s'
        """
        rate = items / elapsed if elapsed > 0 else 0.0
        share = min(done / self.total, 1.0) if self.total else 0.0
        if final:
            tail = f"took {format_duration(elapsed)}"
        else:
            tail = "ETA " + (format_duration(elapsed / share - elapsed) if share > 0 else "?")
        return f"{self.what}: {100 * share:.1f} % of the corpus · {counts} · {rate:,.0f} {self.unit} · {tail}"
