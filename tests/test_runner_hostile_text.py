"""What a hostile server says reaches the terminal as one plain line, never a traceback (issue 36, defects 6-8).

A provider's error body, a `results_url` it hands back and the counts of its batch are the server's to choose:
control characters in them (ESC sequences that clear the screen or retitle the window, BEL, a carriage return
that hides the start of the line) are shown as "?" on every path, batch (all three providers) and synchronous;
a `results_url` that no URL parser reads is refused as any foreign one is; and negative or absurd request counts
never break the progress line.
"""

from __future__ import annotations

import io
import re

import pytest
from support import fakeserver
from support.fakebatch import DEFAULT_KEY, serve_batch
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

import seam
from runner.batch.run import PollPolicy, run_batch
from runner.config import load_config

KEY_ENV = "SEAM_TEST_BATCH_KEY"
# ESC sequences (window title, clear screen, cursor up), BEL, CR, the C1 CSI, a NUL and a line separator
HOSTILE = "denied\x1b]0;owned\x07\x1b[2J\x1b[1A\rfake line\u009b31m\x00\u2028end"
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # a line feed ends a line: allowed
# The call that gets the hostile answer, by provider: the creation of the batch, or a status check.
CALLS = {"openai": {"create": "POST /v1/files", "status": "GET /v1/batches/"},
         "anthropic": {"create": "POST /v1/messages/batches", "status": "GET /v1/messages/batches/"},
         "gemini": {"create": ":batchGenerateContent", "status": "GET /v1beta/batches/"}}


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)


def batch_config(tmp_path, fake, provider):
    keys = {"name": f"fake-{provider}", "provider": provider, "model": "fake-model", "base_url": fake.url,
            "temperature": 0.0, "max_tokens": 256, "timeout_s": 5, "max_retries": 0, "api_key_env": KEY_ENV}
    path = tmp_path / f"{provider}.toml"
    path.write_text(toml_text(keys), encoding="utf-8")
    return path


def run_batch_cli(tmp_path, config, capsys) -> tuple[int, str]:
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, make_requests(4))
    code = seam.main(["run", str(config), "--requests", str(requests), "--out", str(tmp_path / "trace.jsonl"),
                      "--batch", "--batch-poll", "0.01"])
    return code, capsys.readouterr().err


def answer_with(fake, call: str, status: int, body: bytes) -> None:
    """Make the fake answer every call whose "METHOD path" contains `call` with `status` and the raw `body`."""
    real = fake.dispatch

    def dispatch(method, target, headers, data):
        if call in f"{method} {target.partition('?')[0]}":
            return status, "text/plain", body
        return real(method, target, headers, data)

    fake.dispatch = dispatch


def one_plain_error_line(err: str) -> str:
    """The error line of `err`, checked to be one line, with no control character anywhere in `err`."""
    assert not RAW_CONTROL.search(err), repr(err)
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("seam.py run: error: ")]
    assert len(errors) == 1, err
    return errors[0]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("where", ["create", "status"])
def test_a_batch_providers_error_body_reaches_the_terminal_without_control_characters(tmp_path, capsys, provider,
                                                                                      where):
    with serve_batch(provider, polls=1) as fake:
        answer_with(fake, CALLS[provider][where], 400, HOSTILE.encode("utf-8"))
        code, err = run_batch_cli(tmp_path, batch_config(tmp_path, fake, provider), capsys)
    assert code == 2
    line = one_plain_error_line(err)
    assert "HTTP 400: denied?]0;owned??[2J?[1A?fake line?31m??end" in line


def test_a_refused_results_url_reaches_the_terminal_without_control_characters(tmp_path, capsys):
    with serve_batch("anthropic", polls=1) as fake:
        results_url(fake, "http://elsewhere.example/\x1b]0;owned\x07\r\x1b[2Jresults")
        code, err = run_batch_cli(tmp_path, batch_config(tmp_path, fake, "anthropic"), capsys)
    assert code == 2
    line = one_plain_error_line(err)
    assert "http://elsewhere.example/?]0;owned???[2Jresults" in line and "refused" in line


