#!/usr/bin/env bash
# Install promptfoo for the promptfoo route's test (tests/test_harness_promptfoo.py) into a cache folder outside
# the repository, and print where its command is. Idempotent: an install that already runs is only found.
#
# promptfoo 0.118.0 is the last release that runs on Node 20 (0.119 and later need Node 22). It is installed
# with --ignore-scripts, because its install script downloads a browser build, which cannot be fetched here;
# the one native module the eval needs, better-sqlite3 (promptfoo's result store), is then built from source
# against the system's Node headers (/usr/include/node, Debian's and NodeSource's nodejs), which needs make, a
# C++ compiler and python3 (build-essential: installed with apt-get as root where missing).
#
#   SEAM_PROMPTFOO_DIR  where to install (default ~/.cache/seam/promptfoo-0.118.0)
#
# Prints: "promptfoo 0.118.0: DIR/node_modules/.bin/promptfoo". Timing: from nothing (npm's cache empty too), on
# the machine this was written on (2 cores, one of them busy, run under nice), 300 s: about 2 minutes of npm
# install (about 480 packages, 670 MB) and 2½ of compiling better-sqlite3; finding a working install takes 3 s.
set -euo pipefail

VERSION=0.118.0
DIR=${SEAM_PROMPTFOO_DIR:-$HOME/.cache/seam/promptfoo-$VERSION}
BIN=$DIR/node_modules/.bin/promptfoo
SQLITE=$DIR/node_modules/better-sqlite3

works() {  # the command answers with its version and the native module loads under this node
  local home status=0
  home=$(mktemp -d)  # promptfoo makes its config folder (a database) even for --version: not in ~/.promptfoo
  [ -x "$BIN" ] && [ "$(PROMPTFOO_CONFIG_DIR=$home PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
    "$BIN" --version 2> /dev/null | tail -n 1)" = "$VERSION" ] \
    && (cd "$SQLITE" && node -e 'new (require("."))(":memory:").close()') > /dev/null 2>&1 || status=1
  rm -rf "$home"
  return "$status"
}

if works; then
  echo "promptfoo $VERSION: $BIN"
  exit 0
fi
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "install_promptfoo.sh: no node and npm here; install Node.js 20 (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "install_promptfoo.sh: promptfoo $VERSION needs Node.js 20 or later; this is $(node --version)" >&2
  exit 1
fi
headers=$(node -p 'require("path").resolve(process.execPath, "../..")')  # /usr for /usr/bin/node
if [ ! -f "$headers/include/node/node.h" ]; then
  echo "install_promptfoo.sh: no Node.js headers at $headers/include/node (needed to build better-sqlite3)" >&2
  exit 1
fi
if ! command -v make > /dev/null || ! command -v g++ > /dev/null || ! command -v python3 > /dev/null; then
  if command -v apt-get > /dev/null && [ "$EUID" -eq 0 ]; then
    echo "== installing build tools for better-sqlite3 (apt-get install build-essential python3)"
    tools() {
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends build-essential python3 > /dev/null
    }
    if ! tools; then
      echo "apt-get install failed; refreshing the package lists once" >&2
      apt-get update -qq
      tools
    fi
  else
    echo "install_promptfoo.sh: building better-sqlite3 needs make, g++ and python3 (build-essential)" >&2
    exit 1
  fi
fi

started=$SECONDS
echo "== installing promptfoo $VERSION into $DIR (npm, --ignore-scripts: its install script fetches a browser)"
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --ignore-scripts --loglevel=error "promptfoo@$VERSION" > /dev/null
echo "== building better-sqlite3 from source against $headers/include/node"
# npm rebuild runs the module's own install script (prebuild-install, which --build-from-source keeps from
# downloading, then node-gyp: npm's own copy) with the headers given, one compile job at a time.
npm rebuild --prefix "$DIR" better-sqlite3 --build-from-source --nodedir="$headers" --loglevel=error > /dev/null
if ! works; then
  echo "install_promptfoo.sh: promptfoo was installed into $DIR but does not run (see above)" >&2
  exit 1
fi
echo "installed in $((SECONDS - started)) s"
echo "promptfoo $VERSION: $BIN"
