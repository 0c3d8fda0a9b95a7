"""Test support for the HTML report: a small release made from the released traces by the real stages.

`make_release` copies the rows of the first clusters of each released trace file, appends hostile
markup to the first answered newline output of each model (the page must show it as text), makes
the first answered blank request of each model a failed one (no output, no finish reason: the page
must say so), scores them with `seam.py score --no-nli`, makes the tables with `seam.py tables`, and
writes the report.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ("</script><script>window.seamPwned = 1</script><img src=x onerror=\"window.seamPwned = 2\">"
           "<!-- & &amp; \u2028 -->")


@dataclass(frozen=True)
class Release:
    root: Path
    traces: Path
    labels: Path
    tables: Path
    report: Path
    hostile_ids: tuple[str, ...]
    failed_ids: tuple[str, ...] = ()  # "model:cluster/condition" of the planted failed requests


def seam_main(argv: list[str]) -> None:
    import seam

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        status = seam.main(argv)
    if status != 0:
        raise AssertionError(f"seam.py {' '.join(argv)} exited {status}: {err.getvalue()}")


def make_release(root: Path, clusters: int = 6) -> Release:
    release = Release(root, root / "traces", root / "labels", root / "tables", root / "report.html", ())
    release.traces.mkdir(parents=True)
    hostile, failed = [], []
    for path in sorted((ROOT / "data" / "traces").glob("*.jsonl")):
        keep: list[str] = []
        lines = []
        planted = failed_one = False
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
            row = json.loads(line)
            if row["cluster"] not in keep:
                if len(keep) == clusters:
                    continue
                keep.append(row["cluster"])
            if not planted and row["condition"] == "newline" and row["status"] == "ok":
                planted = True
                row["output"] = f"{row['output']}\n{HOSTILE}"
                row["finish_reason"] = "stop"
                hostile.append(f"{row['model']}:{row['id']}")
                line = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
            elif not failed_one and row["condition"] == "blank" and row["status"] == "ok":
                failed_one = True
                row.update(status="failed", output=None, finish_reason=None, reason="HTTP 500: planted",
                           response=None, response_id=None, usage=None)
                failed.append(f"{row['model']}:{row['id']}")
                line = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
            lines.append(line)
        (release.traces / path.name).write_text("".join(lines), encoding="utf-8")
    seam_main(["score", *map(str, sorted(release.traces.glob("*.jsonl"))), "--out-dir", str(release.labels),
               "--no-nli", "--no-cache"])
    seam_main(["tables", str(release.labels), "--out", str(release.tables)])
    seam_main(["report", "--labels", str(release.labels), "--traces", str(release.traces), "--tables",
               str(release.tables), "--out", str(release.report)])
    return Release(release.root, release.traces, release.labels, release.tables, release.report, tuple(hostile),
                   tuple(failed))
