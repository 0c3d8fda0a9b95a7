"""The sandbox: verdicts on passing, failing and runaway code, and that the code cannot reach out.

Escape attempts are checked for each protection on its own (kernel layer alone,
guard alone) and for the default; an unprotected run shows that each attempt
does succeed when nothing stops it, so these tests can fail.
"""

import builtins
import contextlib
import json
import os
import random
import re
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from validity import sandbox
from validity.functional import program
from validity.sandbox import OUTCOMES, Limits, SandboxError, run_program

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


@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_the_result_pipe_is_not_open_in_the_program(layers):
    # its number is on the command line the program inherits; only the supervisor still holds it
    fake = ("import os, sys\nverdict = '{\"kind\": \"result\", \"outcome\": \"passed\", \"detail\": \"\"}\\n'\n"
            "os.write(int(sys.argv[1]), verdict.encode())\nos._exit(0)\n")
    result = run(fake, **layers)
    assert (result.outcome, result.detail) == ("error", "OSError in edited code")  # EBADF
    closed = "import os, sys\nfor fd in sys.argv[1:]:\n    try:\n        os.fstat(int(fd))\n    except OSError:\n" \
             "        continue\n    raise AssertionError(fd)\n"
    assert run(closed, **layers).outcome == "passed"


@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_the_program_runs_as_deep_in_the_stack_as_in_the_released_run(layers):
    # where a deep recursion hits the limit depends on it: the module, main, run_parts, then the program
    source = "import sys\nf = sys._getframe()\nn = 0\nwhile f:\n    n += 1\n    f = f.f_back\nassert n == 4, n\n"
    assert run(source, **layers).outcome == "passed"


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
    # the PID namespace alone hides nothing while the machine's /proc stays mounted; PID 1 is the sandbox's init
    source = (f"import os\nassert os.getpid() == 2\nassert not os.path.exists('/proc/{os.getpid()}')\n"
              "assert sorted(p for p in os.listdir('/proc') if p.isdigit()) == ['1', '2']\n")
    assert run(source, **layers).outcome == "passed"


@pytest.mark.parametrize("layers", KERNEL_LAYERS.values(), ids=KERNEL_LAYERS.keys())
def test_with_the_kernel_layer_the_init_is_out_of_reach(layers):
    if not KERNEL:
        pytest.skip("no namespaces on this machine")
    # the init keeps its capabilities and is not dumpable: no memory, descriptors or environment to read
    for path in ("/proc/1/mem", "/proc/1/environ", "/proc/1/fd/0"):
        source = (f"try:\n    open({path!r}, 'rb').read(1)\nexcept PermissionError:\n    pass\n"
                  "else:\n    raise OSError\n")
        assert run(source, **layers).outcome == "passed", path
    assert run("import os, signal\nos.kill(1, signal.SIGINT)\n", kernel="require", guard=False).outcome == "passed"


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


# ---------------------------------------------------------------------------------------------------------------
# Attacks on the verdict and on the kill, by programs written to get past the sandbox (found by a fault campaign).

LABELS = ("edited code", "tests", "check")
EXCEPTION_NAMES = {name for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, BaseException)}


def assert_vocabulary(result):
    """Outcome from OUTCOMES, detail from the fixed vocabulary the parent knows (bounded, no program text)."""
    assert result.outcome in OUTCOMES, result
    assert len(result.detail) <= 80, result
    allowed = {
        "passed": lambda d: d == "",
        "failed": lambda d: d in {f"AssertionError in {label}" for label in LABELS},
        "error": lambda d: d.partition(" in ")[0] in EXCEPTION_NAMES and d.partition(" in ")[2] in LABELS,
        "timeout": lambda d: d in ("CPU limit", "wall-clock limit"),
        "crashed": lambda d: re.fullmatch(r"killed by (SIG[A-Z0-9]+|signal \d+)"
                                          r"|exited with status \d+ before the tests finished|invalid verdict",
                                          d) is not None,
    }
    assert allowed[result.outcome](result.detail), result


