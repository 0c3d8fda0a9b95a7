"""`seam.py run --batch` against a fake of each provider's batch API (tests/support/fakebatch.py, written
from the public docs): rows, failures, retries, whole-batch failures, cancelling, ids and the key."""

from __future__ import annotations

import io
import json

import pytest
from support.fakebatch import serve_batch
from support.fakeserver import edited, toml_text
from support.samples import make_requests

from common.errors import UserError
from common.records import TraceRow
from common.traces import read_final
from runner.batch import ids
from runner.batch.journal import Journal
from runner.batch.run import PollPolicy, run_batch
from runner.config import load_config
from runner.prices import Price
from stats.usage import tally_rows

PROVIDERS = ("openai", "anthropic", "gemini")
FAST = PollPolicy(first_s=0.01, factor=1.0, max_s=0.01)
KEY_ENV = "SEAM_TEST_BATCH_KEY"


def config_for(tmp_path, fake, provider, **overrides):
    keys = {"name": f"fake-{provider}", "provider": provider, "model": "fake-model", "base_url": fake.url,
            "temperature": 0.0, "max_tokens": 256, "timeout_s": 5, "max_retries": 2, "api_key_env": KEY_ENV}
    keys.update(overrides)
    path = tmp_path / f"{provider}.toml"
    path.write_text(toml_text(keys), encoding="utf-8")
    return load_config(path)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    from support.fakebatch import DEFAULT_KEY

    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)
    return DEFAULT_KEY


def submissions_per_request(fake):
    """How many times each request id was submitted (its custom_ids differ between submissions: their tags)."""
    from collections import Counter

    return Counter(ids.parse(custom)[1] for _, customs in fake.submitted for custom in customs)


def go(config, requests, out, **options):
    log = io.StringIO()
    summary = run_batch(config, requests, out, log=log, poll=FAST, sleep=lambda s: None, **options)
    return summary, log.getvalue()