def results_url(fake, url: str) -> None:
    """Make the fake's ended Anthropic batches name `url` as their results."""
    real = fake._anthropic_batch

    def render(batch):
        rendered = real(batch)
        if rendered["results_url"]:
            rendered["results_url"] = url
        return rendered

    fake._anthropic_batch = render


def test_the_synchronous_runs_stopped_early_line_has_no_control_characters(tmp_path, capsys, monkeypatch):
    rows = make_requests(4)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)

    def answer(handler, kind, body, message, behaviour):  # a 401 (stops the run) with a raw hostile body
        handler._send_raw(401, HOSTILE.encode("utf-8"))

    monkeypatch.setattr(fakeserver.Handler, "_answer", answer)
    with serve() as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, "openai", concurrency=1)), encoding="utf-8")
        code = seam.main(["run", str(config), "--requests", str(requests), "--out", str(tmp_path / "t.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    line = one_plain_error_line(err)
    assert "run stopped early" in line and "denied?]0;owned??[2J?[1A?fake line" in line


@pytest.mark.parametrize("url", ["http://[evil]/r", "http://[::1/r", "http://a]b/r", "http://[v1.evil]:99999/r"])
def test_a_results_url_no_parser_reads_is_one_line_on_every_run(tmp_path, capsys, url):
    with serve_batch("anthropic", polls=1) as fake:
        results_url(fake, url)
        config = batch_config(tmp_path, fake, "anthropic")
        for _ in range(2):  # the batch stays open: the rerun meets the same results_url
            code, err = run_batch_cli(tmp_path, config, capsys)
            assert code == 2
            line = one_plain_error_line(err)
            assert "refused: the API key is sent to that host only" in line
        assert fake.foreign_received == []


@pytest.mark.parametrize("counts", [
    [{"succeeded": -10 ** 400}, {"succeeded": 1}],  # a gain beyond any float: the ETA overflowed
    [{"processing": -5, "errored": -3}, {"succeeded": 2, "errored": -1}],
    [{key: int("9" * 4300) for key in ("succeeded", "errored", "canceled", "expired")}],  # a sum too long to print
])
def test_negative_or_absurd_anthropic_request_counts_never_break_the_progress_line(tmp_path, counts):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=len(counts)) as fake:
        real, seen = fake._anthropic_batch, []

        def render(batch):  # while the batch runs, its n-th status check gets counts[n - 1]
            rendered = real(batch)
            if batch.status != "ended" and batch.gets:  # (gets: 0 for the creation's answer)
                rendered["request_counts"].update(counts[batch.gets - 1])
                seen.append(batch.gets)
            return rendered

        fake._anthropic_batch = render
        config = load_config(batch_config(tmp_path, fake, "anthropic"))
        log = io.StringIO()
        summary = run_batch(config, requests, out, log=log, poll=PollPolicy(0.01, 1.0, 0.01), sleep=lambda s: None)
    assert summary.counts == {"ok": 4} and len(seen) == len(counts)
    lines = log.getvalue().splitlines()
    progress = [line for line in lines if " done · failed " in line]
    assert progress and all(re.search(r" [0-4]/4 done · failed [0-4] ", line) for line in progress), lines


def test_the_batch_progress_line_keeps_any_provider_count_within_the_total():
    """Whichever adapter lets a count through (OpenAI's counts have no upper bound), the line stays whole."""
    from runner.batch.progress import Waiting

    log = io.StringIO()
    waiting = Waiting(log, interval_s=0)
    for done, failed in [(-10 ** 400, -1), (1, 10 ** 400), (int("9" * 4300) * 10, 0), (3, 2)]:
        waiting.update({"b1": "in_progress"}, done, failed, 4)
    lines = log.getvalue().splitlines()
    assert [re.search(r" (\S+)/4 done · failed (\S+) ", line).groups() for line in lines] == [
        ("0", "0"), ("1", "4"), ("4", "0"), ("3", "2")]
