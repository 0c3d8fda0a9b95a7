"""Work without Python's cycle collector: it would walk every live row again and again and find nothing.

Used by the scorer (lexical-only runs) and by the report's build. Everything
they hold is acyclic: parsed JSON rows, records made of them, strings, sets and
tuples (a whole `seam.py score` of 36,000 outputs leaves fewer than 2,000
objects in reference cycles, from argument parsing and imports). Reference
counting frees all of it as usual; only the collector of cycles is paused. Yet it
runs every few hundred allocations, and its full passes walk every live object:
with a panel of trace files in memory that was a tenth of the scorer's time, and
2 of the 5 s a report page of 20 models took. So these commands pause it while
they work (`paused`), and the state it found is restored after, whatever happens.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block; the collector's state as it was after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