def rows(out) -> list[dict]:
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_request_gets_one_row_matched_by_id_not_by_position(tmp_path, provider):
    requests = make_requests(60)
    out = tmp_path / "trace.jsonl"
    with serve_batch(provider, polls=2, shuffle=True) as fake:
        config = config_for(tmp_path, fake, provider)
        summary, log = go(config, requests, out)
    assert summary.counts == {"ok": 60}
    final = read_final(out).final
    assert len(rows(out)) == 60 and set(final) == {request.id for request in requests}
    for request in requests:
        row = final[request.id]
        assert row.output == edited(request.message)  # the shuffled results went to their own ids
        assert row.request["batch"] is True and row.attempts[-1].result == "succeeded"
        assert row.attempts[-1].batch_id == fake.submitted[0][0]
    assert len(fake.submitted) == 1
    assert sorted(ids.parse(custom)[1] for custom in fake.submitted[0][1]) == sorted(r.id for r in requests)
    assert f"submitted 60 requests as batch {fake.submitted[0][0]}" in log
    journal = Journal(out, None)
    assert [submission.ended for submission in journal.submissions.values()] == ["collected"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rerun_after_the_batch_is_collected_submits_nothing(tmp_path, provider):
    requests = make_requests(6)
    out = tmp_path / "trace.jsonl"
    with serve_batch(provider, polls=1) as fake:
        config = config_for(tmp_path, fake, provider)
        go(config, requests, out)
        summary, _ = go(config, requests, out)
    assert summary.asked == 0 and summary.skipped == 6 and len(fake.submitted) == 1


@pytest.mark.parametrize(("provider", "kind", "reason"), [
    ("openai", "errored", "batch error"), ("openai", "expired", "batch error batch_expired"),
    ("anthropic", "errored", "batch errored: "), ("anthropic", "expired", "batch expired"),
    ("anthropic", "canceled", "batch canceled"), ("gemini", "errored", "batch error")])
def test_per_request_failures_are_failed_rows_and_retry_failed_resubmits_only_those(tmp_path, provider, kind,
                                                                                     reason):
    requests = make_requests(10)
    failing = {request.id for request in requests if "return 3 " in request.message or "return 7 " in request.message}
    out = tmp_path / "trace.jsonl"
    with serve_batch(provider, polls=1, fail={"return 3 ": kind, "return 7 ": kind}) as fake:
        config = config_for(tmp_path, fake, provider)
        summary, _ = go(config, requests, out)
        assert summary.counts == {"ok": 8, "failed": 2}
        final = read_final(out).final
        for request_id in failing:
            assert final[request_id].status == "failed" and reason in final[request_id].reason
            expected = {"openai": {"errored": "errored", "expired": "expired"}}.get(provider, {}).get(kind, kind)
            assert final[request_id].attempts[-1].result == (expected if provider != "gemini" else "errored")
        summary, _ = go(config, requests, out, retry_failed=True)
        assert summary.counts == {"ok": 2}
        assert sorted(ids.parse(custom)[1] for custom in fake.submitted[1][1]) == sorted(failing)
    final = read_final(out).final
    assert all(row.status == "ok" for row in final.values())
    assert all(len(final[request_id].previous) == 1 for request_id in failing)
    per_id = submissions_per_request(fake)
    assert {request_id for request_id, count in per_id.items() if count == 2} == failing


@pytest.mark.parametrize(("provider", "failure"), [("openai", "failed"), ("gemini", "failed"), ("gemini", "expired")])
def test_a_batch_that_fails_as_a_whole_is_one_line_and_its_ids_stay_askable(tmp_path, provider, failure):
    requests = make_requests(8)
    out = tmp_path / "trace.jsonl"
    with serve_batch(provider, polls=1, batch_failure=failure) as fake:
        config = config_for(tmp_path, fake, provider)
        summary, log = go(config, requests, out)
        assert summary.asked == 0 and not out.read_text()
        assert log.count("ended as a whole without results") == 1
        summary, _ = go(config, requests, out)  # the next run asks them again, in a new batch
    assert summary.counts == {"ok": 8} and len(fake.submitted) == 2


def test_a_results_url_on_another_host_is_refused_and_the_key_never_sent_there(tmp_path, key):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=1, foreign_results=True) as fake:
        config = config_for(tmp_path, fake, "anthropic")
        with pytest.raises(UserError, match="not on .* host; refused: the API key is sent to that host only"):
            go(config, requests, out)
        assert fake.foreign_received == []
        assert all(key not in json.dumps(dict(request["headers"])) for request in fake.received
                   if "localhost" in request.get("path", ""))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_key_is_in_no_written_file(tmp_path, provider, key):
    requests = make_requests(10)
    out = tmp_path / "trace.jsonl"
    with serve_batch(provider, polls=1, fail={"return 2 ": "errored"}) as fake:
        config = config_for(tmp_path, fake, provider)
        go(config, requests, out)
        go(config, requests, out, retry_failed=True)
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {path.name for path in written} >= {"trace.jsonl", "trace.jsonl.batches"}
    for path in written:
        assert key.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_cancel_cancels_the_open_batch_and_collects_what_it_finished(tmp_path, provider):
    requests = make_requests(6)
    out = tmp_path / "trace.jsonl"
    polls = iter(range(10**6))

    def interrupt(_seconds):  # Ctrl+C while waiting, after two status checks
        if next(polls) >= 1:
            raise KeyboardInterrupt

    with serve_batch(provider, polls=50) as fake:
        config = config_for(tmp_path, fake, provider)
        log = io.StringIO()
        with pytest.raises(KeyboardInterrupt):
            run_batch(config, requests, out, log=log, poll=FAST, sleep=interrupt)
        assert "keeps running at the provider: run the same command again" in log.getvalue()
        assert not out.exists() or not out.read_text()
        summary, log_text = go(config, requests, out, cancel=True)
        assert "asked the provider to cancel batch" in log_text
        assert len(fake.submitted) == 1
    final = read_final(out).final
    assert set(final) == {request.id for request in requests}
    assert all(row.status in ("ok", "failed") for row in final.values())
    assert [submission.ended for submission in Journal(out, None).submissions.values()] == ["collected"]


def test_batch_rows_are_priced_at_batch_prices(tmp_path):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=1) as fake:
        go(config_for(tmp_path, fake, "openai"), requests, out)
    final = list(read_final(out).final.values())
    tally = tally_rows(final)[("fake-openai", "all")]
    assert tally.batch_prompt == tally.prompt > 0
    price = Price(1.0, 2.0, 0.5, 1.0)
    assert tally.cost(price) == pytest.approx(price.cost(tally.prompt, tally.completion) / 2)


