"""Which machine answered which rows of a locally collected study: the record scripts/collect_study.sh keeps.

Greedy decoding on llama.cpp gives the same bytes for the same request on one machine, but not always on
another: a CPU with other vector units (AVX2, AVX-512, AMX) sums in another order, and the weights may be
repacked for it (docs/GUARD.md, "Two runs"). A study collected over several sessions may be asked on several
machines, so each copy of the collection records the machine its server runs on, and this says which rows each
machine answered.

    python scripts/machines.py describe
        one line: this machine's CPU (model name, family and model, the vector units that change the sums)
        and its CPU count; scripts/serve_local.sh adds how the server loads the weights and its version
    python scripts/machines.py count data/studies/guard/collecting
        final rows per machine and model, from the folder's machines.tsv and its trace files
    python scripts/machines.py same-bytes data/studies/guard/collecting guarded paste-rule
        where two conditions sent a model the same message (message_sha256) and both were answered (status
        ok), how often the two outputs are the same bytes when one machine answered both, and when two did
    python scripts/machines.py same-bytes data/studies/guard/traces guarded boundary --second-from data/traces
        the same, the second condition's rows read from the release's traces

machines.tsv (tab-separated, a header line first) has one line per server a copy of the collection started:
started (UTC, ISO 8601 with a Z or an offset), shard (K/N), port, model, machine (the server's description).
A final trace row (read as every stage reads traces, `common.traces`: the last row of an id counts, and a torn
last line that a run is still writing is no row yet) belongs to the server of its model and port (the port in
its request URL) started last before its last attempt, the one that got its answer; a row answered before any
such server is "not recorded" (rows collected before the record was kept).
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
    lines = path.read_text(encoding="utf-8").splitlines()
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
    found = []
    for trace in sorted(p for p in folder.iterdir() if TRACE_NAME.search(p.name)):
        read = scan(trace)  # each row checked as a TraceRow; a torn tail being written is left out
        for rid, row in read.final.items():
            if not row.attempts:
                raise Refused(f"{read.where[rid]}: expected a row with at least one attempt")
            answered = row.attempts[-1].started(read.where[rid])  # checked when read: aware, in UTC
            port = urlsplit(str(row.request.get("url", ""))).port
            found.append((row, machine_of(servers, row.model, str(port), answered)))
    return found


def count(folder: Path) -> Counter:
    """(machine, model) -> final rows, over the folder's trace files (shard files included)."""
    return Counter((machine, row.model) for row, machine in answered_by(folder))


def same_bytes(folder: Path, first: str, second: str,
               second_from: Path | None = None) -> dict[tuple[str, str], tuple[int, int]]:
    """(model, where) -> (identical outputs, pairs) over the clusters where `first` and `second` sent the model
    the same message and both got an answer (status ok); where is "one machine" (one recorded machine answered
    both), "two machines" (two recorded ones), "one recorded, one not" or "neither recorded" (one machine or
    two: not known). With `second_from`, the `second` condition's rows are read from that folder's trace files
    instead (the release's, data/traces/, say: its rows are "not recorded")."""
    by_key: dict[tuple[str, str, str], tuple[TraceRow, str]] = {}
    for source, wanted in ((folder, (first,) if second_from else (first, second)),
                           *(((second_from, (second,)),) if second_from else ())):
        for row, machine in answered_by(source):
            if row.condition in wanted:
                by_key[row.model, row.cluster, row.condition] = (row, machine)
    tally: dict[tuple[str, str], list[int]] = {}
    for (model, cluster, condition), (row, machine) in sorted(by_key.items()):
        if condition != first or (model, cluster, second) not in by_key:
            continue
        other, other_machine = by_key[model, cluster, second]
        if (row.message_sha256 is None or row.message_sha256 != other.message_sha256 or row.status != "ok"
                or other.status != "ok"):
            continue
        unrecorded = (machine, other_machine).count(NOT_RECORDED)
        where = (("one machine" if machine == other_machine else "two machines") if not unrecorded else
                 "one recorded, one not" if unrecorded == 1 else "neither recorded")
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
    print(f"model\tanswered on\tidentical outputs\tpairs ({args.first} and {args.second}, the same message)")
    for (model, where), (same, total) in pairs.items():
        print(f"{model}\t{where}\t{same}\t{total}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common.pipes import run_main

    sys.exit(run_main(lambda: main(sys.argv[1:])))
