#!/usr/bin/env bash
# The test command: set up .venv, install the benchmark sources, check that the
# benchmark rebuilds byte for byte, lint, and run the test suite.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/venv.sh requirements.txt requirements-dev.txt requirements-build.txt
bash scripts/fetch_debian_sources.sh
echo "== rebuild check: data/benchmark regenerated from the source packages"
"$PY" seam.py build --verify
echo "== lint"
"$PY" -m ruff check .
echo "== tests"
"$PY" -m pytest -q "$@"