def test_an_id_too_long_for_a_custom_id_is_refused_before_anything_is_sent(tmp_path):
    long = make_requests(2, conditions=("clean", "a-" + "b" * 37))
    with serve_batch("anthropic") as fake:
        config = config_for(tmp_path, fake, "anthropic")
        long = [request.__class__(**{**request.to_row(), "id": f"{'c' * 30}/{request.condition}",
                                     "cluster": "c" * 30}) for request in long]
        with pytest.raises(UserError, match="spells a batch custom_id of .* more than the 64"):
            go(config, long, tmp_path / "trace.jsonl")
        assert fake.received == []


def test_custom_ids_round_trip_and_fit_anthropic_s_pattern():
    import re

    for request_id in ["humaneval-001/newline", "a_b.c/clean", "ümlaut/x", "x-_2f/clean"]:
        spelled = ids.custom_id("0badcafe", request_id)
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spelled) and ids.parse(spelled) == ("0badcafe", request_id)


def test_a_trace_row_with_batch_fields_reads_and_writes_back_the_same():
    from support.samples import trace_row

    row = trace_row()
    row["attempts"][0].update(batch_id="msgbatch_1", result="expired")
    assert TraceRow.from_row(row, "x").to_row() == row
    plain = trace_row()
    assert "batch_id" not in TraceRow.from_row(plain, "x").to_row()["attempts"][0]


class Killed(Exception):
    """Stands for a SIGKILL between the provider's answer and the journal's `created` line."""


def kill_before_created(monkeypatch):
    original = Journal.note

    def note(self, kind, submission, **fields):
        if kind == "created" and not fields.get("recovered"):
            raise Killed
        return original(self, kind, submission, **fields)

    monkeypatch.setattr(Journal, "note", note)
    return original


def test_anthropic_a_lost_batch_id_is_found_again_by_size_and_time(tmp_path, monkeypatch):
    requests = make_requests(6)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=1) as fake:
        config = config_for(tmp_path, fake, "anthropic")
        original = kill_before_created(monkeypatch)
        with pytest.raises(Killed):
            go(config, requests, out)
        monkeypatch.setattr(Journal, "note", original)
        summary, log = go(config, requests, out)
    assert f"found batch {fake.submitted[0][0]} again" in log
    assert summary.counts == {"ok": 6} and len(fake.submitted) == 1


