#!/usr/bin/env bash
# Download the Debian packages that hold two of the benchmark's sources and unpack
# them under ${SEAM_SOURCES:-.sources}/debian/<package>/ without installing them
# (r-cran-janeaustenr would otherwise pull in all of R). Each folder gets a VERSION
# file; the builder records it, and the SHA-256 of every file it reads.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${SEAM_SOURCES:-$PWD/.sources}/debian"
# The versions the committed benchmark was built from (data/benchmark/MANIFEST.json records them
# and every file's SHA-256). Debian replaces security-updated versions in its archive; if a pinned
# version is gone, the current one is fetched with a warning and `seam.py build --verify` will say
# exactly what differs (at least the version string in each row's provenance).
packages=(r-cran-janeaustenr=1.0.0-1 python3.11-doc=3.11.2-6+deb12u9)

# What is already unpacked needs no apt-get (a machine without it can reuse a copied .sources/).
missing=()
for pinned in "${packages[@]}"; do
  package=${pinned%%=*}
  if [ -f "$dest/$package/VERSION" ]; then
    echo "$package $(cat "$dest/$package/VERSION") already unpacked in $dest/$package"
  else
    missing+=("$pinned")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get > /dev/null || ! command -v dpkg-deb > /dev/null; then
  echo "fetch_debian_sources.sh: ${missing[*]%%=*} not unpacked in $dest, and fetching needs Debian's" \
       "apt-get and dpkg-deb (Debian 12 for a byte-identical rebuild)" >&2
  exit 1
fi

mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for pinned in "${missing[@]}"; do
  package=${pinned%%=*}
  if ! (cd "$work" && apt-get download "$pinned" >/dev/null 2>&1); then
    echo "apt-get download $pinned failed; refreshing the package lists once" >&2
    apt-get update -qq
    if ! (cd "$work" && apt-get download "$pinned" >/dev/null 2>&1); then
      echo "WARNING: $pinned is no longer in the archive; fetching the current $package instead" >&2
      (cd "$work" && apt-get download "$package")
    fi
  fi
  deb=$(ls "$work"/"${package}"_*.deb)
  version=$(dpkg-deb -f "$deb" Version)
  rm -rf "$dest/$package.partial"
  dpkg-deb -x "$deb" "$dest/$package.partial"
  echo "$version" > "$dest/$package.partial/VERSION"
  mv "$dest/$package.partial" "$dest/$package"
  rm -f "$deb"
  echo "$package $version unpacked in $dest/$package"
done
