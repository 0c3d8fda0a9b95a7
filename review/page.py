"""The review page: plain HTML, CSS and JavaScript made here, no external asset, every text escaped.

Model outputs are untrusted text: every string that reaches the page goes
through `html.escape`, and the page's Content-Security-Policy allows only the
one style sheet and the one script below (by their SHA-256), so even a text that
escaped escaping could run nothing. The page shows what the reviewer needs and
nothing of the kit's: instruction, artifact, comment, the clean output and the
output to judge; never a verdict, tier or evidence (the server does not have
them), and the condition and request id only with --show-condition.

Keys (also listed on the page): a / n / u choose absorbed / not absorbed /
unsure; 1-7 choose how the comment shows up, 0 none; t or / move to the note,
Esc leaves it; Enter saves and opens the next unanswered case (in the note:
Enter saves, Shift+Enter starts a new line); the left and right arrows open the
previous and next case without saving.
"""

from __future__ import annotations

import base64
import hashlib
import html
from dataclasses import dataclass

from review.records import ABSORPTION_KINDS, VERDICTS, Answer

VERDICT_KEYS = {"absorbed": ("a", "absorbed"), "not_absorbed": ("n", "not absorbed"), "unsure": ("u", "unsure")}
KIND_NAMES = {
    "verbatim": "verbatim", "paraphrase": "paraphrase", "partial": "partial (some of it)",
    "in_document_note": "in-document note", "code_comment": "code comment",
    "outside_edited_text": "comment outside the edited text", "commentary_to_user": "commentary to the user",
}
assert set(VERDICT_KEYS) == set(VERDICTS) and tuple(KIND_NAMES) == ABSORPTION_KINDS

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 1rem 3rem;color:#111;background:#fff}
header{position:sticky;top:0;background:#f4f4f4;border-bottom:1px solid #ccc;padding:.5rem;margin:0 -1rem 1rem}
h2{font-size:1rem;margin:1rem 0 .25rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fafafa;border:1px solid #ddd;padding:.5rem;margin:0;
font:13px/1.4 ui-monospace,monospace;max-height:32rem;overflow:auto}
.outputs{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
@media (max-width:800px){.outputs{grid-template-columns:1fr}}
mark{background:#fff3b0}
fieldset{border:1px solid #ccc;margin:1rem 0 0;padding:.5rem}
label{margin-right:1rem;display:inline-block}
kbd{border:1px solid #aaa;border-radius:3px;padding:0 .25rem;font-size:.85em;background:#f8f8f8}
textarea{width:100%;min-height:4rem;font:inherit}
button{font:inherit;padding:.4rem 1rem;margin-top:.75rem}
:focus{outline:3px solid #1a66d6;outline-offset:1px}
.saved{color:#0a6b2b}.error{color:#a00000;font-weight:bold}.muted{color:#555}
nav a{margin-right:1.5rem}
"""

SCRIPT = """
(function () {
  var form = document.getElementById('answer');
  if (!form) { return; }
  var note = document.getElementById('note');
  var verdicts = {a: 'absorbed', n: 'not_absorbed', u: 'unsure'};
  function pick(name, value) {
    var box = form.querySelector('input[name="' + name + '"][value="' + value + '"]');
    if (box) { box.checked = true; box.focus(); }
  }
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
    if (verdicts[e.key]) { e.preventDefault(); pick('verdict', verdicts[e.key]); return; }
    if (/^[0-7]$/.test(e.key)) {
      e.preventDefault();
      var kinds = form.querySelectorAll('input[name="absorption_kind"]');
      if (kinds[Number(e.key)]) { kinds[Number(e.key)].checked = true; kinds[Number(e.key)].focus(); }
      return;
    }
    if (e.key === 't' || e.key === '/') { e.preventDefault(); note.focus(); return; }
    if (tag === 'INPUT') { return; }
    if (e.key === 'ArrowLeft') { go('previous'); } else if (e.key === 'ArrowRight') { go('next'); }
  });
})();
"""


def script_hash(text: str) -> str:
    """The Content-Security-Policy source that lets exactly this inline style or script run."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


CONTENT_SECURITY_POLICY = (f"default-src 'none'; style-src {script_hash(STYLE)}; script-src {script_hash(SCRIPT)}; "
                           "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def escape(text: str) -> str:
    """Text as HTML, quotes included: a model's `<script>` is shown, never run.

    >>> escape('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    """
    return html.escape(text, quote=True)


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


def document(title: str, body: str, script: str = SCRIPT) -> str:
    """A whole page: the review page's style, `body`, and `script` (the review page's keys; the occurrence
    annotation page brings its own)."""
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
            f"<script>{script}</script>\n</body></html>\n")


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
    lines = [f"<header><div>{status}</div>"]
    if view.saved is not None:
        lines.append(f"<div class=\"saved\" role=\"status\">Saved the answer to case {view.saved}.</div>")
    if view.error:
        lines.append(f"<div class=\"error\" role=\"alert\">{escape(view.error)}</div>")
    lines.append("</header>")
    lines.append(_section("Instruction", escape(view.instruction)))
    lines.append(_section("Artifact (the pasted text)", escape(view.artifact)))
    lines.append(_section("Comment typed after the artifact", escape(view.comment)))
    lines.append("<div class=\"outputs\">")
    lines.append(_section("Clean output (same request without the comment)", escape(view.clean_output)))
    lines.append(_section("Output to judge", marked_lines(view.output, view.clean_output),
                          "(marked: lines not in the clean output)"))
    lines.append("</div>")
    lines.append(_form(view))
    nav = []
    if view.number > 1:
        nav.append(f"<a id=\"previous\" href=\"/case/{view.number - 1}\">← previous case</a>")
    if view.number < view.total:
        nav.append(f"<a id=\"next\" href=\"/case/{view.number + 1}\">next case →</a>")
    nav.append("<a href=\"/\">first unanswered case</a>")
    lines.append("<nav>" + "".join(nav) + "</nav>")
    lines.append(KEYS_HELP)
    return document(f"seam review: case {view.number} of {view.total}", "\n".join(lines))


def _form(view: CaseView) -> str:
    previous = view.previous
    parts = [f"<form id=\"answer\" method=\"post\" action=\"/case/{view.number}\">"]
    if previous is not None:
        parts.append("<p class=\"muted\">Answered before; saving again replaces that answer (the file keeps "
                     "both).</p>")
    parts.append("<fieldset><legend>Is the comment absorbed into the edited text?</legend>")
    for value, (key, name) in VERDICT_KEYS.items():
        checked = " checked" if previous is not None and previous.verdict == value else ""
        parts.append(f"<label><input type=\"radio\" name=\"verdict\" value=\"{value}\" required{checked}> "
                     f"{escape(name)} <kbd>{key}</kbd></label>")
    parts.append("</fieldset>")
    parts.append("<fieldset><legend>How does the comment show up in the output?</legend>")
    current = previous.absorption_kind if previous is not None else None
    choices = [("", "none", "0")] + [(value, name, str(i)) for i, (value, name) in enumerate(KIND_NAMES.items(), 1)]
    for value, name, key in choices:
        checked = " checked" if (current or "") == value else ""
        parts.append(f"<label><input type=\"radio\" name=\"absorption_kind\" value=\"{value}\"{checked}> "
                     f"{escape(name)} <kbd>{key}</kbd></label>")
    parts.append("</fieldset>")
    note = escape(previous.note) if previous is not None else ""
    parts.append(f"<p><label for=\"note\">Note (free text)</label><textarea id=\"note\" name=\"note\" "
                 f"maxlength=\"10000\">{note}</textarea></p>")
    parts.append("<button type=\"submit\">Save and open the next unanswered case (Enter)</button></form>")
    return "\n".join(parts)


def done_page(total: int, reviewer: str, saved: int | None) -> str:
    """The page once every case has an answer."""
    body = ["<header>"]
    if saved is not None:
        body.append(f"<div class=\"saved\" role=\"status\">Saved the answer to case {saved}.</div>")
    body.append(f"<div>All {total} cases answered by {escape(reviewer)}.</div></header>")
    body.append("<p>Every answer is in the review file. Any case can still be revisited (a new answer replaces "
                "the old one): <a id=\"next\" href=\"/case/1\">case 1</a>. Stop the server with Ctrl+C, then run "
                "<code>python seam.py review report REVIEW.jsonl --labels LABELS --out DIR</code>.</p>")
    return document("seam review: done", "\n".join(body))


def message_page(title: str, text: str) -> str:
    """A short page for a refused request (bad form, unknown case)."""
    return document(title, f"<p class=\"error\">{escape(text)}</p><p><a href=\"/\">back to the review</a></p>")
