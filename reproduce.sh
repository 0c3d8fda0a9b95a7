#!/usr/bin/env bash
# Regenerate the released labels, tables, review reports, page and studies from the released traces
# (and review answers), and compare them with the released files byte for byte. Exit 0 only when
# everything matches. Not regenerated here: the functional check's tables without --execute, and the
# occurrence audit (data/occurrence/: bash scripts/occurrence_sharegpt.sh --check).
#
#   ./reproduce.sh [--execute]   # --execute also reruns the functional check (runs model output in a sandbox)
#
# Steps: 1 verify the benchmark; 2 rescore each trace set in data/traces/ and compare with
# data/labels/ (the determinism audit); 3 regenerate data/tables/ (from the rescored labels and
# the traces) and compare; 3b regenerate each blinded review's report (data/review/) and compare;
# 3c regenerate the HTML report (data/report.html) and compare; 3d regenerate each condition-file study's
# labels, tables and report (data/studies/NAME/, scripts/study.sh) and compare; 4 summarise.
# The entailment tier runs only if the released labels were made with it (and the model is
# then required); otherwise both sides are lexical-only and the script says so.
#
# Steps that do not depend on each other run side by side, as many at once as there are cores
# (common/cpus.py: the affinity, capped by a container's CPU quota; SEAM_JOBS=N sets the number): 1,
# 1b and the lexical rescoring of each trace set; then, once
# those are done, 3 (its tables beside its validity tables), 3b, 3c and 3d. Their output is printed
# in the order of the steps, each step whole once it ends, so it reads the same for any number of
# jobs but for the times. With SEAM_JOBS=1 every step runs in turn and prints as it goes.
set -euo pipefail
cd "$(dirname "$0")"
started_all=$SECONDS  # the total counts the install into .venv too
if [ -n "${SEAM_JOBS:-}" ] && ! [[ $SEAM_JOBS =~ ^[1-9][0-9]*$ ]]; then
  echo "reproduce: SEAM_JOBS must be a whole number of jobs, at least 1; got '$SEAM_JOBS'" >&2
  exit 2
fi
source scripts/venv.sh requirements.txt
max_jobs=${SEAM_JOBS:-$("$PY" -m common.cpus 2>/dev/null || echo 1)}  # the CPUs this process can use
execute=()
if [ "${1:-}" = "--execute" ]; then execute=(--execute); fi

work=$(mktemp -d)
started=0   # steps started in the background so far (their folders are numbered)
queue=()    # the folders (under $work/steps) of what was started in the background and not yet printed, in order
running=()  # the process groups of the steps started in the background and not yet printed
stop_steps() {  # end every step still running in the background, with whatever it started (its process group)
  local pid
  for pid in ${running[@]+"${running[@]}"}; do kill -TERM -- "-$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
}
stopped() {  # stopped SIGNAL (Ctrl+C, a kill): clean up, then end by that signal, as the script would without a trap
  trap - "$1"
  stop_steps
  rm -rf "$work"
  kill -"$1" $$
}
trap 'stop_steps; rm -rf "$work"' EXIT
trap 'stopped INT' INT
trap 'stopped TERM' TERM
trap 'stopped HUP' HUP
failures=0

