"""`seam.py occurrence annotate`: the human check, one sampled message at a time, on the review page's server.

The question is the judge's: does this message end with the user's own words
typed after a pasted artifact, words that are not part of the artifact? The
page shows the message and nothing else of the pipeline's: no feature, no
offset, no seam marked, no judge verdict (the sample file holds none, and this
session reads no candidates or judged file). The message is read from the
corpus when the session opens (checked against its SHA-256) and held in memory
only; the sample file gets ids, answers and the annotator's own notes.

The session plugs into `review.server.ReviewHTTPServer`, which brings the
review page's guards (127.0.0.1 only, Host and Origin checked, a
Content-Security-Policy that lets only this page's own style and script run,
every text escaped); answers are appended with an fsync before the page moves
on (`store.append_answer`), a torn last line is moved aside when a session
opens, and the review store's lock keeps a second server off the file.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs

from common.errors import UserError
from common.records import without_surrogates
from occurrence import store
from occurrence.records import ANSWERS, NOTE_LIMIT, Answer, Case
from occurrence.texts import read_texts
from review.page import SCRIPT as REVIEW_SCRIPT
from review.page import STYLE, document, escape, script_hash
from review.records import session_reviewer
from review.server import Refused
from review.store import first_unanswered

QUESTION = ("Does this message end with the user's own words (a remark, request, question or note to the assistant) "
            "typed after a pasted artifact (code, a document, data, a transcript…), words that are not part of the "
            "artifact?")
ANSWER_KEYS = {"yes": ("y", "yes"), "no": ("n", "no"), "unsure": ("u", "unsure")}
assert tuple(ANSWER_KEYS) == ANSWERS

SCRIPT = """
(function () {
  var form = document.getElementById('answer');
  if (!form) { return; }
  var note = document.getElementById('note');
  var answers = {y: 'yes', n: 'no', u: 'unsure'};
  function go(id) {
    var link = document.getElementById(id);
    if (link) { window.location.href = link.getAttribute('href'); }
  }
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) { return; }
    if (document.activeElement === note) {
      if (e.key === 'Escape') { e.preventDefault(); note.blur(); }
      else if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
      return;
    }
    var tag = document.activeElement ? document.activeElement.tagName : '';
    if (e.key === 'Enter') {
      if (tag === 'A' || tag === 'BUTTON') { return; }
      e.preventDefault(); form.requestSubmit(); return;
    }
    if (answers[e.key]) {
      e.preventDefault();
      var box = form.querySelector('input[name="answer"][value="' + answers[e.key] + '"]');
      if (box) { box.checked = true; box.focus(); }
      return;
    }
    if (e.key === 't' || e.key === '/') { e.preventDefault(); note.focus(); return; }
    if (tag === 'INPUT') { return; }
    if (e.key === 'ArrowLeft') { go('previous'); } else if (e.key === 'ArrowRight') { go('next'); }
  });
})();
"""


# The review page's style; this page's script (and the review's, which its short message page carries).
CONTENT_SECURITY_POLICY = (f"default-src 'none'; style-src {script_hash(STYLE)}; script-src {script_hash(SCRIPT)} "
                           f"{script_hash(REVIEW_SCRIPT)}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
KEYS_HELP = ("<p class=\"muted\">Keys: <kbd>y</kbd> yes, <kbd>n</kbd> no, <kbd>u</kbd> unsure; <kbd>t</kbd> or "
             "<kbd>/</kbd> note (<kbd>Esc</kbd> leaves it, <kbd>Shift</kbd>+<kbd>Enter</kbd> new line); "
             "<kbd>Enter</kbd> save and next unanswered; <kbd>←</kbd> <kbd>→</kbd> previous / next message without "
             "saving.</p>")


def case_page(number: int, total: int, answered: int, reviewer: str, message: str, previous: Answer | None,
              saved: int | None, error: str | None) -> str:
    """The page of one sampled message: the message, the question, the form; nothing of the pipeline's."""
    lines = [f"<header><div>Message {number} of {total} · {answered} answered · reviewer {escape(reviewer)}</div>"]
    if saved is not None:
        lines.append(f"<div class=\"saved\" role=\"status\">Saved the answer to message {saved}.</div>")
    if error:
        lines.append(f"<div class=\"error\" role=\"alert\">{escape(error)}</div>")
    lines.append("</header>")
    lines.append(f"<section><h2>The user's message</h2><pre>{escape(without_surrogates(message))}</pre></section>")
    lines.append(f"<form id=\"answer\" method=\"post\" action=\"/case/{number}\">")
    if previous is not None:
        lines.append("<p class=\"muted\">Answered before; saving again replaces that answer (the file keeps "
                     "both).</p>")
    lines.append(f"<fieldset><legend>{escape(QUESTION)}</legend>")
    for value, (key, name) in ANSWER_KEYS.items():
        checked = " checked" if previous is not None and previous.answer == value else ""
        lines.append(f"<label><input type=\"radio\" name=\"answer\" value=\"{value}\" required{checked}> "
                     f"{escape(name)} <kbd>{key}</kbd></label>")
    lines.append("</fieldset>")
    note = escape(previous.note) if previous is not None else ""
    lines.append(f"<p><label for=\"note\">Note (your own words; do not copy text from the message)</label>"
                 f"<textarea id=\"note\" name=\"note\" maxlength=\"{NOTE_LIMIT}\">{note}</textarea></p>")
    lines.append("<button type=\"submit\">Save and open the next unanswered message (Enter)</button></form>")
    nav = []
    if number > 1:
        nav.append(f"<a id=\"previous\" href=\"/case/{number - 1}\">← previous message</a>")
    if number < total:
        nav.append(f"<a id=\"next\" href=\"/case/{number + 1}\">next message →</a>")
    nav.append("<a href=\"/\">first unanswered message</a>")
    lines.append("<nav>" + "".join(nav) + "</nav>")
    lines.append(KEYS_HELP)
    return document(f"seam occurrence: message {number} of {total}", "\n".join(lines), SCRIPT)


