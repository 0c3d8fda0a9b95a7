"""`seam.py occurrence annotate`: the human check, one sampled message at a time, on the answer pages' server.

The question is the judge's: does this message end with the user's own words
typed after a pasted artifact, words that are not part of the artifact? The
page shows the message and nothing else of the pipeline's: no feature, no
offset, no seam marked, no judge verdict (the sample file holds none, and this
session reads no candidates or judged file). The message is read from the
corpus when the session opens (checked against its SHA-256) and held in memory
only; the sample file gets ids, answers and the annotator's own notes.

The session plugs into `common.answerserver.AnswerServer`, the server of the
review page too, which brings its guards (127.0.0.1 only, Host and Origin
checked, a Content-Security-Policy that lets only the pages' own style and script
run, every text escaped); the page is built from `common.answerpage`, the sample
file is kept by `common.answerfile` (answers appended with an fsync before the
page moves on, a torn last line moved aside when a session opens, a lock that
keeps a second server off the file). No review module is imported: what the two
pages share is in common/.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from common import answerpage
from common.answerfile import answered_now
from common.answerpage import escape
from common.answersession import AnswerSession, Refused, form_note, read_form
from common.records import without_surrogates
from occurrence import store
from occurrence.records import ANSWERS, NOTE_LIMIT, Answer
from occurrence.texts import read_texts

QUESTION = ("Does this message end with the user's own words (a remark, request, question or note to the assistant) "
            "typed after a pasted artifact (code, a document, data, a transcript…), words that are not part of the "
            "artifact?")
ANSWER_KEYS = {"yes": ("y", "yes"), "no": ("n", "no"), "unsure": ("u", "unsure")}
assert tuple(ANSWER_KEYS) == ANSWERS

KEYS_HELP = ("<p class=\"muted\">Keys: <kbd>y</kbd> yes, <kbd>n</kbd> no, <kbd>u</kbd> unsure; <kbd>t</kbd> or "
             "<kbd>/</kbd> note (<kbd>Esc</kbd> leaves it, <kbd>Shift</kbd>+<kbd>Enter</kbd> new line); "
             "<kbd>Enter</kbd> save and next unanswered; <kbd>←</kbd> <kbd>→</kbd> previous / next message without "
             "saving.</p>")


def case_page(number: int, total: int, answered: int, reviewer: str, message: str, previous: Answer | None,
              saved: int | None, error: str | None) -> str:
    """The page of one sampled message: the message, the question, the form; nothing of the pipeline's."""
    shown = [f"<section><h2>The user's message</h2><pre>{escape(without_surrogates(message))}</pre></section>"]
    options = [(value, name, key) for value, (key, name) in ANSWER_KEYS.items()]
    fieldset = answerpage.choices(QUESTION, "answer", options, previous.answer if previous is not None else None,
                                  required=True)
    form = answerpage.answer_form(number, "message", answered_before=previous is not None, fieldsets=fieldset,
                                  note_label="Note (your own words; do not copy text from the message)",
                                  note_limit=NOTE_LIMIT, note=previous.note if previous is not None else "")
    return answerpage.case_page(
        title=f"seam occurrence: message {number} of {total}", noun="message", number=number, total=total,
        status=f"Message {number} of {total} · {answered} answered · reviewer {escape(reviewer)}", saved=saved,
        error=error, shown=shown, form=form, keys_help=KEYS_HELP)


def done_page(total: int, reviewer: str, saved: int | None) -> str:
    """The page once every message has an answer."""
    return answerpage.done_page(
        title="seam occurrence: done", noun="message", total=total, reviewer=reviewer, saved=saved,
        file="sample file", then="python seam.py occurrence report CANDIDATES.jsonl --answers SAMPLE.jsonl --out DIR")


QUOTE_RUN = 40  # characters of a message a note must not repeat (tests/test_occurrence_release.py's run)
QUOTE_WORD_CHARACTERS = 10  # … when they hold this many letters or digits (40 spaces are nobody's text)


