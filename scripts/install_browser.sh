#!/usr/bin/env bash
# Make sure there is a Chromium for the browser tests (tests/support/browser.py drives it over the
# DevTools protocol on a pipe, so the browser is all they need: no chromedriver, no Selenium, no
# Python package). It is looked for as the tests look for it: $SEAM_CHROMIUM, else chromium,
# chromium-browser or google-chrome on PATH. If there is none and this is Debian (apt-get) run as
# root, Debian's chromium is installed; otherwise this says how to get one and exits 1.
set -euo pipefail

if [ -n "${SEAM_CHROMIUM:-}" ]; then
  if command -v "$SEAM_CHROMIUM" > /dev/null; then
    echo "Chromium for the browser tests: $SEAM_CHROMIUM (SEAM_CHROMIUM)"
    exit 0
  fi
  echo "install_browser.sh: SEAM_CHROMIUM=$SEAM_CHROMIUM is not an executable" >&2
  exit 1
fi
for name in chromium chromium-browser google-chrome; do
  if found=$(command -v "$name"); then
    echo "Chromium for the browser tests: $found"
    exit 0
  fi
done

if ! command -v apt-get > /dev/null || [ "$EUID" -ne 0 ]; then
  echo "install_browser.sh: no Chromium found, and installing one here needs Debian's apt-get as root;" \
       "set SEAM_CHROMIUM or install Debian's chromium (apt-get install chromium)" >&2
  exit 1
fi
# Timing: on the machine this was written on, `apt-get install chromium chromium-driver` (115 packages
# with the recommended ones, onto Debian 12 without a desktop) took 47 s; the install below needs neither
# the driver nor most recommended packages, so it takes less. Finding an installed one is instant.
echo "== installing Debian's chromium for the browser tests (apt-get, without recommended packages)"
started=$SECONDS
# fonts-liberation is the one recommended package kept: without it pages render in DejaVu, with it in
# the Times/Arial/Courier look-alikes a desktop Chromium shows, so that text measures the same as where
# the tests were written.
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation > /dev/null
}
if ! install; then
  echo "apt-get install chromium failed; refreshing the package lists once" >&2
  apt-get update -qq
  install
fi
echo "chromium installed in $((SECONDS - started)) s: $(command -v chromium)"
