"""The progress line while batches run at the provider: their states, done of total, failed, elapsed and ETA.

On a terminal the line is redrawn in place; otherwise (a log file, CI) a line is printed at most every
`interval_s` seconds and once at the end, like the synchronous run's (runner.progress). The counts come
from the provider's answers: whatever they say, the line shows done and failed between 0 and the
total, so that no count (negative, or of thousands of digits) breaks the ETA or the line.
"""

from __future__ import annotations

import time

from runner.progress import format_duration


class Waiting:
    """The progress line while batches run: done of total, failed, elapsed and ETA."""

    def __init__(self, log, interval_s: float = 10.0):
        self.log, self.interval_s = log, interval_s
        self.start = time.monotonic()
        self.first_done: int | None = None
        self.last_print: float | None = None
        self.tty = bool(getattr(log, "isatty", lambda: False)())

    def update(self, states: dict[str, str], done: int, failed: int, total: int, final: bool = False) -> None:
        done = min(max(done, 0), total)
        failed = min(max(failed, 0), total)
        now = time.monotonic()
        elapsed = now - self.start
        self.first_done = done if self.first_done is None else self.first_done
        gained = done - self.first_done
        eta = format_duration((total - done) * elapsed / gained) if gained > 0 and total > done else "?"
        kinds = ", ".join(f"{batch_id}: {state}" for batch_id, state in list(states.items())[:3])
        more = f" and {len(states) - 3} more" if len(states) > 3 else ""
        line = (f"run: batch {kinds}{more} · {done:,}/{total:,} done · failed {failed:,} · "
                f"{format_duration(elapsed)} elapsed · ETA {eta}")
        if self.tty:
            self.log.write("\r\033[K" + line + ("\n" if final else ""))
        elif final or self.last_print is None or now - self.last_print >= self.interval_s:
            self.log.write(line + "\n")
        else:
            return
        self.last_print = now
        self.log.flush()

    def notice(self, text: str) -> None:
        self.log.write(("\r\033[K" if self.tty else "") + text + "\n")
        self.log.flush()
