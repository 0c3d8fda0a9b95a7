"""Which machine answered which rows of a locally collected study: the record scripts/collect_study.sh keeps.

Greedy decoding on llama.cpp gives the same bytes for the same request on one machine, but not always on
another: a CPU with other vector units (AVX2, AVX-512, AMX) sums in another order, and the weights may be
repacked for it (docs/GUARD.md, "Two runs"). A study collected over several sessions may be asked on several
machines, so each copy of the collection records the machine its server runs on, and this says which rows each
machine answered.

    python scripts/machines.py describe
        one line: this machine's CPU (model name, family and model, the vector units that change the sums)
        and its CPU count; scripts/serve_local.sh adds how the server loads the weights and its version
    python scripts/machines.py count data/studies/guard/traces
        final rows per machine and model, from the folder's machines.tsv and its trace files
    python scripts/machines.py same-bytes data/studies/guard/traces guarded paste-rule
        where two conditions sent a model the same message (message_sha256) and both got a reply (status ok
        or unusable), how often the two replies are the same bytes when one recorded machine answered both,
        when two did, and when a row's machine is not known
    python scripts/machines.py same-bytes data/studies/guard/traces guarded boundary --second-from data/traces
        the same, the second condition's rows read from the release's traces

machines.tsv (tab-separated, a header line first) has one line per server a copy of the collection started:
started (UTC, ISO 8601 with a Z or an offset), shard (K/N), port, model, machine (the server's description).
A final trace row (read as every stage reads traces, `common.traces`: the last row of an id counts, and a torn
last line that a run is still writing is no row yet) belongs to the server of its model and port (the port in
its request URL) started last before its last attempt, the one that got its answer; a row answered before any
such server is "not recorded" (rows collected before the record was kept). The record holds the servers
collect_study.sh starts: a row answered by a server started otherwise (serve_local.sh by hand, say) on the same
port is put down to the last recorded one, so keep other runs out of a study's folder or note them in the file.
An id with rows in two files (a shard file not joined yet) is refused, as shards.py join refuses it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from common.records import TraceRow

FLAGS = ("avx2", "avx512f", "amx_tile")  # the vector units llama.cpp's CPU kernels choose between
COLUMNS = ("started", "shard", "port", "model", "machine")
NOT_RECORDED = "not recorded"
TRACE_NAME = re.compile(r"\.jsonl(\.shard-[1-9][0-9]*)?$")  # a trace file or a shard's (scripts/shards.py)


class Refused(Exception):
    """Input this script cannot read: the one line to print."""


def describe(cpuinfo: str, cpus: int) -> str:
    """This machine in one line, from the text of /proc/cpuinfo.

    >>> describe("processor\\t: 0\\nvendor_id\\t: AuthenticAMD\\ncpu family\\t: 25\\nmodel\\t\\t: 17\\n"
    ...          "model name\\t: AMD EPYC\\nflags\\t\\t: fpu avx2 avx512f sse\\n", 2)
    'AMD EPYC (family 25, model 17; avx2 avx512f), 2 CPUs'
    """
    first: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() not in first:
            first[key.strip()] = value.strip()
    flags = set(first.get("flags", "").split())
    units = " ".join(flag for flag in FLAGS if flag in flags) or "none of " + "/".join(FLAGS)
    name = re.sub(r"\s+", " ", first.get("model name", "unknown CPU"))
    family, model, plural = first.get("cpu family", "?"), first.get("model", "?"), "" if cpus == 1 else "s"
    return f"{name} (family {family}, model {model}; {units}), {cpus} CPU{plural}"


def moment(text: str) -> datetime | None:
    """A time with its offset (a Z or +HH:MM), or None for anything else (a time without one is ambiguous)."""
    try:
        parsed = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo is not None else None


def read_log(path: Path) -> list[tuple[datetime, dict[str, str]]]:
    """The servers of a machines.tsv with their start times, in time order; a bad line is refused naming it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"{path}: cannot be read as a machines.tsv ({exc})") from None
    if not lines or tuple(lines[0].split("\t")) != COLUMNS:
        raise Refused(f"{path}:1: expected the header {' '.join(COLUMNS)} (tab-separated)")
    servers = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS):
            raise Refused(f"{path}:{number}: expected {len(COLUMNS)} tab-separated fields, got {len(fields)}")
        entry = dict(zip(COLUMNS, fields, strict=True))
        started = moment(entry["started"])
        if started is None:
            raise Refused(f"{path}:{number}: started: expected a UTC time such as 2026-12-05T12:55:00Z, "
                          f"got {entry['started']!r}")
        servers.append((started, entry))
    return sorted(servers, key=lambda server: server[0])  # stable: lines of one moment keep their order


def machine_of(servers: list[tuple[datetime, dict[str, str]]], model: str, port: str, answered: datetime) -> str:
    """The machine that answered a row of `model` on `port` at `answered`: its server started last before."""
    found = NOT_RECORDED
    for started, entry in servers:
        if started > answered:
            break
        if entry["model"] == model and entry["port"] == port:
            found = entry["machine"]
    return found


