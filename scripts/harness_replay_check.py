#!/usr/bin/env python3
"""A harness route on the whole benchmark: 1,800 requests through the real harness, imported, compared.

    python scripts/harness_replay_check.py                              # inspect_ai, SmolLM2's released replies
    python scripts/harness_replay_check.py --harness lm-eval
    python scripts/harness_replay_check.py --harness promptfoo
    python scripts/harness_replay_check.py --trace data/traces/qwen2.5-coder-0.5b.jsonl --connections 4

A local OpenAI-compatible server (scripts/replay_server.py) answers each message with the reply the released
trace recorded for it. Against it, side by side: the kit's own runner (`seam.py run` with the model's config,
its base_url pointed at the server), and the harness (`seam.py export --to HARNESS` of every request with the
model's token limit, the harness run as the export's README says, `seam.py import` of what it wrote). Then it
checks and prints: that the import holds the same rows as the runner's trace and the released trace (status,
output, finish reason, usage, served model, checksums; but for what the harness's log cannot hold, `Route.lacks`:
lm-eval keeps no finish reason, usage or served model, so a reply cut by the output limit imports as ok, and
promptfoo keeps no served model and only the three token counts), that `seam.py score --no-nli` gives the same
labels for the two (but for the clusters of those cut replies, for lm-eval), that `seam.py compare` reads the
import and names the harness, and how long each step took. The harness must be installed: inspect_ai
(requirements-dev.txt), lm-eval (pip install 'lm-eval[api]==0.4.13'), promptfoo (scripts/install_promptfoo.sh,
or SEAM_PROMPTFOO=COMMAND). Everything is written under --work (default runs/harness-replay/HARNESS, made anew),
which must be a folder under the repository's runs/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNS = ROOT / "runs"
COMPARED = ("id", "cluster", "condition", "source", "status", "output", "finish_reason", "served_model",
            "benchmark_sha256", "message_sha256", "usage")
COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")
CUT = "stopped by the output limit"
PROMPTFOO = Path.home() / ".cache" / "seam" / "promptfoo-0.118.0" / "node_modules" / ".bin" / "promptfoo"


@dataclass(frozen=True)
class Route:
    """A harness as the check runs it: its name on the compare page, the fields its log cannot hold (compared as
    None, or for usage as the three counts), and whether a reply cut by the output limit imports as ok."""

    page_name: str
    lacks: tuple[str, ...] = ()
    counts_only: bool = False
    cut_is_ok: bool = False


ROUTES = {"inspect": Route("inspect_ai"),
          "promptfoo": Route("promptfoo", lacks=("served_model",), counts_only=True),
          "lm-eval": Route("lm-eval", lacks=("finish_reason", "served_model", "usage"), cut_is_ok=True)}


def timed(what: str, command: list[str], times: dict, ok=(0, 1), **kwargs) -> None:
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    times[what] = time.monotonic() - start
    if done.returncode not in ok:
        sys.exit(f"harness_replay_check: {what} failed ({done.returncode}): "
                 f"{(done.stdout + done.stderr).strip()[-2000:]}")
    print(f"  {what}: {times[what]:.1f} s", flush=True)


def work_folder(given: str) -> Path:
    """--work resolved: a folder under the repository's runs/ (it is deleted and made anew), else refused."""
    work = (ROOT / given).resolve()
    if not work.is_relative_to(RUNS.resolve()) or work == RUNS.resolve():
        sys.exit(f"harness_replay_check: --work {given}: expected a folder under {RUNS} (it is deleted and "
                 "written anew), such as runs/harness-replay")
    return work


def rows(path: Path) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def seen(row: dict, route: Route) -> dict:
    """The compared fields of a row as the route's import can hold them."""
    found = {key: None if key in route.lacks else row.get(key) for key in COMPARED}
    if route.counts_only and isinstance(found["usage"], dict):
        found["usage"] = {key: value for key, value in found["usage"].items() if key in COUNTS}
    if route.cut_is_ok and (row.get("reason") or "").startswith(CUT):
        found["status"] = "ok"  # the harness cannot tell a cut reply from a whole one
    return found


