"""The API key is sent, but never written: not to traces, torn files, stdout, stderr or --dry-run output.

A canary key is planted and every file a run wrote, and everything it printed,
is searched for it in each form it could take there: as is, JSON-escaped once,
twice or three times, as \\uXXXX escapes (either case), as Python's repr
escapes it, and its first and last 12 characters in each of those forms (a
key cut in half by a truncated error body still leaks). A server that cuts the
key in two across two fields of a reply leaves no run of 12 of its characters.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re

import pytest
from support.fakeserver import config_keys, serve, toml_text, write_config
from support.samples import make_requests, trace_row, write_requests

import seam
from common.errors import UserError
from common.records import TraceRow
from common.traces import read_final
from runner import providers
from runner.config import load_config
from runner.run import run

KEY = "sk-SEAM-SECRET-7f3a9c1e5b2d"
QUOTED_KEY = 'sk-SEAM-"SECRET"\\7f3a9c1e5b2d/x'  # a key with characters JSON must escape
VARIABLE = "SEAM_SECRET_KEY"
ATTEMPT = {"started_at": "2026-01-02T03:04:05.678Z", "latency_s": 0.5, "http_status": 500, "error": None,
           "retry_after": None, "retry_wait_s": None}


def forms(key: str) -> set[str]:
    """Every way `key`, or its first or last 12 characters, could be spelled in a file or message."""
    found = set()
    for piece in (key, key[:12], key[-12:]):
        unicode = "".join(f"\\u{ord(c):04x}" for c in piece)
        for spelling in (piece, unicode, unicode.upper().replace("\\U", "\\u")):
            escaped = spelling
            found.update({spelling, json.dumps(spelling)[1:-1], repr(spelling)[1:-1]})
            for _ in range(3):
                escaped = json.dumps(escaped, ensure_ascii=False)[1:-1]
                found.add(escaped)
    return found


def assert_nowhere(key: str, texts: dict[str, bytes]) -> None:
    for name, data in texts.items():
        for form in forms(key):
            assert form.encode("utf-8", "surrogatepass") not in data, (name, form)


def written_files(tmp_path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in sorted(tmp_path.rglob("*")) if path.is_file()}


def body_padding(provider: str) -> int:
    """Filler that puts the key's first character at offset 978 of the error body the fake sends,
    so that a cut at 1,000 characters would keep its first 22 characters."""
    before = len('{"error": {"message": "fault 400; ') + len("credentials ")
    before += len("Bearer ") if provider == "openai" else 0
    return 978 - before


@pytest.mark.parametrize("key", [KEY, QUOTED_KEY], ids=["plain", "quoted"])
@pytest.mark.parametrize("provider", providers.NAMES)
def test_no_file_or_output_of_a_run_contains_the_key(tmp_path, monkeypatch, capsys, provider, key):
    monkeypatch.setenv(VARIABLE, key)
    rows = make_requests(7)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    # error bodies from this server echo the credentials they received, and its model repeats them
    script = {rows[0].message: ["500", "ok"], rows[1].message: ["400"], rows[2].message: ["401"],
              rows[3].message: ["echo"],  # in a 2xx body: JSON-escaped there, then again in the trace
              rows[4].message: ["500:u", "echo-u"],  # as \uXXXX escapes, in an error body and in a reply
              rows[5].message: [f"400:{body_padding(provider)}"],  # straddling the 1,000-character cut
              rows[6].message: ["429:0", "echo"]}
    with serve(script) as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, provider, api_key_env=VARIABLE,
                                                concurrency=1, max_retries=1)))
        base = ["run", str(config), "--requests", str(requests), "--out", str(out)]
        codes = [seam.main(base), seam.main(base + ["--retry-failed"]), seam.main(base[:4] + ["--dry-run"])]
        with open(out, "ab") as f:  # a crash mid-write, then a resume that moves the torn bytes aside
            f.write(b'{"id": "torn')
        codes.append(seam.main(base + ["--retry-failed", "--move-torn"]))
    captured = capsys.readouterr()
    assert codes[0] == 2 and VARIABLE in captured.err  # the 401 stopped the first run
    # the key did travel, and came back in error bodies and replies, so a leak was possible
    assert any(key in value for received in server.received for value in received["headers"].values())
    assert {"echo", "echo-u", "500:u"} <= {step for steps in script.values() for step in steps}
    final = read_final(out).final
    assert sorted(final) == sorted(row.id for row in rows) and {r.status for r in final.values()} == {"ok"}
    written = written_files(tmp_path)
    assert any(".torn-" in name for name in written)
    trace = out.read_text()
    assert trace.count("<redacted>") >= 5  # the 500, 400, 401, echo, \u echoes, padded 400 ...
    assert re.search(r"EDITED<[^>]*> credentials (Bearer )?<redacted>", trace)  # the echoing reply is kept
    assert_nowhere(key, {**written, "stdout": captured.out.encode(), "stderr": captured.err.encode()})
    assert f"${{{VARIABLE}}}" in captured.out  # --dry-run shows where the key goes, not the key


@pytest.mark.parametrize("key", [KEY + "\r", KEY[:10] + "\n" + KEY[10:], KEY + "\u20ac", KEY + "\t",
                                 "\u00e9" + KEY, " " + KEY],
                         ids=["carriage-return", "line-feed", "non-latin-1", "tab", "non-ascii", "space"])
def test_a_key_no_http_header_can_carry_is_refused_before_anything_is_sent(tmp_path, monkeypatch, capsys, key):
    monkeypatch.setenv(VARIABLE, key)
    rows = make_requests(2)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    with serve() as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, "openai", api_key_env=VARIABLE, max_retries=2)))
        code = seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and server.received == []
    (line,) = captured.err.splitlines()  # one line: no traceback, no retries
    assert line.startswith(f"seam.py run: error: {config}: ") and VARIABLE in line
    assert "printable ASCII" in line
    assert not out.exists()
    assert_nowhere(key.strip(), {**written_files(tmp_path), "stdout": captured.out.encode(),
                                 "stderr": captured.err.encode()})


PASSWORD = "pw-SEAM-CANARY-0123456789"


def test_credentials_in_base_url_are_refused_without_showing_them(tmp_path, capsys):
    rows = make_requests(2)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    with serve() as server:
        config = tmp_path / "m.toml"
        url = server.url.replace("http://", f"http://seam:{PASSWORD}@") + "/v1"
        config.write_text(toml_text(config_keys(server, "openai", base_url=url)))
        codes = [seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)]),
                 seam.main(["run", str(config), "--requests", str(requests), "--dry-run"])]
    captured = capsys.readouterr()
    assert codes == [2, 2] and server.received == []
    assert all(f"{config}:4: key 'base_url' must not hold credentials" in line
               for line in captured.err.splitlines())
    written = {name: data for name, data in written_files(tmp_path).items() if name != str(config)}
    assert_nowhere(PASSWORD, {**written, "stdout": captured.out.encode(), "stderr": captured.err.encode()})
    with pytest.raises(UserError) as refused:
        load_config(config)
    assert PASSWORD not in str(refused.value) and "<credentials>@127.0.0.1" in str(refused.value)


def test_recorded_urls_never_carry_credentials():
    from runner.rows import public_url

    assert public_url(f"https://seam:{PASSWORD}@example.test:8443/v1/x") == "https://example.test:8443/v1/x"
    assert public_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert public_url("https://api.openai.com/v1/chat/completions") == "https://api.openai.com/v1/chat/completions"


def test_a_row_whose_dump_would_still_spell_the_key_withholds_the_reply():
    from runner.rows import trace_line

    digits = "1234567890123456"  # a "key" the reply can spell as a number, which no string redaction sees
    earlier = {key: value for key, value in trace_row(usage={"tokens": int(digits)}).items() if key != "previous"}
    row = TraceRow.from_row(trace_row(output="fine", usage={"tokens": int(digits)}, previous=[earlier],
                                      attempts=[dict(ATTEMPT, error=f"HTTP 500: {digits}")]), "row")
    line = trace_line(row, digits)
    assert digits not in line
    written = TraceRow.from_row(json.loads(line), "line")
    assert written.status == "unusable" and "could not be redacted in place" in written.reason
    (old,) = written.previous
    assert old["usage"] is None and old["status"] == "unusable" and "previous" not in old
    assert (written.output, written.usage, written.response) == (None, None, None)
    assert written.attempts[0].error == "<redacted>"


def test_a_key_inside_what_every_row_records_is_refused_before_anything_is_sent(tmp_path, monkeypatch):
    monkeypatch.setenv(VARIABLE, KEY)
    rows = [dataclasses.replace(row, id=f"c-{KEY}/{row.condition}", cluster=f"c-{KEY}") for row in make_requests(2)]
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, api_key_env=VARIABLE)
        with pytest.raises(UserError, match=r"the API key appears in request 'c-<redacted>/clean'"):
            run(config, rows, tmp_path / "t.jsonl", log=io.StringIO())
        assert server.received == []
    assert not (tmp_path / "t.jsonl").exists()


def test_a_lone_surrogate_outside_the_reply_is_replaced_and_said():
    from runner.rows import trace_line

    row = TraceRow.from_row(trace_row(status="failed", output=None, reason="gave up",
                                      attempts=[dict(ATTEMPT, error="connection error: \udc80")]), "row")
    written = json.loads(trace_line(row, KEY).encode("utf-8"))
    assert written["status"] == "failed" and written["attempts"][0]["error"] == "connection error: \ufffd"
    assert written["reason"] == ("gave up; the row held 1 lone surrogate escape(s), which are not Unicode text (the "
                                 "first in row.attempts[0].error); recorded as U+FFFD")


# --- a key cut into pieces (issue 13, rerun) ------------------------------------------------------------------

LONG_KEY = "sk-CANARY-7f3Q9zX1pL2mN8vB4cR6tY0w"  # 34 characters: halves of 17
LONG_QUOTED_KEY = 'sk-CAN"ARY\\/5kT8pQ2wE9rY4uI7oP1aS3d'


def spellings(piece: str) -> set[str]:
    """`piece` as is, JSON-escaped once or twice, and as \\uXXXX escapes (either case)."""
    unicode = "".join(f"\\u{ord(c):04x}" for c in piece)
    found = {piece, unicode, unicode.upper().replace("\\U", "\\u")}
    for spelling in list(found):
        once = json.dumps(spelling, ensure_ascii=False)[1:-1]
        found.update({once, json.dumps(once, ensure_ascii=False)[1:-1]})
    return found


def assert_no_run_of(key: str, length: int, texts: dict[str, bytes]) -> None:
    """No `length` consecutive characters of the key, in any of those spellings, anywhere in `texts`."""
    windows = {key[i:i + length] for i in range(len(key) - length + 1)}
    forms = {form.encode("utf-8", "surrogatepass") for window in windows for form in spellings(window)}
    for name, data in texts.items():
        for form in forms:
            assert form not in data, (name, form)


@pytest.mark.parametrize("key", [LONG_KEY, LONG_QUOTED_KEY], ids=["plain", "quoted"])
@pytest.mark.parametrize("provider", providers.NAMES)
def test_a_key_cut_in_two_leaves_no_half_in_any_file(tmp_path, monkeypatch, capsys, provider, key):
    monkeypatch.setenv(VARIABLE, key)
    rows = make_requests(3)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    # the first half of the key ends the output, the second half is in another field of the reply
    script = {rows[0].message: ["split"], rows[1].message: ["split-u"], rows[2].message: ["500", "split"]}
    with serve(script) as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, provider, api_key_env=VARIABLE, max_retries=1)))
        assert seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)]) == 0
    assert seam.main(["score", str(out), "--requests", str(requests), "--out", str(tmp_path / "labels.jsonl"),
                      "--no-nli"]) == 0
    captured = capsys.readouterr()
    final = read_final(out).final
    assert {row.status for row in final.values()} == {"ok"}
    half = len(key) // 2
    for row in final.values():  # the edit is kept, the half of the key after it is not
        assert row.output.startswith("EDITED<") and row.output.endswith("><redacted>"), row.output
    assert_no_run_of(key, 12, {**written_files(tmp_path), "stdout": captured.out.encode(),
                               "stderr": captured.err.encode()})
    assert any(key[:half] in value or key[half:] in value for received in server.received
               for value in received["headers"].values())  # the halves were the key's


def test_ordinary_text_is_unchanged_by_the_redaction_of_pieces():
    from pathlib import Path

    from common import jsonl
    from runner.apikey import redact_value

    released = Path(__file__).resolve().parents[1] / "data" / "traces" / "smollm2-135m.jsonl"
    for key in (LONG_KEY, LONG_QUOTED_KEY, KEY, "sk-proj-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY"):
        for _, row in jsonl.read(released):
            assert redact_value(row, key) == row


def test_a_run_of_the_key_is_redacted_from_its_piece_length_on_and_in_linear_time():
    import time

    from runner.apikey import leaks, piece_length, redact

    assert [piece_length("k" * size) for size in (8, 16, 20, 24, 34, 200)] == [8, 8, 10, 12, 12, 12]
    key = LONG_KEY
    assert redact(f"a {key[5:17]} b", key) == "a <redacted> b"  # 12 characters
    assert redact(f"a {key[5:16]} b", key) == f"a {key[5:16]} b" and not leaks(f"a {key[5:16]} b", key)  # 11
    escaped = "".join(f"\\u{ord(c):04X}" for c in key[20:]) + "\\n" + json.dumps(key[:13])[1:-1]
    assert redact(escaped, key) == "<redacted>\\n<redacted>"
    assert redact(f"{key[:12]}\\\\{key[12:24]}", key) == "<redacted>"  # backslashes inside a run are spelling
    for text, pattern_key in [("a" * 1_000_000, "a" * 40), (key[:20] * 50_000, key), ("\\u0061" * 200_000, "a" * 40)]:
        started = time.perf_counter()
        assert redact(text, pattern_key).count("<redacted>") >= 1
        assert time.perf_counter() - started < 5, (pattern_key[:8], len(text))
