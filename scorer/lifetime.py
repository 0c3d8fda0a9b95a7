"""The lifetime of worker processes: they never outlive the `seam.py score` that started them.

A worker inherits the parent's standard output and error. Left running after the parent was stopped, it
holds the caller's pipes open (a `$(seam.py score ...)`, a CI step or a test waits on them, for as long as
the worker lives, which, its parent gone, may be for ever) and spends a core on files no one will write.
So, while the workers run:
- SIGTERM to the parent raises `Terminated` in it and SIGINT its usual KeyboardInterrupt; either way the
  parent kills its workers at once (SIGKILL: they hold nothing worth saving, since the parent writes every
  labels file only once all are scored) before it goes on. After SIGTERM it then ends as SIGTERM ends a
  process (status 143 in a shell); after SIGINT, seam.py says "interrupted" and exits 130, as always.
- The workers ignore SIGINT (Ctrl+C reaches the whole process group: the parent ends them, and they print
  no traceback of their own) and take SIGTERM's default, ending without a word.
- On Linux, each worker asks the kernel to kill it when its parent dies (PR_SET_PDEATHSIG), which covers a
  parent killed by SIGKILL, which no handler sees.
A parent started with SIGTERM ignored (its caller chose so) keeps ignoring it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1  # include/uapi/linux/prctl.h
MANAGER_EXIT_S = 5  # how long kill_workers waits for the pool's manager thread to see its workers gone


class Terminated(BaseException):
    """SIGTERM, raised in the parent's main thread so that its workers are ended before it goes."""


def _raise_terminated(signum, frame):
    raise Terminated


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` (where SIGTERM had its default action and this is the main
    thread); a `Terminated` that leaves the block ends the process by SIGTERM, as it would have ended at once."""
    handled = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if handled:
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        raise  # not reached: the default action of SIGTERM ends the process
    finally:
        if handled:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def kill_workers(pool) -> None:
    """Kill the worker processes of a `ProcessPoolExecutor` at once, and let it go without waiting for them.

    A worker killed while sending its result (a file's labels: large, so sent in several writes) leaves the pool's
    manager thread reading the rest of a message that will never come, and the interpreter joins that thread on
    exit: the parent would hang there after saying "interrupted". So the parent also closes its own copy of the
    result pipe's writing end; with every worker dead, no writer is left, and the read ends (end of file), which
    the manager thread takes for a broken pool and stops.

    The parent then waits (a few seconds at most) for that thread to end. Otherwise, on exit, the interpreter
    wakes the thread through a pipe the thread may be closing at that moment (the two are not under one lock),
    and the parent printed "Exception ignored … Bad file descriptor" after "interrupted" (1 in 40 interrupted
    runs)."""
    processes = getattr(pool, "_processes", None) or {}  # pid -> Process (Python 3.14 adds pool.kill_workers())
    for process in list(processes.values()):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # already gone, or already closed
            process.kill()
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)  # the pool's SimpleQueue
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=MANAGER_EXIT_S)


def start_in_worker(parent: int) -> None:
    """A worker's signals, set first thing when it starts: SIGINT ignored, SIGTERM's default, and (Linux) death
    with its parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
