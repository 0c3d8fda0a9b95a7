"""scripts/shards.py: one model's requests split over several runners (each its own file), joined back into one.

The end-to-end test runs the real runner on each shard against the fake server, stops one shard midway and
changes N, and checks that the joined trace holds each request exactly once, as an unsplit run does.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

import seam
from common.errors import UserError
from common.traces import read_final
from runner.traces import TraceWriter

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("shards", ROOT / "scripts" / "shards.py")
shards = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shards)


def _requests(clusters: int, conditions=("clean", "newline")) -> list[str]:
    return [json.dumps({"cluster": f"c{c:02d}", "id": f"c{c:02d}/{name}"}) + "\n"
            for c in range(clusters) for name in conditions]


def _select(lines, k, n, trace) -> list[str]:
    out = io.StringIO()
    shards.select(lines, out, k, n, trace)
    return [json.loads(line)["id"] for line in out.getvalue().splitlines()]


def _row(rid: str) -> str:
    return json.dumps({"id": rid}) + "\n"


def test_select_deals_alternate_clusters_and_shards_are_disjoint_and_cover_all(tmp_path):
    lines = _requests(7)
    trace = tmp_path / "m.jsonl"
    parts = [_select(lines, k, 3, trace) for k in (1, 2, 3)]
    assert parts[0] == ["c00/clean", "c00/newline", "c03/clean", "c03/newline", "c06/clean", "c06/newline"]
    assert parts[1][:2] == ["c01/clean", "c01/newline"]
    assert sorted(sum(parts, [])) == sorted(json.loads(line)["id"] for line in lines)
    assert _select(lines, 1, 1, trace) == [json.loads(line)["id"] for line in lines]


def test_shard_k_of_n_is_shards_k_and_k_plus_n_of_2n_as_docs_runner_says(tmp_path):
    """docs/RUNNER.md: a half left when the other shard has finished is finished by two servers as 1/4 and 3/4."""
    lines = _requests(11)
    trace = tmp_path / "m.jsonl"
    for k in (1, 2):
        halves = _select(lines, k, 4, trace) + _select(lines, k + 2, 4, trace)
        assert sorted(halves) == sorted(_select(lines, k, 2, trace)) and len(set(halves)) == len(halves)


def test_select_leaves_out_what_any_file_answered_its_own_too_but_not_a_torn_line(tmp_path):
    """Its own file's rows too: another copy's join may move them into the trace before this shard's runner
    opens the file, which would then not see them and ask them again."""
    trace = tmp_path / "m.jsonl"
    trace.write_text(_row("c00/clean") + _row("c02/newline") + '{"id": "c04/clean", "to')
    (tmp_path / "m.jsonl.shard-2").write_text(_row("c01/clean"))
    (tmp_path / "m.jsonl.shard-2.torn-20261205T000000Z").write_text(_row("c03/clean"))  # not a shard file
    assert _select(_requests(5), 1, 1, trace) == ["c00/newline", "c01/newline", "c02/clean", "c03/clean",
                                                  "c03/newline", "c04/clean", "c04/newline"]
    assert _select(_requests(5), 2, 2, trace) == ["c01/newline", "c03/clean", "c03/newline"]
    assert _select(_requests(5), 1, 2, trace) == ["c00/newline", "c02/clean", "c04/clean", "c04/newline"]
    assert shards.left(_requests(5), trace) == 7


def _note(row: bytes, *, inside: bool) -> str:
    """A note of the request of `row` sent while the row was being asked (accounted for by it), or after."""
    started = json.loads(row)["started_at"]
    sent_at = started if inside else "2099-01-01T00:00:00.000Z"
    return json.dumps({"id": json.loads(row)["id"], "sent_at": sent_at}) + "\n"


def test_a_request_a_stopped_run_left_unsettled_goes_to_the_shard_that_sent_it_and_to_no_other(tmp_path):
    """Its runner records the attempt whose answer was lost (runner/sent.py) when it asks again."""
    rows = _released_rows(4)
    ids = [json.loads(row)["id"] for row in rows]
    lines = [json.dumps({"cluster": f"c{i}", "id": rid}) + "\n" for i, rid in enumerate(ids)]
    trace = tmp_path / "m.jsonl"
    trace.write_bytes(rows[0])
    notes = tmp_path / "m.jsonl.sent"
    notes.write_text(_note(rows[0], inside=True) + _note(rows[3], inside=False))  # shard 1 sent ids[3], stopped
    assert _select(lines, 1, 2, trace) == [ids[2], ids[3]]
    assert _select(lines, 2, 2, trace) == [ids[1]]
    out = io.StringIO()
    assert shards.select(lines, out, 2, 2, trace)["unsettled_elsewhere"] == 1
    notes.write_text(_note(rows[0], inside=True))  # every note accounted for by a row: nothing unsettled
    assert _select(lines, 2, 2, trace) == [ids[1], ids[3]]
    assert shards.unsettled(trace) == set()


def test_select_reads_the_shard_files_before_the_trace_so_a_join_between_the_reads_hides_no_row(tmp_path,
                                                                                                 monkeypatch):
    rows = _released_rows(4)
    trace = tmp_path / "m.jsonl"
    trace.write_bytes(b"".join(rows[:2]))
    (tmp_path / "m.jsonl.shard-2").write_bytes(b"".join(rows[2:]))
    ids = [json.loads(row)["id"] for row in rows]
    lines = [json.dumps({"cluster": rid.split("/")[0], "id": rid}) + "\n" for rid in ids]
    real, read = shards._ids, []

    def ids_then_join(path):
        found = real(path)
        read.append(path.name)
        if len(read) == 1:
            assert shards.join(trace)[0]  # another copy's join, between this select's two reads
        return found

    monkeypatch.setattr(shards, "_ids", ids_then_join)
    assert _select(lines, 3, 3, trace) == []
    assert read[0] == "m.jsonl.shard-2"


def test_select_and_left_refuse_a_line_that_is_not_a_request_row_naming_it(tmp_path):
    lines = ['{"cluster": "a", "id": "a/clean"}\n', '{"id": "b/clean"}\n']
    with pytest.raises(UserError, match=r"^<stdin>:2: expected a request row"):
        _select(lines, 1, 2, tmp_path / "m.jsonl")
    with pytest.raises(UserError, match=r"^<stdin>:2: expected a request row"):
        shards.left(lines, tmp_path / "m.jsonl")


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "1/0", "a/b", "1/2/3"])
def test_a_bad_shard_is_refused_in_one_line(text):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "shards.py"), "select", text, "x"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(f"expected K/N with 1 <= K <= N (such as 2/2), got {text!r}")


def _released_rows(n: int) -> list[bytes]:
    with open(ROOT / "data" / "traces" / "smollm2-135m.jsonl", "rb") as f:
        return [next(f) for _ in range(n)]


def _files(tmp_path: Path, in_trace: bytes, in_shard: bytes) -> tuple[Path, Path]:
    """A trace m.jsonl and its shard 2, holding these bytes."""
    trace, shard = tmp_path / "m.jsonl", tmp_path / "m.jsonl.shard-2"
    trace.write_bytes(in_trace)
    shard.write_bytes(in_shard)
    return trace, shard


def test_join_appends_each_shard_files_rows_and_removes_it(tmp_path):
    rows = _released_rows(9)
    trace = tmp_path / "m.jsonl"
    trace.write_bytes(b"".join(rows[0:3]))
    (tmp_path / "m.jsonl.shard-2").write_bytes(b"".join(rows[3:6]))
    (tmp_path / "m.jsonl.shard-10").write_bytes(b"".join(rows[6:9]))
    assert shards.join(trace) == (True, f"join: 6 rows of 2 shard files appended to {trace}")
    assert trace.read_bytes() == b"".join(rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl"]
    assert len(read_final(trace).final) == 9
    assert shards.join(trace) == (True, f"join: {trace} has no shard files")


def test_a_join_cut_short_after_its_append_is_finished_without_doubling_a_row(tmp_path):
    rows = _released_rows(4)
    trace = tmp_path / "m.jsonl"
    trace.write_bytes(b"".join(rows))  # the append was made, the shard file not yet removed
    shard = tmp_path / "m.jsonl.shard-2"
    shard.write_bytes(b"".join(rows[2:]))
    assert shards.join(trace) == (True, f"join: 0 rows of 1 shard files appended to {trace}")
    assert trace.read_bytes() == b"".join(rows) and not shard.exists()


def test_join_refuses_an_id_with_rows_in_two_files_and_changes_nothing(tmp_path):
    rows = _released_rows(3)
    other = json.loads(rows[1])
    other["output"] = "asked a second time"
    trace, shard = _files(tmp_path, b"".join(rows[:2]), rows[2] + (json.dumps(other) + "\n").encode())
    with pytest.raises(UserError, match=rf"^{shard}:2: {other['id']} has rows in {trace}:2 too: the shards overlap"):
        shards.join(trace)
    assert trace.read_bytes() == b"".join(rows[:2]) and shard.exists()


def test_a_retry_within_one_shard_file_is_no_overlap(tmp_path):
    """A failed row and its retry (--retry-failed) in the same shard file: both are joined, the last final."""
    rows = _released_rows(3)
    failed = json.loads(rows[2])
    failed.update(status="failed", output=None)
    trace, shard = _files(tmp_path, b"".join(rows[:2]), (json.dumps(failed) + "\n").encode() + rows[2])
    assert shards.join(trace)[0]
    assert read_final(trace).final[failed["id"]].status == "ok" and read_final(trace).rows == 4


def test_join_refuses_another_models_rows_or_other_request_settings(tmp_path):
    rows = _released_rows(2)
    for change in ({"model": "other-model"}, {"request": {**json.loads(rows[1])["request"], "parameters": {}}}):
        trace = tmp_path / "m.jsonl"
        trace.write_bytes(rows[0])
        shard = tmp_path / "m.jsonl.shard-2"
        shard.write_bytes((json.dumps({**json.loads(rows[1]), **change}) + "\n").encode())
        with pytest.raises(UserError, match=rf"^{shard}: rows of model .* or of other request settings"):
            shards.join(trace)
        assert trace.read_bytes() == rows[0] and shard.exists()


def test_a_shards_settled_notes_do_not_keep_it_from_joining_and_go_with_it(tmp_path):
    """A runner killed after its last row but before tidying leaves notes its rows account for."""
    rows = _released_rows(2)
    trace, shard = _files(tmp_path, rows[0], rows[1])
    notes = tmp_path / "m.jsonl.shard-2.sent"
    notes.write_text(_note(rows[1], inside=True))
    assert shards.join(trace)[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl"]


def test_a_shard_a_run_is_appending_to_is_said_so_even_with_its_notes(tmp_path):
    rows = _released_rows(2)
    trace, shard = _files(tmp_path, rows[0], rows[1])
    (tmp_path / "m.jsonl.shard-2.sent").write_text(_note(rows[1], inside=False))  # the running run's request
    with TraceWriter(shard):
        joined, said = shards.join(trace, waits=())
    assert not joined and said.startswith("join: nothing joined: ") and "appending" in said


def test_a_shard_stopped_with_a_request_in_flight_is_not_joined_until_resumed(tmp_path):
    """Its note of the request sent (runner/sent.py) is read by its own runner only: joined now, it would be lost."""
    rows = _released_rows(2)
    trace, shard = _files(tmp_path, rows[0], rows[1])
    notes = tmp_path / "m.jsonl.shard-2.sent"
    notes.write_text(json.dumps({"id": "x/clean", "sent_at": "2026-12-05T10:00:00.000Z"}) + "\n")
    joined, said = shards.join(trace)
    assert not joined and said == (f"join: {shard}: its run was stopped with requests in flight or waiting "
                                   "(m.jsonl.shard-2.sent, .pending); resume shard 2 (SHARD=2/N, N at least 2) to "
                                   "settle them, then join")
    assert trace.read_bytes() == rows[0] and shard.exists()
    notes.unlink()
    assert shards.join(trace)[0] and not shard.exists()


def test_join_leaves_files_a_run_is_appending_to(tmp_path):
    rows = _released_rows(4)
    trace, shard = _files(tmp_path, b"".join(rows[:2]), b"".join(rows[2:]))
    with TraceWriter(shard):  # a runner on shard 2, still going
        joined, said = shards.join(trace, waits=(0.01, 0.01))
    assert not joined and said.startswith(f"join: nothing joined: {shard}: another 'seam.py run' is appending")
    assert trace.read_bytes() == b"".join(rows[:2]) and shard.exists()


def test_join_moves_torn_last_lines_aside_keeping_their_bytes(tmp_path):
    """A crash mid-write (of a runner, or of a join's own append) leaves a torn line; join holds the writer lock
    and sets it aside as the runner's --move-torn does: that request has no row, and is asked again."""
    rows = _released_rows(4)
    trace, shard = _files(tmp_path, b"".join(rows[:2]) + rows[2][:50], rows[2] + rows[3][:70])
    joined, said = shards.join(trace)
    assert joined and said.count("moved a torn last line") == 2
    assert trace.read_bytes() == b"".join(rows[:3])
    assert sorted(p.read_bytes() for p in tmp_path.glob("*.torn-*")) == sorted([rows[2][:50], rows[3][:70]])


def test_a_join_cut_short_mid_append_keeps_the_shard_and_the_next_join_finishes_it_exactly(tmp_path, monkeypatch):
    from runner import traces

    rows = _released_rows(5)
    trace, shard = _files(tmp_path, rows[0], b"".join(rows[1:]))
    real, calls = traces.TraceWriter.append, []

    def full_disk_at_the_third(self, line):
        calls.append(line)
        if len(calls) == 3:
            raise traces.TraceWriteError("could not write: No space left on device")
        real(self, line)

    monkeypatch.setattr(traces.TraceWriter, "append", full_disk_at_the_third)
    with pytest.raises(UserError, match="No space left"):
        shards.join(trace)
    assert trace.read_bytes() == b"".join(rows[:3]) and shard.read_bytes() == b"".join(rows[1:])
    monkeypatch.setattr(traces.TraceWriter, "append", real)
    assert shards.join(trace) == (True, f"join: 2 rows of 1 shard files appended to {trace}")
    assert trace.read_bytes() == b"".join(rows) and not shard.exists()


def test_a_shard_file_is_refused_where_its_trace_is_meant_and_a_copy_onto_an_input(tmp_path):
    trace = tmp_path / "m.jsonl"
    trace.write_text("")
    shard = tmp_path / "m.jsonl.shard-2"
    shard.write_text("")
    with pytest.raises(UserError, match=r"a shard file; name the trace it belongs to \(m.jsonl\)"):
        shards.join(shard)
    with pytest.raises(UserError, match="is .*m.jsonl.shard-2 itself"):
        shards.copy_joined(trace, shard)


def test_shard_files_are_found_by_their_exact_name_only(tmp_path):
    trace = tmp_path / "m[1].jsonl"
    for name in ("m[1].jsonl.shard-2", "m[1].jsonl.shard-10", "m[1].jsonl.shard-2.sent", "m[1].jsonl.shard-0",
                 "m[1].jsonl.shard-2.shard-3", "m[1].jsonl.shard-3.torn-20261205T000000Z", "m1.jsonl.shard-4"):
        (tmp_path / name).write_text("")
    assert [p.name for p in shards.shard_files(trace)] == ["m[1].jsonl.shard-2", "m[1].jsonl.shard-10"]
    assert [p.name for p in shards.shard_files(trace, ".sent")] == ["m[1].jsonl.shard-2.sent"]


def test_the_command_line_says_an_error_in_one_line(tmp_path):
    trace = tmp_path / "m.jsonl"
    trace.write_text(_row("a/clean"))
    (tmp_path / "m.jsonl.shard-2").write_text("not json\n")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "shards.py"), "join", str(trace)],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("shards.py: error: ")


