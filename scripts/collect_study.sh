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
# $SEAM_COLLECT_LOGS/collect-NAME-MODEL.log (default ~/.cache/seam/); nothing but the traces and the record
# of the machines that answered them (collecting/machines.tsv, below) is written in the repository. The traces stay in collecting/ (which ./reproduce.sh does not read) until every model's are
# complete; then `mv data/studies/NAME/collecting data/studies/NAME/traces` and `bash scripts/study.sh NAME`
# release the study, and ./reproduce.sh regenerates and compares it from then on.
#
# Each server started adds a line to data/studies/NAME/collecting/machines.tsv (when, which shard, port and
# model, and the machine: CPU, how the weights were loaded, the server's version), so that which machine answered
# which rows is known when a study is collected over several sessions: python scripts/machines.py count FOLDER.
#
# Two cores: SHARD=K/N asks only shard K of N of each model's requests (alternate clusters, scripts/shards.py),
# appending to MODEL.jsonl for K = 1 and to MODEL.jsonl.shard-K otherwise, so that N copies of the command, each
# with its own PORT, share each model between N single-thread servers (logs: collect-NAME-MODEL.shard-K.log):
#   SHARD=1/2 bash scripts/collect_study.sh guard
#   SHARD=2/2 PORT=8081 bash scripts/collect_study.sh guard
# Run every copy with the same N. Each leaves out what any file answered, and a copy that ends a model joins
# the shard files into MODEL.jsonl once no run is appending to any of them (so the last copy to end does); it
# says "collected" only when every request of every model has a row in MODEL.jsonl.
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
PORT="${PORT:-8080}"
SHARD="${SHARD:-1/1}"
k=${SHARD%%/*}
if ! [[ $SHARD =~ ^[1-9][0-9]*/[1-9][0-9]*$ ]] || [ "$k" -gt "${SHARD#*/}" ]; then
  echo "collect_study.sh: SHARD=$SHARD: expected K/N with 1 <= K <= N (such as 2/2)" >&2
  exit 2
fi
if [ -z "${PY:-}" ]; then source scripts/venv.sh requirements.txt; fi
logs="${SEAM_COLLECT_LOGS:-$HOME/.cache/seam}"
mkdir -p "$logs" "data/studies/$name/collecting"

