"""A server's text made fit for the terminal: the one helper every runner message that quotes a server uses.

An error body, a URL a provider hands back, a header, a batch's state: each is whatever the server chose to
send. Printed as it came, an ESC sequence could clear the screen, retitle the window or move the cursor over
earlier lines, BEL rings, a carriage return hides the start of the line, and a line separator or bidi override
makes the line read otherwise than it is. So every such text is shown with those characters as "?", after the
key is redacted (docs/RUNNER.md promises both). The trace rows keep what the server sent, redacted but not
altered: this is for what is printed only.
"""

from __future__ import annotations

import re

from runner.apikey import redact

# C0 and C1 controls (ESC, BEL, CR, LF, NUL, CSI...), the line and paragraph separators, bidi embeddings,
# overrides and isolates
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text, api_key: str | None = None, limit: int | None = 300) -> str:
    """`text` (any value, as `str` gives it) for the terminal: the key redacted, control characters shown
    as "?", cut to `limit` characters with "…" (None: not cut).

    >>> printable("denied\\x1b[2J\\x07\\r ok\\u202e", None)
    'denied?[2J?? ok?'
    >>> printable("x" * 5, None, limit=3)
    'xxx…'
    """
    text = CONTROL.sub("?", redact(str(text), api_key))
    return text if limit is None or len(text) <= limit else text[:limit] + "…"