def test_join_to_a_copy_takes_complete_lines_of_all_files_and_changes_none(tmp_path):
    trace, shard = _files(tmp_path, b'{"row": 1}\n{"row": 2, "to', b'{"row": 3}\r{"x": 0}\n{"row": 1}\n{"row": 4, "cu')
    copy = tmp_path / "look" / "m.jsonl"
    assert shards.copy_joined(trace, copy) == 2
    assert copy.read_bytes() == b'{"row": 1}\n{"row": 3}\r{"x": 0}\n'  # split at newlines only, as traces are read
    assert trace.read_bytes().endswith(b'"to') and shard.read_bytes().endswith(b'"cu')


def test_two_runners_on_two_shards_then_a_change_of_n_join_into_one_row_per_request(tmp_path):
    rows = make_requests(18, conditions=("clean", "newline", "blank"))  # 6 clusters x 3 conditions
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    lines = requests.read_text(encoding="utf-8").splitlines(keepends=True)
    trace = tmp_path / "m.jsonl"

    def run_shard(server, k, n, *, first=None):
        part = tmp_path / f"part-{k}-{n}.jsonl"
        with open(part, "w", encoding="utf-8") as out:
            if not shards.select(lines, out, k, n, trace)["written"]:
                return  # nothing left for this shard (scripts/collect_study.sh does not start it)
        argv = ["run", str(config), "--requests", str(part), "--out", str(shards.shard_path(trace, k))]
        assert seam.main(argv + (["--first", str(first)] if first else [])) == 0

    with serve() as server:
        config = tmp_path / "openai.toml"
        config.write_text(toml_text(config_keys(server, "openai")))
        run_shard(server, 1, 2)
        run_shard(server, 2, 2, first=1)  # stopped after its first cluster
        assert shards.join(trace)[1].startswith("join: 3 rows of 1 shard files")
        for k in (1, 2, 3):  # the rest, over three runners
            run_shard(server, k, 3)
        shards.join(trace)
        asked = [json.loads(r["raw"])["messages"][-1]["content"] for r in server.received]
    final = read_final(trace)
    assert sorted(final.final) == sorted(row.id for row in rows) and final.rows == len(rows)
    assert len(asked) == len(set(asked)) == len(rows)  # nothing asked twice
    assert [p.name for p in tmp_path.glob("m.jsonl*")] == ["m.jsonl"]


