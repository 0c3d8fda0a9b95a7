#!/usr/bin/env bash
# Regenerate a condition-file study's labels, tables and report from its traces (docs/CONDITIONS.md).
#
#   bash scripts/study.sh NAME [OUT]     # OUT defaults to data/studies/NAME
#
# A study NAME runs the conditions of data/conditions/NAME.toml on models whose built-in traces and labels
# are released (data/traces/MODEL.jsonl, data/labels/MODEL.jsonl); its own traces are
# data/studies/NAME/traces/MODEL.jsonl, one file per model. It writes
#   OUT/labels/MODEL.jsonl  the study's traces scored, each paired with the same model's clean output
#                           in data/traces/MODEL.jsonl (--clean-traces), under the same scorer tiers as
#                           the study's released labels (or, before there are any, the model's built-in ones)
#   OUT/tables/             the tables of the model's built-in labels and the study's together: the rates of
#                           every condition, the built-in contrasts and the condition file's (and its recovered
#                           shares, and the same request asked under two conditions, where any is), beside the
#                           validity tables of every condition's outputs (seam.py validity, without --execute)
#   OUT/report.html         the page of the same, every case of both
# ./reproduce.sh runs it into a temporary folder and compares the three with the released ones byte for byte.
#
#   bash scripts/study.sh --collecting NAME OUT   # a look at a study still collecting: the same from the rows of
#                                                 # data/studies/NAME/collecting/ so far, into OUT (not the study's)
set -euo pipefail
cd "$(dirname "$0")/.."
folder=traces
if [ "${1:-}" = --collecting ]; then
  folder=collecting
  shift
  [ $# -eq 2 ] && [ -n "$2" ] || { echo "usage: bash scripts/study.sh --collecting NAME OUT" >&2; exit 2; }
  case "$(realpath -m -- "$2")/" in
    "$(realpath -m -- data)"/*) echo "study.sh: --collecting writes into a folder of yours, not under data/" >&2; exit 2 ;;
  esac
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash scripts/study.sh NAME [OUT]" >&2
  exit 2
fi
name=$1
study="data/studies/$name"
out=${2:-$study}
conditions="data/conditions/$name.toml"
if [ -z "${PY:-}" ]; then source scripts/venv.sh requirements.txt; fi
[ -f "$conditions" ] || { echo "study.sh: no condition file $conditions" >&2; exit 2; }
shopt -s nullglob
traces=("$study/$folder"/*.jsonl)
if [ ${#traces[@]} -eq 0 ]; then
  echo "study.sh: $study/$folder/ holds no trace files yet (docs/CONDITIONS.md: how to collect them)" >&2
  exit 2
fi

for shard in "$study/$folder"/*.jsonl.shard-*; do  # a shard file (scripts/shards.py), not its notes
  if [ "$folder" = traces ] && [[ $shard =~ \.shard-[1-9][0-9]*$ ]]; then
    echo "study.sh: $shard: a shard file not joined yet (python scripts/shards.py join ${shard%.shard-*})" >&2
    exit 2
  fi
done

# Checked before anything is written: each model's clean outputs are paired with, and its built-in labels
# tabled and shown beside the study's.
for trace in "${traces[@]}"; do
  model=$(basename "$trace")
  [ -f "data/traces/$model" ] || { echo "study.sh: $trace has no built-in traces data/traces/$model to pair with" >&2; exit 2; }
  [ -f "data/labels/$model" ] || { echo "study.sh: $trace has no built-in labels data/labels/$model to table with (python seam.py score data/traces/$model --out data/labels/$model)" >&2; exit 2; }
done

if [ "$folder" = collecting ]; then
  # A collection may be appending to these files: every step below reads one copy of the rows so far, without a
  # last line still being written, with the rows of the model's shard files (scripts/shards.py).
  mkdir -p "$out/traces"
  copies=()
  for trace in "${traces[@]}"; do
    copy="$out/traces/$(basename "$trace")"
    copies+=("$copy")
    "$PY" scripts/shards.py join "$trace" --out "$copy"  # and the rows of its shard files so far
  done
  traces=("${copies[@]}")
fi

labels=()   # the built-in labels of each model in the study, then the study's
builtin=()  # the built-in traces of each model in the study
mkdir -p "$out/labels"
for trace in "${traces[@]}"; do
  model=$(basename "$trace")
  released="$study/labels/$model"
  [ -f "$released" ] || released="data/labels/$model"
  nli=()
  if [ "$("$PY" scripts/released_tiers.py "$released")" = lexical ]; then nli=(--no-nli); fi
  "$PY" seam.py score "$trace" --conditions "$conditions" --clean-traces "data/traces/$model" \
    --out "$out/labels/$model" ${nli[@]+"${nli[@]}"}
  labels+=("data/labels/$model")
  builtin+=("data/traces/$model")
done
"$PY" seam.py tables "${labels[@]}" "$out/labels" --conditions "$conditions" \
  --traces "${builtin[@]}" "${traces[@]}" --out "$out/tables"
# Edit integrity beside absorption: the validity checks of every condition's outputs, each treatment against its
# control, into the same folder (the report shows them; the functional check, which executes model output, is
# not run here: docs/VALIDITY.md).
"$PY" seam.py validity "${builtin[@]}" "${traces[@]}" --conditions "$conditions" --labels "${labels[@]}" \
  "$out/labels" --out "$out/tables"
"$PY" seam.py report --conditions "$conditions" --labels "${labels[@]}" "$out/labels" \
  --traces "${builtin[@]}" "${traces[@]}" --tables "$out/tables" --out "$out/report.html"
