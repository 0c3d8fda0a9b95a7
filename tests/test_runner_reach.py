"""The providers a lab uses: custom headers (literal, or read from the environment and never written), query
parameters and the key's header (Azure OpenAI's deployment URL with `api-version` and `api-key`), checked in
the config, sent to the fake server, recorded without a secret."""

from __future__ import annotations

import json
import re

import pytest
from support.fakebatch import API_KEY as BATCH_KEY
from support.fakebatch import serve_batch
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests
from test_runner_secrets import assert_nowhere, written_files

import seam
from common.errors import UserError
from common.traces import read_final
from runner import providers
from runner.config import load_config
from runner.rows import request_record
from runner.run import run

GATEWAY = "gw-SEAM-GATEWAY-SECRET-4d7e1a90c3"  # a [headers_env] value: sent, never written
KEY = "sk-SEAM-AZURE-KEY-2b8f6e0d9a71"
GATEWAY_VARIABLE, KEY_VARIABLE = "SEAM_TEST_GATEWAY", "SEAM_TEST_AZURE_KEY"
LAB_HEADERS = {"HTTP-Referer": "https://lab.example/seam", "X-Title": "seam benchmark",
               "OpenAI-Organization": "org-lab123"}
OLD_RECORD = {"provider", "url", "model", "parameters", "max_tokens", "temperature", "timeout_s", "concurrency",
              "max_retries", "requests_per_minute", "api_key_env"}


def _config(tmp_path, server, provider="openai", **keys):
    path = tmp_path / "m.toml"
    path.write_text(toml_text(config_keys(server, provider, **keys)), encoding="utf-8")
    return path


def _azure(tmp_path, server, **keys):
    """Azure OpenAI's form: the deployment's URL, ?api-version=, the key in `api-key`."""
    return _config(tmp_path, server, base_url=f"{server.url}/openai/deployments/gpt-4o-lab",
                   api_key_env=KEY_VARIABLE, auth_header="api-key", query={"api-version": "2024-10-21"},
                   headers=LAB_HEADERS, headers_env={"X-Api-Gateway-Key": GATEWAY_VARIABLE}, **keys)


@pytest.fixture
def secrets(monkeypatch):
    monkeypatch.setenv(GATEWAY_VARIABLE, GATEWAY)
    monkeypatch.setenv(KEY_VARIABLE, KEY)


def test_headers_query_and_the_key_header_arrive_as_azure_expects(tmp_path, secrets):
    rows = make_requests(3)
    with serve() as server:
        config = load_config(_azure(tmp_path, server))
        summary = run(config, rows, tmp_path / "t.jsonl", log=None)
    assert summary.counts == {"ok": 3}
    for received in server.received:
        assert received["path"] == "/openai/deployments/gpt-4o-lab/chat/completions?api-version=2024-10-21"
        headers = {name.lower(): value for name, value in received["headers"].items()}
        assert headers["api-key"] == KEY and "authorization" not in headers  # not Bearer: Azure's own header
        assert headers["x-api-gateway-key"] == GATEWAY
        assert {name: headers[name.lower()] for name in LAB_HEADERS} == LAB_HEADERS


@pytest.mark.parametrize("provider", providers.NAMES)
def test_every_provider_sends_the_config_headers_and_query(tmp_path, secrets, provider):
    rows = make_requests(2)
    with serve() as server:
        config = load_config(_config(tmp_path, server, provider, headers={"X-Title": "seam"},
                                     headers_env={"X-Gateway-Token": GATEWAY_VARIABLE},
                                     query={"api-version": "v1", "tag": "a/b c"}))
        assert run(config, rows, tmp_path / "t.jsonl", log=None).counts == {"ok": 2}
    for received in server.received:
        assert received["path"].endswith("?api-version=v1&tag=a%2Fb%20c")
        assert received["headers"]["X-Title"] == "seam" and received["headers"]["X-Gateway-Token"] == GATEWAY
    row = next(iter(read_final(tmp_path / "t.jsonl").final.values()))
    assert row.request["url"].endswith("?api-version=v1&tag=a%2Fb%20c")  # what was sent, recorded
    assert row.request["headers"] == {"X-Title": "seam"}
    assert row.request["headers_env"] == {"X-Gateway-Token": GATEWAY_VARIABLE}  # the variable, never the value