# ------------------------------------------------ scripts/collect_study.sh, two copies at once

SERVE_STUB = """#!/usr/bin/env bash
# In place of llama-server: the replay server answers on $PORT with the released trace's replies.
set -euo pipefail
mkdir -p "$SEAM_LLAMA_CACHE"
"$PY" scripts/replay_server.py "data/traces/$1.jsonl" --port "$PORT" > "$SEAM_LLAMA_CACHE/server-$PORT.log" 2>&1 &
echo $! > "$SEAM_LLAMA_CACHE/server-$PORT.pid"
echo "replay of $1 on port $PORT" > "$SEAM_LLAMA_CACHE/server-$PORT.machine"
for _ in $(seq 400); do grep -q "replay: serving" "$SEAM_LLAMA_CACHE/server-$PORT.log" && exit 0; sleep 0.05; done
kill $!
exit 1
"""
MODEL = "smollm2-135m"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def repo(tmp_path):
    """The kit with scripts/serve_local.sh replaced, and a condition file whose messages are the newline
    condition's (so the replay server has a reply for each)."""
    if not (ROOT / "data" / "traces" / f"{MODEL}.jsonl").exists():
        pytest.skip(f"no released traces of {MODEL}")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for part in ("seam.py", "common", *dict.fromkeys(stage.split(".")[0] for stage in seam.STAGES)):
        (repo / part).symlink_to(ROOT / part)
    for script in (ROOT / "scripts").iterdir():
        if script.name != "serve_local.sh":
            (repo / "scripts" / script.name).symlink_to(script)
    (repo / "scripts" / "serve_local.sh").write_text(SERVE_STUB)
    (repo / "data" / "conditions").mkdir(parents=True)
    for part in ("benchmark", "models", "traces"):
        (repo / "data" / part).symlink_to(ROOT / "data" / part)
    (repo / "data" / "conditions" / "t.toml").write_text('[conditions.again]\npool = "casual"\nbreaks = 1\n')
    return repo


