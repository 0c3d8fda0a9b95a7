"""Which machine asked which rows of a locally collected study: the record scripts/collect_study.sh keeps.

Greedy decoding on llama.cpp gives the same bytes for the same request on one machine, but not always on
another: a CPU with other vector units (AVX2, AVX-512, AMX) sums in another order, and the weights may be
repacked for it (docs/GUARD.md, "Two runs"). A study collected over several sessions may be asked on several
machines, so each copy of the collection records the machine its server runs on, and this says which rows each
machine answered.

    python scripts/machines.py describe
        one line: this machine's CPU (model name, family and model, the vector units that change the sums)
        and its CPU count; scripts/serve_local.sh adds how the server loads the weights and its version
    python scripts/machines.py count data/studies/guard/collecting
        rows per machine and model, from the folder's machines.tsv and its trace files

machines.tsv (tab-separated, a header line first) has one line per server a copy of the collection started:
started (UTC, ISO 8601), shard (K/N), port, model, machine (the server's description). A trace row belongs to
the last line of its model and port (the port is in the row's request URL) started before the row's first
attempt; a row asked before any line is counted as "not recorded" (rows collected before the record was kept).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

FLAGS = ("avx2", "avx512f", "amx_tile")  # the vector units llama.cpp's CPU kernels choose between
COLUMNS = ("started", "shard", "port", "model", "machine")
NOT_RECORDED = "not recorded"


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


def read_log(path: Path) -> list[dict[str, str]]:
    """The lines of a machines.tsv, each checked; a bad line is refused naming its file and line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")) != COLUMNS:
        raise SystemExit(f"machines.py: {path}:1: expected the header {' '.join(COLUMNS)} (tab-separated)")
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(COLUMNS):
            raise SystemExit(f"machines.py: {path}:{number}: expected {len(COLUMNS)} tab-separated fields, "
                             f"got {len(fields)}")
        entry = dict(zip(COLUMNS, fields, strict=True))
        try:
            datetime.fromisoformat(entry["started"])
        except ValueError:
            raise SystemExit(f"machines.py: {path}:{number}: started: expected a UTC time such as "
                             f"2026-12-05T12:55:00Z, got {entry['started']!r}") from None
        entries.append(entry)
    return entries


def machine_of(entries: list[dict[str, str]], model: str, port: str, started: str) -> str:
    """The machine that answered a row of `model` asked on `port` at `started`: the last server of that model
    and port started before it."""
    when = datetime.fromisoformat(started)
    found = NOT_RECORDED
    for entry in entries:
        if entry["model"] == model and entry["port"] == port and datetime.fromisoformat(entry["started"]) <= when:
            found = entry["machine"]
    return found


def count(folder: Path) -> Counter:
    """(machine, model) -> rows, over the folder's trace files (shard files included)."""
    log = folder / "machines.tsv"
    entries = read_log(log) if log.exists() else []
    counts: Counter = Counter()
    traces = sorted(p for p in folder.iterdir() if re.search(r"\.jsonl(\.shard-[1-9][0-9]*)?$", p.name))
    for trace in traces:
        with trace.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    row = json.loads(line)
                    port = str(urlsplit(row["request"]["url"]).port)
                    started = row["attempts"][-1]["started_at"]
                except (ValueError, KeyError, IndexError, TypeError):
                    raise SystemExit(f"machines.py: {trace}:{number}: expected a trace row with request.url and "
                                     "attempts[-1].started_at (a torn last line: seam.py run --move-torn)") from None
                counts[machine_of(entries, row["model"], port, started), row["model"]] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="machines.py", description=__doc__.split("\n\n")[0],
                                     epilog="example: python scripts/machines.py count data/studies/guard/traces",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("describe", help="this machine in one line")
    counting = sub.add_parser("count", help="rows per machine and model of a study's folder")
    counting.add_argument("folder", type=Path, help="data/studies/NAME/collecting or .../traces")
    args = parser.parse_args(argv)
    if args.action == "describe":
        print(describe(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"),
                       len(os.sched_getaffinity(0))))
        return 0
    if not args.folder.is_dir():
        parser.error(f"folder: {args.folder} is not a folder")
    counts = count(args.folder)
    print("rows\tmodel\tmachine")
    for (machine, model), rows in sorted(counts.items(), key=lambda item: (item[0][1], item[0][0])):
        print(f"{rows}\t{model}\t{machine}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
