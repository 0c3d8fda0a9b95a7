"""`seam.py review serve` end to end over HTTP: sample -> serve -> answer -> (kill -9 -> serve again) -> report.

The server runs as a real `seam.py review serve` process on an ephemeral port of
127.0.0.1; the tests talk to it with urllib, as a browser would (form posts,
303 redirects), and read the review file it appends to.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from support import keyboard
from support.reviewdata import SCRIPT, make_inputs

import seam
from common import answerpage, answerserver, jsonl
from review import page, server, store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("review-serve"), per_source=6, script=True)


@pytest.fixture
def review(inputs, tmp_path):
    out = tmp_path / "review.jsonl"
    assert seam.main(["review", "sample", str(inputs.labels), str(inputs.traces), "--requests", str(inputs.requests),
                      "--n", "24", "--seed", "4", "--out", str(out)]) == 0
    return out


class Server:
    """A `seam.py review serve` process and the URL it printed."""

    def __init__(self, review: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "seam.py"), "review", "serve", str(review), "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            self.process.kill()
            raise AssertionError(f"no URL in {line!r}; stderr: {self.process.stderr.read()}")
        self.url = found.group()
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()


@pytest.fixture
def started():
    servers = []

    def start(review: Path, *args: str) -> Server:
        running = Server(review, *args)
        servers.append(running)
        return running

    yield start
    for running in servers:
        if running.process.poll() is None:
            running.kill()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def http(url: str, form: dict | None = None, headers: dict | None = None) -> tuple[int, dict, str]:
    """(status, headers, body) of one request, redirects not followed."""
    data = None if form is None else urllib.parse.urlencode(form).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with _OPENER.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read().decode("utf-8")


def answer(base: str, number: int, verdict: str = "absorbed", kind: str = "verbatim", note: str = "") -> str:
    status, headers, _ = http(f"{base}case/{number}", {"verdict": verdict, "absorption_kind": kind, "note": note})
    assert status == 303, status
    return headers["Location"]


def answers_in(path: Path) -> list[dict]:
    return [row for _, row in jsonl.read(path) if row["kind"] == "answer"]


def cases_in(path: Path) -> list[dict]:
    return [row for _, row in jsonl.read(path) if row["kind"] == "case"]


# ---------------------------------------------------------------- the page


def test_a_case_page_shows_the_request_and_both_outputs_escaped_and_nothing_of_the_kits(review, inputs, started):
    running = started(review, "--reviewer", "ada")
    status, headers, _ = http(running.url)
    assert status == 303 and headers["Location"] == "/case/1"
    status, headers, body = http(running.url + "case/1")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    case = cases_in(review)[0]
    traces = {row["id"]: row for _, row in jsonl.read(inputs.traces)}
    requests = {row["id"]: row for _, row in jsonl.read(inputs.requests)}
    assert page.escape(requests[case["id"]]["comment"]) in body
    assert page.escape(requests[case["id"]]["artifact"]) in body
    clean = traces[f"{case['cluster']}/clean"]["output"]
    assert page.escape(clean) in body
    # the untrusted output's <script> is text: the page's only script element is its own
    assert SCRIPT not in body and page.escape(SCRIPT) in body
    assert body.count("<script") == 1
    assert headers["Content-Security-Policy"] == answerpage.CONTENT_SECURITY_POLICY
    # blinded: no request id (which names the condition), no condition, no tier or evidence
    assert case["id"] not in body and f"condition <b>{case['condition']}" not in body
    assert "tier" not in body.lower() and "evidence" not in body.lower()
    # the keys are on the page, and the form has what they drive
    for key in ("<kbd>a</kbd> absorbed", "<kbd>n</kbd> not absorbed", "<kbd>u</kbd> unsure", "<kbd>Enter</kbd>"):
        assert key in body
    for value in ("absorbed", "not_absorbed", "unsure", "verbatim", "commentary_to_user", "outside_edited_text"):
        assert f'value="{value}"' in body
    assert 'id="note"' in body and 'id="answer"' in body


def test_show_condition_names_the_condition_and_the_request(review, started):
    running = started(review, "--reviewer", "ada", "--show-condition")
    _, _, body = http(running.url + "case/2")
    case = cases_in(review)[1]
    assert f"condition <b>{case['condition']}</b>" in body and case["id"] in body


def test_the_server_never_reads_the_labels(review, inputs, tmp_path, started):
    moved = tmp_path / "labels-away.jsonl"
    shutil.move(inputs.labels, moved)
    try:
        running = started(review, "--reviewer", "ada")
        status, _, body = http(running.url + "case/1")
        assert status == 200 and "Output to judge" in body
    finally:
        shutil.move(moved, inputs.labels)


def test_a_foreign_host_or_origin_is_refused_and_saves_nothing(review, started):
    running = started(review, "--reviewer", "ada")
    status, _, _ = http(running.url + "case/1", headers={"Host": "attacker.example:80"})
    assert status == 403
    status, _, _ = http(running.url + "case/1", {"verdict": "absorbed"},
                        headers={"Origin": "http://attacker.example"})
    assert status == 403
    status, _, _ = http(f"http://localhost:{running.port}/case/1")
    assert status == 200
    assert answers_in(review) == []


def test_a_form_without_a_verdict_or_with_unknown_fields_saves_nothing(review, started):
    running = started(review, "--reviewer", "ada")
    status, _, body = http(running.url + "case/1", {"verdict": "", "absorption_kind": "", "note": "x"})
    assert status == 400 and "Nothing was saved" in body and "Output to judge" in body
    status, _, _ = http(running.url + "case/1", {"verdict": "absorbed", "tier": "witness"})
    assert status == 400
    status, _, _ = http(running.url + "case/1", {"verdict": "absorbed", "absorption_kind": "telepathy"})
    assert status == 400
    status, _, _ = http(running.url + "case/99")
    assert status == 404
    assert answers_in(review) == []


# ---------------------------------------------------------------- answers: saved, resumed, superseded


def test_answers_survive_a_kill_and_the_review_resumes_at_the_first_unanswered_case(review, inputs, tmp_path,
                                                                                      started):
    total = len(cases_in(review))
    running = started(review, "--reviewer", "ada")
    assert answer(running.url, 1) == "/case/2?saved=1"
    assert answer(running.url, 2, "not_absorbed", "", "a <b>note</b>\r\nover two lines") == "/case/3?saved=2"
    assert answer(running.url, 4, "unsure", "commentary_to_user") == "/case/5?saved=4"  # on from 4 (3 skipped)
    _, _, body = http(running.url + "case/5?saved=4")
    assert "Saved the answer to case 4." in body
    running.kill()  # SIGKILL: no chance to flush or clean up
    saved = answers_in(review)
    assert [(a["case"], a["verdict"], a["absorption_kind"]) for a in saved] == [
        (1, "absorbed", "verbatim"), (2, "not_absorbed", None), (4, "unsure", "commentary_to_user")]
    assert saved[1]["note"] == "a <b>note</b>\nover two lines" and {a["reviewer"] for a in saved} == {"ada"}

    again = started(review)  # the reviewer's name is the file's
    status, headers, _ = http(again.url)
    assert headers["Location"] == "/case/3"  # the first unanswered one
    _, _, body = http(again.url + "case/2")
    assert "Answered before" in body and 'value="not_absorbed" required checked' in body
    assert page.escape("a <b>note</b>\nover two lines") in body
    answer(again.url, 2, "absorbed", "paraphrase")  # supersedes; the first answer stays in the file
    for number in range(3, total + 1):
        if number != 4:
            answer(again.url, number, "not_absorbed", "")
    status, headers, _ = http(again.url)
    assert headers["Location"] == "/done"
    _, _, body = http(again.url + "done")
    assert f"All {total} cases answered by ada" in body
    again.stop()
    kept = answers_in(review)
    assert len(kept) == total + 1 and [a["verdict"] for a in kept if a["case"] == 2] == ["not_absorbed", "absorbed"]

    assert seam.main(["review", "report", str(review), "--labels", str(inputs.labels), "--out",
                      str(tmp_path / "report")]) == 0
    rows = {row["case"]: row for row in _csv(tmp_path / "report" / "review_cases.csv")}
    confusion = {row["kit"]: row for row in _csv(tmp_path / "report" / "review_confusion.csv")}
    assert sum(int(row["reviewer_absorbed"]) for row in confusion.values()) == 2  # cases 1 and 2 (superseded)
    assert sum(int(row["reviewer_unsure"]) for row in confusion.values()) == 1
    assert sum(int(row["unanswered"]) for row in confusion.values()) == 0
    assert rows.get("4", {}).get("finding") == "unsure"


def test_a_second_reviewer_is_refused_and_the_first_answer_needs_a_name(review, started):
    done = subprocess.run([sys.executable, str(ROOT / "seam.py"), "review", "serve", str(review), "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--reviewer NAME" in done.stderr
    running = started(review, "--reviewer", "ada")
    answer(running.url, 1)
    running.stop()
    done = subprocess.run([sys.executable, str(ROOT / "seam.py"), "review", "serve", str(review), "--port", "0",
                           "--reviewer", "bob"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "holds the answers of reviewer 'ada'" in done.stderr


def test_two_servers_cannot_serve_one_file(review, started):
    started(review, "--reviewer", "ada")
    done = subprocess.run([sys.executable, str(ROOT / "seam.py"), "review", "serve", str(review), "--port", "0",
                           "--reviewer", "ada"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "another 'seam.py review serve' is serving this file" in done.stderr


def test_a_torn_last_line_is_moved_aside_by_the_server_and_refused_by_the_report(review, inputs, tmp_path, started):
    running = started(review, "--reviewer", "ada")
    answer(running.url, 1)
    running.kill()
    with open(review, "ab") as f:
        f.write(b'{"case":2,"id":"tor')  # a write cut short (power loss): never acknowledged
    code = seam.main(["review", "report", str(review), "--labels", str(inputs.labels), "--out", str(tmp_path / "r")])
    assert code == 2
    running = started(review)
    assert Path(str(review) + ".torn").read_bytes() == b'{"case":2,"id":"tor\n'
    status, headers, _ = http(running.url)
    assert headers["Location"] == "/case/2" and len(answers_in(review)) == 1
    answer(running.url, 2)
    running.stop()
    assert [a["case"] for a in answers_in(review)] == [1, 2]


# ---------------------------------------------------------------- in process: the write itself


def test_an_answer_is_fsynced_before_the_page_moves_on(review, monkeypatch):
    session = server.open_session(review, "ada")
    calls = []
    real = os.fsync

    def fsync(fd):
        calls.append(os.fstat(fd).st_size)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    size = review.stat().st_size
    session.answer(1, "absorbed", None, "")
    assert calls == [review.stat().st_size] and review.stat().st_size > size


def test_a_failed_write_leaves_the_file_as_it_was_and_says_not_saved(review, monkeypatch):
    session = server.open_session(review, "ada")
    before = review.read_bytes()
    real = os.write

    def half(fd, data):  # the disk fills after half the line
        real(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half)
    with pytest.raises(Exception, match="was NOT saved: No space left on device"):
        session.answer(1, "absorbed", None, "")
    monkeypatch.undo()
    assert review.read_bytes() == before and session.latest == {}


def test_in_process_server_threads_serialise_answers(review):
    session = server.open_session(review, "ada")
    httpd = answerserver.AnswerServer(session, 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        workers = [threading.Thread(target=answer, args=(httpd.url, number)) for number in range(1, 9)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert sorted(a["case"] for a in answers_in(review)) == list(range(1, 9))
    assert len(store.read(review).answers) == 8


def _csv(path: Path) -> list[dict]:
    from common.files import read_csv

    return read_csv(path)


# ---------------------------------------------------------------- the keyboard flow, run in node


def test_the_keyboard_flow_in_node():
    view = page.CaseView(number=2, total=3, answered=0, reviewer="ada", instruction="i", artifact="a", comment="c",
                         clean_output="x", output="y", condition=None, request_id=None, previous=None, saved=None)
    html = page.case_page(view)
    assert re.search(r"<script>(.*)</script>", html, re.S).group(1) == answerpage.SCRIPT
    keys = [("n", False), ("6", False), ("t", False), ("a", False), ("Enter", True), ("Escape", False),
            ("ArrowRight", False), ("u", False), ("0", False), ("/", False), ("Enter", False), ("Enter", False)]
    step = dict(enumerate(keyboard.press(html, keys)))
    assert step[0]["checked"]["verdict"] == "not_absorbed" and step[0]["prevented"]
    assert step[1]["checked"]["absorption_kind"] == "outside_edited_text"
    assert step[2]["focus"] == "note"
    assert step[3]["checked"]["verdict"] == "not_absorbed" and not step[3]["prevented"]  # typed into the note
    assert step[4]["submitted"] == 0 and not step[4]["prevented"]  # Shift+Enter: a new line in the note
    assert step[5]["focus"] == "BODY"
    assert step[6]["href"] == "/case/3"
    assert step[7]["checked"]["verdict"] == "unsure" and step[8]["checked"]["absorption_kind"] == ""
    assert step[9]["focus"] == "note"
    assert step[10]["submitted"] == 1  # Enter in the note saves
    assert step[11]["submitted"] == 2  # and Enter elsewhere too


def test_sigterm_stops_the_server_cleanly(review, started):
    running = started(review, "--reviewer", "ada")
    answer(running.url, 1)
    running.process.send_signal(signal.SIGTERM)
    assert running.process.wait(timeout=10) == 0
    assert "stopped; 1 of 24 answered" in running.process.stdout.read()
    running.process.stdout.close()
    running.process.stderr.close()


def test_ctrl_c_stops_a_server_started_with_sigint_ignored(review):
    # A script's background job (`cmd &`) starts with SIGINT ignored, and Python then installs no handler:
    # the server sets its own, or Ctrl+C (and CI's harness) could never stop it.
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "seam.py"), "review", "serve", str(review), "--port", "0", "--reviewer", "ada"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert "open http://127.0.0.1:" in process.stdout.readline()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
        assert "stopped; 0 of 24 answered" in process.stdout.read()
    finally:
        process.kill()
        process.stdout.close()
        process.stderr.close()
