#!/usr/bin/env python3
"""Split one model's collection over several identical servers, and join their trace files back into one.

    seam.py prompts ... | python scripts/shards.py select K/N TRACE > part.jsonl
    python scripts/shards.py path K/N TRACE           # the file shard K appends to
    seam.py prompts ... | python scripts/shards.py left TRACE   # how many requests no file has a row for
    python scripts/shards.py join TRACE               # the shard files into TRACE, in place
    python scripts/shards.py join TRACE --out COPY    # TRACE and its shard files, complete lines, into COPY

A llama.cpp server with one slot and one thread answers the same request with the same bytes, so a 2-core
machine collects twice as fast with two such servers, each asked by its own runner (docs/RUNNER.md, several
identical local servers). Two runners cannot append to one trace file (the runner's lock refuses the second),
so shard K of N writes its own file: TRACE itself for K = 1, `TRACE.shard-K` otherwise (not `*.jsonl`, so a
folder of traces does not read it as another model's file). `scripts/collect_study.sh` uses these commands.

`select` keeps, from the request rows on stdin, the clusters whose position (in the order the rows name them)
is K - 1 modulo N, less every id that has a row in any of the files (TRACE and its shard files: shards are
disjoint, however N changes between sessions). The rows it leaves out never reach a runner, which would
check that each was asked as the request is rendered now: a dry run on each file does that check
(scripts/collect_study.sh). A request that a stopped run left unsettled (sent with its answer lost, noted in
that file's `.sent`, or waiting on a server's Retry-After, `.pending`) goes to the shard that sent it, whose
runner records the lost attempt (keeps the wait) when it asks again; it is left out of every other shard.

`join` appends each shard file's rows to TRACE and removes the shard file. It holds every file's runner lock
meanwhile (a run still appending to any of them: nothing is joined, and it says so), refuses files of
another model or other request settings, and an id with rows in two files (asked twice). A shard whose run
was stopped with a request unsettled waits for that run to be resumed (its notes would be lost); settled
notes go with their shard file. A torn last
line (a crash mid-write) is moved aside first, as the runner's --move-torn does, keeping its bytes; a row
already in TRACE byte for byte (a join cut short) is not appended twice. `--out` writes the joined rows to a
copy instead, without the locks and without the torn last lines, changing nothing: a look at a collection
still going (scripts/study.sh --collecting).
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import sys
import time
from pathlib import Path

SHARD_SUFFIX = re.compile(r"\.shard-([1-9][0-9]*)")
SENT, PENDING = ".sent", ".pending"  # the runner's notes beside a trace (runner/sent.py, runner/pending.py)


def shard_path(trace: Path, k: int) -> Path:
    """The file shard `k` appends to: the trace itself for the first."""
    return trace if k == 1 else trace.with_name(f"{trace.name}.shard-{k}")


def shard_files(trace: Path, suffix: str = "") -> list[Path]:
    """The trace's shard files (`TRACE.shard-K`, K >= 2; with `suffix`, their `.sent` or `.pending` notes), in
    the order of K."""
    found = []
    for path in trace.parent.glob(glob.escape(trace.name) + ".shard-*" + suffix):
        rest = path.name[len(trace.name):len(path.name) - len(suffix)]
        if (match := SHARD_SUFFIX.fullmatch(rest)) and path.is_file():
            found.append((int(match[1]), path))
    return [path for _, path in sorted(found)]


def _refuse_shard_name(trace: Path) -> None:
    from common.errors import UserError

    if (match := re.search(r"\.shard-[1-9][0-9]*$", trace.name)):
        raise UserError(f"{trace}: a shard file; name the trace it belongs to ({trace.name[:match.start()]})")


def parse_shard(text: str) -> tuple[int, int]:
    """"K/N" with 1 <= K <= N."""
    match = re.fullmatch(r"([1-9][0-9]*)/([1-9][0-9]*)", text)
    if not match or int(match[1]) > int(match[2]):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N (such as 2/2), got {text!r}")
    return int(match[1]), int(match[2])


def _complete_lines(path: Path) -> list[bytes]:
    """The file's complete lines, each with its newline, split at newlines only (as common.traces reads them);
    a torn last line is left out, a missing file is empty."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [line + b"\n" for line in data[:data.rfind(b"\n") + 1].split(b"\n")[:-1]]


def _row_id(line: bytes, where: str) -> str:
    from common.errors import UserError

    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: expected one JSON trace row per line") from None
    if not isinstance(row, dict) or not isinstance(row.get("id"), str):
        raise UserError(f"{where}: expected a trace row (a JSON object with a string id)")
    return row["id"]


def _ids(path: Path) -> set[str]:
    return {_row_id(line, f"{path}:{number}") for number, line in enumerate(_complete_lines(path), 1)}