def differing(mine: dict[str, dict], theirs: dict[str, dict], route: Route) -> list[str]:
    """The ids whose compared fields differ (or that one side lacks), both seen through what the route holds."""
    return sorted(rid for rid in mine.keys() | theirs.keys()
                  if rid not in mine or rid not in theirs or seen(mine[rid], route) != seen(theirs[rid], route))


def labels(path: Path) -> dict[str, dict]:
    """A labels file's rows by id, but for the model's name (the import's is NAME-HARNESS)."""
    return {row["id"]: {**row, "model": None} for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def cut_clusters(trace: dict[str, dict]) -> set[str]:
    return {row["cluster"] for row in trace.values() if (row.get("reason") or "").startswith(CUT)}


def same_labels(mine: Path, theirs: Path, what: str, route: Route, cut: set[str]) -> bool:
    """Whether two labels files agree (but, for a route where a cut reply imports as ok, in those clusters)."""
    a, b = labels(mine), labels(theirs)
    differ = [rid for rid in a.keys() | b.keys() if a.get(rid) != b.get(rid)]
    explained = [rid for rid in differ if route.cut_is_ok and rid.split("/")[0] in cut]
    rest = len(differ) - len(explained)
    note = f" ({len(explained)} more in the {len(cut)} clusters holding a reply cut by the limit)" if explained else ""
    print(f"labels differing but for the model's name ({what}): {rest}{note}")
    return rest == 0


def run_harness(harness: str, name: str, export: Path, base: str, work: Path, args, times: dict) -> list[Path]:
    """The harness run as the export's README says, against the replay server: the logs it wrote."""
    python = sys.executable
    if harness == "inspect":
        env = dict(os.environ, LOCAL_API_KEY="none", INSPECT_DISPLAY="none", HOME=str(work), NO_COLOR="1")
        timed(f"inspect eval (--max-connections {args.connections})",
              [str(Path(python).parent / "inspect"), "eval", "seam_task.py", "--model", f"openai-api/local/{name}",
               "--model-base-url", base, "--max-connections", str(args.connections), "--log-dir", "logs",
               "--display", "none"], times, cwd=export, env=env)
        return sorted((export / "logs").glob("*.eval"))[-1:]
    if harness == "lm-eval":
        env = dict(os.environ, HOME=str(work), HF_HOME=str(work / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                   TQDM_DISABLE="1", NO_COLOR="1")
        env.pop("OPENAI_API_KEY", None)
        timed("lm_eval (num_concurrent=1)",
              [str(Path(python).parent / "lm_eval"), "--model", "local-chat-completions", "--model_args",
               f'model="{name}",base_url={base}/chat/completions,num_concurrent=1', "--tasks", "seam",
               "--include_path", str(export), "--apply_chat_template", "--log_samples", "--output_path",
               str(export / "results")], times, ok=(0,), cwd=work, env=env)
        return sorted((export / "results").glob("*/samples_seam_*.jsonl"))
    env = dict(os.environ, PROMPTFOO_CONFIG_DIR=str(work / "promptfoo-home"), PROMPTFOO_DISABLE_TELEMETRY="1",
               PROMPTFOO_DISABLE_UPDATE="1", NO_COLOR="1", FORCE_COLOR="0")
    env.pop("OPENAI_API_KEY", None)
    timed("promptfoo eval (-j 1)", [args.promptfoo, "eval", "-c", str(export / "promptfooconfig.yaml"), "-o",
                                    str(export / "out.json"), "-j", "1", "--no-cache"], times, ok=(0, 100), cwd=work,
          env=env)  # promptfoo exits 100 when a test errored
    return [export / "out.json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", choices=tuple(ROUTES), default="inspect", help="the route (default inspect)")
    parser.add_argument("--trace", default="data/traces/smollm2-135m.jsonl", help="the released trace replayed")
    parser.add_argument("--work",
                        help="the folder written, under runs/ (made anew; default runs/harness-replay/HARNESS)")
    parser.add_argument("--connections", type=int, default=1, help="inspect's --max-connections (default 1)")
    args = parser.parse_args(argv)
    harness, route = args.harness, ROUTES[args.harness]
    work = work_folder(args.work or f"runs/harness-replay/{harness}")
    found = {"inspect": Path(sys.executable).parent / "inspect", "lm-eval": Path(sys.executable).parent / "lm_eval",
             "promptfoo": Path(os.environ.get("SEAM_PROMPTFOO") or PROMPTFOO)}[harness]
    if not found.exists() and not shutil.which(str(found)):
        sys.exit(f"harness_replay_check: {harness} is not installed ({found} not found)")
    args.promptfoo = str(found)
    trace = (ROOT / args.trace).resolve()
    name = trace.stem
    config_text = (ROOT / "data" / "models" / f"{name}.toml").read_text(encoding="utf-8")
    max_tokens = int(next(line.split("=")[1] for line in config_text.splitlines() if line.startswith("max_tokens")))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    python = sys.executable
    server = subprocess.Popen([python, "scripts/replay_server.py", str(trace), "--port", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = server.stdout.readline()
        base = first.split(" at ")[1].split()[0]  # http://127.0.0.1:PORT/v1
        print(f"replaying {trace.name} at {base} through {harness}", flush=True)
        config = work / f"{name}.toml"
        config.write_text(config_text.replace("http://127.0.0.1:8080/v1", base), encoding="utf-8")
        times: dict[str, float] = {}
        timed("runner (seam.py run, concurrency 1)",
              [python, "seam.py", "run", str(config), "--out", str(work / "runner.jsonl")], times, cwd=ROOT)
        export = work / harness
        timed("export", [python, "seam.py", "export", "--to", harness, "--out", str(export), "--max-tokens",
                         str(max_tokens), "--model", name, "--base-url", base], times, cwd=ROOT)
        logs = run_harness(harness, name, export, base, work, args, times)
        imported = work / "imported.jsonl"
        timed("import", [python, "seam.py", "import", *map(str, logs), "--out", str(imported), "--model",
                         f"{name}-{harness}"], times, cwd=ROOT)  # compare refuses a released model's name
    finally:
        server.terminate()
        server.wait()

    released, runner, mine = rows(trace), rows(work / "runner.jsonl"), rows(imported)
    print(f"rows: released {len(released):,}, runner {len(runner):,}, {harness} import {len(mine):,}")
    vs_runner, vs_released = differing(mine, runner, route), differing(mine, released, route)
    print(f"differing rows (but for what {harness}'s log cannot hold: {', '.join(route.lacks) or 'nothing'}"
          f"{'; usage as its three counts' if route.counts_only else ''}): import vs runner {len(vs_runner)}, "
          f"import vs released {len(vs_released)}, runner vs released "
          f"{len(differing(runner, released, ROUTES['inspect']))}")
    statuses = {s: sum(row["status"] == s for row in mine.values()) for s in ("ok", "unusable", "failed")}
    print(f"import statuses: {statuses}")
    cut = cut_clusters(runner)
    if route.cut_is_ok:
        print(f"replies cut by the output limit (ok in the import, unusable in the runner's trace): "
              f"{sum((row.get('reason') or '').startswith(CUT) for row in runner.values())}")
    scored = {}
    for what, path in (("runner", work / "runner.jsonl"), ("import", imported)):
        scored[what] = work / f"labels-{what}.jsonl"
        timed(f"score --no-nli ({what})", [python, "seam.py", "score", str(path), "--out", str(scored[what]),
                                            "--no-nli"], times, cwd=ROOT)
    same = same_labels(scored["import"], scored["runner"], "import vs runner", route, cut)
    released_labels = ROOT / "data" / "labels" / trace.name
    if released_labels.exists():  # the release's labels are lexical (scripts/released_tiers.py): --no-nli's
        same = same_labels(scored["import"], released_labels, f"import vs {released_labels.relative_to(ROOT)}",
                           route, cut_clusters(released)) and same
    timed("compare (import)", [python, "seam.py", "compare", str(imported), "--out", str(work / "compare")], times,
          cwd=ROOT)
    named = route.page_name in (work / "compare" / "report.html").read_text(encoding="utf-8")
    print(f"compare page names {route.page_name}: {'yes' if named else 'NO'}")
    return 0 if same and named and not vs_runner and not vs_released else 1


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
