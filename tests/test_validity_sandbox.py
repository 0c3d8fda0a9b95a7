"""The sandbox: verdicts on passing, failing and runaway code, and that the code cannot reach out.

Escape attempts are checked for each protection on its own (kernel layer alone,
guard alone) and for the default; an unprotected run shows that each attempt
does succeed when nothing stops it, so these tests can fail.
"""

import os
import random
import resource
import socket
import subprocess
import sys
import tempfile

import pytest

from validity.functional import program
from validity.sandbox import Limits, SandboxError, run_program

FAST = Limits(cpu_seconds=2, wall_seconds=10)
TESTS = {"entry_point": "add", "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n"}


def kernel_layer_available() -> bool:
    try:
        run_program([("probe", "pass")], limits=FAST, kernel="require")
    except SandboxError:
        return False
    return True


KERNEL = kernel_layer_available()
LAYERS = {
    "default": {},
    "guard only": {"kernel": "off", "guard": True},
    "kernel only": pytest.param({"kernel": "require", "guard": False},
                                marks=pytest.mark.skipif(not KERNEL, reason="no namespaces on this machine")),
}
UNPROTECTED = {"kernel": "off", "guard": False}


def run(source, limits=FAST, **layers):
    return run_program([("edited code", source)], limits=limits, **layers)


def test_a_working_function_passes_its_tests():
    result = run_program(program("def add(a: int, b: int) -> int:\n    return a + b\n", TESTS), limits=FAST)
    assert result.outcome == "passed", result
    assert "resource limits" in result.isolation


def test_a_broken_function_fails_its_tests():
    result = run_program(program("def add(a, b):\n    return a - b\n", TESTS), limits=FAST)
    assert (result.outcome, result.detail) == ("failed", "AssertionError in check")


def test_a_renamed_function_or_missing_import_is_an_error():
    renamed = run_program(program("def plus(a, b):\n    return a + b\n", TESTS), limits=FAST)
    assert (renamed.outcome, renamed.detail) == ("error", "NameError in check")
    hints = run_program(program("def add(a: List[int], b) -> int:\n    return a + b\n", TESTS), limits=FAST)
    assert (hints.outcome, hints.detail) == ("error", "NameError in edited code")


def test_an_endless_loop_hits_the_cpu_limit():
    result = run("while True:\n    pass\n", Limits(cpu_seconds=1, wall_seconds=20))
    assert (result.outcome, result.detail) == ("timeout", "CPU limit")


def test_sleeping_forever_hits_the_wall_clock_limit():
    result = run("import time\ntime.sleep(60)\n", Limits(cpu_seconds=5, wall_seconds=1))
    assert (result.outcome, result.detail) == ("timeout", "wall-clock limit")


def test_exiting_early_or_faking_a_verdict_is_never_a_pass():
    assert run("import os\nos._exit(0)\n").outcome == "crashed"
    assert run("import sys\nsys.exit(0)\n").outcome == "error"
    fake = 'print(\'{"kind": "result", "outcome": "passed", "detail": ""}\')\nraise SystemExit(0)\n'
    assert run(fake).outcome == "error"


def test_a_verdict_written_to_the_result_pipe_without_the_nonce_is_ignored():
    # the pipe's number is on the child's command line; only the nonce tells the real verdict from this one
    fake = ("import os, sys\nverdict = '{\"kind\": \"result\", \"outcome\": \"passed\", \"detail\": \"\"}\\n'\n"
            "os.write(int(sys.argv[1]), verdict.encode())\nos._exit(0)\n")
    assert run(fake).outcome == "crashed"


def test_exception_names_chosen_by_the_program_never_reach_the_verdict():
    # a class name can carry anything (a file's content, an address) into the released tables
    secret = "import os\nraise type('Leak_' + str(os.getpid()) + '_' + str(id(object())), (ValueError,), {})()\n"
    assert (run(secret).outcome, run(secret).detail) == ("error", "ValueError in edited code")
    disguised = ("import builtins\nE = type('Leak', (KeyError,), {'__module__': 'builtins'})\nbuiltins.Leak = E\n"
                 "raise E()\n")
    assert run(disguised).detail == "KeyError in edited code"


def test_output_beyond_the_file_size_limit_is_cut_off_not_a_pass():
    result = run("import sys\nfor _ in range(3000):\n    sys.stdout.write('x' * 1000)\nsys.stdout.flush()\n",
                 Limits(cpu_seconds=5, wall_seconds=10, file_bytes=1 << 20))
    assert (result.outcome, result.detail) == ("error", "OSError in edited code")


def test_memory_beyond_the_limit_is_refused():
    result = run("block = bytearray(2 << 30)\n", Limits(cpu_seconds=5, wall_seconds=10, memory_bytes=512 << 20))
    assert (result.outcome, result.detail) == ("error", "MemoryError in edited code")


def test_hashing_and_random_numbers_are_the_same_on_every_run():
    env = {"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"}
    expected_hash = subprocess.run([sys.executable, "-S", "-c", "print(hash('seam'))"], env=env,
                                   capture_output=True, text=True, check=True).stdout.strip()
    expected_random = random.Random(0).random()
    source = f"import random\nassert hash('seam') == {expected_hash}\nassert random.random() == {expected_random!r}\n"
    assert run(source).outcome == "passed"


@pytest.fixture
def listener():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def _arrived(server) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


def _connect(port):
    return (f"import socket\nwith socket.create_connection(('127.0.0.1', {port}), timeout=2) as s:\n"
            "    s.sendall(b'hello')\n")


@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_no_connection_reaches_a_local_port(listener, layers):
    result = run(_connect(listener.getsockname()[1]), **layers)
    assert result.outcome == "error", result
    assert not _arrived(listener)


