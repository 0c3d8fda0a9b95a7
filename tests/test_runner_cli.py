"""`seam.py run` from the command line: selection, --dry-run, exit codes, clear input errors."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

import seam
from common import jsonl
from common.traces import read_final
from runner.ask import canonical_body

CONDITIONS = ("clean", "newline", "blank")


@pytest.fixture()
def files(tmp_path):
    rows = make_requests(12, conditions=CONDITIONS)  # 4 clusters x 3 conditions
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    return rows, requests, tmp_path / "traces.jsonl"


def config_file(tmp_path, server, provider="openai", **keys):
    path = tmp_path / f"{provider}.toml"
    path.write_text(toml_text(config_keys(server, provider, **keys)))
    return path


def test_run_writes_traces_and_reports_progress(tmp_path, files, capsys):
    rows, requests, out = files
    with serve() as server:
        code = seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(requests),
                          "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    assert "run: 12/12 done · ok 12 · unusable 0 · failed 0 · " in err and "req/min · ETA" in err
    assert f"run: wrote 12 rows to {out} (ok 12, unusable 0, failed 0); 0 already done" in err
    assert len(read_final(out).final) == 12


def test_selection_by_condition_and_cluster_count(tmp_path, files):
    rows, requests, out = files
    with serve() as server:
        code = seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(requests),
                          "--out", str(out), "--only", "clean,blank", "--first", "2"])
    assert code == 0
    assert sorted(read_final(out).final) == ["synthetic-000/blank", "synthetic-000/clean",
                                              "synthetic-001/blank", "synthetic-001/clean"]


def test_dry_run_prints_exactly_what_a_run_sends_and_sends_nothing(tmp_path, files, capsys, monkeypatch):
    rows, requests, out = files
    monkeypatch.delenv("SEAM_TEST_KEY", raising=False)  # a dry run never reads the key
    with serve() as server:
        config = config_file(tmp_path, server, "anthropic", api_key_env="SEAM_TEST_KEY")
        assert seam.main(["run", str(config), "--requests", str(requests), "--dry-run"]) == 0
        assert server.received == []
        printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        monkeypatch.setenv("SEAM_TEST_KEY", "sk-test-abcdefgh")
        assert seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)]) == 0
    assert [p["id"] for p in printed] == [row.id for row in rows]
    assert all(p["headers"]["x-api-key"] == "${SEAM_TEST_KEY}" for p in printed)
    sent = {r["raw"]: r for r in server.received}
    for request in printed:
        received = sent[canonical_body(request["body"])]  # byte for byte what went over the wire
        assert server.url + received["path"] == request["url"]
        assert received["headers"]["anthropic-version"] == request["headers"]["anthropic-version"]


def test_dry_run_with_out_shows_only_what_is_left(tmp_path, files, capsys):
    rows, requests, out = files
    with serve() as server:
        config = str(config_file(tmp_path, server))
        seam.main(["run", config, "--requests", str(requests), "--out", str(out), "--first", "3"])
        capsys.readouterr()
        seam.main(["run", config, "--requests", str(requests), "--out", str(out), "--dry-run"])
    printed = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
    assert printed == [row.id for row in rows[9:]]


def test_dry_run_with_move_torn_shows_what_the_run_would_ask_after_moving_and_moves_nothing(tmp_path, files, capsys):
    """--move-torn with --dry-run: the requests the run would send once it moved the torn line aside (that line's
    own request among them), said so, and the file untouched (it used to refuse, telling to add --move-torn)."""
    rows, requests, out = files
    with serve() as server:
        config = str(config_file(tmp_path, server))
        seam.main(["run", config, "--requests", str(requests), "--out", str(out), "--first", "3"])
        torn = out.read_bytes()[:-40]  # the last row cut short, as a crash mid-write leaves it
        out.write_bytes(torn)
        capsys.readouterr()
        dry = ["run", config, "--requests", str(requests), "--out", str(out), "--dry-run"]
        assert seam.main(dry) == 2
        assert "--move-torn" in capsys.readouterr().err
        assert seam.main([*dry, "--move-torn"]) == 0
        assert server.received[9:] == []
    captured = capsys.readouterr()
    assert [json.loads(line)["id"] for line in captured.out.splitlines()] == [row.id for row in rows[8:]]
    assert f"{out}:9: the last line is torn" in captured.err and "nothing is moved now" in captured.err
    assert out.read_bytes() == torn and [p.name for p in tmp_path.glob("traces.jsonl*")] == ["traces.jsonl"]


def test_exit_codes_failed_is_1_and_stopped_is_2(tmp_path, files, capsys, monkeypatch):
    rows, requests, out = files
    monkeypatch.setenv("SEAM_TEST_KEY", "sk-test-abcdefgh")
    with serve({rows[0].message: ["400"]}) as server:
        assert seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(requests),
                          "--out", str(out)]) == 1
    assert "rerun with --retry-failed" in capsys.readouterr().err
    with serve({row.message: ["401"] for row in rows}) as server:
        config = config_file(tmp_path, server, "gemini", api_key_env="SEAM_TEST_KEY", concurrency=1)
        code = seam.main(["run", str(config), "--requests", str(requests), "--out",
                          str(tmp_path / "g.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert "seam.py run: error: run stopped early" in err and "SEAM_TEST_KEY" in err
    assert len(server.received) == 1


@pytest.mark.parametrize(("args", "expected"), [
    (["--out", "{tmp}/t.jsonl", "--requests", "{tmp}/bad.jsonl"],
     r"bad\.jsonl:2: field 'message' is missing, expected a string"),
    (["--out", "{tmp}/t.jsonl", "--requests", "{tmp}/odd.jsonl"],
     r"odd\.jsonl:1: condition 'sideways' is not defined \(built-in: clean, newline, blank, boundary, mitigation, "
     r"native\); pass --conditions FILE"),
    (["--dry-run", "--requests", "{tmp}/requests.jsonl", "--only", "sideways"],
     r"condition 'sideways' is not defined"),
    (["--requests", "{tmp}/requests.jsonl"], r"--out TRACES\.jsonl is required"),
    (["--dry-run", "--requests", "{tmp}/requests.jsonl", "--only", "native"],
     r"requests\.jsonl: no rows with condition\(s\) native; the file has blank, clean, newline"),
    (["--dry-run", "--requests", "{tmp}/requests.jsonl", "--sources", "austen"],
     r"requests\.jsonl: no rows from source\(s\) austen"),
    (["--dry-run", "--requests", "{tmp}/missing.jsonl"], r"missing\.jsonl: no such file"),
])
def test_input_mistakes_exit_2_naming_file_and_line(tmp_path, files, capsys, args, expected):
    rows, requests, out = files
    bad = [rows[0].to_row(), {key: value for key, value in rows[1].to_row().items() if key != "message"}]
    jsonl.write(tmp_path / "bad.jsonl", bad)
    jsonl.write(tmp_path / "odd.jsonl", [dict(rows[1].to_row(), condition="sideways", id="synthetic-000/sideways")])
    with serve() as server:
        config = config_file(tmp_path, server)
        code = seam.main(["run", str(config), *[a.format(tmp=tmp_path) for a in args]])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("seam.py run: error: "), err
    assert re.search(expected, err), err
    assert server.received == []


def test_a_request_id_twice_in_a_file_names_both_lines(tmp_path, files, capsys):
    rows, _, out = files
    write_requests(tmp_path / "dup.jsonl", [rows[0], rows[1], rows[0]])
    with serve() as server:
        code = seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "dup.jsonl"),
                          "--out", str(out)])
    assert code == 2 and server.received == []
    assert re.search(r"dup\.jsonl:3: request id 'synthetic-000/clean' appears twice \(first at line 1\)",
                     capsys.readouterr().err)


def test_bad_config_exits_2_with_file_and_line(tmp_path, files, capsys):
    _, requests, _ = files
    config = tmp_path / "m.toml"
    config.write_text('name = "x"\nprovider = "openai"\nmodel = "m"\nmax_tokens = "many"\n')
    assert seam.main(["run", str(config), "--requests", str(requests), "--dry-run"]) == 2
    assert "m.toml:4: key 'max_tokens' must be an integer >= 1" in capsys.readouterr().err


def test_without_requests_the_benchmark_is_rendered_with_the_filters(tmp_path, monkeypatch, capsys):
    from benchmark import dataset

    calls = []

    def fake_requests(**filters):
        calls.append(filters)
        return make_requests(2)

    monkeypatch.setattr(dataset, "requests", fake_requests)
    with serve() as server:
        code = seam.main(["run", str(config_file(tmp_path, server)), "--dry-run", "--sources", "austen,pyfaq",
                          "--only", "clean", "--first", "3"])
    defined = calls[0].pop("defined")
    assert calls[0].pop("replies") is None  # no --replies
    assert code == 0 and calls == [{"sources": ["austen", "pyfaq"], "conditions": ["clean"], "cluster_ids": None,
                                    "limit": 3}]
    assert defined.names == ("clean", "newline", "blank", "boundary", "mitigation", "native")
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_selection_by_cluster_id_from_the_benchmark_and_from_a_request_file(tmp_path, files, capsys):
    """run selects as prompts does: --cluster-ids (a comma list) and --first N (a count), on either input."""
    rows, requests, out = files
    with serve() as server:
        config = str(config_file(tmp_path, server))
        assert seam.main(["run", config, "--dry-run", "--cluster-ids", "austen-007,humaneval-011",
                          "--only", "clean,blank"]) == 0
        assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [
            "humaneval-011/clean", "humaneval-011/blank", "austen-007/clean", "austen-007/blank"]
        assert seam.main(["run", config, "--dry-run", "--requests", str(requests),
                          "--cluster-ids", "synthetic-002,synthetic-001", "--first", "1"]) == 0
        assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [
            "synthetic-001/clean", "synthetic-001/newline", "synthetic-001/blank"]
        assert seam.main(["run", config, "--dry-run", "--requests", str(requests),
                          "--cluster-ids", "synthetic-001,nowhere-001"]) == 2
        assert "requests.jsonl: no rows of cluster(s) 'nowhere-001'" in capsys.readouterr().err
        assert server.received == []


def test_one_request_or_row_is_counted_in_the_singular(tmp_path, files, capsys):
    rows, _, out = files
    write_requests(tmp_path / "one.jsonl", rows[:1])
    with serve() as server:
        config = str(config_file(tmp_path, server))
        assert seam.main(["run", config, "--requests", str(tmp_path / "one.jsonl"), "--dry-run"]) == 0
        assert capsys.readouterr().err.endswith("run: dry run, 1 request printed, none sent\n")
        assert seam.main(["run", config, "--requests", str(tmp_path / "one.jsonl"), "--out", str(out)]) == 0
        assert f"run: wrote 1 row to {out} (ok 1, unusable 0, failed 0); 0 already done" in capsys.readouterr().err


BAD_CONFIGS = [  # (TOML lines added to a good config, what the one line of error says)
    ("timeout_s = 1e10", r"m\.toml:\d+: key 'timeout_s' must be .* at most 86400"),
    ("timeout_s = 9223372036854775807", r"m\.toml:\d+: key 'timeout_s' must be .* at most 86400"),
    ("requests_per_minute = 1e-9", r"m\.toml:\d+: key 'requests_per_minute' must be a number >= 1/3600"),
    ("[params]\nwhen = 1979-05-27T07:32:00Z", r"m\.toml:\d+: \[params\] key 'when' is a TOML date/time"),
    ("[params]\nlogit_bias = {a = nan}", r"m\.toml:\d+: \[params\] key 'logit_bias\.a' is nan"),
    ('base_url = "http://[::1"', r"m\.toml:\d+: key 'base_url' must be an http:// or https:// URL with a host"),
    ('base_url = "http://127.0.0.1:99999/v1"', r"m\.toml:\d+: key 'base_url' .* port"),
    ('base_url = "http://127.0.0.1:9/v1\\n"', r"m\.toml:\d+: key 'base_url' must not contain white space"),
]


@pytest.mark.parametrize(("lines", "expected"), BAD_CONFIGS)
@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_a_bad_config_is_one_line_before_anything_is_sent(tmp_path, files, capsys, lines, expected, dry_run):
    _, requests, out = files
    with serve() as server:
        keys = config_keys(server, "openai", timeout_s=None, max_retries=1)
        if "base_url" in lines:
            del keys["base_url"]
        config = tmp_path / "m.toml"
        table = "\n".join(line for line in lines.splitlines())
        config.write_text(toml_text(keys) + table + "\n")
        args = ["--dry-run"] if dry_run else ["--out", str(out)]
        code = seam.main(["run", str(config), "--requests", str(requests), *args])
        assert server.received == []
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("seam.py run: error: ") and re.search(expected, line), line


def test_a_lone_surrogate_in_a_request_file_is_one_line(tmp_path, files, capsys):
    rows, _, out = files
    bad = tmp_path / "bad.jsonl"
    # written as the escape \udc80, which JSON allows and UTF-8 cannot carry
    bad.write_text(jsonl.dumps(rows[0].to_row()) + jsonl.dumps(rows[1].to_row()).replace("btw lunch", "btw \\udc80"),
                   encoding="utf-8")
    with serve() as server:
        codes = [seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(bad), *args])
                 for args in (["--out", str(out)], ["--dry-run"])]
        assert server.received == []
    captured = capsys.readouterr()
    assert codes == [2, 2] and captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    assert re.search(r"bad\.jsonl:2: field 'message' holds a lone surrogate \(U\+DC80 at character \d+\), which "
                     r"UTF-8 cannot carry", lines[0]), lines[0]


def test_a_huge_id_is_quoted_cut_short(tmp_path, files, capsys):
    rows, _, out = files
    cluster = "c" * 100_000
    huge = [dataclasses.replace(row, id=f"{cluster}/{row.condition}", cluster=cluster) for row in rows[:2]]
    write_requests(tmp_path / "dup.jsonl", [huge[0], huge[1], huge[0]])
    with serve() as server:
        code = seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "dup.jsonl"),
                          "--out", str(out)])
        assert code == 2
        write_requests(tmp_path / "ok.jsonl", huge)
        assert seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "ok.jsonl"),
                          "--out", str(out)]) == 0
        changed = [dataclasses.replace(huge[0], message=huge[0].message + "!"), huge[1]]
        write_requests(tmp_path / "changed.jsonl", changed)
        assert seam.main(["run", str(config_file(tmp_path, server)), "--requests", str(tmp_path / "changed.jsonl"),
                          "--out", str(out)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 2
    assert "dup.jsonl:3: request id 'cccc" in errors[0] and "appears twice (first at line 1)" in errors[0]
    assert "was run with message_sha256" in errors[1]
    assert all(len(line) < 500 and "(100,008 characters)" in line for line in errors), [len(e) for e in errors]