only=$("$PY" -c 'import sys; from benchmark.conditions import load; print(",".join(c.name for c in load(sys.argv[1]).user))' "$conditions")
every=$(mktemp "${TMPDIR:-/tmp}/seam-$name-every.XXXXXX")
requests=$(mktemp "${TMPDIR:-/tmp}/seam-$name-requests.XXXXXX")
errors=$(mktemp "${TMPDIR:-/tmp}/seam-$name-errors.XXXXXX")
server_pid=""
runner_pid=""
configs=()  # the configs made for another port than 8080
cleanup() {  # the runner first (SIGTERM: it keeps its rows and notes), then the server it is asking
  if [ -n "$runner_pid" ]; then
    kill -TERM "$runner_pid" 2> /dev/null || true
    wait "$runner_pid" 2> /dev/null || true
  fi
  rm -f "$every" "$requests" "$errors" ${configs[@]+"${configs[@]}"}
  if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
"$PY" seam.py check --conditions "$conditions" > /dev/null
echo "study $name: conditions $only, models: ${models[*]}, shard $SHARD"

unjoined() {  # the shard files of a trace (MODEL.jsonl.shard-K, not their notes)
  local file
  for file in "$1".shard-*; do
    [[ -f $file && $file =~ \.shard-[1-9][0-9]*$ ]] && echo "$file"
  done
  return 0
}

# Which machine answers which rows (scripts/machines.py count): a line per server started, kept with the traces.
machines="data/studies/$name/collecting/machines.tsv"
record_machine() {
  local described="${SEAM_LLAMA_CACHE:-$HOME/.cache/seam/llama}/server-$PORT.machine" machine
  machine=$({ tr -d '\t\r' < "$described"; } 2> /dev/null | head -n 1 || true)
  (
    # two copies may start a server at the same moment: one header, whole lines (without flock(1), as it comes)
    if command -v flock > /dev/null; then flock 8; fi
    [ -s "$machines" ] || printf 'started\tshard\tport\tmodel\tmachine\n' >&8
    printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$SHARD" "$PORT" "$1" "${machine:-not described}" >&8
  ) 8>> "$machines"
}

incomplete=()
for model in "${models[@]}"; do
  out="data/studies/$name/collecting/$model.jsonl"
  mine=$("$PY" scripts/shards.py path "$SHARD" "$out")
  log="$logs/collect-$name-$model.log"
  if [ "$SHARD" != 1/1 ]; then log="$logs/collect-$name-$model.shard-$k.log"; fi
  config="data/models/$model.toml"
  [ -f "$config" ] || { echo "collect_study.sh: no model config $config" >&2; exit 2; }
  if [ "$PORT" != 8080 ]; then
    config=$(mktemp "${TMPDIR:-/tmp}/seam-$model-$PORT.XXXXXX.toml")
    sed "s|127.0.0.1:8080|127.0.0.1:$PORT|" "data/models/$model.toml" > "$config"
    configs+=("$config")
  fi
  replies=()  # the released clean outputs a later turn puts back (unused by a condition sent as one message)
  if [ -f "data/traces/$model.jsonl" ]; then replies=(--replies "data/traces/$model.jsonl"); fi
  "$PY" seam.py prompts --conditions "$conditions" --only "$only" ${replies[@]+"${replies[@]}"} > "$every"
  # The shard's requests leave out every request a file has a row for, so no runner sees those rows: the
  # runner's own checks of them (the model, the request settings, each request asked as it is rendered now)
  # are made here, by a dry run on each file that sends nothing (--move-torn: a row that another copy is
  # writing is not an error).
  for file in $(unjoined "$out") "$out"; do
    [ -f "$file" ] || continue
    "$PY" seam.py run "$config" --conditions "$conditions" --requests "$every" --out "$file" --dry-run --move-torn \
      > /dev/null 2> "$errors" || { cat "$errors" >&2; exit 1; }
  done
  "$PY" scripts/shards.py select "$SHARD" "$out" < "$every" > "$requests"
  if [ -s "$requests" ]; then
    echo "== $model -> $mine: $(wc -l < "$requests") requests ($(date -u +%FT%TZ))"
    THREADS=1 PORT=$PORT bash scripts/serve_local.sh "$model"
    server_pid=$(cat "${SEAM_LLAMA_CACHE:-$HOME/.cache/seam/llama}/server-$PORT.pid")
    record_machine "$model"
    for attempt in 1 2 3 4 5 6; do
      "$PY" seam.py run "$config" --conditions "$conditions" --requests "$requests" --out "$mine" --move-torn \
        > "$log" 2>&1 &
      runner_pid=$!
      status=0
      wait "$runner_pid" || status=$?
      runner_pid=""
      [ "$status" -eq 0 ] && break
      # Another copy's join holds the file's lock for a second or two: wait, and choose again (it may have
      # moved this shard's rows into the trace).
      if [ "$attempt" -lt 6 ] && tail -n 1 "$log" | grep -q -e "another 'seam.py run' is appending" -e "removed or replaced while"; then
        sleep 10
        "$PY" scripts/shards.py select "$SHARD" "$out" < "$every" > "$requests"
        [ -s "$requests" ] || break
        continue
      fi
      tail -n 5 "$log" >&2
      exit 1
    done
    tail -n 3 "$log"
    kill "$server_pid" 2> /dev/null || true
    while kill -0 "$server_pid" 2> /dev/null; do sleep 1; done  # the port is free for the next model
    server_pid=""
  else
    echo "== $model: shard $SHARD has nothing left to ask"
  fi
  "$PY" scripts/shards.py join "$out"
  if [ -n "$(unjoined "$out")" ] || [ "$("$PY" scripts/shards.py left "$out" < "$every")" -ne 0 ]; then
    incomplete+=("$model")
  fi
done
if [ ${#incomplete[@]} -gt 0 ]; then
  echo "study $name: shard $SHARD done ($(date -u +%FT%TZ)); not complete yet: ${incomplete[*]} (another shard is" \
    "still asking, or was stopped, or its file is not joined: python scripts/shards.py join TRACE says why)"
else
  echo "study $name: collected ($(date -u +%FT%TZ))"
fi
