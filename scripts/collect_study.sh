#!/usr/bin/env bash
# Collect a condition-file study's traces on the released local models, one model after another, resumably.
#
#   bash scripts/collect_study.sh NAME [MODEL ...]     # default models: smollm2-135m qwen2.5-coder-0.5b qwen2.5-coder-1.5b
#   nohup bash scripts/collect_study.sh guard > ~/.cache/seam/collect-guard.log 2>&1 &
#
# For each model it serves the model on 127.0.0.1:$PORT (default 8080) with the released run's settings
# (scripts/serve_local.sh: one thread, greedy, seed 0, no prompt cache: data/models/MODEL.toml), asks every
# request of the conditions data/conditions/NAME.toml defines (seam.py prompts --only those; a later turn holding
# the model's own reply reads it from data/traces/MODEL.jsonl, --replies), appending to
# data/studies/NAME/collecting/MODEL.jsonl, and stops the server. Killed at any point (a session's end), it is
# rerun with the same command: the runner skips what is answered and asks the rest (docs/RUNNER.md, resuming);
# a model whose rows are all there is passed over in seconds. Each model's progress goes to
# $SEAM_MODEL_CACHE/../collect-NAME-MODEL.log (default ~/.cache/seam/); nothing but the traces is written in
# the repository. The traces stay in collecting/ (which ./reproduce.sh does not read) until every model's are
# complete; then `mv data/studies/NAME/collecting data/studies/NAME/traces` and `bash scripts/study.sh NAME`
# release the study, and ./reproduce.sh regenerates and compares it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: bash scripts/collect_study.sh NAME [MODEL ...]" >&2
  exit 2
fi
name=$1
shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(smollm2-135m qwen2.5-coder-0.5b qwen2.5-coder-1.5b)
conditions="data/conditions/$name.toml"
[ -f "$conditions" ] || { echo "collect_study.sh: no condition file $conditions" >&2; exit 2; }
if [ -z "${PY:-}" ]; then source scripts/venv.sh requirements.txt; fi
PORT="${PORT:-8080}"
logs="${SEAM_COLLECT_LOGS:-$HOME/.cache/seam}"
mkdir -p "$logs" "data/studies/$name/collecting"

only=$("$PY" -c 'import sys; from benchmark.conditions import load; print(",".join(c.name for c in load(sys.argv[1]).user))' "$conditions")
requests=$(mktemp "${TMPDIR:-/tmp}/seam-$name-requests.XXXXXX")
server_pid=""
configs=()  # the configs made for another port than 8080
cleanup() {
  rm -f "$requests" ${configs[@]+"${configs[@]}"}
  if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; fi
}
trap cleanup EXIT
"$PY" seam.py check --conditions "$conditions" > /dev/null
echo "study $name: conditions $only, models: ${models[*]}"

for model in "${models[@]}"; do
  out="data/studies/$name/collecting/$model.jsonl"
  config="data/models/$model.toml"
  [ -f "$config" ] || { echo "collect_study.sh: no model config $config" >&2; exit 2; }
  if [ "$PORT" != 8080 ]; then
    config=$(mktemp "${TMPDIR:-/tmp}/seam-$model-$PORT.XXXXXX.toml")
    sed "s|127.0.0.1:8080|127.0.0.1:$PORT|" "data/models/$model.toml" > "$config"
    configs+=("$config")
  fi
  replies=()  # the released clean outputs a later turn puts back (unused by a condition sent as one message)
  if [ -f "data/traces/$model.jsonl" ]; then replies=(--replies "data/traces/$model.jsonl"); fi
  "$PY" seam.py prompts --conditions "$conditions" --only "$only" ${replies[@]+"${replies[@]}"} > "$requests"
  echo "== $model -> $out: $(wc -l < "$requests") requests ($(date -u +%FT%TZ))"
  THREADS=1 PORT=$PORT bash scripts/serve_local.sh "$model"
  server_pid=$(cat "${SEAM_LLAMA_CACHE:-$HOME/.cache/seam/llama}/server-$PORT.pid")
  "$PY" seam.py run "$config" --conditions "$conditions" --requests "$requests" --out "$out" \
    > "$logs/collect-$name-$model.log" 2>&1 || { tail -n 5 "$logs/collect-$name-$model.log" >&2; exit 1; }
  tail -n 3 "$logs/collect-$name-$model.log"
  kill "$server_pid" 2> /dev/null || true
  while kill -0 "$server_pid" 2> /dev/null; do sleep 1; done  # the port is free for the next model
  server_pid=""
done
echo "study $name: collected ($(date -u +%FT%TZ))"
