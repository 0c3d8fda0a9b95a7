"""Occurrence audit: does the message shape SEAM studies occur in real chat logs (the paper's Appendix A)?

A layer above the review and below the report, which shows its tables. A
screen reads a chat-log corpus and keeps the user messages that look like an
instruction, a pasted artifact and a short remark after it; an optional LLM
judge (through the runner) asks a model whether each unique candidate really
ends with user speech after a paste; a blinded human
check answers the same question for a random sample on a local page (on the
answer pages' server the review uses too, common/answerserver.py); the report
counts every stage. No file written here holds message text: ids, checksums,
offsets and features only.

    screen    corpus       ->  candidates (header + one row per candidate)
    judge     candidates   ->  judged (one verdict per unique candidate) + the judge's traces (hold text!)
    sample    candidates   ->  a sample file (header + cases), answered on the page
    annotate  sample       ->  answers appended to the sample file
    report    all of them  ->  counts, confirmed share with a Wilson interval

docs/OCCURRENCE.md describes the whole.
"""

from common.seams import SEAMS_VERSION

# Recorded in every file this package writes: the version of the seam finder's rules (common/seams/), which
# are the screen's; bump that one whenever a rule changes what the screen keeps.
SCREEN_VERSION = SEAMS_VERSION

# The selftest's hand-written sets (occurrence/selftest/NAME.jsonl), the last held out; here, not in
# occurrence.selftest, so that building the command line does not import the screen's rules.
HAND_WRITTEN = ("dev", "dev-2", "dev-3", "dev-4", "heldout")
DEVELOPMENT = HAND_WRITTEN[:-1]  # the sets the rules were tuned on