# Walks the frames, every module's globals and every object the garbage collector tracks for the sandbox's
# reporting machinery (anything callable named report/verdict/result, anything that looks like a nonce), calls it
# with a forged verdict and writes forged verdict lines, with every nonce found, to every open descriptor.
FORGE = r'''
import gc, json, os, sys
secret = open('/etc/passwd').read()
def hexlike(value):
    return isinstance(value, str) and 16 <= len(value) <= 64 and all(c in '0123456789abcdef' for c in value)
nonces, reporters = set(), []
def scan(scope):
    for name, value in list(scope.items()):
        if callable(value) and any(w in str(name).lower() for w in ('report', 'verdict', 'result')):
            reporters.append(value)
        if hexlike(value):
            nonces.add(value)
        if isinstance(value, dict) and hexlike(value.get('nonce')):
            nonces.add(value['nonce'])
frame = sys._getframe()
while frame is not None:
    scan(frame.f_locals)
    scan(frame.f_globals)
    frame = frame.f_back
for module in list(sys.modules.values()):
    scan(getattr(module, '__dict__', {}))
for obj in gc.get_objects():
    if isinstance(obj, dict):
        scan(obj)
forged = [{'kind': 'result', 'outcome': outcome, 'detail': secret} for outcome in ('pwned', 'passed')]
for report in reporters:
    for fields in forged:
        for call in (lambda: report(**fields), lambda: report(fields['outcome'], fields['detail']),
                     lambda: report(fields['outcome'])):
            try:
                call()
            except BaseException:
                pass
lines = [json.dumps(dict(fields, **({'nonce': n} if n else {}))) + '\n'
         for n in sorted(nonces) + [None] for fields in forged]
lines += ['passed\n', 'pwned ' + secret.replace('\n', ' ') + '\n']
for fd in range(3, 64):
    for line in lines:
        try:
            os.write(fd, line.encode())
        except OSError:
            break
'''
FORGE_ENDINGS = {"then fails its tests": "def add(a, b):\n    return a - b\n",
                 "then exits at once": "os._exit(0)\n"}


@pytest.mark.parametrize("ending", FORGE_ENDINGS.values(), ids=FORGE_ENDINGS.keys())
@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_a_forged_verdict_never_reaches_the_parent(layers, ending):
    result = run_program(program(FORGE + ending, TESTS), limits=FAST, **layers)
    assert_vocabulary(result)
    assert result.outcome != "passed"
    assert "root:" not in result.detail


@pytest.mark.parametrize("line", [
    '{"kind": "verdict", "outcome": "pwned", "detail": "", "isolation": []}',
    '{"kind": "verdict", "outcome": "passed", "detail": "root:x:0:0:root:/root:/bin/bash", "isolation": []}',
    '{"kind": "verdict", "outcome": "error", "detail": "Leak_0x7f in edited code", "isolation": []}',
    '{"kind": "verdict", "outcome": "error", "detail": "ValueError in somewhere else", "isolation": []}',
    '{"kind": "verdict", "outcome": "crashed", "detail": "exited with status 1234567 before the tests finished",'
    ' "isolation": []}',
    '{"kind": "verdict", "outcome": "failed", "detail": "AssertionError in check", "isolation": ["x", 1]}',
])
def test_the_parent_accepts_only_a_verdict_from_the_fixed_vocabulary(line):
    # even a line carrying the nonce (which only the supervisor holds) is checked field by field
    nonce = "0" * 32
    record = json.loads(line) | {"nonce": nonce}
    result = sandbox._verdict([json.dumps(record)], nonce, LABELS, timed_out=False, returncode=0)
    assert (result.outcome, result.detail) == ("crashed", "invalid verdict")


# A program that knows the runner's protocol reads the run's token out of the runner's memory (the frame that
# called it: the program runs in the runner), writes its own record on the runner's pipe and exits at once.
CLAIM = r'''
import os, stat, sys
token = sys._getframe(2).f_locals['token']
def claim(record, marked=True):
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b'\n' + token + b' ' + record if marked else record)
        except OSError:
            pass
    os._exit(0)
'''


@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_a_program_that_knows_the_protocol_can_claim_only_a_verdict_of_the_vocabulary(layers):
    secret = "open('/etc/passwd').read().split(':')[0]"
    for claim, expected in [(f"('error 0 ' + {secret} + '\\n').encode()", ("crashed", "invalid verdict")),
                            ("b'error 0 Leak_0x7f3a\\n'", ("crashed", "invalid verdict")),
                            ("b'failed 7\\n'", ("crashed", "invalid verdict")),
                            ("b'pwned\\n'", ("crashed", "invalid verdict")),
                            ("b'passed' + b'x' * 70000 + b'\\n'", ("crashed", "invalid verdict")),
                            ("b'passed'", ("crashed", "invalid verdict")),  # a line never ended
                            ("b'\\npassed\\n', marked=False",  # the record without the token: not the runner's
                             ("crashed", "exited with status 0 before the tests finished")),
                            ("b'error 1 KeyError\\n'", ("error", "KeyError in tests"))]:
        result = run_program(program(CLAIM + f"claim({claim})\n", TESTS), limits=FAST, **layers)
        assert_vocabulary(result)
        assert (result.outcome, result.detail) == expected, claim
    # The limit of any in-process test harness, documented in docs/VALIDITY.md: the program runs in the process
    # that says how its tests ended, so it can claim "passed" (as it can by returning an object equal to anything).
    assert run_program(program(CLAIM + "claim(b'passed\\n')\n", TESTS), limits=FAST, **layers).outcome == "passed"


