"""An optional cap on requests per minute, shared by all worker threads.

Each attempt (retries included) takes the next free slot; slots are spaced
60/rpm seconds apart, so the cap holds over any window, not just on average.
"""

from __future__ import annotations

import threading
import time


class Pacer:
    def __init__(self, requests_per_minute: float | None, clock=time.monotonic, sleep=time.sleep):
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self.clock = clock
        self.sleep = sleep
        self.next_slot = 0.0
        self.lock = threading.Lock()

    def wait(self) -> float:
        """Block until this caller's slot; return the seconds waited."""
        if not self.interval:
            return 0.0
        with self.lock:
            now = self.clock()
            slot = max(now, self.next_slot)
            self.next_slot = slot + self.interval
        delay = slot - now
        if delay > 0:
            self.sleep(delay)
        return delay