def test_anthropic_two_batches_that_could_be_the_lost_one_are_refused_not_guessed(tmp_path, monkeypatch, key):
    import requests as http

    requests = make_requests(6)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=1) as fake:
        config = config_for(tmp_path, fake, "anthropic")
        original = kill_before_created(monkeypatch)
        with pytest.raises(Killed):
            go(config, requests, out)
        monkeypatch.setattr(Journal, "note", original)
        other = {"requests": [{"custom_id": f"other-{index}", "params": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hi"}]}} for index in range(6)]}  # another run's batch, the same size
        answer = http.post(fake.url + "/messages/batches", json=other,
                           headers={"x-api-key": key, "anthropic-version": "2023-06-01"}, timeout=5)
        assert answer.status_code == 200
        with pytest.raises(UserError, match="2 batches of that size were created since .* cannot tell which"):
            go(config, requests, out)
    assert len(fake.submitted) == 2  # nothing more was submitted


def test_a_submission_the_provider_refuses_is_abandoned_and_its_ids_stay_askable(tmp_path):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=1) as fake:
        config = config_for(tmp_path, fake, "openai")
        fake.api_key = "another-key-entirely-0123456789"
        with pytest.raises(UserError, match="HTTP 401"):
            go(config, requests, out)
    journal = Journal(out, None)
    assert [submission.ended for submission in journal.submissions.values()] == ["abandoned"]
    assert journal.in_flight() == set()


def test_batch_options_without_batch_are_refused(tmp_path, capsys):
    import seam

    with serve_batch("openai") as fake:
        config = config_for(tmp_path, fake, "openai")
        code = seam.main(["run", config.path, "--out", str(tmp_path / "t.jsonl"), "--batch-cancel",
                          "--first", "1"])
    assert code == 2 and "--batch-cancel and --batch-poll go with --batch" in capsys.readouterr().err


# ---- what a review of the first version found (each fails on that version)

def test_a_create_whose_answer_is_lost_is_not_retried_and_the_batch_is_found_again(tmp_path):
    requests = make_requests(6)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=1) as fake:
        config = config_for(tmp_path, fake, "anthropic", timeout_s=0.5, max_retries=3)
        with fake.hold(r"^POST /v1/messages/batches$") as held:
            with pytest.raises(UserError, match="not tried again"):
                go(config, requests, out)
            assert held.is_set()
        assert len(fake.submitted) == 1  # made once, although its answer never came
        summary, log = go(config, requests, out)
    assert "found batch" in log and summary.counts == {"ok": 6}
    assert set(submissions_per_request(fake).values()) == {1}


def test_another_runs_batch_of_the_same_size_is_never_written_into_this_trace(tmp_path, monkeypatch):
    """Anthropic batches carry no token: one found again by size and time is proved this run's by the tag of its
    results' custom_ids, or abandoned."""
    from runner.batch import anthropic

    requests = make_requests(4)
    with serve_batch("anthropic", polls=1) as fake:
        other = config_for(tmp_path, fake, "anthropic", name="other-model")
        go(other, requests, tmp_path / "other.jsonl")  # another trace's batch, collected there
        mine = config_for(tmp_path, fake, "anthropic", name="my-model")
        out = tmp_path / "mine.jsonl"

        def killed(*args, **kwargs):
            raise Killed  # a kill after `submitting`, before the batch was sent

        create = anthropic.create
        monkeypatch.setattr(anthropic, "create", killed)
        with pytest.raises(Killed):
            go(mine, requests, out)
        monkeypatch.setattr(anthropic, "create", create)
        summary, log = go(mine, requests, out)  # adopts the other run's batch, sees it is not this run's
        assert "it is not this run's batch" in log and summary.asked == 0 and summary.stopped
        summary, _ = go(mine, requests, out)  # the ids were left askable: submitted afresh
    assert summary.counts == {"ok": 4}
    final = read_final(out).final
    batches = {row.attempts[-1].batch_id for row in final.values()}
    assert batches == {fake.submitted[-1][0]} and fake.submitted[0][0] not in batches


def interrupted(config, requests, out):
    """A --batch run stopped by Ctrl+C once its batch is created: the submission stays open."""
    def stop(_seconds):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_batch(config, requests, out, log=io.StringIO(), poll=FAST, sleep=stop)


def test_a_synchronous_run_refuses_ids_in_an_open_batch_and_dry_run_and_estimate_leave_them_out(tmp_path, capsys):
    from runner.run import dry_run, run

    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=50) as fake:
        config = config_for(tmp_path, fake, "openai")
        interrupted(config, requests, out)
        with pytest.raises(UserError, match="in a batch still open at the provider"):
            run(config, requests, out, log=io.StringIO())
        assert dry_run(config, requests, out, io.StringIO()) == 0
    assert not out.exists() or out.read_text() == ""


def test_a_changed_config_or_message_is_refused_while_its_batch_is_open(tmp_path):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=50) as fake:
        interrupted(config_for(tmp_path, fake, "openai"), requests, out)
        with pytest.raises(UserError, match="was sent with request settings"):
            go(config_for(tmp_path, fake, "openai", temperature=0.9), requests, out)
        changed = make_requests(4, prefix="Fix the typos.")
        with pytest.raises(UserError, match="are not the ones it was sent"):
            go(config_for(tmp_path, fake, "openai"), changed, out)


def test_cancel_of_a_batch_that_has_ended_collects_it(tmp_path):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=1) as fake:
        config = config_for(tmp_path, fake, "anthropic")
        interrupted(config, requests, out)
        summary, log = go(config, requests, out, cancel=True)
    assert "has already ended; collecting it" in log and summary.counts == {"ok": 4}


def test_a_batch_the_provider_no_longer_has_is_abandoned_and_its_ids_asked_again(tmp_path):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=50) as fake:
        config = config_for(tmp_path, fake, "openai")
        interrupted(config, requests, out)
        fake.batches.clear()  # deleted at the provider
        summary, log = go(config, requests, out)
        assert "is no longer at the provider" in log and summary.stopped
        fake.polls = 1
        summary, _ = go(config, requests, out)
    assert summary.counts == {"ok": 4}


def test_a_torn_journal_line_is_cut_before_the_next_event(tmp_path):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("gemini", polls=1) as fake:
        config = config_for(tmp_path, fake, "gemini")
        journal = tmp_path / "trace.jsonl.batches"
        journal.write_bytes(b'{"event": "submitting", "submission": "seam-00')  # a kill mid-write
        go(config, requests, out)
        go(config, requests, out)  # the journal written after the cut reads back
    assert journal.read_bytes().endswith(b"\n") and b'"seam-00' not in journal.read_bytes()
    assert [s.ended for s in Journal(out, None).submissions.values()] == ["collected"]


