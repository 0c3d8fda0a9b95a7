# Sourced by test.sh and reproduce.sh: create .venv on first use, install the
# requirement files named as arguments, activate it, and export PY (the python to use).
# Re-installs only when a requirements file changed since the last install (a stamp
# holds their hash). With SEAM_NO_VENV=1 the current python3 is used as it is, with
# nothing installed (the tests run reproduce.sh on a copy of the repository so).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${SEAM_NO_VENV:-}" = 1 ]; then
  export PY="${PYTHON:-python3}"
  return 0
fi
if [ ! -x .venv/bin/python ]; then
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "seam needs Python 3.11 or newer, found $(python3 --version)" >&2; return 1; }
  echo "creating .venv with $(python3 --version)"
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
export PY=python
stamp=".venv/.seam-installed-$(cat "$@" | python -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')"
if [ ! -f "$stamp" ]; then
  for file in "$@"; do
    # Say what is being installed and how long it took: the first install takes a while.
    packages=$(sed -e 's/#.*//' -e '/^-r/d' "$file" | tr -s '[:space:]' ' ')
    packages=${packages# }
    echo "== installing into .venv (first use, or $file changed): ${packages% }"
    installing_since=$SECONDS
    if [ "$file" = requirements-build.txt ]; then
      python -m pip install -q --no-deps -r "$file"
    else
      python -m pip install -q -r "$file"
    fi
    echo "   installed ($((SECONDS - installing_since)) s)"
  done
  touch "$stamp"
fi