def quoted_run(note: str, message: str) -> str | None:
    """A run of `QUOTE_RUN` characters of the note that the message holds too (and that holds text), or None.

    The note is for the annotator's own words, and the sample file it is saved in may be released: a note
    that pastes the message would carry its text out. Every such run holds a whole window of half its length
    starting at a multiple of that length in the note, so only those windows are looked for first.

    >>> message = "Summarise this:\\n\\nThe committee met on Tuesday to review the budget.\\n\\nthanks"
    >>> quoted_run("says 'The committee met on Tuesday to review the budget' and thanks", message)
    'The committee met on Tuesday to review t'
    >>> quoted_run("a pasted minute, then a thank-you", message) is None
    True
    """
    half = QUOTE_RUN // 2
    for start in range(0, len(note) - half + 1, half):
        window = note[start:start + half]
        runs = [(first, note[first:first + QUOTE_RUN]) for first in range(max(0, start + half - QUOTE_RUN), start + 1)]
        runs = [(first, run) for first, run in runs
                if len(run) == QUOTE_RUN and sum(char.isalnum() for char in run) >= QUOTE_WORD_CHARACTERS]
        # Any place the message holds a run holds the window too, at the same offset: so the runs are compared
        # where the window occurs, not searched for in the whole message each (2.9 s for a 10 MB message).
        at = message.find(window) if runs else -1
        while at != -1:
            for first, run in runs:
                begin = at - (start - first)
                if begin >= 0 and message.startswith(run, begin):
                    return run
            at = message.find(window, at + 1)
    return None


def parse_form(body: bytes) -> tuple[str, str]:
    """(answer, note) from a form body; anything else is `Refused`.

    >>> parse_form(b"answer=yes&note=a+b%0D%0Ac")
    ('yes', 'a b\\nc')
    """
    form = read_form(body, ("answer", "note"), 5)
    answer = form.get("answer", "")
    if answer not in ANSWERS:
        raise Refused(HTTPStatus.BAD_REQUEST, "Choose yes, no or unsure (keys y, n, u) first. Nothing was saved.")
    return answer, form_note(form, NOTE_LIMIT)


@dataclass
class AnnotationSession(AnswerSession):
    """What the page is served from: the cases, their messages (in memory only), and the answers in force."""

    FORMAT = store.SAMPLE_FILE

    messages: dict[int, str]  # case number -> message text

    def case_page(self, number: int, saved: int | None = None, error: str | None = None) -> str:
        return case_page(number, self.total, len(self.latest), self.reviewer, self.messages[number],
                         self.latest.get(number), saved, error)

    def done_page(self, saved: int | None) -> str:
        return done_page(self.total, self.reviewer, saved)

    def submit(self, number: int, body: bytes) -> None:
        answer, note = parse_form(body)
        self.answer(number, answer, note)

    def answer(self, number: int, answer: str, note: str = "") -> Answer:
        """Save one answer durably, then take it into the state; a note that quotes the message is `Refused`."""
        case = self.cases[number - 1]
        if quoted_run(note, self.messages[number]) is not None:
            raise Refused(HTTPStatus.BAD_REQUEST, f"The note repeats {QUOTE_RUN} characters or more of the message. "
                                                  "Describe it in your own words: the sample file holds no message "
                                                  "text. Nothing was saved.")
        row = Answer(kind="answer", case=number, message_sha256=case.message_sha256, reviewer=self.reviewer,
                     answer=answer, note=note, answered_at=answered_now())
        self.save(row)
        return row


def open_session(path: str | Path, reviewer: str | None, *, corpus, fmt: str | None = None) -> AnnotationSession:
    """Read the sample file and its messages from the corpus; refuse a second reviewer or another corpus."""
    path = Path(path)
    sample, reviewer, moved = store.SAMPLE_FILE.open(path, reviewer)
    texts = read_texts(sample.header.corpora, corpus, {(c.corpus, c.index, c.turn): c.message_sha256
                                                        for c in sample.cases}, fmt=fmt)
    messages = {case.case: texts[case.corpus, case.index, case.turn] for case in sample.cases}
    return AnnotationSession(path, reviewer, sample.cases, sample.latest(), messages, moved_aside=moved)