step() {  # step "title" command...: run, report ok/FAILED and the time taken (in the background if max_jobs > 1)
  if [ "$max_jobs" -gt 1 ]; then start_step "$@"; else run_step "$@"; fi
}
step_alone() {  # step_alone "title" command...: a step that has the machine to itself, once the steps before it ended
  print_steps
  run_step "$@"
}
run_step() {  # run_step "title" command...: the step in the foreground, printing as it goes
  local title=$1; shift
  local t0=$SECONDS
  echo "== $title"
  if "$@"; then
    echo "   ok ($((SECONDS - t0)) s)"
  else
    echo "   FAILED ($((SECONDS - t0)) s)"
    failures=$((failures + 1))
  fi
}
say() {  # say TEXT: print a line between steps, after the output of those started before it
  if [ ${#queue[@]} -eq 0 ]; then
    echo "$1"
    return 0
  fi
  started=$((started + 1))
  local dir="$work/steps/$started"
  mkdir -p "$dir"
  echo "$1" > "$dir/out"
  queue+=("$dir")
}
start_step() {  # start_step "title" command...: step in the background, its output kept in files until printed
  local title=$1; shift
  free_slot
  started=$((started + 1))
  local dir="$work/steps/$started"
  mkdir -p "$dir"
  # Its own process group (set -m, for the moment of the fork only), so that stop_steps can end what it started;
  # no standard input, so that a background process group never stops on the terminal.
  set -m
  (
    set +m
    t0=$SECONDS
    echo "== $title"
    if "$@"; then result=ok; else result=FAILED; fi
    echo "   $result ($((SECONDS - t0)) s)" > "$dir/end"
    echo "$result" > "$dir/result"
  ) > "$dir/out" 2> "$dir/err" < /dev/null &
  set +m
  echo $! > "$dir/pid"
  running+=("$!")
  queue+=("$dir")
}
free_slot() {  # wait until fewer than $max_jobs steps run in the background
  local pid alive
  while :; do
    alive=0
    for pid in ${running[@]+"${running[@]}"}; do
      if kill -0 "$pid" 2> /dev/null; then alive=$((alive + 1)); fi
    done
    if [ "$alive" -lt "$max_jobs" ]; then return 0; fi
    wait -n 2> /dev/null || true  # one of them ended (or none was left to wait for): count again
  done
}
print_steps() {  # wait for everything started in the background and print it in order, counting the failures
  local dir pid result
  for dir in ${queue[@]+"${queue[@]}"}; do
    if [ ! -f "$dir/pid" ]; then  # a line said between steps
      cat "$dir/out"
      continue
    fi
    read -r pid < "$dir/pid"
    wait "$pid" 2> /dev/null || true  # its result is in its files (also when `wait -n` reaped it already)
    cat "$dir/out"
    cat "$dir/err" >&2
    result=FAILED
    if [ -f "$dir/result" ]; then read -r result < "$dir/result"; fi
    if [ -f "$dir/end" ]; then cat "$dir/end"; else echo "   FAILED (ended before it finished)"; fi
    if [ "$result" != ok ]; then failures=$((failures + 1)); fi
  done
  queue=()
  running=()
}
noted() {  # step "title" noted "note" command...: the note prints under its step's header, then the command runs
  echo "   $1"
  shift
  "$@"
}

# data/ is the release. Files it does not have (a new model's traces put there) are named and left out, and
# released files that were changed are named, with what to do, before any step reports that they differ.
mapfile -t unreleased < <("$PY" scripts/unreleased.py)
new_files=()
changed_files=()
if [ ${#unreleased[@]} -gt 0 ]; then
  echo "== data/ holds what the release does not (the steps below check the release only):"
  for line in "${unreleased[@]}"; do
    echo "   ${line%% *}: ${line#* }"
    [ "${line%% *}" = new ] && new_files+=("${line#* }")
    [ "${line%% *}" = changed ] && changed_files+=("${line#* }")
  done
  echo "   your own model's traces belong in a folder of yours (e.g. runs/): move them there and set them beside"
  echo "   the release with 'python seam.py compare runs/MODEL.jsonl --out runs/compare', which never writes"
  echo "   under data/; a changed released file comes back with 'git checkout -- FILE'"
fi
listed() {  # listed FILE...: the first three, then how many more
  local text
  printf -v text '%s, ' "${@:1:3}"
  text=${text%, }
  if [ $# -gt 3 ]; then text+=" and $(($# - 3)) more"; fi
  echo "$text"
}
# The last line says it again (the list above has long scrolled away by then): "everything matches" is said of
# the release, not of everything in data/.
unreleased_note=""
if [ ${#new_files[@]} -eq 1 ]; then
  unreleased_note+="; 1 file in data/ is not in the release: $(listed "${new_files[@]}")"
elif [ ${#new_files[@]} -gt 1 ]; then
  unreleased_note+="; ${#new_files[@]} files in data/ are not in the release: $(listed "${new_files[@]}")"
fi
if [ ${#changed_files[@]} -eq 1 ]; then
  unreleased_note+="; 1 released file in data/ is changed: $(listed "${changed_files[@]}")"
elif [ ${#changed_files[@]} -gt 1 ]; then
  unreleased_note+="; ${#changed_files[@]} released files in data/ are changed: $(listed "${changed_files[@]}")"
fi
if [ -n "$unreleased_note" ]; then unreleased_note+=" (named at the top)"; fi
is_new() {  # is_new PATH: a file under data/ that the release does not have
  local file
  for file in ${new_files[@]+"${new_files[@]}"}; do [ "$file" = "$1" ] && return 0; done
  return 1
}

step "1. benchmark: counts, invariants, collisions, checksums (seam.py check)" "$PY" seam.py check
shopt -s nullglob
for file in data/conditions/*.toml; do
  step "1b. condition file $file: its layouts on every cluster (seam.py check --conditions)" \
    bash -c '"$PY" seam.py check --conditions "$1" > /dev/null' _ "$file"
done
if [ -f data/guard/selftest.txt ] && ! is_new data/guard/selftest.txt; then
  step "1c. the guard's location figures (scripts/guard_selftest.py --held-out) and compare with data/guard/selftest.txt" \
    bash -c '"$PY" scripts/guard_selftest.py --held-out --out "$1/guard-selftest.txt" > /dev/null && "$PY" scripts/compare.py data/guard/selftest.txt "$1/guard-selftest.txt"' _ "$work"
fi

traces=()
for trace in data/traces/*.jsonl; do
  is_new "$trace" || traces+=("$trace")
done
if [ ${#traces[@]} -eq 0 ]; then
  say "no released trace sets in data/traces/: nothing to rescore"
fi
mkdir -p "$work/labels" "$work/tables"
for trace in ${traces[@]+"${traces[@]}"}; do
  name=$(basename "$trace")
  released="data/labels/$name"
  tiers=$("$PY" scripts/released_tiers.py "$released")
  if [ "$tiers" = lexical ]; then
    note="$name: released labels are lexical-only (entailment not run); rescoring the same way"
    nli=(--no-nli)
    run=step
  else
    note="$name: released labels include the entailment tier; the model is needed to rescore them"
    nli=()
    run=step_alone  # the model uses the cores itself, and the entailment cache is one file for every trace set
  fi
  "$run" "2. rescore $trace and compare with $released" noted "$note" \
    bash -c '"$PY" seam.py score "$1" --out "$2" "${@:4}" && "$PY" scripts/compare.py "$3" "$2"' _ \
    "$trace" "$work/labels/$name" "$released" ${nli[@]+"${nli[@]}"}
done
print_steps  # the steps below read the labels just rescored

if [ -d data/tables ]; then
  # The tables read the labels and, for the sensitivity analyses, the traces they were scored from;
  # the validity tables read the traces and, for the provenance sensitivity analysis, the labels.
  tables=("$PY" seam.py tables "$work/labels" --out "$work/tables")
  validity=(true)
  ignore=()
  note=()
  if [ ${#traces[@]} -gt 0 ]; then
    tables+=(--traces "${traces[@]}")
    validity=("$PY" seam.py validity "${traces[@]}" --out "$work/tables" --labels "$work/labels"
              ${execute[@]+"${execute[@]}"})
    if [ ${#execute[@]} -eq 0 ]; then
      ignore=(--ignore 'validity_functional*')
      note=(noted "validity: the functional check executes model output and is not rerun; ./reproduce.sh --execute reruns and compares it")
    fi
  fi
  regenerate() {  # write every table into $work/tables, then compare them all with data/tables
    if [ "$max_jobs" -eq 1 ]; then
      "${tables[@]}" > /dev/null && "${validity[@]}" > /dev/null \
        && "$PY" scripts/compare.py data/tables "$work/tables" ${ignore[@]+"${ignore[@]}"}
      return
    fi
    # The two side by side (they write different files); what each says is kept apart and printed in turn.
    local failed=0 pid
    "${tables[@]}" > /dev/null 2> "$work/tables.err" &
    pid=$!
    "${validity[@]}" > /dev/null 2> "$work/validity.err" || failed=1
    wait "$pid" || failed=1
    cat "$work/tables.err" "$work/validity.err" >&2
    [ "$failed" -eq 0 ] && "$PY" scripts/compare.py data/tables "$work/tables" ${ignore[@]+"${ignore[@]}"}
  }
  step "3. regenerate the absorption and validity tables and compare with data/tables/" ${note[@]+"${note[@]}"} regenerate
else
  say "no released tables in data/tables/: nothing to compare"
fi

# A review is read against the labels it was drawn from. When the released labels were rescored since
# (a later scorer_version), data/review/NAME.drawn-labels.jsonl keeps the labels of the draw (the design:
# strata and weights), and the report measures the released labels on the same review (--rescored).
reviews=(data/review/*.review.jsonl)
for review in ${reviews[@]+"${reviews[@]}"}; do
  name=$(basename "$review" .review.jsonl)
  labels=(--labels "data/labels/$name.jsonl")
  if [ -f "data/review/$name.drawn-labels.jsonl" ]; then
    labels=(--labels "data/review/$name.drawn-labels.jsonl" --rescored "data/labels/$name.jsonl")
  fi
  step "3b. regenerate the blinded review's report from $review and data/labels/$name.jsonl and compare with data/review/$name/" \
    bash -c '"$PY" seam.py review report "$1" "${@:4}" --out "$3" > /dev/null && "$PY" scripts/compare.py "data/review/$2" "$3"' _ \
    "$review" "$name" "$work/review-$name" "${labels[@]}"
done

# The page is made from the labels just rescored and from the tables and review reports just checked
# against them (steps 2-3b), so a difference here is the page's own.
# Without the traces and tables it is made from, a released page cannot be regenerated: said, not failed
# (as for the tables above).
if [ ! -f data/report.html ]; then
  say "no released report in data/report.html: nothing to compare"
elif [ ${#traces[@]} -eq 0 ] || [ ! -d data/tables ]; then
  say "data/report.html is released without the traces and tables it is made from: nothing to compare"
else
  review=()  # the page's optional inputs, where released: the review reports and the occurrence audit's report
  if [ -d data/review ]; then review=(--review data/review); fi
  if [ -d data/occurrence/sharegpt-v3-prefix ]; then review+=(--occurrence data/occurrence/sharegpt-v3-prefix); fi
  step "3c. regenerate the HTML report and compare with data/report.html" \
    bash -c '"$PY" seam.py report --labels "$1/labels" --traces data/traces --tables data/tables "${@:2}" --out "$1/report.html" > /dev/null && "$PY" scripts/compare.py data/report.html "$1/report.html"' _ "$work" ${review[@]+"${review[@]}"}
fi

# A study of a condition file's conditions (docs/CONDITIONS.md): its traces are rescored against the same models'
# clean outputs in data/traces/, and its tables and page regenerated with the built-in labels; compared whole.
for study in data/studies/*/; do
  study=${study%/}
  name=$(basename "$study")
  found=("$study"/traces/*.jsonl)
  if [ ${#found[@]} -eq 0 ]; then
    say "$study: no traces yet (collected with data/conditions/$name.toml, docs/CONDITIONS.md): nothing to compare"
    continue
  fi
  missing=()  # a study's treatments pair with its models' built-in traces and are tabled with their labels
  for trace in "${found[@]}"; do
    model=$(basename "$trace")
    [ -f "data/traces/$model" ] && [ -f "data/labels/$model" ] || missing+=("$model")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "$study is released without the built-in traces and labels it pairs with (data/traces/ and data/labels/: ${missing[*]}): nothing to compare"
    continue
  fi
  compare_study() {  # $1 the study, $2 where its labels, tables and report are regenerated
    bash scripts/study.sh "$(basename "$1")" "$2" > /dev/null \
      && "$PY" scripts/compare.py "$1/labels" "$2/labels" && "$PY" scripts/compare.py "$1/tables" "$2/tables" \
      && "$PY" scripts/compare.py "$1/report.html" "$2/report.html"
  }
  # a study scored with the entailment tier has the machine (and the one entailment cache) to itself, as in step 2
  study_step=step
  for trace in "${found[@]}"; do
    [ "$("$PY" scripts/released_tiers.py "$study/labels/$(basename "$trace")")" = lexical ] || study_step=step_alone
  done
  "$study_step" "3d. regenerate the study $study (labels, tables, report) from its traces and compare" \
    compare_study "$study" "$work/studies/$name"
done

print_steps
echo "== 4. summary"
"$PY" -m stats.summary data/tables
"$PY" -m validity.summary data/tables
for study in data/studies/*/; do
  if [ -d "$study/tables" ]; then echo "study ${study%/}:"; "$PY" -m stats.summary "$study/tables"; fi
done
if [ "$failures" -eq 0 ]; then
  rerun=""
  [ ${#execute[@]} -eq 0 ] && rerun="; functional check not rerun (./reproduce.sh --execute)"
  echo "reproduce: everything matches ($((SECONDS - started_all)) s$rerun)$unreleased_note"
else
  echo "reproduce: $failures step(s) FAILED ($((SECONDS - started_all)) s)$unreleased_note"
  exit 1
fi
