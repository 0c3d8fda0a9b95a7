"""Regenerate `data/benchmark/` from the installed source packages, byte for byte.

`build_files` returns the exact bytes of every benchmark file (the three licence
partitions and MANIFEST.json) without touching the disk; `write` puts them in
place and `differences` compares them with what is committed, which is how
CI proves that the committed benchmark is what the builder makes.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmark.comments import HERE as COMMENTS_DIR
from benchmark.comments import casual_pool, native_pools
from benchmark.dataset import DATA_DIR, PARTITIONS, checksum
from benchmark.select import PER_SOURCE, SEED, select
from benchmark.sources import SOURCES
from common import jsonl
from common.files import write_files

MANIFEST = "MANIFEST.json"


def gather_candidates(sources=SOURCES, log=sys.stderr) -> dict:
    candidates = {}
    for source in sources:
        started = time.monotonic()
        module = importlib.import_module(f"benchmark.sources.{source}")
        candidates[source] = module.candidates()
        print(f"  {source}: {len(candidates[source])} candidates ({time.monotonic() - started:.1f} s)", file=log)
    return candidates


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_files(log=sys.stderr) -> dict[str, bytes]:
    """File name -> exact bytes of every file in data/benchmark/."""
    rows, reports = select(gather_candidates(log=log), casual_pool(), native_pools())
    files = {}
    for partition in PARTITIONS:
        files[f"{partition}.jsonl"] = "".join(jsonl.dumps(r) for r in rows if r["partition"] == partition).encode()
    inputs: dict[str, dict] = {}
    for row in rows:
        for prov in [row["provenance"], *row["extra_provenance"]]:
            inputs.setdefault(f"{prov['package']}:{prov['path']}", {"source": row["source"], **prov})
    manifest = {
        "seed": SEED,
        "per_source": PER_SOURCE,
        "benchmark_sha256": checksum([(Path(f"{p}.jsonl"), files[f"{p}.jsonl"]) for p in PARTITIONS]),
        "files": {name: _sha256(data) for name, data in files.items()},
        "counts": {p: sum(r["partition"] == p for r in rows) for p in PARTITIONS},
        "selection": [asdict(r) for r in reports],
        "comment_pools": {name: _sha256((COMMENTS_DIR / name).read_bytes())
                          for name in ("casual.jsonl", "native.jsonl")},
        "inputs": [inputs[key] for key in sorted(inputs)],
    }
    files[MANIFEST] = (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    return files


def write(files: dict[str, bytes], data_dir: Path = DATA_DIR) -> None:
    """Replace the benchmark files all at once, or (a full disk) not at all."""
    write_files({data_dir / name: data for name, data in files.items()}, "benchmark files")


def differences(files: dict[str, bytes], data_dir: Path = DATA_DIR) -> list[str]:
    """One line per file that differs from the committed one, naming the first differing line."""
    found = []
    for name, data in files.items():
        path = data_dir / name
        if not path.exists():
            found.append(f"{path}: missing (the build makes it)")
            continue
        committed = path.read_bytes()
        if committed == data:
            continue
        old, new = committed.split(b"\n"), data.split(b"\n")
        line = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
        found.append(f"{path}:{line + 1}: differs from the rebuilt file ({len(committed)} bytes committed, "
                     f"{len(data)} rebuilt)")
    return found
