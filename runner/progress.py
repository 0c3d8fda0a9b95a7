"""The progress line on stderr: done/total, ok/unusable/failed, requests per minute, ETA.

On a terminal the line is redrawn in place; otherwise (a log file, CI) a full
line is printed at most every `interval_s` seconds and once at the end.
"""

from __future__ import annotations

import time


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def progress_line(done: int, total: int, counts: dict, elapsed_s: float) -> str:
    rate = done / elapsed_s * 60 if elapsed_s > 0 and done else 0.0
    eta = format_duration((total - done) / rate * 60) if rate else "?"
    return (f"{done}/{total} done · ok {counts.get('ok', 0)} · unusable {counts.get('unusable', 0)} · "
            f"failed {counts.get('failed', 0)} · {rate:.1f} req/min · ETA {eta}")


class Progress:
    def __init__(self, stream, total: int, interval_s: float = 10.0, clock=time.monotonic):
        self.stream = stream
        self.total = total
        self.clock = clock
        self.start = clock()
        self.interval_s = interval_s
        self.last_print = None
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def update(self, done: int, counts: dict, final: bool = False) -> None:
        if self.stream is None:
            return
        now = self.clock()
        line = "run: " + progress_line(done, self.total, counts, now - self.start)
        if self.tty:
            self.stream.write("\r\033[K" + line + ("\n" if final else ""))
        elif final or self.last_print is None or now - self.last_print >= self.interval_s:
            self.stream.write(line + "\n")
        else:
            return
        self.last_print = now
        self.stream.flush()

    def notice(self, text: str) -> None:
        """A line of its own (e.g. a wait), kept apart from the progress line redrawn on a terminal."""
        if self.stream is None:
            return
        self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
        self.stream.flush()
        if self.tty:
            self.last_print = None