def test_auth_header_authorization_sends_a_bearer_key(tmp_path, secrets):
    with serve() as server:
        config = load_config(_config(tmp_path, server, "anthropic", api_key_env=KEY_VARIABLE,
                                     auth_header="Authorization"))
        run(config, make_requests(1), tmp_path / "t.jsonl", log=None)
    headers = server.received[0]["headers"]
    assert headers["Authorization"] == f"Bearer {KEY}" and "x-api-key" not in {h.lower() for h in headers}


def test_no_secret_header_value_is_written_or_printed(tmp_path, secrets, capsys):
    """The gateway's secret and the key come back in a gateway's error body (every header listed) and in a
    reply; the run is resumed and dry-run: neither is in any file or anything printed."""
    rows = make_requests(4)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    script = {rows[0].message: ["fault-all", "ok"], rows[1].message: ["echo-all"], rows[2].message: ["fault-all"] * 2,
              rows[3].message: ["fault-all:u"] * 2}
    with serve(script) as server:
        config = _azure(tmp_path, server, concurrency=1, max_retries=1)
        base = ["run", str(config), "--requests", str(requests), "--out", str(out)]
        codes = [seam.main(base), seam.main(base + ["--retry-failed"]), seam.main(base[:4] + ["--dry-run"])]
    captured = capsys.readouterr()
    assert codes[:2] == [1, 0] and codes[2] == 0, captured.err
    # the secrets did travel and came back, so a leak was possible
    assert any(GATEWAY in received["headers"].get("X-Api-Gateway-Key", "") for received in server.received)
    trace = out.read_text()
    assert trace.count("<redacted>") >= 4 and "gateway error; headers" in trace
    for secret in (GATEWAY, KEY):
        assert_nowhere(secret, {**written_files(tmp_path), "stdout": captured.out.encode(),
                                "stderr": captured.err.encode()})
    printed = [json.loads(line) for line in captured.out.splitlines()]
    assert printed and all(line["headers"]["X-Api-Gateway-Key"] == f"${{{GATEWAY_VARIABLE}}}" and
                           line["headers"]["api-key"] == f"${{{KEY_VARIABLE}}}" and
                           line["url"].endswith("?api-version=2024-10-21") for line in printed)


def test_a_config_without_the_new_keys_records_the_request_as_before(tmp_path):
    with serve() as server:
        config = load_config(_config(tmp_path, server, api_key_env="X_KEY"))
    url, _, body = providers.build(providers.get("openai"), config, "hi")
    assert set(request_record(config, url, body)) == OLD_RECORD
    assert url == f"{server.url}/v1/chat/completions"


def test_the_batch_api_gets_the_headers_and_the_query_too(tmp_path, monkeypatch):
    monkeypatch.setenv("SEAM_BATCH_KEY", BATCH_KEY)
    monkeypatch.setenv(GATEWAY_VARIABLE, GATEWAY)
    rows = make_requests(2)
    with serve_batch("openai", polls=1) as fake:
        path = tmp_path / "m.toml"
        path.write_text(toml_text({"name": "b", "provider": "openai", "model": "m", "base_url": fake.url,
                                   "api_key_env": "SEAM_BATCH_KEY", "max_tokens": 64,
                                   "headers": {"X-Title": "seam"}, "headers_env": {"X-Gw": GATEWAY_VARIABLE},
                                   "query": {"api-version": "2024-10-21"}}), encoding="utf-8")
        from runner.batch.run import PollPolicy, run_batch

        summary = run_batch(load_config(path), rows, tmp_path / "t.jsonl", log=None,
                            poll=PollPolicy(first_s=0.01, max_s=0.05))
    assert summary.counts == {"ok": 2}
    assert fake.received and all("api-version=2024-10-21" in call["path"] and call["headers"]["X-Title"] == "seam"
                                 and call["headers"]["X-Gw"] == GATEWAY for call in fake.received)
    assert GATEWAY not in (tmp_path / "t.jsonl").read_text()


