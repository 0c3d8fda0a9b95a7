"""`seam.py review serve`: the review page's session, one case at a time, each answer saved as it is given.

The server reads the review file (moving a torn last line aside), checks that the
traces and requests it names are the very files the sample was drawn from
(SHA-256), and then never reads a label: the kit's verdicts are not in its memory,
so no request can reveal them.

Every answer is appended to the review file (`store.append`: one write, fsync)
before the browser is told it was saved; a later answer to the same case
supersedes the earlier one, which stays in the file. Reopening the file
continues at the first unanswered case. One reviewer per file: a second name is
refused.

The HTTP side is `common.answerserver.AnswerServer`, which knows nothing of labels
or absorption and serves the occurrence audit's annotation page too (its guards:
127.0.0.1 only, the Host and Origin headers checked, the Content-Security-Policy,
bounded connections). What is the review's own is here: `ReviewSession`, which
gives that server the case pages and takes the answers, and `parse_answer`, which
reads the review's form.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from common.answerfile import answered_now
from common.answersession import AnswerSession, Refused, form_note, read_form
from common.errors import UserError
from review import inputs, page, store
from review.inputs import Asked
from review.records import ABSORPTION_KINDS, NOTE_LIMIT, VERDICTS, Answer


@dataclass
class ReviewSession(AnswerSession):
    """The state the page is served from: the cases, what they show, and the answers in force."""

    FORMAT = store.REVIEW_FILE

    asked: dict[str, Asked]
    outputs: dict[tuple[str, str], str]  # (model, request id) -> output, for the cases and their clean requests
    show_condition: bool = False

    def view(self, number: int, saved: int | None = None, error: str | None = None) -> page.CaseView:
        case = self.cases[number - 1]
        asked = self.asked[case.id]
        return page.CaseView(
            number=number, total=self.total, answered=len(self.latest), reviewer=self.reviewer,
            instruction=asked.instruction, artifact=asked.artifact, comment=asked.comment or "",
            clean_output=self.outputs[case.model, f"{case.cluster}/clean"], output=self.outputs[case.model, case.id],
            condition=case.condition if self.show_condition else None,
            request_id=case.id if self.show_condition else None,
            previous=self.latest.get(number), saved=saved, error=error)

    def case_page(self, number: int, saved: int | None = None, error: str | None = None) -> str:
        """The HTML page of one case (blinded), with a saved confirmation or an error."""
        return page.case_page(self.view(number, saved=saved, error=error))

    def done_page(self, saved: int | None) -> str:
        """The HTML page once every case has an answer."""
        return page.done_page(self.total, self.reviewer, saved)

    def submit(self, number: int, body: bytes) -> None:
        """Save the answer a form body gives for case `number`; a form that cannot be taken is `Refused`."""
        verdict, kind, note = parse_answer(body)
        self.answer(number, verdict, kind, note)

    def answer(self, number: int, verdict: str, absorption_kind: str | None, note: str) -> Answer:
        """Save one answer durably, then take it into the state."""
        case = self.cases[number - 1]
        answer = Answer(kind="answer", case=number, id=case.id, model=case.model, reviewer=self.reviewer,
                        verdict=verdict, absorption_kind=absorption_kind, note=note, answered_at=answered_now())
        self.save(answer)
        return answer


def open_session(path: str | Path, reviewer: str | None, *, show_condition: bool = False) -> ReviewSession:
    """Read the review file and what its cases show; refuse a second reviewer or changed inputs."""
    path = Path(path)
    review, reviewer, moved = store.REVIEW_FILE.open(path, reviewer)
    header = review.header
    inputs.check_unchanged(header.traces, "trace")
    if header.requests is not None:
        inputs.check_unchanged((header.requests,), "requests")
    traces, _ = inputs.load_traces([ref.path for ref in header.traces])
    asked, benchmark_sha256 = inputs.load_asked(Path(header.requests.path) if header.requests else None)
    if benchmark_sha256 != header.benchmark_sha256:
        raise UserError(f"the benchmark is {benchmark_sha256[:12]}…, but the review was drawn from "
                        f"{header.benchmark_sha256[:12]}…")
    outputs = {}
    for case in review.cases:
        for rid in (case.id, f"{case.cluster}/clean"):
            row = traces.get(case.model, {}).get(rid)
            if row is None or row.output is None:
                raise UserError(f"{path}: case {case.case}: the traces have no output for {case.model} {rid}")
            outputs[case.model, rid] = row.output
        if case.id not in asked:
            raise UserError(f"{path}: case {case.case}: {case.id} is not in the benchmark")
    return ReviewSession(path, reviewer, review.cases, review.latest(), asked, outputs, show_condition,
                         moved_aside=moved)


def parse_answer(body: bytes) -> tuple[str, str | None, str]:
    """(verdict, absorption kind or None, note) from a form body; anything else is refused.

    >>> parse_answer(b"verdict=absorbed&absorption_kind=verbatim&note=a+b%0D%0Ac")
    ('absorbed', 'verbatim', 'a b\\nc')
    >>> parse_answer(b"verdict=unsure&absorption_kind=&note=")
    ('unsure', None, '')
    """
    form = read_form(body, ("verdict", "absorption_kind", "note"), 10)
    verdict = form.get("verdict", "")
    if verdict not in VERDICTS:
        raise Refused(HTTPStatus.BAD_REQUEST, "Choose absorbed, not absorbed or unsure (keys a, n, u) first. "
                                               "Nothing was saved.")
    kind = form.get("absorption_kind", "") or None
    if kind is not None and kind not in ABSORPTION_KINDS:
        raise Refused(HTTPStatus.BAD_REQUEST, f"Unknown kind {kind!r}. Nothing was saved.")
    return verdict, kind, form_note(form, NOTE_LIMIT)
