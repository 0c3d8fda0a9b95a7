#!/usr/bin/env bash
# The test command: set up .venv, install the benchmark sources and Chromium, check that
# the benchmark rebuilds byte for byte, lint, and run the test suite.
#
# Two of the sources are Debian packages (scripts/fetch_debian_sources.sh). Where they
# cannot be had (no apt-get, not Debian), the rebuild check and the tests that read them
# are skipped with a notice and everything else runs. The browser tests need Chromium
# (scripts/install_browser.sh installs Debian's as root; nothing else, no chromedriver:
# the tests speak its DevTools protocol over a pipe); without one they are skipped with a
# notice. On CI (CI set, as CI systems and .ci/run set it) either is an error instead, so
# that CI never skips them.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/venv.sh requirements.txt requirements-dev.txt requirements-build.txt
case "${CI:-}" in
  "" | 0 | false | False | FALSE | no) ci=false ;;
  *) ci=true ;;
esac
notice=""
if bash scripts/fetch_debian_sources.sh; then
  echo "== rebuild check: data/benchmark regenerated from the source packages"
  "$PY" seam.py build --verify
elif [ "$ci" = true ]; then
  echo "test.sh: the Debian sources are required on CI (CI=$CI) and could not be fetched (see above)" >&2
  exit 1
else
  notice="NOTICE: the Debian sources are not available here (see above), so the rebuild check and the tests that read them are skipped; CI runs them (Debian 12 with apt-get)."
  echo "$notice"
fi
if ! bash scripts/install_browser.sh; then
  if [ "$ci" = true ]; then
    echo "test.sh: Chromium is required on CI (CI=$CI) for the browser tests and could not be installed (see above)" >&2
    exit 1
  fi
  browser_notice="NOTICE: no Chromium here (see above), so the browser tests are skipped; CI runs them (Debian 12 with apt-get)."
  echo "$browser_notice"
  notice="${notice:+$notice$'\n'}$browser_notice"
fi
echo "== lint"
"$PY" -m ruff check .
echo "== tests"
status=0
"$PY" -m pytest -q -rs "$@" || status=$?
if [ -n "$notice" ]; then
  echo "$notice"
fi
exit "$status"