def test_without_protection_the_connection_would_arrive(listener):
    assert run(_connect(listener.getsockname()[1]), **UNPROTECTED).outcome == "passed"
    assert _arrived(listener)


def _write(path):
    return f"with open({str(path)!r}, 'w') as f:\n    f.write('escaped')\n"


def _write_through_directory_fd(path):
    # the audit event of os.open does not carry dir_fd: the path looks relative to the working directory
    return (f"import os\nd = os.open({str(path.parent)!r}, os.O_RDONLY)\n"
            f"fd = os.open({path.name!r}, os.O_WRONLY | os.O_CREAT, dir_fd=d)\nos.write(fd, b'escaped')\n")


def _write_database(path):
    return f"import sqlite3\nc = sqlite3.connect({str(path)!r})\nc.execute('create table t (x)')\nc.commit()\n"


def _write_history(path):
    return f"import readline\nreadline.write_history_file({str(path)!r})\n"  # written in C, no audit event


WRITES = {"open": _write, "directory fd": _write_through_directory_fd, "sqlite3": _write_database,
          "readline": _write_history}
REMOVALS = {"os.remove": lambda path: f"import os\nos.remove({str(path)!r})\n",
            "directory fd": lambda path: (f"import os\nd = os.open({str(path.parent)!r}, os.O_RDONLY)\n"
                                          f"os.remove({path.name!r}, dir_fd=d)\n")}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_writing_outside_the_working_directory_fails_and_leaves_nothing(tmp_path, layers, write):
    target = tmp_path / "escaped.txt"
    result = run(write(target), **layers)
    assert result.outcome == "error", result
    assert not target.exists()


@pytest.mark.parametrize("remove", REMOVALS.values(), ids=REMOVALS.keys())
@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_removing_a_file_outside_fails(tmp_path, layers, remove):
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    assert run(remove(victim), **layers).outcome == "error"
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_without_protection_the_write_would_land(tmp_path, write):
    target = tmp_path / "escaped.txt"
    assert run(write(target), **UNPROTECTED).outcome == "passed"
    assert target.exists()


@pytest.mark.parametrize("remove", REMOVALS.values(), ids=REMOVALS.keys())
def test_without_protection_the_removal_would_happen(tmp_path, remove):
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    assert run(remove(victim), **UNPROTECTED).outcome == "passed"
    assert not victim.exists()


@pytest.fixture
def sleeper():
    """A process of this test's own, for the program to try to reach."""
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def _reached(process, limit_before) -> bool:
    """Whether the process was killed or had its limits changed."""
    try:
        process.wait(timeout=0.2)
    except subprocess.TimeoutExpired:
        pass
    return process.poll() is not None or resource.prlimit(process.pid, resource.RLIMIT_NOFILE) != limit_before


REACH = {"os.kill": lambda pid: f"import os, signal\nos.kill({pid}, signal.SIGTERM)\n",
         "resource.prlimit": lambda pid: (f"import resource\n"
                                          f"resource.prlimit({pid}, resource.RLIMIT_NOFILE, (16, 16))\n")}


@pytest.mark.parametrize("reach", REACH.values(), ids=REACH.keys())
@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_another_process_cannot_be_signalled_or_limited(sleeper, layers, reach):
    before = resource.prlimit(sleeper.pid, resource.RLIMIT_NOFILE)
    assert run(reach(sleeper.pid), **layers).outcome == "error"
    assert not _reached(sleeper, before)


@pytest.mark.parametrize("reach", REACH.values(), ids=REACH.keys())
def test_without_protection_another_process_would_be_reached(sleeper, reach):
    before = resource.prlimit(sleeper.pid, resource.RLIMIT_NOFILE)
    assert run(reach(sleeper.pid), **UNPROTECTED).outcome == "passed"
    assert _reached(sleeper, before)


KERNEL_LAYERS = {k: v for k, v in LAYERS.items() if k != "guard only"}


@pytest.mark.parametrize("layers", KERNEL_LAYERS.values(), ids=KERNEL_LAYERS.keys())
def test_with_the_kernel_layer_no_process_of_the_machine_is_visible(layers):
    if not KERNEL:
        pytest.skip("no namespaces on this machine")
    # the PID namespace alone hides nothing while the machine's /proc stays mounted
    source = (f"import os\nassert os.getpid() == 1\nassert not os.path.exists('/proc/{os.getpid()}')\n"
              "assert not [p for p in os.listdir('/proc') if p.isdigit() and p != '1']\n")
    assert run(source, **layers).outcome == "passed"


@pytest.mark.parametrize("layers", KERNEL_LAYERS.values(), ids=KERNEL_LAYERS.keys())
def test_with_the_kernel_layer_no_capability_is_left(layers):
    if not KERNEL:
        pytest.skip("no namespaces on this machine")
    source = "status = open('/proc/self/status').read()\nassert 'CapEff:\\t0000000000000000' in status, status\n"
    assert run(source, **layers).outcome == "passed"


def test_the_working_directory_is_writable_and_thrown_away(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    source = ("import os\nwith open('scratch.txt', 'w') as f:\n    f.write('x')\n"
              "assert open('scratch.txt').read() == 'x'\nassert os.listdir('.') == ['scratch.txt']\n")
    assert run(source).outcome == "passed"
    assert list(tmp_path.iterdir()) == []


def test_starting_a_process_is_refused():
    assert run("import subprocess\nsubprocess.run(['true'])\n").outcome == "error"
    assert run("import os\nos.system('true')\n").outcome == "error"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        run_program([("x", "pass")], kernel="sometimes")
