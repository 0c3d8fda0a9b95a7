#!/usr/bin/env bash
# The test command: set up .venv, install the benchmark sources, check that the
# benchmark rebuilds byte for byte, lint, and run the test suite.
#
# Two of the sources are Debian packages (scripts/fetch_debian_sources.sh). Where they
# cannot be had (no apt-get, not Debian), the rebuild check and the tests that read them
# are skipped with a notice and everything else runs. The same holds for the ShareGPT
# sample the occurrence audit was released from (scripts/fetch_sharegpt.sh, a pip
# download), and for the browser tests, which need Chromium (scripts/install_browser.sh
# installs Debian's as root; nothing else, no chromedriver: the tests speak its DevTools
# protocol over a pipe). On CI (CI set, as CI systems and .ci/run set it) a missing source
# or browser is an error instead, so that CI never skips them.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/venv.sh requirements.txt requirements-dev.txt requirements-build.txt
case "${CI:-}" in
  "" | 0 | false | False | FALSE | no) ci=false ;;
  *) ci=true ;;
esac
notices=()  # what could not be had here, said again at the end
if bash scripts/fetch_debian_sources.sh; then
  echo "== rebuild check: data/benchmark regenerated from the source packages"
  "$PY" seam.py build --verify
elif [ "$ci" = true ]; then
  echo "test.sh: the Debian sources are required on CI (CI=$CI) and could not be fetched (see above)" >&2
  exit 1
else
  notices+=("NOTICE: the Debian sources are not available here (see above), so the rebuild check and the tests that read them are skipped; CI runs them (Debian 12 with apt-get).")
  echo "${notices[-1]}"
fi
echo "== the ShareGPT sample (occurrence audit)"
if bash scripts/fetch_sharegpt.sh; then
  :
elif [ "$ci" = true ]; then
  echo "test.sh: the ShareGPT sample is required on CI (CI=$CI) and could not be fetched (see above)" >&2
  exit 1
else
  notices+=("NOTICE: the ShareGPT sample could not be fetched (see above), so the tests that read it are skipped; CI runs them.")
  echo "${notices[-1]}"
fi
if ! bash scripts/install_browser.sh; then
  if [ "$ci" = true ]; then
    echo "test.sh: Chromium is required on CI (CI=$CI) for the browser tests and could not be installed (see above)" >&2
    exit 1
  fi
  notices+=("NOTICE: no Chromium here (see above), so the browser tests are skipped; CI runs them (Debian 12 with apt-get).")
  echo "${notices[-1]}"
fi
echo "== lint"
"$PY" -m ruff check .
echo "== tests"
status=0
# Every core runs tests, each test file on one worker (its module fixtures built once); the slowest 25 are
# listed, since CI's time is watched.
"$PY" -m pytest -q -rs -n auto --dist loadfile --durations=25 "$@" || status=$?
for notice in ${notices[@]+"${notices[@]}"}; do
  echo "$notice"
done
exit "$status"