def unsettled(trace_file: Path) -> set[str]:
    """The ids a stopped run of this trace file left unsettled: a request sent whose answer no row of the file
    records (runner/sent.py), or one a server asked to wait for, a wait not over yet (runner/pending.py). The
    file's own runner settles them (records the lost attempt, keeps the wait); another would not."""
    from common.traces import scan
    from runner import pending, sent

    notes = sent.read(sent.path_for(trace_file))  # the notes before the rows: a note settled since is then
    waits = pending.read(pending.path_for(trace_file))  # accounted for by a row read after it
    final = scan(trace_file).final if notes else {}
    now = time.time()
    return ({note.id for note in notes if not sent.accounted(note, final.get(note.id))}
            | {wait.id for wait in waits if wait.until > now})


def _request_rows(requests):
    """(cluster, id, line) of each request row (a line of `seam.py prompts`); a malformed one is one line."""
    from common.errors import UserError

    for number, line in enumerate(requests, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            cluster, rid = row["cluster"], row["id"]
        except (ValueError, RecursionError, KeyError, TypeError):
            raise UserError(f"<stdin>:{number}: expected a request row of 'seam.py prompts' "
                            "(a JSON object with cluster and id)") from None
        yield cluster, rid, line


def select(requests, out, k: int, n: int, trace: Path) -> dict[str, int]:
    """Write shard k of n of the request rows (lines of JSON); the counts of what was kept and left out."""
    _refuse_shard_name(trace)
    own = shard_path(trace, k)
    files = [*shard_files(trace), trace]
    holders = {path.with_name(path.name[:-len(suffix)]) for suffix in (SENT, PENDING)
               for path in [*shard_files(trace, suffix), Path(f"{trace}{suffix}")] if path.is_file()}
    here = unsettled(own)
    elsewhere = set().union(*(unsettled(holder) for holder in holders if holder != own)) - here
    # The shard files before the trace: a join moves rows from the former to the latter only, so a join
    # between the two reads cannot hide a row from both. The shard's own file is read too: a row it holds may
    # be joined into the trace before its runner opens the file, which then would not see it.
    done: set[str] = set()
    for path in files:
        done |= _ids(path)
    position: dict[str, int] = {}
    counts = dict.fromkeys(("shard", "answered", "unsettled_elsewhere", "written"), 0)
    for cluster, rid, line in _request_rows(requests):
        index = position.setdefault(cluster, len(position))
        if index % n != k - 1 and rid not in here:
            continue
        counts["shard"] += 1
        if rid in done:
            counts["answered"] += 1
        elif rid in elsewhere:
            counts["unsettled_elsewhere"] += 1
        else:
            out.write(line if line.endswith("\n") else line + "\n")
            counts["written"] += 1
    return counts


def left(requests, trace: Path) -> int:
    """How many of the request rows (lines of JSON) have no row in the trace or its shard files."""
    done: set[str] = set()
    for path in [*shard_files(trace), trace]:
        done |= _ids(path)
    return sum(1 for _, rid, _ in _request_rows(requests) if rid not in done)


def copy_joined(trace: Path, copy: Path) -> int:
    """Write the complete rows of the trace and its shard files to `copy`; how many."""
    from common.errors import UserError

    _refuse_shard_name(trace)
    shards = shard_files(trace)
    for path in [trace, *shards]:
        if copy.exists() and path.exists() and copy.samefile(path):
            raise UserError(f"--out {copy}: is {path} itself; write the copy elsewhere")
    from_shards = [_complete_lines(shard) for shard in shards]  # before the trace, as in select
    lines = _complete_lines(trace)
    have = set(lines)
    for shard_lines in from_shards:
        lines += [line for line in shard_lines if line not in have]
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(b"".join(lines))
    return len(lines)


def join(trace: Path, waits: tuple[float, ...] = (0.5,) * 6) -> tuple[bool, str]:
    """Append the shard files' rows to the trace and remove them: (whether it did, what was done in a line).

    A file locked is tried again after each of `waits` (seconds): two copies of collect_study.sh ending at
    once each find the other's join holding a lock for a moment, and neither would join."""
    for wait in waits:
        joined, said = _join(trace)
        if joined or not said.startswith(LOCKED):
            return joined, said
        time.sleep(wait)
    return _join(trace)


LOCKED = "join: nothing joined: "


def _join(trace: Path) -> tuple[bool, str]:
    from common.errors import UserError
    from common.traces import model_of, scan
    from runner.rows import FINGERPRINT
    from runner.traces import TraceLocked, TraceWriter, move_torn

    _refuse_shard_name(trace)
    shards = shard_files(trace)
    if not shards:
        return True, f"join: {trace} has no shard files"
    writers = []
    try:
        for path in [trace, *shards]:
            try:
                writers.append(TraceWriter(path))
            except TraceLocked as exc:
                return False, f"{LOCKED}{exc}"
        for shard in shards:  # no run is appending to it now: its notes are a stopped run's
            if unsettled(shard):
                k = SHARD_SUFFIX.fullmatch(shard.name[len(trace.name):])[1]
                return False, (f"join: {shard}: its run was stopped with requests in flight or waiting "
                               f"({shard.name}.sent, .pending); resume shard {k} (SHARD={k}/N, N at least {k}) "
                               "to settle them, then join")
        moved, first, model = [], {}, None
        for path in [trace, *shards]:
            found = scan(path)
            if found.torn:
                moved.append(move_torn(path, found.torn))
                found = scan(path)
            theirs = model_of(found)
            if theirs is None:
                continue
            row = next(iter(found.final.values()))
            fingerprint = {key: row.request.get(key) for key in FINGERPRINT}
            if model is None:
                model, first = theirs, {"path": path, **fingerprint}
            elif theirs != model or any(fingerprint[key] != first[key] for key in FINGERPRINT):
                raise UserError(f"{path}: rows of model {theirs!r} or of other request settings than "
                                f"{first['path']}'s ({model!r}); the shards of one trace are one model's, asked "
                                "with one config")
        lines = _complete_lines(trace)
        have = set(lines)
        made_by: dict[bytes, Path] = {}  # a shard's line, by the shard that holds it
        for shard in shards:
            for line in _complete_lines(shard):
                made_by.setdefault(line, shard)
        owner: dict[str, tuple[Path, str]] = {}  # id -> the file its rows come from, and where

        def claim(line: bytes, path: Path, where: str) -> None:
            rid = _row_id(line, where)
            held = owner.setdefault(rid, (path, where))
            if held[0] != path:
                raise UserError(f"{where}: {rid} has rows in {held[1]} too: the shards overlap (asked twice); "
                                "keep the rows you trust and join by hand")

        for number, line in enumerate(lines, 1):
            claim(line, made_by.get(line, trace), f"{trace}:{number}")  # a cut-short join's rows are the shard's
        added: list[bytes] = []
        for shard in shards:
            for number, line in enumerate(_complete_lines(shard), 1):
                claim(line, shard, f"{shard}:{number}")
                if line not in have:
                    added.append(line)
        for line in added:
            writers[0].append(line.decode("utf-8"))
        writers[0].close()  # fsynced before any shard file goes
        for shard in shards:
            shard.unlink()
            for suffix in (SENT, PENDING):  # settled: every note accounted for, every wait over
                Path(f"{shard}{suffix}").unlink(missing_ok=True)
        aside = "".join(f"; moved a torn last line to {path}" for path in moved)
        return True, f"join: {len(added)} rows of {len(shards)} shard files appended to {trace}{aside}"
    finally:
        for writer in writers:
            writer.close()


def main(argv: list[str]) -> int:
    from common.errors import UserError

    example = ("example:\n"
               "  python seam.py prompts --conditions data/conditions/guard.toml --only guarded \\\n"
               "    | python scripts/shards.py select 2/2 runs/qwen.jsonl > part.jsonl\n"
               "  python seam.py run CONFIG --requests part.jsonl "
               "--out $(python scripts/shards.py path 2/2 runs/qwen.jsonl)\n"
               "  python scripts/shards.py join runs/qwen.jsonl")
    parser = argparse.ArgumentParser(prog="python scripts/shards.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=example)
    commands = parser.add_subparsers(dest="command", required=True)
    pick = commands.add_parser("select", help="shard K of N of the request rows on stdin, less those answered")
    where = commands.add_parser("path", help="the file shard K of N appends to")
    for command in (pick, where):
        command.add_argument("shard", type=parse_shard, metavar="K/N")
        command.add_argument("trace", type=Path, metavar="TRACE", help="the model's trace file (shard files beside)")
    rest = commands.add_parser("left", help="how many of the request rows on stdin no file answered yet")
    rest.add_argument("trace", type=Path, metavar="TRACE")
    put = commands.add_parser("join", help="append the shard files' rows to the trace")
    put.add_argument("trace", type=Path, metavar="TRACE")
    put.add_argument("--out", type=Path, metavar="COPY", help="write the joined rows here instead, changing nothing")
    args = parser.parse_args(argv)
    try:
        if args.command == "path":
            _refuse_shard_name(args.trace)
            print(shard_path(args.trace, args.shard[0]))
        elif args.command == "left":
            _refuse_shard_name(args.trace)
            print(left(sys.stdin, args.trace))
        elif args.command == "select":
            k, n = args.shard
            counts = select(sys.stdin, sys.stdout, k, n, args.trace)
            note = (f", {counts['unsettled_elsewhere']} left to another shard's stopped run, which sent them"
                    if counts["unsettled_elsewhere"] else "")
            print(f"select: shard {k}/{n}: {counts['shard']} requests, {counts['answered']} answered{note}, "
                  f"{counts['written']} to ask", file=sys.stderr)
        elif args.out is not None:
            copy_joined(args.trace, args.out)  # quiet: scripts/study.sh --collecting calls it for each model
        else:
            print(join(args.trace)[1], file=sys.stderr)
    except UserError as exc:
        print(f"shards.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common.pipes import run_main

    sys.exit(run_main(lambda: main(sys.argv[1:])))