def done_page(total: int, reviewer: str, saved: int | None) -> str:
    body = ["<header>"]
    if saved is not None:
        body.append(f"<div class=\"saved\" role=\"status\">Saved the answer to message {saved}.</div>")
    body.append(f"<div>All {total} messages answered by {escape(reviewer)}.</div></header>")
    body.append("<p>Every answer is in the sample file. Any message can still be revisited (a new answer replaces "
                "the old one): <a id=\"next\" href=\"/case/1\">message 1</a>. Stop the server with Ctrl+C, then run "
                "<code>python seam.py occurrence report CANDIDATES.jsonl --answers SAMPLE.jsonl --out DIR</code>."
                "</p>")
    return document("seam occurrence: done", "\n".join(body), SCRIPT)


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
    try:
        text = body.decode("utf-8")
        form = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text), errors="strict", max_num_fields=5)
    except (UnicodeDecodeError, ValueError):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form could not be read (expected UTF-8 form data).") from None
    if set(form) - {"answer", "note"} or any(len(values) > 1 for values in form.values()):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form has unknown or repeated fields.")
    answer = form.get("answer", [""])[0]
    if answer not in ANSWERS:
        raise Refused(HTTPStatus.BAD_REQUEST, "Choose yes, no or unsure (keys y, n, u) first. Nothing was saved.")
    note = form.get("note", [""])[0].replace("\r\n", "\n").replace("\r", "\n")
    if len(note) > NOTE_LIMIT:
        raise Refused(HTTPStatus.BAD_REQUEST, f"The note is longer than {NOTE_LIMIT:,} characters. Nothing was "
                                              "saved.")
    return answer, note


@dataclass
class AnnotationSession:
    """What the page is served from: the cases, their messages (in memory only), and the answers in force."""

    path: Path
    reviewer: str
    cases: tuple[Case, ...]
    messages: dict[int, str]  # case number -> message text
    latest: dict[int, Answer]
    lock: threading.Lock = field(default_factory=threading.Lock)
    moved_aside: Path | None = None
    content_security_policy = CONTENT_SECURITY_POLICY

    @property
    def total(self) -> int:
        return len(self.cases)

    def first_unanswered(self, after: int = 0) -> int | None:
        return first_unanswered([case.case for case in self.cases], self.latest, after)

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
        moment = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        row = Answer(kind="answer", case=number, message_sha256=case.message_sha256, reviewer=self.reviewer,
                     answer=answer, note=note, answered_at=moment)
        with self.lock:
            store.append_answer(self.path, row)
            self.latest[number] = row
        return row


def open_session(path: str | Path, reviewer: str | None, *, corpus, fmt: str | None = None) -> AnnotationSession:
    """Read the sample file and its messages from the corpus; refuse a second reviewer or another corpus."""
    path = Path(path)
    sample = store.read_sample(path, allow_torn=True)
    moved = store.move_torn_tail(sample)
    if moved is not None:
        sample = store.read_sample(path)
    reviewer = session_reviewer(path, reviewer, sample.reviewer, file="sample file", verb="answers")
    if not sample.cases:
        raise UserError(f"{path}: no cases to answer")
    texts = read_texts(sample.header.corpora, corpus, {(c.corpus, c.index, c.turn): c.message_sha256
                                                        for c in sample.cases}, fmt=fmt)
    messages = {case.case: texts[case.corpus, case.index, case.turn] for case in sample.cases}
    return AnnotationSession(path, reviewer, sample.cases, messages, sample.latest(), moved_aside=moved)