BASE = 'name = "m"\nprovider = "openai"\nmodel = "m"\napi_key_env = "K"\nmax_tokens = 5\n'
MISTAKES = [  # (TOML after BASE, the error expected: file, line, key)
    ('[headers]\n"X-Api-Key" = "sk-123"\n', r"m.toml:7: \[headers\] 'X-Api-Key' is named like a credential.*"
                                            r"\[headers_env\]"),
    ('[headers]\nAuthorization = "Bearer x"\n', r"m.toml:7: \[headers\] 'Authorization' may not be set: it "
                                                r"carries the key"),
    ('[headers]\n"Content-Type" = "text/plain"\n', r"m.toml:7: \[headers\] 'Content-Type' may not be set: the "
                                                   r"runner sets it"),
    ('[headers]\nHost = "evil.example"\n', r"m.toml:7: \[headers\] 'Host' may not be set: the HTTP library"),
    ('[headers]\n"X Title" = "a"\n', r"m.toml:7: \[headers\] 'X Title' is not an HTTP header name"),
    ('[headers]\nX-Title = "line\\nbreak"\n', r"m.toml:7: \[headers\] 'X-Title' must be printable ASCII"),
    ('[headers]\nX-Title = 3\n', r"m.toml:7: \[headers\] 'X-Title' must be a string, got an integer"),
    ('[headers]\nX-Title = "a"\n[headers_env]\nx-title = "T"\n', r"m.toml:9: \[headers_env\] 'x-title' is set "
                                                                  r"twice"),
    ('[headers_env]\nX-Gw = "not a variable"\n', r"m.toml:7: \[headers_env\] 'X-Gw' must be the name of an "
                                                 r"environment variable"),
    ('[query]\nkey = "AIza123"\n', r"m.toml:7: \[query\] 'key' is named like a credential"),
    ('[query]\n"api-version" = 2024\n', r"m.toml:7: \[query\] 'api-version' must be a string"),
    ('auth_header = "api key"\n', r"m.toml:6: key 'auth_header' must be an HTTP header name"),
    ('auth_header = "Content-Type"\n', r"m.toml:6: key 'auth_header' may not be 'Content-Type': the runner sets"),
]


@pytest.mark.parametrize(("text", "message"), MISTAKES)
def test_each_mistake_is_one_line_naming_file_line_and_key(tmp_path, text, message):
    path = tmp_path / "m.toml"
    path.write_text(BASE + text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        load_config(path)


def test_auth_header_needs_a_key_and_a_base_url_query_points_at_query(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace('api_key_env = "K"\n', "") + 'auth_header = "api-key"\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"m.toml:5: key 'auth_header' names the header .* no api_key_env"):
        load_config(path)
    path.write_text(BASE + 'base_url = "https://r.openai.azure.com/openai/deployments/d?api-version=1"\n')
    with pytest.raises(UserError, match=r"query parameters go in \[query\]"):
        load_config(path)


@pytest.mark.parametrize(("value", "problem"), [(None, "which is not set"), ("5hrt!", "only 5 characters"),
                                                 ("gw-secret-with\nnewline", "a line feed"),
                                                 (" gw-secret-padded", "a space at its start")])
def test_a_headers_env_value_that_cannot_be_sent_or_redacted_stops_before_sending(tmp_path, monkeypatch, capsys,
                                                                                  value, problem):
    if value is None:
        monkeypatch.delenv(GATEWAY_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(GATEWAY_VARIABLE, value)
    rows = make_requests(1)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    with serve() as server:
        config = _config(tmp_path, server, headers_env={"X-Gw": GATEWAY_VARIABLE})
        code = seam.main(["run", str(config), "--requests", str(requests), "--out", str(tmp_path / "t.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and server.received == []
    (line,) = err.splitlines()
    assert re.match(rf"seam.py run: error: {re.escape(str(config))}: \[headers_env\] X-Gw", line), line
    assert GATEWAY_VARIABLE in line and problem in line
    assert value is None or value.strip() not in line


def test_the_fake_routes_a_path_with_a_query_and_lists_the_headers_it_received():
    import requests

    with serve({"hi": ["fault-all", "echo-all"]}) as server:
        url = server.url + "/openai/deployments/d/chat/completions?api-version=2024-10-21"
        chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        fault = requests.post(url, json=chat, headers={"X-Gw": "value-1"}, timeout=5)
        echo = requests.post(url, json=chat, headers={"X-Gw": "value-2"}, timeout=5)
    assert fault.status_code == 502 and "X-Gw: value-1" in fault.json()["error"]["message"]
    assert "X-Gw: value-2" in echo.json()["choices"][0]["message"]["content"]
    assert server.received[0]["path"].endswith("?api-version=2024-10-21") and server.received[0]["kind"] == "openai"


def test_runner_md_documents_every_config_key():
    from pathlib import Path

    from runner.config import KEYS

    text = (Path(__file__).resolve().parents[1] / "docs" / "RUNNER.md").read_text(encoding="utf-8")
    table = text[text.index("\n## Model config"):text.index("\n## Gateways and hosted deployments")]
    assert [key for key in KEYS if f"\n| `{key}` |" not in table] == []
