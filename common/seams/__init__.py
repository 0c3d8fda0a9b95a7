"""The seam finder: where, in one user message, a pasted text ends and the user's own remark after it begins.

Shared by the occurrence audit's screen (`occurrence.screen`, which keeps real
chat-log messages of that shape) and the guard (`guard.mark`, which puts
boundary lines around the paste before a model sees it), so that neither
reaches into the other. Pure functions of text, standard library only:
`segment.find_seam` cuts a message into lead, artifact and remark, with the
rules of `rules` (lines and blocks), `remarks` (the tail), `tone` (what the tail
sounds like), `layout` (how lines break) and `letters` (how letters end). docs/OCCURRENCE.md lists every rule.
"""

# Bump whenever a rule changes which messages have a seam or where it is: the screen records it as its
# screen_version in every candidates file, and the guard's messages (data/studies/guard) depend on it.
SEAMS_VERSION = "3"
