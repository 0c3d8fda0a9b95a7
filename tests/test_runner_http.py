"""Each provider's format and every fault, end to end against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
import requests
from support.fakeserver import RESPONSES, edited, serve, write_config
from support.samples import BENCHMARK_SHA, make_requests

from common.errors import UserError
from common.files import sha256_text
from common.traces import read_final
from runner import providers
from runner.ask import ask, canonical_body
from runner.retry import RetryPolicy
from runner.run import run
from runner.transport import post

KEY = "sk-seam-test-0123456789abcdef"
FAST = RetryPolicy(max_retries=3, base_s=0.01, cap_s=0.02)
PROVIDERS = providers.NAMES
FINISHED = {"openai": "stop", "anthropic": "end_turn", "gemini": "STOP"}


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("SEAM_TEST_KEY", KEY)


def final_traces(path):
    return read_final(path).final


def go(config, rows, out, **options):
    log = io.StringIO()
    summary = run(config, rows, out, log=log, policy=options.pop("policy", FAST), **options)
    return summary, log.getvalue()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_round_trip_records_what_was_sent_and_what_came_back(tmp_path, provider):
    rows = make_requests(4)
    out = tmp_path / "traces.jsonl"
    with serve() as server:
        params = {"generationConfig": {"seed": 0}} if provider == "gemini" else {"seed": 0}
        config = write_config(tmp_path / "m.toml", server, provider, api_key_env="SEAM_TEST_KEY",
                              params=params)
        summary, _ = go(config, rows, out)
    assert summary.counts == {"ok": 4} and summary.asked == 4 and summary.stopped is None
    final = final_traces(out)
    assert sorted(final) == sorted(row.id for row in rows)
    url, headers, body = providers.get(provider).build_request(config, rows[0].message)
    for row in rows:
        trace = final[row.id]
        assert trace.output == edited(row.message)  # exactly as returned, white space kept
        assert (trace.status, trace.reason, trace.model) == ("ok", None, f"fake-{provider}")
        assert (trace.cluster, trace.condition) == (row.cluster, row.condition)
        assert trace.benchmark_sha256 == BENCHMARK_SHA
        assert trace.message_sha256 == sha256_text(row.message)
        assert trace.served_model == ("gemini-served-001" if provider == "gemini" else "served-fake-model")
        assert trace.finish_reason == FINISHED[provider]
        assert trace.usage and trace.response
        assert len(trace.attempts) == 1 and trace.attempts[0].http_status == 200
        request = trace.request
        assert (request["provider"], request["url"], request["model"]) == (provider, url, "fake-model")
        assert (request["max_tokens"], request["temperature"], request["timeout_s"]) == (256, 0.0, 5.0)
        assert (request["concurrency"], request["max_retries"]) == (2, 3)
        assert "seed" in json.dumps(request["parameters"])
    # what the server received: one user message, exactly the row's, no system prompt, key in its header
    assert len(server.received) == 4
    by_message = {}
    for received in server.received:
        body = received["body"]
        if provider == "gemini":
            message = body["contents"][0]["parts"][0]["text"]
            assert body["contents"] == [{"role": "user", "parts": [{"text": message}]}]
            assert "systemInstruction" not in body
            assert received["headers"]["x-goog-api-key"] == KEY and KEY not in received["path"]
        else:
            assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
            message = body["messages"][0]["content"]
            assert "system" not in body
        if provider == "openai":
            assert received["headers"]["Authorization"] == f"Bearer {KEY}"
        if provider == "anthropic":
            assert received["headers"]["x-api-key"] == KEY
            assert received["headers"]["anthropic-version"] == "2023-06-01"
        by_message[message] = received
    assert sorted(by_message) == sorted(row.message for row in rows)
    # the bytes on the wire are the canonical JSON of the body
    first = by_message[rows[0].message]
    _, _, sent = providers.get(provider).build_request(config, rows[0].message)
    assert first["raw"] == canonical_body(sent)


FAULTS = {  # message -> server script, and what the final trace row must say
    "m-429": (["429:0"], "ok", None),
    "m-5xx": (["500", "503"], "ok", None),
    "m-slow": (["slow"], "ok", None),
    "m-drop": (["drop"], "ok", None),
    "m-malformed": (["malformed"], "ok", None),
    "m-empty": (["empty"], "unusable", "empty output"),
    "m-truncated": (["truncated"], "unusable", "stopped by the output limit"),
    "m-filter": (["filter"], "unusable", "blocked by a content filter"),
    "m-shape": (["shape"], "failed", "unexpected response"),
    "m-down": (["500"] * 4, "failed", "gave up after 4 attempts; last: HTTP 500"),
    "m-400": (["400"], "failed", "HTTP 400"),
}


def fault_rows():
    rows = make_requests(len(FAULTS), conditions=("clean",))
    return [dataclasses.replace(row, message=message) for row, message in zip(rows, FAULTS, strict=True)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_faults_are_retried_within_bounds_and_every_attempt_is_recorded(tmp_path, provider):
    rows = fault_rows()
    out = tmp_path / "traces.jsonl"
    with serve({message: script for message, (script, _, _) in FAULTS.items()}, slow_s=1.5) as server:
        config = write_config(tmp_path / "m.toml", server, provider, timeout_s=0.4, concurrency=4)
        summary, _ = go(config, rows, out)
    final = {trace.id: trace for trace in final_traces(out).values()}
    assert summary.stopped is None and summary.asked == len(FAULTS)
    for row in rows:
        script, status, reason = FAULTS[row.message]
        trace = final[row.id]
        assert trace.status == status, (row.message, trace)
        if reason is None:
            assert trace.reason is None
        else:
            assert reason in trace.reason, (row.message, trace.reason)
        attempts = trace.attempts
        if status == "ok":
            assert trace.output == edited(row.message)
            assert len(attempts) == len(script) + 1
            assert all(a.error for a in attempts[:-1]) and attempts[-1].error is None
            assert all(a.retry_wait_s is not None for a in attempts[:-1])
            assert attempts[-1].retry_wait_s is None
    attempts = {row.message: final[row.id].attempts for row in rows}
    assert [a.http_status for a in attempts["m-429"]] == [429, 200]
    assert attempts["m-429"][0].retry_after == "0" and attempts["m-429"][0].retry_wait_s == 0.0
    assert [a.http_status for a in attempts["m-5xx"]] == [500, 503, 200]
    assert attempts["m-slow"][0].error.startswith("timed out")
    assert attempts["m-slow"][0].http_status is None
    assert attempts["m-drop"][0].error.startswith("connection error")
    assert "malformed JSON" in attempts["m-malformed"][0].error
    assert len(attempts["m-shape"]) == 1 and len(attempts["m-400"]) == 1  # not retried
    assert len(attempts["m-down"]) == 4  # 1 + max_retries
    assert final[rows[list(FAULTS).index("m-truncated")].id].output == edited("m-truncated")[:5]


def test_retry_after_is_honoured_in_seconds_and_as_a_date(tmp_path):
    slept = []
    with serve({"hello": ["429:3", "429:date", "503", "ok"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        outcome = ask(session=requests.Session(), provider=providers.get("openai"), config=config,
                      message="hello", api_key=None, request_id="x/clean",
                      policy=RetryPolicy(max_retries=5, base_s=0.25, cap_s=1), pace=lambda: True,
                      sleep=lambda s: slept.append(s) or True)
    assert outcome.status == "ok" and [a.http_status for a in outcome.attempts] == [429, 429, 503, 200]
    assert slept[0] == 3.0
    assert 0.0 <= slept[1] <= 1.0 and outcome.attempts[1].retry_after.endswith("GMT")
    assert 0.5 <= slept[2] <= 1.0  # no Retry-After on the 503 (third retry): 0.25 * 2**2, half jittered
    assert [a.retry_wait_s for a in outcome.attempts] == [*slept, None]


def test_the_outcome_carries_the_request_as_sent_and_each_body_is_built_once(tmp_path, monkeypatch):
    openai = providers.get("openai")
    built = []
    original = openai.build_request

    def counting(config, message):
        built.append(message if isinstance(message, str) else message.message)  # a run builds from conversations
        return original(config, message)

    monkeypatch.setattr(openai, "build_request", counting)
    rows = make_requests(3)
    with serve({rows[0].message: ["503"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        outcome = ask(session=requests.Session(), provider=openai, config=config, message="hello", api_key=None,
                      request_id="x/clean", policy=FAST, pace=lambda: True, sleep=lambda s: True)
        assert outcome.url == server.url + server.received[-1]["path"] == f"{server.url}/v1/chat/completions"
        assert canonical_body(outcome.body) == server.received[-1]["raw"]
        built.clear()
        go(config, rows, tmp_path / "t.jsonl")
    # one body per request (the retry resends it), and one for the config's fingerprint
    assert sorted(built) == sorted(["", *(row.message for row in rows)])
    for trace in final_traces(tmp_path / "t.jsonl").values():
        assert trace.request["url"] == outcome.url and trace.request["parameters"]["max_tokens"] == 256


@pytest.mark.parametrize(("status", "hint"), [
    ("401", "check the API key in the environment variable SEAM_TEST_KEY"),
    ("403", "SEAM_TEST_KEY"),
    ("404", "check the model name 'fake-model'"),
    ("301", "the server redirects (redirects are not followed); check base_url"),
])
def test_auth_and_not_found_stop_the_run(tmp_path, status, hint):
    rows = make_requests(6)
    out = tmp_path / "traces.jsonl"
    with serve({row.message: [status] for row in rows}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai", api_key_env="SEAM_TEST_KEY",
                              concurrency=1)
        summary, _ = go(config, rows, out)
    assert summary.asked == 1 and len(server.received) == 1  # the other five were never sent
    assert summary.stopped and hint in summary.stopped
    (trace,) = final_traces(out).values()
    assert trace.status == "failed" and f"HTTP {status}" in trace.reason and hint in trace.reason


def test_401_without_api_key_env_says_no_key_was_sent(tmp_path):
    rows = make_requests(1)
    with serve({rows[0].message: ["401"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        summary, _ = go(config, rows, tmp_path / "t.jsonl")
    assert "the config names no api_key_env, so no key was sent" in summary.stopped


def test_local_server_without_key_usage_or_model_name(tmp_path):
    rows = make_requests(2)
    with serve({row.message: ["bare"] for row in rows}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai", concurrency=1)
        go(config, rows, tmp_path / "t.jsonl")
    assert all("Authorization" not in r["headers"] for r in server.received)
    for trace in final_traces(tmp_path / "t.jsonl").values():
        assert trace.status == "ok"
        assert trace.usage is None and trace.served_model == "/models/local-model-q4.gguf"


def test_concurrency_is_bounded_by_the_config(tmp_path):
    rows = make_requests(12)
    with serve(delay_s=0.1) as server:
        config = write_config(tmp_path / "m.toml", server, "anthropic", concurrency=3)
        go(config, rows, tmp_path / "t.jsonl")
    assert 2 <= server.max_in_flight <= 3


def test_rerun_skips_finished_ids_and_sends_nothing(tmp_path):
    rows = make_requests(6)
    out = tmp_path / "t.jsonl"
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "gemini")
        go(config, rows[:4], out)
        summary, log = go(config, rows, out)
    assert (summary.skipped, summary.asked) == (4, 2) and len(server.received) == 6
    assert "4 of 6 requests already have a final row" in log
    assert len(out.read_text().splitlines()) == 6


@pytest.mark.parametrize(("behaviour", "status", "flag"), [
    ("empty", "unusable", "retry_unusable"),
    ("400", "failed", "retry_failed"),
])
def test_retry_flags_ask_again_and_keep_the_history(tmp_path, behaviour, status, flag):
    rows = make_requests(2)
    out = tmp_path / "t.jsonl"
    with serve({rows[0].message: [behaviour]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        go(config, rows, out)
        assert final_traces(out)[rows[0].id].status == status
        summary, _ = go(config, rows, out)  # without the flag: nothing to do
        assert summary.asked == 0
        summary, _ = go(config, rows, out, **{flag: True})
    assert summary.asked == 1 and len(server.received) == 3
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines].count(rows[0].id) == 2
    final = final_traces(out)[rows[0].id]
    assert final.status == "ok" and final.output == edited(rows[0].message)
    (previous,) = final.previous
    assert previous["status"] == status and previous["attempts"] and "previous" not in previous


def test_a_trace_for_another_setup_is_refused(tmp_path):
    rows = make_requests(2)
    out = tmp_path / "t.jsonl"
    with serve() as server:
        go(write_config(tmp_path / "m.toml", server, "openai"), rows, out)
        with pytest.raises(UserError, match=r"t\.jsonl:1: this trace is for model 'fake-openai'.*'other'"):
            go(write_config(tmp_path / "m.toml", server, "openai", name="other"), rows, out)
        with pytest.raises(UserError, match=r"t\.jsonl:1: this trace was made with request parameters"):
            go(write_config(tmp_path / "m.toml", server, "openai", temperature=0.7), rows, out)
        changed = [dataclasses.replace(rows[0], message=rows[0].message + "!"), rows[1]]
        with pytest.raises(UserError, match=r"t\.jsonl:\d: synthetic-000/clean was run with message_sha256"):
            go(write_config(tmp_path / "m.toml", server, "openai"), changed, out)
        assert len(server.received) == 2


def test_missing_key_variable_stops_before_any_request(tmp_path, monkeypatch):
    monkeypatch.delenv("SEAM_TEST_KEY")
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "openai", api_key_env="SEAM_TEST_KEY")
        with pytest.raises(UserError, match="api_key_env names SEAM_TEST_KEY, which is not set"):
            go(config, make_requests(2), tmp_path / "t.jsonl")
    assert server.received == [] and not (tmp_path / "t.jsonl").exists()


def test_duplicate_request_ids_are_refused(tmp_path):
    rows = make_requests(2)
    with serve() as server, pytest.raises(UserError, match="appears twice"):
        go(write_config(tmp_path / "m.toml", server), [rows[0], rows[0]], tmp_path / "t.jsonl")


def test_the_rate_cap_paces_every_attempt(tmp_path, monkeypatch):
    import runner.schedule
    from runner.pacing import Pacer

    made = []

    class CountingPacer(Pacer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.waits = 0
            made.append(self)

        def wait(self):
            self.waits += 1
            return super().wait()

    monkeypatch.setattr(runner.schedule, "Pacer", CountingPacer)
    rows = make_requests(3)
    with serve({rows[0].message: ["503"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai", requests_per_minute=6000)
        go(config, rows, tmp_path / "t.jsonl")
    (pacer,) = made
    assert pacer.interval == pytest.approx(0.01) and pacer.waits == 4  # three requests, one retry
    assert final_traces(tmp_path / "t.jsonl")[rows[0].id].request["requests_per_minute"] == 6000


def test_a_server_that_stays_down_stops_the_run_after_three_give_ups(tmp_path):
    rows = make_requests(8)
    script = {row.message: ["503"] * 2 for row in rows}
    script[rows[1].message] = ["503"]  # the second request recovers on its retry: the count restarts
    with serve(script) as server:
        config = write_config(tmp_path / "m.toml", server, "openai", concurrency=1, max_retries=1)
        summary, _ = go(config, rows, tmp_path / "t.jsonl", policy=RetryPolicy(max_retries=1, base_s=0.01))
    assert summary.counts == {"failed": 4, "ok": 1} and summary.asked == 5
    assert summary.stopped.startswith("3 requests in a row gave up after all their retries")
    assert len(server.received) == 10  # two attempts for each of the five asked


def test_a_response_trickling_in_is_cut_off_at_the_timeout_not_after_the_whole_body(tmp_path):
    # a body of ~250 bytes, one byte every 0.04 s: about 10 s in all, against a 0.3 s timeout
    with serve({"trickled": ["trickle:0.04"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai", timeout_s=0.3)
        url, headers, body = providers.get("openai").build_request(config, "trickled")
        exchange = post(requests.Session(), url, headers, canonical_body(body), config.timeout_s)
        sent = server.trickled
        whole = len(json.dumps(RESPONSES["openai"]({"model": "fake-model"}, "trickled", "ok")).encode())
    assert exchange.error.startswith("timed out") and exchange.status is None and exchange.body is None
    assert sent < whole / 2, (sent, whole)  # the client left early, it did not wait for every byte


def test_a_second_run_on_a_trace_in_use_is_refused_before_sending_anything(tmp_path):
    import fcntl

    out = tmp_path / "t.jsonl"
    with serve() as server, open(out, "ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a live run holds
        config = write_config(tmp_path / "m.toml", server, "openai")
        with pytest.raises(UserError, match=r"t\.jsonl: another 'seam\.py run' is appending to this trace"):
            go(config, make_requests(2), out)
        assert server.received == []
    assert out.read_bytes() == b""


def test_a_request_that_cannot_be_sent_fails_once_and_stops_the_run(tmp_path):
    """An invalid URL or header the config check did not catch: no retries, one failed row, the run stops."""
    rows = make_requests(3)
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "openai", concurrency=1)
        broken = dataclasses.replace(config, base_url=server.url.replace("127.0.0.1", "[::1") + "/v1")
        summary, _ = go(broken, rows, tmp_path / "t.jsonl")
        assert server.received == []
    assert summary.asked == 1 and "cannot send the request: InvalidURL" in summary.stopped
    (trace,) = final_traces(tmp_path / "t.jsonl").values()
    assert trace.status == "failed" and len(trace.attempts) == 1 and trace.attempts[0].http_status is None