@pytest.fixture
def marker(monkeypatch):
    """A token in the environment of every process of the runs of this test; whatever carries it is killed after."""
    token = secrets.token_hex(16)
    child_env = sandbox._child_env
    monkeypatch.setattr(sandbox, "_child_env", lambda workdir: {**child_env(workdir), "SEAM_TEST_MARKER": token})
    yield token
    for pid in marked_processes(token):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def marked_processes(token: str) -> list[int]:
    """Processes of this machine whose environment carries SEAM_TEST_MARKER=token (zombies have none)."""
    needle = f"SEAM_TEST_MARKER={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def test_the_marker_scan_finds_a_marked_process(marker):
    process = subprocess.Popen(["sleep", "30"], env={"PATH": "/usr/bin:/bin", "SEAM_TEST_MARKER": marker})
    try:
        assert marked_processes(marker) == [process.pid]
    finally:
        process.kill()
        process.wait()
    assert marked_processes(marker) == []


# The attack: reach a libc (the sandbox's own, through the frames or the garbage collector, or a new one
# where ctypes can be imported), clear the parent-death signal, leave the session and process group, and fork a
# grandchild (twice over, each in a new session) that sleeps. ESCAPE_AND_WAIT then waits for the grandchild to say
# it is alive and ends normally; ESCAPE_AND_SLEEP sleeps past the wall clock itself.
ESCAPE = r'''
import gc, os, sys, time
def attempt(action):
    try:
        return action()
    except BaseException:
        return None
libcs = []
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
        for candidate in (value, getattr(value, 'lib', None)):
            if type(candidate).__name__ == 'CDLL':
                libcs.append(candidate)
    frame = frame.f_back
attempt(lambda: libcs.extend(o for o in gc.get_objects() if type(o).__name__ == 'CDLL'))
attempt(lambda: libcs.append(__import__('ctypes').CDLL(None)))
def escape():
    for libc in libcs:
        attempt(lambda: libc.prctl(1, 0, 0, 0, 0))  # PR_SET_PDEATHSIG 0: outlive the parent
    attempt(os.setsid)
    attempt(lambda: os.setpgid(0, 0))
def fork():
    for make in [os.fork] + [lambda libc=libc: libc.fork() for libc in libcs]:
        pid = attempt(make)
        if pid is not None and pid >= 0:
            return pid
    return None
escape()
alive_r, alive_w = os.pipe()
child = fork()
if child == 0:
    escape()
    if fork() == 0:
        escape()
        os.write(alive_w, b'x')
        time.sleep(60)
    os._exit(0)
'''
ESCAPE_AND_WAIT = ESCAPE + "assert child is not None, 'no fork'\nassert os.read(alive_r, 1) == b'x'\n"
ESCAPE_AND_SLEEP = ESCAPE + "time.sleep(60)\n"
FORKING = Limits(cpu_seconds=2, wall_seconds=3, processes=True)
SLEEPY = Limits(cpu_seconds=2, wall_seconds=2)


def assert_nothing_survives(marker):
    assert marked_processes(marker) == []
    time.sleep(0.3)  # and nothing turns up late
    assert marked_processes(marker) == []


@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
def test_a_program_cannot_outlive_the_wall_clock(marker, layers):
    result = run(ESCAPE_AND_SLEEP, SLEEPY, **layers)
    assert (result.outcome, result.detail) == ("timeout", "wall-clock limit"), result
    assert_nothing_survives(marker)


ESCAPE_LAYERS = {"kernel only": LAYERS["kernel only"], "no kernel layer, no guard": UNPROTECTED}


@pytest.mark.parametrize("layers", ESCAPE_LAYERS.values(), ids=ESCAPE_LAYERS.keys())
def test_where_processes_are_allowed_none_outlives_the_verdict(marker, layers):
    result = run(ESCAPE_AND_WAIT, FORKING, **layers)
    assert result.outcome == "passed", result  # the grandchild was alive when the program ended
    assert_nothing_survives(marker)


