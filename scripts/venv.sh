# Sourced by test.sh and reproduce.sh: create .venv on first use, install the
# requirement files named as arguments, and activate it. Re-installs only when a
# requirements file changed since the last install (a stamp holds their hash).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv with $(python3 --version)"
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
stamp=".venv/.seam-installed-$(cat "$@" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  for file in "$@"; do
    if [ "$file" = requirements-build.txt ]; then
      python -m pip install -q --no-deps -r "$file"
    else
      python -m pip install -q -r "$file"
    fi
  done
  touch "$stamp"
fi