def test_a_journal_line_with_a_bad_field_is_one_line_naming_file_and_line(tmp_path):
    out = tmp_path / "trace.jsonl"
    (tmp_path / "trace.jsonl.batches").write_text(
        '{"event": "submitting", "submission": "s", "ids": ["a/clean"], "since": "yesterday"}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"trace.jsonl.batches:1: a 'submitting' event needs 'since'"):
        Journal(out, None)
    (tmp_path / "trace.jsonl.batches").write_text(
        '{"event": "submitting", "submission": "s", "ids": ["a/clean"], "since": 1}\n'
        '{"event": "created", "submission": "s", "batch_id": "../../files/x"}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"trace.jsonl.batches:2: .*no usable batch id"):
        Journal(out, None)


def test_a_kill_after_the_last_row_needs_no_second_download(tmp_path, monkeypatch):
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=1) as fake:
        config = config_for(tmp_path, fake, "openai")
        original = Journal.note

        def note(self, kind, submission, **fields):
            if kind == "collected":
                raise Killed
            return original(self, kind, submission, **fields)

        monkeypatch.setattr(Journal, "note", note)
        with pytest.raises(Killed):
            go(config, requests, out)
        monkeypatch.setattr(Journal, "note", original)
        downloads = fake.count(r"^GET /v1/files/[^/]+/content$")
        summary, log = go(config, requests, out)
        assert fake.count(r"^GET /v1/files/[^/]+/content$") == downloads and "repeating" not in log
    assert summary.asked == 0 and len(rows(out)) == 4


def test_a_lone_surrogate_in_a_result_is_recorded_as_the_synchronous_path_records_it(tmp_path):
    from runner.batch import openai
    from runner.batch.journal import Submission
    from runner.batch.run import outcome_of

    raw = json.dumps({"custom_id": "x", "error": None, "response": {"status_code": 200, "body": {
        "id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "a\ud800b"}}]}}})
    from runner.batch import read_results

    result = next(read_results(raw.encode("utf-8"), "output", openai._result))
    with serve_batch("openai") as fake:
        config = config_for(tmp_path, fake, "openai")
    submission = Submission("seam-0123456789abcdef", "openai", config.name, ("synthetic-000/clean",), 0.0,
                            batch_id="batch_1", created_at="2026-01-01T00:00:00.000Z")
    outcome = outcome_of(result, config, make_requests(1)[0], submission, None)
    assert outcome.status == "unusable" and "lone surrogate" in outcome.reason and "\ufffd" in outcome.reply.output


def test_a_provider_text_that_spells_the_key_is_redacted_on_the_terminal(tmp_path, monkeypatch, key):
    from runner.batch import Status, openai

    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("openai", polls=1) as fake:
        config = config_for(tmp_path, fake, "openai")
        monkeypatch.setattr(openai, "status", lambda client, batch_id: Status(
            state=f"failed {key}", ended=True, done=0, failed=0, total=4, failure=f"invalid key {key} \x1b[2J"))
        summary, log = go(config, requests, out)
    assert key not in log and "\x1b" not in log and summary.stopped
    assert key not in (tmp_path / "trace.jsonl.batches").read_text(encoding="utf-8")


def test_listing_pages_are_url_encoded_and_a_repeated_cursor_ends_the_search():
    from runner.batch import gemini, openai
    from runner.batch.journal import Submission

    class Pages:
        def __init__(self, pages):
            self.pages, self.urls = pages, []

        def url(self, path):
            return "http://h/v1" + path

        def json(self, method, url, **_):
            self.urls.append(url)
            return self.pages[min(len(self.urls), len(self.pages)) - 1]

    submission = Submission("seam-0123456789abcdef", "gemini", "m", ("a/clean",), 1e9)
    page = {"operations": [], "nextPageToken": "Cg8y+MDI1=="}
    client = Pages([page, page])
    assert gemini.find(client, submission) == [] and len(client.urls) == 2
    assert client.urls[1].endswith("pageToken=Cg8y%2BMDI1%3D%3D")
    client = Pages([{"data": [{"id": "b&x", "created_at": 2e9}], "has_more": True}])
    assert openai.find(client, submission) == [] and len(client.urls) == 2  # the same cursor twice: stop
    assert "after=b%26x" in client.urls[1]


def test_an_earlier_row_is_priced_by_its_own_batch_flag():
    import dataclasses

    from scorer.synthetic import trace_row

    asked = {"prompt_tokens": 1_000_000, "completion_tokens": 0}
    earlier = {**trace_row("humaneval-001", "clean", "x", model="m").to_row(), "usage": asked,
               "request": {"batch": True}}
    final = dataclasses.replace(trace_row("humaneval-001", "clean", "x", model="m"), usage=asked,
                                previous=(earlier,))
    tally = tally_rows([final])[("m", "all")]
    assert tally.batch_prompt == 1_000_000 and tally.prompt == 2_000_000
    assert tally.cost(Price(1.0, 1.0, 0.5, 0.5)) == pytest.approx(1.5)


LONG_ERROR = "overloaded, please retry later. " * 40_000  # about 1.3 MB of a provider's error message


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_a_long_errored_message_is_cut_as_the_synchronous_path_cuts_an_error(tmp_path, provider, key):
    """A batch's per-request error message is a provider's text of any length: it is kept as the failed row's
    reason and its attempt's error cut to runner.ask.ERROR_TEXT_CHARS, the key redacted before the cut (so that no
    part of it is left where the cut falls), as an exception's text is on the synchronous path."""
    from runner.ask import ERROR_TEXT_CHARS
    from runner.batch import Status, anthropic, gemini, openai, read_results
    from runner.batch.journal import Submission
    from runner.batch.run import outcome_of

    message = "x" * (ERROR_TEXT_CHARS - 55) + key + LONG_ERROR  # the key across the cut, after any prefix
    if provider == "anthropic":
        raw = {"custom_id": "x", "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "overloaded_error", "message": message}}}}
        (result,) = read_results(json.dumps(raw).encode("utf-8"), "results", anthropic._result)
    elif provider == "openai":
        raw = {"custom_id": "x", "response": None, "error": {"code": "server_error", "message": message}}
        (result,) = read_results(json.dumps(raw).encode("utf-8"), "output", openai._result)
    else:
        item = {"metadata": {"key": "x"}, "error": {"code": 13, "status": "INTERNAL", "message": message}}
        (result,) = gemini.results(None, Status(state="JOB_STATE_SUCCEEDED", ended=True, done=1, failed=1, total=1,
                                                data={"response": {"inlinedResponses": [item]}}))
    assert result.result == "errored" and len(result.error) > len(LONG_ERROR)
    with serve_batch(provider) as fake:
        config = config_for(tmp_path, fake, provider)
    submission = Submission("seam-0123456789abcdef", provider, config.name, ("synthetic-000/clean",), 0.0,
                            batch_id="batch_1", created_at="2026-01-01T00:00:00.000Z")
    outcome = outcome_of(result, config, make_requests(1)[0], submission, key)
    (attempt,) = outcome.attempts
    assert outcome.status == "failed" and outcome.reason == attempt.error
    assert len(outcome.reason) == ERROR_TEXT_CHARS + 1 and outcome.reason.endswith("…")
    assert key not in outcome.reason and key[:8] not in outcome.reason and "<redacted>" in outcome.reason


def test_a_long_errored_message_from_anthropic_is_written_cut_into_the_trace(tmp_path, monkeypatch):
    from support import fakebatch

    from runner.ask import ERROR_TEXT_CHARS

    errored = {"type": "error", "error": {"type": "overloaded_error", "message": LONG_ERROR}}
    monkeypatch.setitem(fakebatch.ERRORED, "anthropic", errored)
    requests = make_requests(4)
    out = tmp_path / "trace.jsonl"
    with serve_batch("anthropic", polls=1, fail={"return 2 ": "errored"}) as fake:
        summary, _ = go(config_for(tmp_path, fake, "anthropic"), requests, out)
    assert summary.counts == {"ok": 3, "failed": 1}
    (failed,) = [row for row in read_final(out).final.values() if row.status == "failed"]
    assert failed.reason.startswith("batch errored: overloaded_error: overloaded, please retry later.")
    assert len(failed.reason) == ERROR_TEXT_CHARS + 1 and failed.attempts[-1].error == failed.reason
    assert out.stat().st_size < 100_000