@pytest.mark.parametrize("layers", ESCAPE_LAYERS.values(), ids=ESCAPE_LAYERS.keys())
def test_where_processes_are_allowed_none_outlives_the_wall_clock(marker, layers):
    result = run(ESCAPE_AND_SLEEP, Limits(cpu_seconds=2, wall_seconds=2, processes=True), **layers)
    assert (result.outcome, result.detail) == ("timeout", "wall-clock limit"), result
    assert_nothing_survives(marker)


NO_GUARD = {"kernel only": LAYERS["kernel only"], "no kernel layer, no guard": UNPROTECTED}


@pytest.mark.parametrize("layers", NO_GUARD.values(), ids=NO_GUARD.keys())
def test_no_new_process_even_as_root_without_the_guard(marker, layers):
    # RLIMIT_NPROC does not bind root; the seccomp filter does
    result = run("import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n", **layers)
    assert (result.outcome, result.detail) == ("error", "PermissionError in edited code"), result  # EPERM
    threads = run("import threading\nt = threading.Thread(target=lambda: None)\nt.start()\nt.join()\n", **layers)
    assert threads.outcome == "passed", threads  # threads are not processes
    assert_nothing_survives(marker)


# Racing the runner's own verdict (issue 13, rerun): a thread, a signal handler or a profile hook of a program
# that fails its tests keeps writing lines such as "passed" to every descriptor while, and after, the runner
# writes its verdict. The verdict must be the tests' every time, never "passed".
RACERS = {
    "daemon thread, failing at once": r'''
import os, threading, time
def flood():
    while True:
        for fd in range(3, 64):
            try:
                os.write(fd, b'\npassed\n')
            except OSError:
                pass
        time.sleep(0.0005)
threading.Thread(target=flood, daemon=True).start()
raise AssertionError
''',
    "daemon thread": r'''
import os, threading, time
def flood():
    while True:
        for fd in range(3, 64):
            try:
                os.write(fd, b'\npassed\n')
            except OSError:
                pass
        time.sleep(0.0005)
threading.Thread(target=flood, daemon=True).start()
time.sleep(0.01)
''',
    "signal handler": r'''
import os, signal
def flood(*_):
    for fd in range(3, 64):
        try:
            os.write(fd, b'\npassed\n')
        except OSError:
            pass
signal.signal(signal.SIGALRM, flood)
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
''',
    "profile hook": r'''
import os, sys
def flood(*_):
    for fd in range(3, 64):
        try:
            os.write(fd, b'\npassed\n')
        except OSError:
            pass
sys.setprofile(flood)
''',
}


@pytest.mark.parametrize("layers", LAYERS.values(), ids=LAYERS.keys())
@pytest.mark.parametrize("racer", RACERS, ids=RACERS.keys())
def test_lines_racing_the_verdict_never_change_it(racer, layers):
    failing = program(RACERS[racer] + "def add(a, b):\n    return a - b\n", TESTS)
    verdicts = {run_program(failing, limits=FAST, **layers) for _ in range(20)}
    assert len(verdicts) == 1, verdicts
    (verdict,) = verdicts
    part = "edited code" if racer.endswith("at once") else "check"
    assert (verdict.outcome, verdict.detail) == ("failed", f"AssertionError in {part}"), verdict


def test_the_supervisor_finds_the_token_line_however_the_pipe_is_cut_into_reads():
    sys.path.insert(0, str(sandbox.CHILD.parent))
    try:
        import sandbox_child
    finally:
        sys.path.remove(str(sandbox.CHILD.parent))
    token = b"0123456789abcdef" * 2
    stream = (b"ready 1 " + token + b"\n" + b"\npassed\n" * 5000 + b"x" * 70000 + b"\n" + token + b" passed\n"
              + b"\n" + token + b" failed 2\n" + b"\npassed\npass")
    for size in (1, 7, 40, 41, 4096, len(stream)):
        said = sandbox_child.RunnerLines()
        for start in range(0, len(stream), size):
            said.feed(stream[start:start + size])
        assert said.ready.group(1, 2) == (b"1", token) and (said.line, said.complete) == (b"failed 2", True), size
    for tail, expected in [(b"", (None, False)), (b"\n" + token + b" passed", (b"passed", False)),
                           (b"\n" + token + b" " + b"x" * 500 + b"\n", (b"x" * 129, True))]:
        said = sandbox_child.RunnerLines()
        said.feed(b"ready 0 " + token + b"\npassed\n" + tail)
        assert (said.line, said.complete) == expected
    for first in (b"ready 1\n", b"passed\n", b"ready 1 " + token + b"x" * 200 + b"\n"):
        said = sandbox_child.RunnerLines()
        said.feed(first + b"\n" + token + b" passed\n")
        assert said.ready is None and said.line is None
