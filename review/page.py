"""The review page: one case, blinded, with the form that answers it; every text escaped.

Model outputs are untrusted text: every string that reaches the page goes through
`escape`, and the Content-Security-Policy lets only the pages' own style sheet and
script run (`common.answerpage`, which this page shares with the occurrence audit's:
one style, one keyboard script, one form, one server). The page shows what the
reviewer needs and nothing of the kit's: instruction, artifact, comment, the clean
output and the output to judge; never a verdict, tier or evidence (the server does not
have them), and the condition and request id only with --show-condition.

Keys (also listed on the page): a / n / u choose absorbed / not absorbed /
unsure; 1-7 choose how the comment shows up, 0 none; t or / move to the note,
Esc leaves it; Enter saves and opens the next unanswered case (in the note:
Enter saves, Shift+Enter starts a new line); the left and right arrows open the
previous and next case without saving. The script finds a, n, u and 0-7 in the
choices' labels below.
"""

from __future__ import annotations

from dataclasses import dataclass

from common import answerpage
from common.answerpage import escape
from review.records import ABSORPTION_KINDS, NOTE_LIMIT, VERDICTS, Answer

VERDICT_KEYS = {"absorbed": ("a", "absorbed"), "not_absorbed": ("n", "not absorbed"), "unsure": ("u", "unsure")}
KIND_NAMES = {
    "verbatim": "verbatim", "paraphrase": "paraphrase", "partial": "partial (some of it)",
    "in_document_note": "in-document note", "code_comment": "code comment",
    "outside_edited_text": "comment outside the edited text", "commentary_to_user": "commentary to the user",
}
assert set(VERDICT_KEYS) == set(VERDICTS) and tuple(KIND_NAMES) == ABSORPTION_KINDS


def marked_lines(output: str, clean: str) -> str:
    """The output as escaped HTML, each non-blank line that the clean output lacks (white space aside) in <mark>.

    >>> marked_lines("a\\nb <i>\\n", "a")
    'a\\n<mark>b &lt;i&gt;</mark>\\n'
    """
    known = {line.strip() for line in clean.split("\n")}
    return "\n".join(f"<mark>{escape(line)}</mark>" if line.strip() and line.strip() not in known else escape(line)
                     for line in output.split("\n"))


@dataclass(frozen=True)
class CaseView:
    """Everything one case page shows; nothing of the kit's verdict is among it."""

    number: int
    total: int
    answered: int
    reviewer: str
    instruction: str
    artifact: str
    comment: str
    clean_output: str
    output: str
    condition: str | None  # only with --show-condition
    request_id: str | None  # only with --show-condition (it names the condition)
    previous: Answer | None
    saved: int | None  # the case whose answer was just saved, for the confirmation line
    error: str | None = None


def _section(title: str, inner_html: str, note: str = "") -> str:
    extra = f" <span class=\"muted\">{escape(note)}</span>" if note else ""
    return f"<section><h2>{escape(title)}{extra}</h2><pre>{inner_html}</pre></section>\n"


KEYS_HELP = ("<p class=\"muted\">Keys: <kbd>a</kbd> absorbed, <kbd>n</kbd> not absorbed, <kbd>u</kbd> unsure; "
             "<kbd>1</kbd>–<kbd>7</kbd> how it shows up, <kbd>0</kbd> none; <kbd>t</kbd> or <kbd>/</kbd> "
             "note (<kbd>Esc</kbd> leaves it, <kbd>Shift</kbd>+<kbd>Enter</kbd> new line); <kbd>Enter</kbd> "
             "save and next unanswered; <kbd>←</kbd> <kbd>→</kbd> previous / next case without saving. "
             "<kbd>Tab</kbd> moves through the form as usual.</p>")


def case_page(view: CaseView) -> str:
    """The page of one case, blinded: the server gives it no verdict to show."""
    status = f"Case {view.number} of {view.total} · {view.answered} answered · reviewer {escape(view.reviewer)}"
    if view.condition is not None:
        status += f" · condition <b>{escape(view.condition)}</b> · {escape(view.request_id or '')}"
    shown = [_section("Instruction", escape(view.instruction)),
             _section("Artifact (the pasted text)", escape(view.artifact)),
             _section("Comment typed after the artifact", escape(view.comment)),
             "<div class=\"outputs\">",
             _section("Clean output (same request without the comment)", escape(view.clean_output)),
             _section("Output to judge", marked_lines(view.output, view.clean_output),
                      "(marked: lines not in the clean output)"),
             "</div>"]
    previous = view.previous
    verdicts = [(value, name, key) for value, (key, name) in VERDICT_KEYS.items()]
    kinds = [("", "none", "0")] + [(value, name, str(i)) for i, (value, name) in enumerate(KIND_NAMES.items(), 1)]
    fieldsets = [*answerpage.choices("Is the comment absorbed into the edited text?", "verdict", verdicts,
                                     previous.verdict if previous else None, required=True),
                 *answerpage.choices("How does the comment show up in the output?", "absorption_kind", kinds,
                                     (previous.absorption_kind if previous else None) or "", required=False)]
    form = answerpage.answer_form(view.number, "case", answered_before=previous is not None, fieldsets=fieldsets,
                                  note_label="Note (free text)", note_limit=NOTE_LIMIT,
                                  note=previous.note if previous else "")
    return answerpage.case_page(title=f"seam review: case {view.number} of {view.total}", status=status,
                                noun="case", number=view.number, total=view.total, saved=view.saved,
                                error=view.error, shown=shown, form=form, keys_help=KEYS_HELP)


def done_page(total: int, reviewer: str, saved: int | None) -> str:
    """The page once every case has an answer."""
    return answerpage.done_page(title="seam review: done", noun="case", total=total, reviewer=reviewer,
                                saved=saved, file="review file",
                                then="python seam.py review report REVIEW.jsonl --labels LABELS --out DIR")
