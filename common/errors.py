"""One exception type for mistakes a user can fix (bad path, bad config, bad row).

`seam.py` prints these as one line on stderr and exits 2, without a traceback,
so that a traceback always means a bug in seam rather than in its input.
"""


class UserError(Exception):
    """An input problem the user can fix; the message says where and what was expected."""
