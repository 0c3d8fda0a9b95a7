"""One answer-file and answer-page core for the review and the occurrence audit (common/answer*.py, common/rows.py).

The review's files and pages and the occurrence audit's sample files and annotation
page are kept the same way: a header, numbered cases, one reviewer's answers appended
durably, a torn last line moved aside; a blinded page with the same style, script, form
and guarded server. These tests check that this lives once, below both, and that both
kinds of file and page behave alike through it: occurrence/ imports no review module,
there is one FileRef, one reader, one set of row field checks, one script.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import threading
from pathlib import Path

import pytest
from support import keyboard

from common import answerfile, answerpage
from common.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
SHA = "a" * 64


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_occurrence_imports_no_review_module():
    wrong = sorted(f"{path.relative_to(ROOT)}: {module}" for path in (ROOT / "occurrence").rglob("*.py")
                   for module in _imported(path) if module.split(".")[0] == "review")
    assert wrong == []


def _checks_a_row(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and bool(node.args.args) and node.args.args[0].arg == "row"


CHECKS = {node.name for node in ast.parse((ROOT / "common" / "rows.py").read_text(encoding="utf-8")).body
          if _checks_a_row(node)}


def test_row_fields_are_checked_by_common_rows_only():
    """A helper that checks a row's field (text, count, one_of, sha256, exact_fields, …) is defined in
    common/rows.py and nowhere else in common/, review/ or occurrence/: one wording of each refusal."""
    assert {"field", "items", "text", "count", "one_of", "sha256", "exact_fields"} <= CHECKS
    names = CHECKS | {f"_{name}" for name in CHECKS}
    defined = sorted(f"{path.relative_to(ROOT)}: {node.name}"
                     for package in ("common", "review", "occurrence") for path in (ROOT / package).rglob("*.py")
                     if path != ROOT / "common" / "rows.py"
                     for node in ast.parse(path.read_text(encoding="utf-8")).body
                     if _checks_a_row(node) and node.name in names)
    assert defined == []


def test_one_file_ref_for_both_kinds_of_file():
    from occurrence import records as occurrence_records
    from review import records as review_records

    assert review_records.FileRef is answerfile.FileRef and occurrence_records.FileRef is answerfile.FileRef
    traced = {"path": "t.jsonl", "sha256": SHA, "model": "m"}
    assert answerfile.FileRef.from_row(traced, "f:1", with_model=True).to_row() == traced
    assert answerfile.FileRef.from_row({"path": "c.jsonl", "sha256": SHA}, "f:1").to_row() == {
        "path": "c.jsonl", "sha256": SHA}
    with pytest.raises(UserError, match=r"f:1: unknown field\(s\) 'model'"):
        answerfile.FileRef.from_row(traced, "f:1")


# ---------------------------------------------------------------- one reader, the same words for both

REVIEW = [{"kind": "header", "review_version": "1", "created_by": "seam.py review sample", "seed": 1, "n": 2,
           "positives_share": 0.3, "design": "d", "benchmark_sha256": SHA, "requests": None,
           "labels": [{"path": "l.jsonl", "sha256": SHA}], "traces": [{"path": "t.jsonl", "sha256": SHA, "model": "m"}],
           "strata": [{"model": "m", "verdict": "absorbed", "genre": "code", "condition": "newline",
                       "population": 3, "drawn": 2}]},
          *({"kind": "case", "case": n, "id": f"humaneval-00{n}/newline", "model": "m", "cluster": f"humaneval-00{n}",
             "condition": "newline", "genre": "code", "source": "humaneval"} for n in (1, 2))]
REVIEW_ANSWER = {"kind": "answer", "case": 1, "id": "humaneval-001/newline", "model": "m", "reviewer": "ada",
                 "verdict": "absorbed", "absorption_kind": None, "note": "", "answered_at": "2026-01-01T00:00:00.000Z"}
CORPUS = {"file": "c.json", "member": None, "sha256": SHA, "text_sha256": SHA, "text_bytes": 10, "format": "sharegpt",
          "container": "json_array", "conversations": 2, "truncated": None, "oversized": 0}
SAMPLE = [{"kind": "header", "occurrence_version": "1", "created_by": "seam.py occurrence sample", "seed": 1, "n": 2,
           "population": "screened", "population_size": 2, "design": "d",
           "candidates": {"path": "c.jsonl", "sha256": SHA}, "judged": None, "corpora": [CORPUS]},
          *({"kind": "case", "case": n, "corpus": 0, "conversation": str(n), "index": n - 1, "turn": 0,
             "message_sha256": str(n) * 64} for n in (1, 2))]
SAMPLE_ANSWER = {"kind": "answer", "case": 1, "message_sha256": "1" * 64, "reviewer": "ada", "answer": "yes",
                 "note": "", "answered_at": "2026-01-01T00:00:00.000Z"}


def _lines(*items) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in items).encode("utf-8")


DAMAGE = {  # the same mistake made in a review file and in a sample file
    "binary data": lambda lines, answer: bytes(range(256)),
    "a damaged tail": lambda lines, answer: _lines(*lines) + b"\x00\x01garbage",
    "a torn tail": lambda lines, answer: _lines(*lines) + b'{"kind":"ans',
    "cases out of order": lambda lines, answer: _lines(lines[0], lines[2], lines[1]),
    "a second header": lambda lines, answer: _lines(*lines, lines[0]),
    "no case": lambda lines, answer: _lines(lines[0]),
    "a row of no known kind": lambda lines, answer: _lines(*lines, {**answer, "kind": "note"}),
    "a case after an answer": lambda lines, answer: _lines(*lines[:2], answer, lines[2]),
    "an answer to no case": lambda lines, answer: _lines(*lines, {**answer, "case": 3}),
    "a second reviewer": lambda lines, answer: _lines(*lines, answer, {**answer, "reviewer": "bob"}),
    "a blank reviewer": lambda lines, answer: _lines(*lines, {**answer, "reviewer": " "}),
    "a long note": lambda lines, answer: _lines(*lines, {**answer, "note": "x" * 20_000}),
    "another kind of answer file": None,
}
WORDS = {"review file": "FILE", "seam.py review sample": "MAKER", "seam.py review serve": "SERVER",
         "sample file": "FILE", "seam.py occurrence sample": "MAKER", "seam.py occurrence annotate": "SERVER",
         "10,000": "LIMIT", "2,000": "LIMIT"}


def _refusal(read, path: Path, data: bytes) -> str:
    path.write_bytes(data)
    with pytest.raises(UserError) as caught:
        read(path)
    text = str(caught.value).replace(str(path), "FILE.jsonl")
    for word, placeholder in WORDS.items():
        text = text.replace(word, placeholder)
    return text


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_review_file_and_a_sample_file_are_refused_in_the_same_words(tmp_path, damage):
    from occurrence import store as occurrence_store
    from review import store as review_store

    if DAMAGE[damage] is None:  # each kind refuses the other by its first row
        review_data, sample_data = _lines(*SAMPLE), _lines(*REVIEW)
    else:
        review_data, sample_data = DAMAGE[damage](REVIEW, REVIEW_ANSWER), DAMAGE[damage](SAMPLE, SAMPLE_ANSWER)
    review = _refusal(review_store.read, tmp_path / "r.jsonl", review_data)
    sample = _refusal(occurrence_store.read_sample, tmp_path / "s.jsonl", sample_data)
    assert review == sample and review.startswith("FILE.jsonl")


def test_both_kinds_of_file_read_as_one_answer_file(tmp_path):
    from occurrence import store as occurrence_store
    from review import store as review_store

    (tmp_path / "r.jsonl").write_bytes(_lines(*REVIEW, REVIEW_ANSWER) + b'{"kind":"an')
    (tmp_path / "s.jsonl").write_bytes(_lines(*SAMPLE, SAMPLE_ANSWER) + b'{"kind":"an')
    for read, name in ((review_store.read, "r.jsonl"), (occurrence_store.read_sample, "s.jsonl")):
        file = read(tmp_path / name, allow_torn=True)
        assert isinstance(file, answerfile.AnswerFile) and file.torn == 11 and file.reviewer == "ada"
        assert file.first_unanswered() == 2 and list(file.latest()) == [1]


# ---------------------------------------------------------------- one style, one script, one policy

def _pages():
    from occurrence import annotate
    from occurrence.records import Answer
    from review import page

    view = page.CaseView(number=2, total=3, answered=0, reviewer="ada", instruction="i", artifact="a", comment="c",
                         clean_output="x", output="y", condition=None, request_id=None, previous=None, saved=None)
    previous = Answer(kind="answer", case=2, message_sha256=SHA, reviewer="ada", answer="no", note="",
                      answered_at="2026-01-01T00:00:00.000Z")
    return {"review case": page.case_page(view), "review done": page.done_page(3, "ada", 1),
            "occurrence case": annotate.case_page(2, 3, 0, "ada", "fix this:\nx = 1\nthanks", None, None, None),
            "occurrence case answered": annotate.case_page(2, 3, 1, "ada", "m", previous, 1, "e"),
            "occurrence done": annotate.done_page(3, "ada", 2), "refused": answerpage.message_page("t", "no")}


def test_every_answer_page_carries_the_one_style_and_script_the_policy_allows():
    from occurrence.annotate import AnnotationSession
    from review.server import ReviewSession

    for name, html in _pages().items():
        assert re.findall(r"<script>(.*?)</script>", html, re.S) == [answerpage.SCRIPT], name
        assert re.findall(r"<style>(.*?)</style>", html, re.S) == [answerpage.STYLE], name
    policy = answerpage.CONTENT_SECURITY_POLICY
    assert ReviewSession.content_security_policy == AnnotationSession.content_security_policy == policy
    assert re.findall(r"script-src ([^;]*);", policy) == [answerpage.script_hash(answerpage.SCRIPT)]


def test_the_occurrence_keyboard_flow_in_node():
    html = _pages()["occurrence case"]
    keys = [("n", False), ("y", False), ("t", False), ("u", False), ("Enter", True), ("Escape", False),
            ("ArrowLeft", False), ("u", False), ("a", False), ("/", False), ("Enter", False), ("Enter", False)]
    step = dict(enumerate(keyboard.press(html, keys)))
    assert step[0]["checked"] == {"answer": "no"} and step[0]["prevented"]
    assert step[1]["checked"] == {"answer": "yes"} and step[1]["focus"] == "INPUT"
    assert step[2]["focus"] == "note"
    assert step[3]["checked"] == {"answer": "yes"} and not step[3]["prevented"]  # typed into the note
    assert step[4]["submitted"] == 0 and not step[4]["prevented"]  # Shift+Enter: a new line in the note
    assert step[5]["focus"] == "BODY"
    assert step[6]["href"] == "/case/1"
    assert step[7]["checked"] == {"answer": "unsure"}
    assert step[8]["checked"] == {"answer": "unsure"} and not step[8]["prevented"]  # a: the review's key, not here
    assert step[9]["focus"] == "note"
    assert step[10]["submitted"] == 1 and step[11]["submitted"] == 2


@pytest.mark.parametrize("name", ["review case", "occurrence case"])
def test_every_key_a_page_shows_picks_its_choice(name):
    html = _pages()[name]
    choices = keyboard.CHOICE.findall(html)
    assert len(choices) == (3 + 8 if name == "review case" else 3)
    log = keyboard.press(html, [(key, False) for _, _, key in choices])
    picked = [(entry["checked"][group], entry["prevented"]) for entry, (group, _, _) in zip(log, choices, strict=True)]
    assert picked == [(value, True) for _, value, _ in choices]


class _Served:
    """A page session that serves one of the real pages under the real policy and keeps what is posted."""

    content_security_policy = answerpage.CONTENT_SECURITY_POLICY
    total = 3

    def __init__(self, html: str) -> None:
        self.html, self.posted = html, []

    def first_unanswered(self, after: int = 0) -> int | None:
        return None if after else 1

    def case_page(self, number, saved=None, error=None) -> str:
        return self.html

    def done_page(self, saved) -> str:
        return answerpage.message_page("done", "done")

    def submit(self, number: int, body: bytes) -> None:
        self.posted.append(body.decode("utf-8"))


def _press(page, key: str) -> None:
    code = 13 if key == "Enter" else ord(key.upper())
    text = "\r" if key == "Enter" else key
    page.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "text": text, "windowsVirtualKeyCode": code})
    page.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "windowsVirtualKeyCode": code})


BROWSER_CASES = [("review case", ["n", "6"], ["not_absorbed", "outside_edited_text"],
                  "verdict=not_absorbed&absorption_kind=outside_edited_text&note="),
                 ("occurrence case", ["u", "y"], ["yes"], "answer=yes&note=")]


@contextlib.contextmanager
def _served_in(browser, name: str):
    from common.answerserver import AnswerServer

    session = _Served(_pages()[name])
    server = AnswerServer(session, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = browser.open(f"{server.url}case/2")
    try:
        yield session, page
    finally:
        page.close()
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("name", "keys", "checked", "posted"), BROWSER_CASES)
def test_the_keys_pick_the_choices_in_a_real_browser_under_the_pages_policy(browser, name, keys, checked, posted):
    """In Chromium, served with its Content-Security-Policy: the script runs (the policy names its hash) and a
    choice's key picks it in a real DOM."""
    with _served_in(browser, name) as (session, page):
        for key in keys:
            _press(page, key)
        assert page.evaluate("[...document.querySelectorAll('input:checked')].map(box => box.value)") == checked
        assert page.console_errors == []


@pytest.mark.parametrize(("name", "keys", "checked", "posted"), BROWSER_CASES)
def test_enter_saves_the_answer_in_a_real_browser(browser, name, keys, checked, posted):
    """Found failing here: with Referrer-Policy no-referrer Chromium posted the form with "Origin: null", which
    the server refused (403): no answer could be saved from a browser. same-origin fixed it."""
    with _served_in(browser, name) as (session, page):
        for key in keys:
            _press(page, key)
        _press(page, "Enter")
        page.wait_for("location.pathname === '/done'", timeout=3)
        assert session.posted == [posted] and page.console_errors == []