def _collect(repo: Path, shard: str, port: int, **popen) -> subprocess.Popen:
    env = dict(os.environ, PY=sys.executable, SHARD=shard, PORT=str(port), SEAM_COLLECT_LOGS=str(repo / "logs"),
               SEAM_LLAMA_CACHE=str(repo / "llama"))
    return subprocess.Popen(["bash", "scripts/collect_study.sh", "t", MODEL], cwd=repo, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def test_two_copies_of_collect_study_share_a_model_and_the_last_to_end_joins(repo):
    copies = [_collect(repo, f"{k}/2", _free_port()) for k in (1, 2)]
    said = [copy.communicate(timeout=600) for copy in copies]
    assert [copy.returncode for copy in copies] == [0, 0], said
    trace = repo / "data" / "studies" / "t" / "collecting" / f"{MODEL}.jsonl"
    final = read_final(trace)
    assert final.rows == len(final.final) == 300  # every request once: none asked twice, none left out
    assert {row.condition for row in final.final.values()} == {"again"}
    ports = {row.request["url"].split(":")[2].split("/")[0] for row in final.final.values()}
    assert len(ports) == 2  # both servers answered
    assert sorted(p.name for p in trace.parent.iterdir()) == ["machines.tsv", trace.name]
    assert sum("study t: collected" in out for out, _ in said) >= 1
    # each server started is recorded with its machine, and each row is put down to the one that answered it
    record = (trace.parent / "machines.tsv").read_text().splitlines()
    assert record[0] == "started\tshard\tport\tmodel\tmachine" and len(record) == 3
    assert sorted(line.split("\t")[1] for line in record[1:]) == ["1/2", "2/2"]
    counted = subprocess.run([sys.executable, "scripts/machines.py", "count", str(trace.parent)], cwd=repo,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    by_port = {row.request["url"].split(":")[2].split("/")[0]: 0 for row in final.final.values()}
    for row in final.final.values():
        by_port[row.request["url"].split(":")[2].split("/")[0]] += 1
    assert sorted(counted[1:]) == sorted(f"{rows}\t{MODEL}\treplay of {MODEL} on port {port}"
                                         for port, rows in by_port.items())
    logs = sorted(p.name for p in (repo / "logs").iterdir())
    assert logs == [f"collect-t-{MODEL}.shard-1.log", f"collect-t-{MODEL}.shard-2.log"]

    again = _collect(repo, "1/1", _free_port())
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert f"== {MODEL}: shard 1/1 has nothing left to ask" in out and "study t: collected" in out
    assert trace.read_bytes().count(b"\n") == 300


def test_collect_study_refuses_a_bad_shard_in_one_line_before_anything_runs(repo):
    copy = _collect(repo, "3/2", _free_port())
    out, err = copy.communicate(timeout=300)
    assert copy.returncode == 2 and err.count("\n") == 1 and "expected K/N with 1 <= K <= N" in err
    assert not (repo / "llama").exists() and not (repo / "data" / "studies").exists()


def _in_session(sid: int) -> list[int]:
    """The processes of session `sid` still alive (zombies aside)."""
    alive = []
    for entry in os.listdir("/proc"):
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        fields = text[text.rindex(")") + 2:].split()
        if entry.isdigit() and int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            alive.append(int(entry))
    return alive


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_copy_stopped_by_sigterm_stops_its_runner_before_its_server_and_resumes_exactly(repo):
    """SIGTERM to the script alone (a session's end): the runner is stopped first, keeping its rows and its note
    of the request in flight, then the server; before, the server went first and the runner, left running,
    wrote failed rows, which no shard asks again."""
    models = repo / "data" / "models"
    models.unlink()
    models.mkdir()
    text = (ROOT / "data" / "models" / f"{MODEL}.toml").read_text()
    slow = text.replace("max_retries = 3\n", "max_retries = 3\nrequests_per_minute = 600\n")  # 30 s for the shard
    (models / f"{MODEL}.toml").write_text(slow)
    copy = _collect(repo, "2/2", _free_port(), start_new_session=True)
    log = repo / "logs" / f"collect-t-{MODEL}.shard-2.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and " done · " in log.read_text()):
        time.sleep(0.1)
    time.sleep(1.0)
    copy.send_signal(signal.SIGTERM)
    out, err = copy.communicate(timeout=120)
    assert copy.returncode == 143, err
    deadline = time.monotonic() + 10
    while _in_session(copy.pid) and time.monotonic() < deadline:  # the server, told to stop, on its way out
        time.sleep(0.1)
    assert _in_session(copy.pid) == []  # neither the runner nor the server is left
    shard = repo / "data" / "studies" / "t" / "collecting" / f"{MODEL}.jsonl.shard-2"
    kept = read_final(shard)
    assert 0 < kept.rows < 150 and "failed" not in {row.status for row in kept.final.values()}
    assert "stopped by SIGTERM" in log.read_text()
    for shard_k in ("2/2", "1/2"):
        again = _collect(repo, shard_k, _free_port())
        assert again.wait(timeout=600) == 0, again.communicate()
    final = read_final(repo / "data" / "studies" / "t" / "collecting" / f"{MODEL}.jsonl")
    assert final.rows == len(final.final) == 300
    assert sorted(p.name for p in shard.parent.iterdir()) == ["machines.tsv", f"{MODEL}.jsonl"]