def answered_by(folder: Path) -> list[tuple[TraceRow, str]]:
    """Every final row of the folder's trace files (shard files included) with the machine that answered it."""
    from common.traces import scan

    log = folder / "machines.tsv"
    servers = read_log(log) if log.exists() else []
    from common.traces import model_of

    found = []
    seen: dict[tuple[str, str], str] = {}  # (model, id) -> where its final row is
    traces = sorted(p for p in folder.iterdir() if TRACE_NAME.search(p.name))
    if not traces:
        raise Refused(f"{folder}: no trace files (MODEL.jsonl) here")
    for trace in traces:
        read = scan(trace)  # each row checked as a TraceRow; a torn tail being written is left out
        model_of(read)  # one model per file, as every stage requires
        for rid, row in read.final.items():
            where = read.where[rid]
            if (row.model, rid) in seen:
                raise Refused(f"{where}: {rid} has a final row in {seen[row.model, rid]} too; join the shard "
                              "files first (python scripts/shards.py join TRACE)")
            seen[row.model, rid] = where
            if not row.attempts:
                raise Refused(f"{where}: expected a row with at least one attempt")
            answered = row.attempts[-1].started(where)  # checked when read: aware, in UTC
            try:
                port = urlsplit(str(row.request.get("url", ""))).port
            except ValueError:
                raise Refused(f"{where}: request.url {row.request.get('url')!r} has no port that can be read") from None
            found.append((row, machine_of(servers, row.model, str(port), answered)))
    return found


def count(folder: Path) -> Counter:
    """(machine, model) -> final rows, over the folder's trace files (shard files included)."""
    return Counter((machine, row.model) for row, machine in answered_by(folder))


def known(machine: str) -> bool:
    """Whether a machine is one the record describes (not a row before it, nor a server it could not describe)."""
    return machine != NOT_RECORDED and "not described" not in machine


def same_bytes(folder: Path, first: str, second: str,
               second_from: Path | None = None) -> dict[tuple[str, str], tuple[int, int]]:
    """(model, where) -> (identical replies, pairs) over the clusters where `first` and `second` sent the model the
    same message and both got a reply (status ok or unusable: a reply the runner kept); where is "one machine"
    (one described machine answered both), "two machines" (two described ones), "one known, one not" or "neither
    known" (a row from before the record, or from a server it could not describe: one machine or two, not known).
    With `second_from`, the `second` condition's rows are read from that folder's trace files instead (the
    release's, data/traces/, say: its rows are not recorded), and `first` may equal `second`."""
    if first == second and second_from is None:
        raise Refused(f"same-bytes: the two conditions are both {first!r}; name two, or give --second-from")
    firsts: dict[tuple[str, str], tuple[TraceRow, str]] = {}
    seconds: dict[tuple[str, str], tuple[TraceRow, str]] = {}
    for row, machine in answered_by(folder):
        if row.condition == first:
            firsts[row.model, row.cluster] = (row, machine)
        if row.condition == second and second_from is None:
            seconds[row.model, row.cluster] = (row, machine)
    for row, machine in answered_by(second_from) if second_from is not None else ():
        if row.condition == second:
            seconds[row.model, row.cluster] = (row, machine)
    for name, rows, where in ((first, firsts, folder), (second, seconds, second_from or folder)):
        if not rows:
            raise Refused(f"same-bytes: no rows of condition {name!r} in {where}")
    tally: dict[tuple[str, str], list[int]] = {}
    for (model, cluster), (row, machine) in sorted(firsts.items()):
        if (model, cluster) not in seconds:
            continue
        other, other_machine = seconds[model, cluster]
        if (row.message_sha256 is None or row.message_sha256 != other.message_sha256
                or row.output is None or other.output is None):
            continue
        unknown = [known(machine), known(other_machine)].count(False)
        where = (("one machine" if machine == other_machine else "two machines") if not unknown else
                 "one known, one not" if unknown == 1 else "neither known")
        cell = tally.setdefault((model, where), [0, 0])
        cell[0] += row.output == other.output
        cell[1] += 1
    return {key: (same, pairs) for key, (same, pairs) in sorted(tally.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="machines.py", description=__doc__.split("\n\n")[0],
                                     epilog="example: python scripts/machines.py count data/studies/guard/traces",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("describe", help="this machine in one line")
    counting = sub.add_parser("count", help="final rows per machine and model of a study's folder")
    counting.add_argument("folder", type=Path, help="data/studies/NAME/collecting or .../traces")
    pairing = sub.add_parser("same-bytes", help="identical outputs of the same message, on one machine or two")
    pairing.add_argument("folder", type=Path, help="data/studies/NAME/collecting or .../traces")
    pairing.add_argument("first", help="a condition, such as guarded")
    pairing.add_argument("second", help="another condition, such as paste-rule")
    pairing.add_argument("--second-from", type=Path, metavar="FOLDER",
                         help="read the second condition's rows from this folder's trace files (such as data/traces)")
    args = parser.parse_args(argv)
    if args.action == "describe":
        print(describe(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"),
                       len(os.sched_getaffinity(0))))
        return 0
    if not args.folder.is_dir():
        parser.error(f"folder: {args.folder} is not a folder")
    from common.errors import UserError

    try:
        if args.action == "count":
            counts = count(args.folder)
        else:
            if args.second_from is not None and not args.second_from.is_dir():
                parser.error(f"--second-from: {args.second_from} is not a folder")
            pairs = same_bytes(args.folder, args.first, args.second, args.second_from)
    except (Refused, UserError) as exc:
        print(f"machines.py: error: {exc}", file=sys.stderr)
        return 2
    if args.action == "count":
        print("rows\tmodel\tmachine")
        for (machine, model), rows in sorted(counts.items(), key=lambda item: (item[0][1], item[0][0])):
            print(f"{rows}\t{model}\t{machine}")
        return 0
    print(f"model\tanswered on\tidentical replies\tpairs ({args.first} and {args.second}, the same message)")
    for (model, where), (same, total) in pairs.items():
        print(f"{model}\t{where}\t{same}\t{total}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common.pipes import run_main

    sys.exit(run_main(lambda: main(sys.argv[1:])))
