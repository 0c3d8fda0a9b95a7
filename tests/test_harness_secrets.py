"""No credential a harness's log holds reaches an imported row, on every route (issue 37): a bearer token a server
echoed in an error body (promptfoo quotes it whole; the fake server echoes the Authorization header it got), an
API key of this environment (OPENAI_API_KEY, LOCAL_API_KEY, any *_API_KEY) wherever the log quotes it, and a
user:password@ or ?api_key= in the server's URL the row records. The runner blanks its own key from every row;
an import, which knows no key, redacts these.
"""

from __future__ import annotations

import json
from pathlib import Path

import seam
from common.records import TraceRow, read

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "harness"
SECRET = "sk-live-SECRET-0123456789"  # what a server echoed after "Bearer"
ENV_KEY = "sk-env-KEY-abcdefghij0123"  # a key of this environment, quoted by a reply


def imported(tmp_path: Path, *logs, extra=()) -> tuple[bytes, dict[str, TraceRow]]:
    out = tmp_path / "out.jsonl"
    assert seam.main(["import", *map(str, logs), "--out", str(out), *extra]) == 0
    return out.read_bytes(), {row.id: row for _, row in read(out, TraceRow)}


def assert_clean(data: bytes) -> None:
    assert SECRET.encode() not in data and ENV_KEY.encode() not in data
    assert ENV_KEY[:12].encode() not in data  # nor a piece of it (the runner's redaction)


def test_promptfoo_an_echoed_bearer_token_and_a_key_of_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_GATEWAY_API_KEY", ENV_KEY)
    document = json.loads((FIXTURES / "promptfoo" / "out.json").read_text(encoding="utf-8")
                          .replace("Bearer undefined", f"Bearer {SECRET}"))
    clean = next(r for r in document["results"]["results"] if r["vars"]["id"] == "humaneval-001/clean")
    clean["response"]["output"] += f" (your key is {ENV_KEY})"
    log = tmp_path / "out.json"
    log.write_text(json.dumps(document), encoding="utf-8")
    data, rows = imported(tmp_path, log)
    assert_clean(data)
    failed = rows["humaneval-001/mitigation"]
    assert "credentials Bearer <redacted>" in failed.reason and "Bearer <redacted>" in failed.attempts[0].error
    assert rows["humaneval-001/clean"].output.endswith("(your key is <redacted>)")


def test_inspect_an_echoed_bearer_token_a_key_and_the_servers_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    text = (FIXTURES / "inspect.json").read_text(encoding="utf-8").replace("Bearer none", f"Bearer {SECRET}")
    document = json.loads(text)
    document["eval"]["model_base_url"] = f"http://me:{SECRET}@127.0.0.1:1/v1?api_key={ENV_KEY}"
    log = tmp_path / "inspect.json"
    log.write_text(json.dumps(document), encoding="utf-8")
    data, rows = imported(tmp_path, log)
    assert_clean(data)
    assert {row.request["url"] for row in rows.values()} == {"http://127.0.0.1:1/v1/chat/completions"}
    assert "Bearer <redacted>" in rows["humaneval-001/mitigation"].reason


def test_batch_an_echoed_authorization_header_and_a_key(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_API_KEY", ENV_KEY)
    assert seam.main(["export", "--to", "openai-batch", "--out", str(tmp_path), "--first", "1", "--model", "m"]) == 0
    ids = [json.loads(line)["custom_id"] for line in (tmp_path / "batch_input.jsonl").read_text().splitlines()]
    reply = {"status_code": 200, "body": {"id": "c", "object": "chat.completion", "created": 1767322800, "model": "m",
                                          "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                              "role": "assistant", "content": f"here: {ENV_KEY}"}}]}}
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"custom_id": ids[0], "response": reply, "error": None}) + "\n" + json.dumps(
        {"custom_id": ids[1], "response": None, "error": {"code": "invalid_request", "message":
                                                          f'bad header "Authorization: Bearer {SECRET}"'}}) + "\n",
                       encoding="utf-8")
    data, rows = imported(tmp_path, tmp_path / "batch_input.jsonl", results)
    assert_clean(data)
    assert rows[ids[1]].reason == 'batch error invalid_request: bad header "Authorization: Bearer <redacted>"'
    assert rows[ids[0]].output == "here: <redacted>"


def test_lmeval_a_key_in_a_reply_and_the_servers_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    (samples,) = (FIXTURES / "lmeval").glob("samples_seam_*.jsonl")
    results = samples.parent / samples.name.replace("samples_seam_", "results_").replace(".jsonl", ".json")
    lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    lines[0]["resps"] = [[lines[0]["resps"][0][0] + f" {ENV_KEY}"]]
    run = json.loads(results.read_text(encoding="utf-8"))
    run["config"]["model_args"]["base_url"] = f"http://u:{SECRET}@127.0.0.1:1/v1/chat/completions?key={SECRET}"
    (tmp_path / "run").mkdir()
    copy = tmp_path / "run" / samples.name
    copy.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (tmp_path / "run" / results.name).write_text(json.dumps(run), encoding="utf-8")
    data, rows = imported(tmp_path, copy, extra=["--conditions", str(FIXTURES / "lmeval" / "jinja.toml")])
    assert_clean(data)
    assert {row.request["harness"]["base_url"] for row in rows.values()} == {"http://127.0.0.1:1/v1/chat/completions"}


import pytest  # noqa: E402

from harness.rows import cut, scrubbed  # noqa: E402


@pytest.mark.parametrize("said", [
    "POST /v1beta/models/m:generateContent?key={} failed", "Incorrect API key provided: {}.",
    "map[Authorization:[Bearer {}] Accept:[*/*]]", "Ocp-Apim-Subscription-Key: {}", "access_token={}&state=1",
    "token: {}", "Bearer: {}", "api key: {}", '{{\\"Authorization\\": \\"Bearer {}\\"}}', "x-goog-api-key: {}"])
def test_the_ways_servers_quote_a_key_are_redacted(said):
    """Gemini's ?key=, OpenAI's own 401 wording, a Go server's header map, Azure's subscription key, tokens:
    each passed the first redaction (a second review)."""
    assert SECRET not in scrubbed(said.format(SECRET)) and "<redacted>" in scrubbed(said.format(SECRET))


def test_ordinary_words_are_left_alone():
    for text in ("the model said hello, no key here", "monkey=banana&turkey=1", "keyboard: mechanical"):
        assert scrubbed(text) == text


def test_an_error_is_redacted_before_it_is_cut(monkeypatch):
    """A key of this environment across the 1,000-character cut was left in part (cut first, redacted after:
    the runner does it the other way round)."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    for filler in range(975, 1000):
        kept = cut("API error: 401 " + "x" * filler + ENV_KEY + " tail")
        assert ENV_KEY[:8] not in kept, filler
