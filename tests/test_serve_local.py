"""scripts/serve_local.sh's set-up lock: two copies started at once wait for one build, and the server never holds it.

The build (twenty minutes) and the weights (a download) are replaced by what the script takes as done: an
executable `bin/llama-server` in its cache (here a small Python HTTP server answering /health) and a model file
of the recorded size in the model cache (sparse, so nothing is downloaded or written at length).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not shutil.which("flock") or not shutil.which("curl"),
                                reason="serve_local.sh needs flock(1) and curl")

FAKE_SERVER = f"""#!{sys.executable}
import http.server, sys
if "--version" in sys.argv:
    print("version: fake"); sys.exit(0)
port = int(sys.argv[sys.argv.index("--port") + 1])
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def caches(tmp_path):
    llama, models = tmp_path / "llama", tmp_path / "models"
    (llama / "bin").mkdir(parents=True)
    server = llama / "bin" / "llama-server"
    server.write_text(FAKE_SERVER)
    server.chmod(0o755)
    models.mkdir()
    with open(models / "smollm2-135m.gguf", "wb") as gguf:
        gguf.truncate(98_362_432)  # the recorded size: taken as fetched
    return llama, models


def start(caches, port: int) -> subprocess.Popen:
    llama, models = caches
    env = dict(os.environ, SEAM_LLAMA_CACHE=str(llama), SEAM_MODEL_CACHE=str(models), PORT=str(port), REPACK="1")
    return subprocess.Popen(["bash", str(ROOT / "scripts" / "serve_local.sh"), "smollm2-135m"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stop_server(llama: Path, port: int) -> None:
    pid_file = llama / f"server-{port}.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass


def test_a_second_copy_waits_for_the_set_up_and_the_server_does_not_keep_the_lock(caches):
    llama, _ = caches
    port = free_port()
    with open(llama / "setup.lock", "w") as held:  # another copy building
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = start(caches, port)
        try:
            time.sleep(1.5)
            assert proc.poll() is None, proc.communicate()[0]
            assert not (llama / f"server-{port}.pid").exists()  # nothing started while the set-up is held
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
    try:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert "waiting for another serve_local.sh" in out
        assert f"serving http://127.0.0.1:{port}/v1" in out
        with open(llama / "setup.lock", "w") as probe:  # the running server holds no copy of the lock
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        if proc.poll() is None:
            proc.kill()
        stop_server(llama, port)


def test_an_uncontended_start_says_nothing_of_waiting(caches):
    llama, _ = caches
    port = free_port()
    proc = start(caches, port)
    try:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert "waiting" not in out
    finally:
        stop_server(llama, port)
