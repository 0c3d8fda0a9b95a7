#!/usr/bin/env bash
# The guard's proxy on a real model: newline requests sent by the runner through `seam.py guard serve` in front
# of llama-server must get the very outputs the guard study's `guarded` requests got when sent directly.
#
#   bash scripts/guard_proxy_check.sh [MODEL] [N]     # default: smollm2-135m, the first 60 clusters
#
# It serves MODEL on 127.0.0.1:$UPSTREAM_PORT (default 8081, so that a collection on 8080 goes on) with the
# released run's settings, starts the proxy on $PROXY_PORT (default 8091) in front of it, and runs the first N
# clusters' `newline` requests through it (seam.py run, resumable) into $OUT (default
# ~/.cache/seam/guard-proxy-check/MODEL.jsonl: not in the repository). Then it compares each output with the
# same cluster's `guarded` row of the guard study (data/studies/guard/traces/ or collecting/): the message the
# model saw is the same (the proxy marked it on the way, the study rendered it marked), so greedy decoding with
# a fixed seed, one thread and no prompt cache must give the same bytes. It prints the proxy's counts and
# "K of M outputs identical" (M: the clusters the study has collected so far), and exits 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-smollm2-135m}"
N="${2:-60}"
UPSTREAM_PORT="${UPSTREAM_PORT:-8081}"
PROXY_PORT="${PROXY_PORT:-8091}"
work="${SEAM_CHECK_DIR:-$HOME/.cache/seam/guard-proxy-check}"
OUT="${OUT:-$work/$MODEL.jsonl}"
if [ -z "${PY:-}" ]; then source scripts/venv.sh requirements.txt; fi
mkdir -p "$work"
config="$work/$MODEL.proxy.toml"
sed "s|127.0.0.1:8080|127.0.0.1:$PROXY_PORT|" "data/models/$MODEL.toml" > "$config"

server_pid="" proxy_pid=""
cleanup() {
  [ -z "$proxy_pid" ] || kill "$proxy_pid" 2> /dev/null || true
  [ -z "$server_pid" ] || kill "$server_pid" 2> /dev/null || true
}
trap cleanup EXIT
THREADS=1 PORT=$UPSTREAM_PORT bash scripts/serve_local.sh "$MODEL"
server_pid=$(cat "${SEAM_LLAMA_CACHE:-$HOME/.cache/seam/llama}/server-$UPSTREAM_PORT.pid")
"$PY" seam.py guard serve --upstream "http://127.0.0.1:$UPSTREAM_PORT" --port "$PROXY_PORT" --quiet \
  2> "$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 1 50); do
  curl -sf "http://127.0.0.1:$PROXY_PORT/_guard/stats" > /dev/null && break
  sleep 0.2
done
"$PY" seam.py run "$config" --only newline --first "$N" --out "$OUT" > "$work/run.log" 2>&1 \
  || { tail -n 5 "$work/run.log" >&2; exit 1; }
echo "proxy counts: $(curl -sf "http://127.0.0.1:$PROXY_PORT/_guard/stats")"

"$PY" - "$OUT" "$MODEL" <<'PY'
import sys
from pathlib import Path

from common.traces import read_final, scan  # scan: the study may be appending right now

through, model = Path(sys.argv[1]), sys.argv[2]
study = next((p for p in (Path("data/studies/guard/traces") / f"{model}.jsonl",
                          Path("data/studies/guard/collecting") / f"{model}.jsonl") if p.exists()), None)
if study is None:
    sys.exit(f"guard_proxy_check: no guard study traces of {model} yet")
guarded = {row.cluster: row for row in scan(study).final.values() if row.condition == "guarded"}
same = differ = 0
asked = list(read_final(through).final.values())
for row in asked:
    direct = guarded.get(row.cluster)
    if direct is None:
        continue
    if (row.output, row.finish_reason, row.status) == (direct.output, direct.finish_reason, direct.status):
        same += 1
    else:
        differ += 1
        print(f"  {row.cluster}: through the proxy {row.status}/{row.finish_reason}, "
              f"{len(row.output or '')} characters; direct {direct.status}/{direct.finish_reason}, "
              f"{len(direct.output or '')} characters")
total = len(asked)
print(f"guard_proxy_check: {same} of {same + differ} outputs identical to the study's guarded ones "
      f"({total} asked through the proxy; {total - same - differ} not yet collected by the study)")
sys.exit(1 if differ else 0)
PY
