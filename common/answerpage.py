"""The answer pages' HTML: one style sheet, one keyboard script, every text escaped, no external asset.

Both local answer pages, the review's (`review.page`) and the occurrence audit's
(`occurrence.annotate`), are built from this module. Each shows one case, a form of radio
choices and a note, and links to the previous, next and first unanswered case. Each page
module writes only what its case shows, its choices and its help line.

What the pages show is untrusted: model outputs, or messages from chat logs. So every
string that reaches a page goes through `escape`. The pages' Content-Security-Policy lets
only the style sheet and the script below run, identified by their SHA-256, so even a
text that escaped escaping could run nothing.

The script is the same on every page. It reads a page's keys from the page itself: each
choice's label shows its key in `<kbd>`, and pressing that key picks that choice. The keys
a page lists are therefore exactly the keys it has. The other keys are the same on every
page: t or / move to the note and Esc leaves it; Enter saves and opens the next
unanswered case (in the note Enter saves too, and Shift+Enter starts a new line); the left
and right arrows open the previous and next case without saving. Without JavaScript the
form works as a plain form.
"""

from __future__ import annotations

import base64
import hashlib
import html

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
  var keys = Object.create(null);  // the key each choice's label shows -> that choice
  Array.prototype.forEach.call(form.querySelectorAll('label'), function (label) {
    var key = label.querySelector('kbd'), box = label.querySelector('input');
    if (key && box) { keys[key.textContent] = box; }
  });
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
    var box = keys[e.key];
    if (box) { e.preventDefault(); box.checked = true; box.focus(); return; }
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


def document(title: str, body: str) -> str:
    """A whole page: the style sheet, `body` (HTML), and the keyboard script."""
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
            f"<script>{SCRIPT}</script>\n</body></html>\n")


def message_page(title: str, text: str) -> str:
    """A short page for a refused request (bad form, unknown case)."""
    return document(title, f"<p class=\"error\">{escape(text)}</p><p><a href=\"/\">back to the review</a></p>")


def choices(legend: str, name: str, options: list[tuple[str, str, str]], current: str | None, *,
            required: bool) -> list[str]:
    """A fieldset of radio choices named `name`: (value, label, key) each, `current` checked. The key is shown
    in the label, which is where the script finds it.

    >>> choices("Which?", "answer", [("yes", "yes", "y")], "yes", required=True)[1]
    '<label><input type="radio" name="answer" value="yes" required checked> yes <kbd>y</kbd></label>'
    """
    lines = [f"<fieldset><legend>{escape(legend)}</legend>"]
    for value, label, key in options:
        attributes = (" required" if required else "") + (" checked" if value == current else "")
        lines.append(f"<label><input type=\"radio\" name=\"{name}\" value=\"{value}\"{attributes}> "
                     f"{escape(label)} <kbd>{key}</kbd></label>")
    lines.append("</fieldset>")
    return lines


def answer_form(number: int, noun: str, *, answered_before: bool, fieldsets: list[str], note_label: str,
                note_limit: int, note: str) -> list[str]:
    """The form that saves the answer to case `number`: its choices, the note, the button (Enter)."""
    lines = [f"<form id=\"answer\" method=\"post\" action=\"/case/{number}\">"]
    if answered_before:
        lines.append("<p class=\"muted\">Answered before; saving again replaces that answer (the file keeps "
                     "both).</p>")
    lines.extend(fieldsets)
    lines.append(f"<p><label for=\"note\">{escape(note_label)}</label><textarea id=\"note\" name=\"note\" "
                 f"maxlength=\"{note_limit}\">{escape(note)}</textarea></p>")
    lines.append(f"<button type=\"submit\">Save and open the next unanswered {noun} (Enter)</button></form>")
    return lines


def case_page(*, title: str, status: str, noun: str, number: int, total: int, saved: int | None,
              error: str | None, shown: list[str], form: list[str], keys_help: str) -> str:
    """One case's page: the status line (`status`, HTML) with a saved confirmation or an error, what the case
    shows (`shown`, HTML), the form, the links to the previous, next and first unanswered case, the keys."""
    lines = [f"<header><div>{status}</div>"]
    if saved is not None:
        lines.append(f"<div class=\"saved\" role=\"status\">Saved the answer to {noun} {saved}.</div>")
    if error:
        lines.append(f"<div class=\"error\" role=\"alert\">{escape(error)}</div>")
    lines.append("</header>")
    lines.extend(shown)
    lines.extend(form)
    nav = []
    if number > 1:
        nav.append(f"<a id=\"previous\" href=\"/case/{number - 1}\">← previous {noun}</a>")
    if number < total:
        nav.append(f"<a id=\"next\" href=\"/case/{number + 1}\">next {noun} →</a>")
    nav.append(f"<a href=\"/\">first unanswered {noun}</a>")
    lines.append("<nav>" + "".join(nav) + "</nav>")
    lines.append(keys_help)
    return document(title, "\n".join(lines))


def done_page(*, title: str, noun: str, total: int, reviewer: str, saved: int | None, file: str,
              then: str) -> str:
    """The page once every case has an answer: where the answers are, and the command to run next (`then`)."""
    body = ["<header>"]
    if saved is not None:
        body.append(f"<div class=\"saved\" role=\"status\">Saved the answer to {noun} {saved}.</div>")
    body.append(f"<div>All {total} {noun}s answered by {escape(reviewer)}.</div></header>")
    body.append(f"<p>Every answer is in the {file}. Any {noun} can still be revisited (a new answer replaces the "
                f"old one): <a id=\"next\" href=\"/case/1\">{noun} 1</a>. Stop the server with Ctrl+C, then run "
                f"<code>{escape(then)}</code>.</p>")
    return document(title, "\n".join(body))
