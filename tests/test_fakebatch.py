"""The fake batch APIs (tests/support/fakebatch.py) themselves, driven with raw `requests` calls as a client would."""

from __future__ import annotations

import json
import socket
import time

import pytest
import requests
from support.fakebatch import API_KEY, serve_batch
from support.fakeserver import edited

PROVIDERS = ["openai", "anthropic", "gemini"]
HEADERS = {"openai": {"Authorization": f"Bearer {API_KEY}"},
           "anthropic": {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
           "gemini": {"x-goog-api-key": API_KEY}}
DONE = {"openai": lambda b: b["status"] in ("completed", "failed", "expired", "cancelled"),
        "anthropic": lambda b: b["processing_status"] == "ended", "gemini": lambda b: b["done"]}


@pytest.fixture
def http():
    with requests.Session() as session:
        yield session


def _ids(n):
    return [f"req-{i:04d}" for i in range(n)]


def submit(http, fake, messages, ids=None, label="run-1"):
    """Create a batch of `messages` the way a client would; returns the handle to poll it by."""
    ids, provider, headers = ids or _ids(len(messages)), fake.provider, HEADERS[fake.provider]
    if provider == "openai":
        lines = "".join(json.dumps({"custom_id": c, "method": "POST", "url": "/v1/chat/completions",
                                    "body": {"model": "gpt-x", "messages": [{"role": "system", "content": "Edit."},
                                                                            {"role": "user", "content": m}]}}) + "\n"
                        for c, m in zip(ids, messages, strict=True))
        file = http.post(fake.url + "/files", headers=headers, data={"purpose": "batch"},
                         files={"file": ("input.jsonl", lines.encode())}, timeout=10)
        assert file.status_code == 200, file.text
        assert file.json()["purpose"] == "batch" and file.json()["object"] == "file"
        batch = http.post(fake.url + "/batches", headers=headers, timeout=10,
                          json={"input_file_id": file.json()["id"], "endpoint": "/v1/chat/completions",
                                "completion_window": "24h", "metadata": {"run": label}})
        assert batch.status_code == 200, batch.text
        return batch.json()["id"]
    if provider == "anthropic":
        body = {"requests": [{"custom_id": c, "params": {"model": "claude-x", "max_tokens": 64,
                                                        "messages": [{"role": "user", "content": m}]}}
                             for c, m in zip(ids, messages, strict=True)]}
        batch = http.post(fake.url + "/messages/batches", headers=headers, json=body, timeout=10)
        assert batch.status_code == 200, batch.text
        return batch.json()["id"]
    body = {"batch": {"display_name": label, "input_config": {"requests": {"requests": [
        {"request": {"contents": [{"role": "user", "parts": [{"text": m}]}]}, "metadata": {"key": c}}
        for c, m in zip(ids, messages, strict=True)]}}}}
    operation = http.post(fake.url + "/models/gemini-x:batchGenerateContent", headers=headers, json=body, timeout=10)
    assert operation.status_code == 200, operation.text
    assert operation.json()["metadata"]["state"] == "BATCH_STATE_PENDING"
    return operation.json()["name"]


def batch_url(fake, handle):
    return {"openai": f"{fake.url}/batches/{handle}", "anthropic": f"{fake.url}/messages/batches/{handle}",
            "gemini": f"{fake.url}/{handle}"}[fake.provider]


def poll(http, fake, handle, limit=50):
    """Retrieve the batch until it is finished; returns it and how many retrievals that took."""
    for count in range(1, limit + 1):
        batch = http.get(batch_url(fake, handle), headers=HEADERS[fake.provider], timeout=10).json()
        if DONE[fake.provider](batch):
            return batch, count
    raise AssertionError(f"not finished after {limit} polls: {batch}")


def results(http, fake, batch):
    """The finished batch's results as (custom_id, outcome, text) in the order served."""
    headers, found = HEADERS[fake.provider], []
    if fake.provider == "openai":
        for key in ("output_file_id", "error_file_id"):
            if batch[key]:
                data = http.get(f"{fake.url}/files/{batch[key]}/content", headers=headers, timeout=10)
                for line in data.text.splitlines():
                    row = json.loads(line)
                    if row["error"] is None:
                        assert row["response"]["status_code"] == 200 and row["response"]["request_id"]
                        body = row["response"]["body"]
                        assert body["object"] == "chat.completion" and body["usage"]["total_tokens"] > 0
                        found.append((row["custom_id"], "succeeded", body["choices"][0]["message"]["content"]))
                    else:
                        assert row["response"] is None and row["error"]["message"]
                        found.append((row["custom_id"], row["error"]["code"], None))
    elif fake.provider == "anthropic":
        data = http.get(batch["results_url"], headers=headers, timeout=10)
        for line in data.text.splitlines():
            row = json.loads(line)
            result = row["result"]
            if result["type"] == "succeeded":
                assert result["message"]["usage"]["output_tokens"] > 0
                found.append((row["custom_id"], "succeeded", result["message"]["content"][-1]["text"]))
            elif result["type"] == "errored":
                assert result["error"]["type"] == "error" and result["error"]["error"]["type"] == "api_error"
                found.append((row["custom_id"], "errored", None))
            else:
                found.append((row["custom_id"], result["type"], None))
    elif "response" in batch:
        for row in batch["response"]["inlinedResponses"]["inlinedResponses"]:
            if "response" in row:
                answer = row["response"]
                assert answer["usageMetadata"]["totalTokenCount"] > 0 and answer["modelVersion"]
                text = answer["candidates"][0]["content"]["parts"][-1]["text"]
                found.append((row["metadata"]["key"], "succeeded", text))
            else:
                assert set(row["error"]) == {"code", "message", "status"}
                found.append((row["metadata"]["key"], row["error"]["status"], None))
    return found


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_runs_to_the_end_and_its_results_come_back_shuffled(http, provider):
    messages = [f"paragraph {i}\n btw see you friday " for i in range(12)]
    with serve_batch(provider, polls=2) as fake:
        handle = submit(http, fake, messages)
        batch, count = poll(http, fake, handle)
        found = results(http, fake, batch)
    assert count == {"openai": 7, "anthropic": 3, "gemini": 5}[provider]  # polls=2 per status
    assert sorted(cid for cid, _, _ in found) == _ids(12)
    assert [cid for cid, _, _ in found] != _ids(12)
    assert {cid: text for cid, _, text in found} == {cid: edited(m) for cid, m in zip(_ids(12), messages, strict=True)}
    assert fake.submitted == [(handle, _ids(12))] and set(fake.submissions_per_custom_id().values()) == {1}


def test_without_shuffle_results_come_back_in_input_order(http):
    with serve_batch("anthropic", polls=0, shuffle=False) as fake:
        batch, _ = poll(http, fake, submit(http, fake, ["a", "b", "c"]))
        assert [cid for cid, _, _ in results(http, fake, batch)] == _ids(3)


EXPECTED = {("openai", "errored"): "server_error", ("openai", "expired"): "batch_expired",
            ("openai", "canceled"): "server_error", ("anthropic", "errored"): "errored",
            ("anthropic", "expired"): "expired", ("anthropic", "canceled"): "canceled",
            ("gemini", "errored"): "INTERNAL", ("gemini", "expired"): "DEADLINE_EXCEEDED",
            ("gemini", "canceled"): "INTERNAL"}


@pytest.mark.parametrize(("provider", "kind"), list(EXPECTED))
def test_a_failing_request_fails_once_and_succeeds_when_resubmitted(http, provider, kind):
    messages = ["fine one", "this one goes BOOM", "fine two"]
    with serve_batch(provider, polls=0, fail={"BOOM": kind}) as fake:
        first = dict((cid, outcome) for cid, outcome, _ in results(http, fake, poll(http, fake, submit(
            http, fake, messages))[0]))
        again = results(http, fake, poll(http, fake, submit(http, fake, messages[1:2], ids=["req-0001"]))[0])
    assert first == {"req-0000": "succeeded", "req-0001": EXPECTED[provider, kind], "req-0002": "succeeded"}
    assert again == [("req-0001", "succeeded", edited(messages[1]))]
    assert fake.submissions_per_custom_id() == {"req-0000": 1, "req-0001": 2, "req-0002": 1}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("failure", ["failed", "expired"])
def test_the_first_batch_fails_as_a_whole_and_the_next_runs(http, provider, failure):
    with serve_batch(provider, polls=1, batch_failure=failure) as fake:
        first, _ = poll(http, fake, submit(http, fake, ["a", "b"]))
        found = results(http, fake, first)
        second, _ = poll(http, fake, submit(http, fake, ["a", "b"]))
        assert [outcome for _, outcome, _ in results(http, fake, second)] == ["succeeded", "succeeded"]
    if provider == "openai":
        assert first["status"] == failure and first["output_file_id"] is None and first[f"{failure}_at"]
        if failure == "failed":
            assert first["errors"]["object"] == "list" and found == []
            assert set(first["errors"]["data"][0]) == {"code", "message", "line", "param"}
        else:
            assert sorted(found) == [("req-0000", "batch_expired", None), ("req-0001", "batch_expired", None)]
    elif provider == "anthropic":  # no whole-batch failure state: it ends, every request expired
        assert first["request_counts"] == {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 2}
        assert sorted(outcome for _, outcome, _ in found) == ["expired", "expired"]
    else:
        assert first["metadata"]["state"] == f"BATCH_STATE_{failure.upper()}"
        assert "response" not in first and first["error"]["code"] in (13, 4) and found == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cancelled_batch_keeps_what_ran_and_drops_the_rest(http, provider):
    messages = [f"m{i}" for i in range(10)]
    headers = HEADERS[provider]
    with serve_batch(provider, polls=1) as fake:
        handle = submit(http, fake, messages)
        if provider == "openai":  # let it start, so that some requests ran before the cancel
            statuses = [http.get(batch_url(fake, handle), headers=headers, timeout=5).json()["status"]
                        for _ in range(2)]
            assert statuses == ["validating", "in_progress"]
        url = batch_url(fake, handle) + (":cancel" if provider == "gemini" else "/cancel")
        cancelled = http.post(url, headers=headers, timeout=5)
        assert cancelled.status_code == 200, cancelled.text
        batch, _ = poll(http, fake, handle)
        found = results(http, fake, batch)
        again = http.post(url, headers=headers, timeout=5)
    assert again.status_code == 400
    if provider == "openai":
        assert cancelled.json()["status"] == "cancelling" and batch["status"] == "cancelled"
        assert [outcome for _, outcome, _ in found] == ["succeeded"] * 5  # the rest are absent
    elif provider == "anthropic":
        assert cancelled.json()["processing_status"] == "canceling" and cancelled.json()["cancel_initiated_at"]
        assert sorted(outcome for _, outcome, _ in found) == ["canceled"] * 5 + ["succeeded"] * 5
        assert batch["request_counts"]["canceled"] == 5 and batch["request_counts"]["succeeded"] == 5
    else:
        assert cancelled.json() == {} and batch["metadata"]["state"] == "BATCH_STATE_CANCELLED"
        assert batch["error"]["code"] == 1 and found == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_list_finds_earlier_batches_newest_first_with_their_labels(http, provider):
    headers = HEADERS[provider]
    with serve_batch(provider, polls=1) as fake:
        handles = [submit(http, fake, ["x"], label=f"run-{i}") for i in range(3)]
        if provider == "openai":
            page = http.get(fake.url + "/batches?limit=2", headers=headers, timeout=5).json()
            rest = http.get(f"{fake.url}/batches?limit=2&after={page['last_id']}", headers=headers, timeout=5).json()
            assert page["object"] == "list" and page["has_more"] and not rest["has_more"]
            assert [b["metadata"]["run"] for b in page["data"] + rest["data"]] == ["run-2", "run-1", "run-0"]
            assert (page["first_id"], page["last_id"]) == (handles[2], handles[1])
        elif provider == "anthropic":
            page = http.get(fake.url + "/messages/batches?limit=2", headers=headers, timeout=5).json()
            rest = http.get(f"{fake.url}/messages/batches?limit=2&after_id={page['last_id']}", headers=headers,
                            timeout=5).json()
            back = http.get(f"{fake.url}/messages/batches?before_id={handles[0]}", headers=headers, timeout=5).json()
            assert [b["id"] for b in page["data"] + rest["data"]] == handles[::-1] and page["has_more"]
            assert [b["id"] for b in back["data"]] == handles[:0:-1] and not back["has_more"]
        else:
            page = http.get(fake.url + "/batches?pageSize=2", headers=headers, timeout=5).json()
            rest = http.get(f"{fake.url}/batches?pageSize=2&pageToken={page['nextPageToken']}", headers=headers,
                            timeout=5).json()
            assert [op["metadata"]["displayName"] for op in page["operations"] + rest["operations"]] == \
                ["run-2", "run-1", "run-0"]
            assert "nextPageToken" not in rest and [op["name"] for op in rest["operations"]] == handles[:1]
        # listing does not move a batch on: only retrieving it does
        assert all(b.gets == 0 for b in fake.batches.values())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_endpoint_wants_the_key(http, provider):
    with serve_batch(provider) as fake:
        handle = submit(http, fake, ["x"])
        wrong = {k: ("Bearer sk-wrong" if k == "Authorization" else "sk-wrong") for k in HEADERS[provider]}
        answers = [http.get(batch_url(fake, handle), headers=headers, timeout=5) for headers in (
            {}, {**HEADERS[provider], **wrong})]
    for answer in answers:
        assert answer.status_code == 401
        body = answer.json()
        if provider == "openai":
            assert body["error"]["type"] == "invalid_request_error" and body["error"]["code"] == "invalid_api_key"
        elif provider == "anthropic":
            assert body["type"] == "error" and body["error"]["type"] == "authentication_error"
        else:
            assert body["error"]["code"] == 401 and body["error"]["status"] == "UNAUTHENTICATED"
    assert len(fake.submitted) == 1


@pytest.mark.parametrize("custom_id", ["has space", "x" * 65, "", "dot.ted"])
def test_anthropic_refuses_a_custom_id_outside_its_pattern(http, custom_id):
    with serve_batch("anthropic") as fake:
        answer = http.post(fake.url + "/messages/batches", headers=HEADERS["anthropic"], timeout=5, json={
            "requests": [{"custom_id": custom_id, "params": {"model": "m", "max_tokens": 1, "messages": []}}]})
        no_version = http.get(fake.url + "/messages/batches", headers={"x-api-key": API_KEY}, timeout=5)
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "invalid_request_error"
    assert "custom_id" in answer.json()["error"]["message"] and fake.submitted == []
    assert no_version.status_code == 400 and "anthropic-version" in no_version.json()["error"]["message"]


def test_openai_refuses_a_duplicate_custom_id_and_a_wrong_line(http):
    line = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "m", "messages": [{"role": "user", "content": "x"}]}}
    files = {"duplicate": [line, line], "wrong url": [{**line, "url": "/v1/embeddings"}], "not json": ["{oops"]}
    headers = HEADERS["openai"]
    with serve_batch("openai") as fake:
        answers = {}
        for name, rows in files.items():
            text = "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows)
            file = http.post(fake.url + "/files", headers=headers, data={"purpose": "batch"},
                             files={"file": ("in.jsonl", text.encode())}, timeout=5).json()
            answers[name] = http.post(fake.url + "/batches", headers=headers, timeout=5, json={
                "input_file_id": file["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"})
        window = http.post(fake.url + "/batches", headers=headers, timeout=5, json={
            "input_file_id": file["id"], "endpoint": "/v1/chat/completions", "completion_window": "1h"})
    assert {name: answer.status_code for name, answer in answers.items()} == dict.fromkeys(files, 400)
    error = answers["duplicate"].json()["error"]
    assert error["code"] == "duplicate_custom_id" and error["param"] == "custom_id" and "Line 2" in error["message"]
    assert error["type"] == "invalid_request_error" and window.status_code == 400 and fake.submitted == []


def test_anthropic_foreign_results_url_names_another_host_that_records_visitors(http):
    with serve_batch("anthropic", polls=0, foreign_results=True) as fake:
        batch, _ = poll(http, fake, submit(http, fake, ["a", "b"]))
        port = fake.foreign.server_address[1]
        assert batch["results_url"].startswith(f"http://localhost:{port}/v1/messages/batches/")
        assert fake.foreign_received == []
        own = http.get(f"{fake.url}/messages/batches/{batch['id']}/results", headers=HEADERS["anthropic"], timeout=5)
        followed = http.get(batch["results_url"].replace("localhost", "127.0.0.1"), headers=HEADERS["anthropic"],
                            timeout=5)
    assert len(own.text.splitlines()) == 2 and followed.text == own.text
    assert [r["headers"]["x-api-key"] for r in fake.foreign_received] == [API_KEY]  # what a careless client leaks


@pytest.mark.parametrize("provider", PROVIDERS)
def test_1800_requests_of_3_kb_go_through_quickly(http, provider):
    messages = [f"{i} " + "lorem ipsum " * 250 for i in range(1800)]
    started = time.monotonic()
    with serve_batch(provider, polls=0) as fake:
        found = results(http, fake, poll(http, fake, submit(http, fake, messages))[0])
    assert sorted(cid for cid, _, _ in found) == _ids(1800)
    assert all(text == edited(messages[int(cid[4:])]) for cid, _, text in found)
    assert time.monotonic() - started < 5


def test_gemini_accepts_camel_case_and_wants_a_display_name(http):
    request = {"request": {"contents": [{"parts": [{"text": "hi"}]}]}, "metadata": {"key": "k1", "extra": 7}}
    with serve_batch("gemini", polls=0) as fake:
        url, headers = fake.url + "/models/gemini-x:batchGenerateContent", HEADERS["gemini"]
        camel = http.post(url, headers=headers, timeout=5, json={"batch": {
            "displayName": "camel", "inputConfig": {"requests": {"requests": [request]}}}})
        nameless = http.post(url, headers=headers, timeout=5, json={"batch": {
            "inputConfig": {"requests": {"requests": [request]}}}})
        done, _ = poll(http, fake, camel.json()["name"])
    assert camel.status_code == 200 and nameless.status_code == 400
    assert nameless.json()["error"]["status"] == "INVALID_ARGUMENT"
    row = done["response"]["inlinedResponses"]["inlinedResponses"][0]
    assert row["metadata"] == {"key": "k1", "extra": 7} and done["metadata"]["output"] == {
        key: value for key, value in done["response"].items() if key != "@type"}
    assert done["metadata"]["batchStats"]["successfulRequestCount"] == "1"


def test_clients_killed_mid_upload_or_mid_download_leave_the_server_serving(http):
    with serve_batch("openai", polls=0) as fake:
        batch, _ = poll(http, fake, submit(http, fake, ["word " * 2000 + str(i) for i in range(200)]))
        address, key = fake.server_address, f"Bearer {API_KEY}".encode()
        with socket.create_connection(address, timeout=5) as raw:  # an upload cut short
            raw.sendall(b"POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: " + key +
                        b"\r\nContent-Length: 100000\r\n\r\npartial")
        with socket.create_connection(address, timeout=5) as raw:  # a download abandoned after its first bytes
            raw.sendall(f"GET /v1/files/{batch['output_file_id']}/content HTTP/1.1\r\nHost: x\r\n".encode() +
                        b"Authorization: " + key + b"\r\n\r\n")
            assert raw.recv(100).startswith(b"HTTP/1.1 200")
        again = http.get(f"{fake.url}/batches/{batch['id']}", headers=HEADERS["openai"], timeout=5)
    assert again.status_code == 200 and again.json()["status"] == "completed"
    assert any(r["path"] == "/v1/files" and r["body"] == b"partial" for r in fake.received)
