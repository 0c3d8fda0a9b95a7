#!/usr/bin/env bash
# Download the Debian packages that hold two of the benchmark's sources and unpack
# them under ${SEAM_SOURCES:-.sources}/debian/<package>/ without installing them
# (r-cran-janeaustenr would otherwise pull in all of R). Each folder gets a VERSION
# file; the builder records it, and the SHA-256 of every file it reads.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${SEAM_SOURCES:-$PWD/.sources}/debian"
packages=(r-cran-janeaustenr python3.11-doc)

mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for package in "${packages[@]}"; do
  if [ -f "$dest/$package/VERSION" ]; then
    echo "$package $(cat "$dest/$package/VERSION") already unpacked in $dest/$package"
    continue
  fi
  if ! (cd "$work" && apt-get download "$package" >/dev/null 2>&1); then
    echo "apt-get download $package failed; refreshing the package lists once" >&2
    apt-get update -qq
    (cd "$work" && apt-get download "$package")
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
