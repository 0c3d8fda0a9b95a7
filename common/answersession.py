"""An answer page's session, the state `common.answerserver.AnswerServer` serves from, and the reading of its forms.

Apart from the server so that a kind of answer file (the review's, the occurrence check's) builds its session
from these without the HTTP side, and the server knows a session only through the members named in its docstring.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs

from common.answerfile import AnswerFormat, first_unanswered
from common.answerpage import CONTENT_SECURITY_POLICY


class Refused(Exception):
    """A request the page cannot take (a bad form, an unknown case): its HTTP status and what to tell the user."""

    def __init__(self, status: HTTPStatus, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def read_form(body: bytes, names: tuple[str, ...], max_fields: int) -> dict[str, str]:
    """A form body's fields, each given at most once and none but `names`; anything else is `Refused`.

    >>> read_form(b"answer=yes&note=a+b", ("answer", "note"), 5)
    {'answer': 'yes', 'note': 'a b'}
    """
    try:
        text = body.decode("utf-8")
        form = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text), errors="strict",
                        max_num_fields=max_fields)
    except (UnicodeDecodeError, ValueError):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form could not be read (expected UTF-8 form data).") from None
    if set(form) - set(names) or any(len(values) > 1 for values in form.values()):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form has unknown or repeated fields.")
    return {name: values[0] for name, values in form.items()}


def form_note(form: dict[str, str], limit: int) -> str:
    """The form's note with its line ends as "\\n" (a browser sends "\\r\\n"), at most `limit` characters.

    >>> form_note({"note": "a\\r\\nb"}, 10)
    'a\\nb'
    """
    note = form.get("note", "").replace("\r\n", "\n").replace("\r", "\n")
    if len(note) > limit:
        raise Refused(HTTPStatus.BAD_REQUEST, f"The note is longer than {limit:,} characters. Nothing was saved.")
    return note


@dataclass
class AnswerSession:
    """The state a page is served from: the file's cases and the answers in force. A session of a kind of
    answer file (`FORMAT`) adds what its page shows, `case_page`, `done_page` and `submit`."""

    FORMAT: ClassVar[AnswerFormat]
    content_security_policy: ClassVar[str] = CONTENT_SECURITY_POLICY

    path: Path
    reviewer: str
    cases: tuple
    latest: dict[int, Any]
    moved_aside: Path | None = field(default=None, kw_only=True)  # where a torn last line went, if one was
    lock: threading.Lock = field(default_factory=threading.Lock, kw_only=True)

    @property
    def total(self) -> int:
        return len(self.cases)

    def first_unanswered(self, after: int = 0) -> int | None:
        return first_unanswered([case.case for case in self.cases], self.latest, after)

    def save(self, answer) -> None:
        """Append the answer durably, then take it into the state (threads serve requests: one at a time)."""
        with self.lock:
            self.FORMAT.append(self.path, answer)
            self.latest[answer.case] = answer
