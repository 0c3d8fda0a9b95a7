"""Entry points whose reader may stop early: `python -m stats.summary data/tables | head`.

When the program reading standard output exits first, the next write raises
BrokenPipeError (Python ignores SIGPIPE), and so would the interpreter's final
flush, each with a traceback. `run_main` ends the program quietly instead: that
reader wanted no more. A BrokenPipeError from anything else (a socket, a child's
pipe) is still an error and propagates.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable


def stdout_reader_gone() -> bool:
    """Whether standard output is a pipe (or socket) whose reading end was closed."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    if not hasattr(select, "poll"):  # Windows: take the exception's word for it
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def run_main(main: Callable[[], int | None], *, broken_pipe_status: int = 0) -> int | None:
    """`main()` and a flush of stdout; if stdout's reader went away, exit status `broken_pipe_status`, quietly.

    For `sys.exit(run_main(main))`. A program whose output means failure (a list of differences)
    passes the status that output stands for.
    """
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        if not stdout_reader_gone():
            raise
        # Point stdout at /dev/null, so that the interpreter's final flush has nowhere to fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return broken_pipe_status
    return status
