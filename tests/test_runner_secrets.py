"""The API key is sent, but never written: not to traces, torn files, stdout, stderr or --dry-run output."""

from __future__ import annotations

import pytest
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

import seam
from runner import providers

KEY = "sk-SEAM-SECRET-7f3a9c1e5b2d"


@pytest.mark.parametrize("provider", providers.NAMES)
def test_no_file_or_output_of_a_run_contains_the_key(tmp_path, monkeypatch, capsys, provider):
    monkeypatch.setenv("SEAM_SECRET_KEY", KEY)
    rows = make_requests(6)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    # error bodies from this server echo the credentials they received
    script = {rows[0].message: ["500", "ok"], rows[1].message: ["400"], rows[2].message: ["401"]}
    with serve(script) as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, provider, api_key_env="SEAM_SECRET_KEY",
                                                concurrency=1, max_retries=1)))
        base = ["run", str(config), "--requests", str(requests), "--out", str(out)]
        codes = [seam.main(base), seam.main(base + ["--retry-failed"]), seam.main(base[:4] + ["--dry-run"])]
        with open(out, "ab") as f:  # a crash mid-write, then a resume that moves the torn bytes aside
            f.write(b'{"id": "torn')
        codes.append(seam.main(base + ["--retry-failed", "--move-torn"]))
    captured = capsys.readouterr()
    assert codes[0] == 2 and "SEAM_SECRET_KEY" in captured.err  # the 401 stopped the first run
    # the key did travel, and came back in error bodies, so a leak was possible
    assert any(KEY in str(received["headers"]) for received in server.received)
    written = sorted(tmp_path.rglob("*"))
    assert any(path.name.startswith("traces.jsonl.torn-") for path in written)
    assert "<redacted>" in out.read_text()
    for path in written:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in captured.out and KEY not in captured.err
    assert "${SEAM_SECRET_KEY}" in captured.out  # --dry-run shows where the key goes, not the key
