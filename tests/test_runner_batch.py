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
    assert sorted(fake.submitted[0][1]) == sorted(ids.custom_id(request.id) for request in requests)
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
        assert sorted(fake.submitted[1][1]) == sorted(ids.custom_id(request_id) for request_id in failing)
    final = read_final(out).final
    assert all(row.status == "ok" for row in final.values())
    assert all(len(final[request_id].previous) == 1 for request_id in failing)
    per_id = fake.submissions_per_custom_id()
    assert {ids.request_id(custom) for custom, count in per_id.items() if count == 2} == failing


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
        spelled = ids.custom_id(request_id)
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spelled) and ids.request_id(spelled) == request_id


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
                          "--clusters", "1"])
    assert code == 2 and "--batch-cancel and --batch-poll go with --batch" in capsys.readouterr().err
