"""The child side of the sandbox: isolate, run the program in a process of its own, report one verdict.

Started by `validity.sandbox.run_program` as

    python -P -s -S -B sandbox_child.py RESULT_FD NONCE_FD        (the job as JSON on stdin)

It imports nothing from seam and only the standard library, because the child's
`sys.path` holds neither the repository nor site-packages.

Three processes, so that the program shares memory with nothing that reports
on it or kills it:

    supervisor   this process: trusted code only. Sets up the kernel layer,
                 starts the rest, enforces the wall clock, reads the nonce
                 (only after the fork, so no copy of it exists in the program's
                 memory), decides the verdict and writes it to RESULT_FD.
      init       (kernel layer only) PID 1 of a new PID namespace: trusted code
                 only. Mounts the namespace's /proc, starts the runner, reaps,
                 and passes the runner's exit status on. It keeps its
                 capabilities and is not dumpable, so the runner can neither
                 trace, signal (SIGINT is ignored; the kernel drops every other
                 signal sent to a namespace's init from inside) nor read it.
        runner   closes every descriptor but a pipe to the supervisor, drops
                 its capabilities, sets its limits and the guard, writes
                 `ready` with a random token, runs the program, writes how it
                 ended after the token, exits.
    (without the kernel layer the supervisor starts the runner itself)

The program runs in the runner, so everything the runner holds is the
program's: the verdict record is not evidence, only a claim. The supervisor
therefore accepts it only in a fixed format (`passed`, `failed PART`, `error
PART NAME`), as the last line on the pipe that carries the token the runner
announced in `ready`, and only if the runner then exited with status 0, with
PART an index into the job's parts and NAME a built-in exception class name;
it builds the detail itself from its own copy of the labels. Lines without the
token are the program's (a thread, a signal handler or a hook writing while or
after the runner writes its verdict) and are ignored, so they cannot make the
verdict depend on timing (`RunnerLines`). A program
that knows this protocol can still claim `passed` (as it can by fooling its
tests), but it cannot put anything outside that vocabulary into the tables,
and it cannot reach the parent: the result pipe and the nonce are held by the
supervisor only. The parent checks the line again (`validity.sandbox`).

Protections, in the order they are set up, all before the first line of the
program runs:

1. Kernel layer (Linux; as root, or as any user where unprivileged user
   namespaces are allowed): new network, mount and PID namespaces; a fresh,
   size-limited tmpfs on the working directory; every other mount re-mounted
   read-only, nodev and nosuid; the init's own /proc mounted over the
   machine's, so the program sees no other process; in the runner all
   capabilities dropped and no_new_privs set. Every process the program
   starts lives in the namespace, and when the init ends (after the runner,
   or killed by the supervisor at the wall clock, or by the kernel when the
   supervisor dies: its parent-death signal) the kernel kills them all; the
   supervisor reports only after it has reaped the init, which the kernel
   allows only once every process of the namespace is gone. With
   `kernel = "auto"` a failure here falls back to the layers below and the
   report says which layers applied; with `"require"` it is a setup error.
2. Resource limits (setrlimit): CPU seconds, address space, size of any file
   written (stdout included), open files, and no new processes: RLIMIT_NPROC =
   0, which the kernel does not apply to root, and so also (Linux x86-64 and
   aarch64) a seccomp filter that refuses fork, vfork, clone without
   CLONE_THREAD, clone3 (ENOSYS, so that threads fall back to clone), setsid
   and setpgid, whoever runs it and whatever code calls it.
3. Guard (PEP 578 audit hook, which Python code cannot remove): sockets,
   subprocesses, fork/exec, signals to other processes, changing resource
   limits, links, ctypes and sqlite3 are refused, and so are opening a
   directory (a directory descriptor would let `dir_fd=` calls write where the
   audit events do not show), any `dir_fd=` argument, and any write, rename,
   removal or mode change outside the working directory; modules that write
   files in C without an audit event (readline, dbm) cannot be imported. It
   is not a security boundary: C code, the Python functions that raise no
   audit event at all (for example `signal.pidfd_send_signal`,
   `os.setpriority`, `os.mkfifo`, a function of a ctypes library this process
   already loaded), and Python code that changes what the hook reads (this
   module's globals, `os.path`), get past it. It is the fallback where the
   kernel layer is unavailable, and a second wall where it is.

Without the kernel layer the supervisor is a child subreaper (Linux), so every
process the runner starts stays its descendant whatever it does (setsid,
double fork); after the runner ends the supervisor kills and reaps them until
none is left.
"""

import json
import os
import re
import select
import signal
import sys
import time

# Linux constants (include/uapi/linux/sched.h, mount.h, prctl.h, capability.h, seccomp.h, filter.h, audit.h).
CLONE_THREAD = 0x00010000
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 4096
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP = 1, 4, 22, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 36, 38
CAPABILITY_VERSION_3 = 0x20080522
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
X32_SYSCALL_BIT = 0x40000000
EPERM, ENOSYS = 1, 38
# machine -> (AUDIT_ARCH, syscalls refused: fork, vfork, setpgid, setsid as the machine has them, clone, clone3,
# whether the x32 ABI exists)
PROCESS_SYSCALLS = {
    "x86_64": (0xC000003E, (57, 58, 109, 112), 56, 435, True),
    "aarch64": (0xC00000B7, (154, 157), 220, 435, False),
}

# Audit events refused outright (prefix match), and those allowed only inside the working directory.
BLOCKED_EVENTS = ("socket.", "ctypes.", "subprocess.", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn",
                  "os.spawn", "os.system", "os.kill", "os.killpg", "os.symlink", "os.link", "os.startfile",
                  "pty.", "webbrowser.", "sqlite3.", "resource.setrlimit", "resource.prlimit")
# readline, _dbm and _gdbm write files from C without an audit event
BLOCKED_IMPORTS = ("ctypes", "_ctypes", "_posixsubprocess", "multiprocessing", "_multiprocessing", "readline",
                   "_dbm", "_gdbm")
PATH_EVENTS = {  # event -> indices of its path arguments
    "os.remove": (0,), "os.rename": (0, 1), "os.mkdir": (0,), "os.rmdir": (0,), "os.chmod": (0,),
    "os.chown": (0,), "os.truncate": (0,), "os.utime": (0,), "os.setxattr": (0,), "os.removexattr": (0,),
    "os.chflags": (0,), "os.lchflags": (0,), "shutil.rmtree": (0,),
}
DIR_FD_EVENTS = {  # event -> indices of its dir_fd arguments (None unless the caller passed one)
    "os.remove": (1,), "os.rename": (2, 3), "os.mkdir": (2,), "os.rmdir": (1,), "os.chmod": (2,),
    "os.chown": (3,), "os.utime": (3,),
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# What the runner and the init may say; anything else is not a verdict. The runner: first `ready`, with whether
# the seccomp filter on new processes applied (1) or not (0) and the run's token (32 hex digits, drawn by the
# runner before the program runs), then, as its very last write, a line break, the token, a space and the record:
READY = re.compile(rb"ready ([01]) ([0-9a-f]{32})")
VERDICT = re.compile(rb"passed|failed (\d{1,4})|error (\d{1,4}) ([A-Za-z]{1,64})")
VERDICT_BYTES = 128  # longer than any record: what is kept of a token line
# and the init: first `proc 1` (the namespace's own /proc, or an empty one, is over the machine's) or `proc 0`, then
INIT_STATUS = re.compile(rb"status (-?\d{1,3})")  # the runner's exit status (negative: killed by that signal)
RECORD_BYTES = 1 << 16  # what the supervisor keeps of the init's pipe


class _Libc:
    """The few libc calls the kernel layer needs, raising OSError like the os module does."""

    def __init__(self):
        import ctypes

        self.ctypes = ctypes
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                                   ctypes.c_void_p]
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def check(self, result, what):
        if result != 0:
            errno = self.ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")

    def unshare(self, flags):
        self.check(self.lib.unshare(flags), "unshare")

    def mount(self, source, target, fstype, flags, data=None):
        def encode(s):
            return None if s is None else os.fsencode(s)

        self.check(self.lib.mount(encode(source), encode(target), encode(fstype), flags,
                                  None if data is None else self.ctypes.c_char_p(data.encode())),
                   f"mount {target}")

    def prctl(self, option, value):
        return self.lib.prctl(option, value, 0, 0, 0)

    def drop_capabilities(self):
        ctypes = self.ctypes
        for cap in range(64):  # the bounding set: nothing can be regained through exec
            if self.prctl(PR_CAPBSET_DROP, cap) != 0:
                break  # EINVAL past the last capability the kernel knows
        self.check(self.prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable, twice (64 capability bits): all 0
        header = Header(CAPABILITY_VERSION_3, 0)
        self.check(self.lib.capset(ctypes.byref(header), data), "capset")


def _mount_points():
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            raw = line.split(" ")[4]
            points.append(_unescape(raw))
    return points


def _unescape(raw):
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\" and raw[i + 1:i + 4].isdigit():
            out.append(chr(int(raw[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


def isolate_kernel(workdir, workdir_bytes):
    """Namespaces and read-only mounts; return the layers that now apply, and libc.

    Capabilities are dropped later, by the program's process, once it has
    mounted its namespace's /proc (`own_proc`).
    """
    libc = _Libc()
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID
    if os.geteuid() != 0:
        flags |= CLONE_NEWUSER
    libc.unshare(flags)
    if flags & CLONE_NEWUSER:  # become root of the new user namespace, and nothing outside it
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    layers = ["network namespace (no interface is up)", "PID namespace"]
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)
    libc.mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
               f"size={workdir_bytes},mode=0700")
    failed = []
    for point in _mount_points():
        if point == workdir:
            continue
        try:
            kept = os.statvfs(point).f_flag & (MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME)
            libc.mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | kept)
        except OSError:
            failed.append(point)
    if "/" in failed:
        raise OSError(f"could not make / read-only ({len(failed)} mounts failed)")
    layers.append(f"tmpfs working directory ({workdir_bytes} bytes)")
    layers.append("read-only file system without devices" + (f" except {', '.join(sorted(failed))}"
                                                             if failed else ""))
    return layers, libc


def own_proc(libc):
    """Mount this PID namespace's /proc over the machine's; True when done.

    Run by the namespace's init, which keeps its capabilities (the runner drops
    its own). Without it the PID namespace hides nothing: the machine's /proc
    would still list every process and its command line. Where a proc mount is refused (some
    containers), an empty read-only tmpfs hides /proc instead; False if neither works.
    """
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    try:
        libc.mount("proc", "/proc", "proc", flags)
        return True
    except OSError:
        pass
    try:
        libc.mount("tmpfs", "/proc", "tmpfs", flags, "size=4k,mode=0555")
        return True
    except OSError:
        return False


class LimitError(Exception):
    """An rlimit the sandbox sets is above the hard limit this process inherited, which it may not raise."""


def set_limits(limits):
    """The rlimits every process of the sandbox runs under; the runner then forbids new processes itself.

    Each is set exactly (soft = hard = the sandbox's value), never lowered further to fit an inherited hard
    limit: a program run under less memory, fewer files or a smaller file size can get another verdict, so
    such a limit is a LimitError (a setup error: nothing runs) naming it and the shell command that set it.
    """
    import resource

    cpu = int(limits["cpu_seconds"])
    # soft = hard: the kernel sends SIGKILL at the limit (not the SIGXCPU a program could catch or ignore),
    # so a CPU timeout looks the same in every mode
    wanted = [(resource.RLIMIT_CPU, "RLIMIT_CPU", cpu, "CPU seconds", "ulimit -t"),
              (resource.RLIMIT_AS, "RLIMIT_AS", limits["memory_bytes"], "bytes of address space", "ulimit -v"),
              (resource.RLIMIT_FSIZE, "RLIMIT_FSIZE", limits["file_bytes"], "bytes per file written", "ulimit -f"),
              (resource.RLIMIT_NOFILE, "RLIMIT_NOFILE", limits["open_files"], "open files", "ulimit -n")]
    for which, name, value, what, command in wanted:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):  # EPERM: raising a hard limit needs CAP_SYS_RESOURCE
            hard = resource.getrlimit(which)[1]
            raise LimitError(f"the sandbox runs each program with at most {value} {what} ({name}), but the hard "
                             f"limit this process inherited is {hard} (`{command}`) and it may not raise it; a "
                             "lower limit could change verdicts, so run seam.py where that limit is at least as "
                             "high (e.g. a new shell without that ulimit); nothing was run") from None
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def process_filter(audit_arch, refused, clone, clone3, x32):
    """The seccomp program (classic BPF) that refuses new processes, sessions and process groups.

    Returns (code, jt, jf, k) tuples, `struct sock_filter`. A system call of
    another ABI (32-bit calls from a 64-bit process, x32) is refused whatever it
    is; clone is allowed only with CLONE_THREAD (a thread dies with its process);
    clone3 fails with ENOSYS, because its flags are in memory the filter cannot
    read, and the C library then falls back to clone for threads.
    """
    allow, deny, enosys, check_clone = "allow", "deny", "enosys", "clone"
    code = [(BPF_LD_W_ABS, 4, None, None),  # seccomp_data.arch
            (BPF_JEQ_K, audit_arch, None, deny),
            (BPF_LD_W_ABS, 0, None, None)]  # seccomp_data.nr
    if x32:
        code.append((BPF_JGE_K, X32_SYSCALL_BIT, deny, None))
    code += [(BPF_JEQ_K, number, deny, None) for number in refused]
    code += [(BPF_JEQ_K, clone3, enosys, None), (BPF_JEQ_K, clone, None, allow)]
    labels = {check_clone: len(code)}
    code += [(BPF_LD_W_ABS, 16, None, None),  # the low half of seccomp_data.args[0] (little-endian): the flags
             (BPF_JSET_K, CLONE_THREAD, allow, deny)]
    for label, value in ((allow, SECCOMP_RET_ALLOW), (deny, SECCOMP_RET_ERRNO | EPERM),
                         (enosys, SECCOMP_RET_ERRNO | ENOSYS)):
        labels[label] = len(code)
        code.append((BPF_RET_K, value, None, None))

    def offset(index, label):
        return 0 if label is None else labels[label] - index - 1

    return [(op, offset(i, jt), offset(i, jf), k) for i, (op, k, jt, jf) in enumerate(code)]


def forbid_new_processes(libc):
    """RLIMIT_NPROC = 0 and, where this machine's system calls are known, the seccomp filter; True if filtered.

    RLIMIT_NPROC alone is not enough: the kernel does not apply it to root
    (uid 0 of the initial user namespace, with or without capabilities).
    """
    import resource
    import struct

    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    syscalls = PROCESS_SYSCALLS.get(os.uname().machine)
    if libc is None or syscalls is None or sys.byteorder != "little" or struct.calcsize("P") != 8:
        return False
    ctypes = libc.ctypes
    program = process_filter(*syscalls)
    instructions = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *i) for i in program))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program), ctypes.addressof(instructions))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:  # what lets a process without CAP_SYS_ADMIN install a filter
        return False
    return libc.lib.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0


def load_libc():
    """libc through ctypes, or None where there is none to load."""
    try:
        return _Libc()
    except (ImportError, OSError, AttributeError):
        return None


def install_guard(workdir):
    """The audit hook of the module docstring (layer 3)."""
    root = os.path.realpath(workdir)

    def inside(path):
        if isinstance(path, int):
            return True  # a file descriptor: opened under these same rules
        try:
            full = os.path.realpath(os.path.join(os.getcwd(), os.fsdecode(path)))
        except (TypeError, ValueError):
            return False
        return full == root or full.startswith(root + os.sep)

    def refuse(event):
        raise PermissionError(f"seam sandbox: {event} is not allowed")

    def hook(event, args):
        if event.startswith(BLOCKED_EVENTS):
            refuse(event)
        if event == "import" and args[0].partition(".")[0] in BLOCKED_IMPORTS:
            refuse(f"import {args[0]}")
        if event == "open" and not isinstance(args[0], int):
            if isinstance(args[2], int) and args[2] & WRITE_FLAGS and not inside(args[0]):
                refuse(f"writing {args[0]!r}")
            if os.path.isdir(args[0]):  # the `open` event does not show the dir_fd= of later calls
                refuse(f"opening the directory {args[0]!r}")
        if event in PATH_EVENTS and not all(inside(args[i]) for i in PATH_EVENTS[event] if i < len(args)):
            refuse(f"{event} outside the working directory")
        if event in DIR_FD_EVENTS and any(args[i] is not None for i in DIR_FD_EVENTS[event] if i < len(args)):
            refuse(f"{event} with dir_fd")

    sys.addaudithook(hook)


def builtin_exception_names():
    """Each built-in exception class and its name, taken before any program code runs."""
    import builtins

    return {cls: cls.__name__ for cls in vars(builtins).values()  # __name__: IOError is OSError
            if isinstance(cls, type) and issubclass(cls, BaseException)}


def exception_name(exc, builtin_names):
    """The name of the nearest built-in class of `exc`.

    Never the program's own class name: the program chooses it, so it could
    carry anything into the released tables (a file's content, an address that
    changes from run to run). The classes are compared by identity with those
    taken before the program ran, so a class that claims to be built in
    (`__module__ = "builtins"`, or put into `builtins`) is not taken for one.
    """
    for cls in type(exc).__mro__:
        if cls in builtin_names:
            return builtin_names[cls]
    return "BaseException"


def run_parts(parts):
    """Execute the parts in one namespace; the verdict record (`passed`, `failed PART`, `error PART NAME`).

    Called from `main` itself, so that the program runs exactly as deep in the
    stack as it always has (where a deep recursion hits its limit depends on it).
    """
    import builtins
    import random

    builtin_names = builtin_exception_names()
    random.seed(0)  # the same pseudo-random numbers on every run
    namespace = {"__name__": "seam_sandbox", "__builtins__": builtins}
    for index, (label, source) in enumerate(parts):
        try:
            code = compile(source, f"<{label}>", "exec")
            exec(code, namespace)
        except AssertionError:
            return b"failed %d\n" % index
        except BaseException as exc:  # noqa: BLE001 - SystemExit, MemoryError, anything the program raises
            return b"error %d %s\n" % (index, exception_name(exc, builtin_names).encode("ascii"))
    return b"passed\n"


def become_init(libc, status_w, verdict_w, inherited):
    """PID 1 of the new namespace (the first process forked after unshare). Returns only in the runner.

    Dies with the supervisor (parent-death signal; it is also in the
    supervisor's process group, which the parent kills if the supervisor
    overruns). Mounts the namespace's /proc, says whether that worked, starts
    the runner, reaps every process of the namespace that ends, and once the
    runner has ended writes its exit status and exits, which makes the kernel
    kill whatever else is left in the namespace.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the one signal Python handles; the kernel drops the others
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for fd in inherited:
        os.close(fd)
    proc = own_proc(libc)
    libc.prctl(PR_SET_DUMPABLE, 0)  # no /proc/1/mem, environ or fd for the runner, with or without capabilities
    os.write(status_w, b"proc %d\n" % proc)
    runner = os.fork()
    if runner == 0:  # the runner closes status_w itself (prepare_runner)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return
    try:
        os.close(verdict_w)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == runner:
                break
        os.write(status_w, b"status %d\n" % os.waitstatus_to_exitcode(status))
    finally:
        os._exit(0)


def prepare_runner(job, libc, kernel, verdict_w, inherited, supervisor):
    """In the runner, before the program: close what it must not hold, drop privileges, set limits and the guard.

    Ends by writing `ready` with the run's token, the first line on the verdict pipe, which only this
    trusted code can write first; returns the token.
    """
    for fd in inherited:
        os.close(fd)
    if kernel:
        libc.drop_capabilities()  # raises if it cannot: then no `ready`, and the run is a setup error
    elif libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with the supervisor
        if os.getppid() != supervisor:  # which died before that took effect
            os._exit(1)
    filtered = False
    if not job["limits"]["processes"]:
        filtered = forbid_new_processes(libc)
    if job["guard"]:
        install_guard(job["workdir"])
    token = os.urandom(16).hex().encode("ascii")
    os.write(verdict_w, b"ready %d %s\n" % (filtered, token))
    return token


def wait_for(pid, fds, deadline):
    """Wait until the child `pid` ends, or kill it at `deadline`; read the pipes `fds` meanwhile.

    Reading while waiting means no writer ever blocks on a full pipe. `fds[0]` is
    the runner's pipe, scanned for its two lines (`RunnerLines`); of the init's
    at most RECORD_BYTES are kept. Returns (Pipes, timed out, wait status).
    """
    pipes = Pipes(fds, fds[0])
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        handle = -1
    timed_out = False
    try:
        while True:
            if handle < 0:  # no pidfd: poll
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return pipes, False, status
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            watched = pipes.open + ([handle] if handle >= 0 else [])
            ready, _, _ = select.select(watched, [], [], remaining if handle >= 0 else min(remaining, 0.01))
            pipes.read([fd for fd in ready if fd != handle])
            if handle >= 0 and handle in ready:
                break
    finally:
        if handle >= 0:
            os.close(handle)
    if timed_out:
        os.kill(pid, signal.SIGKILL)  # not reaped yet, so this PID is still the child's
    _, status = os.waitpid(pid, 0)
    return pipes, timed_out, status


class Pipes:
    """The read ends of the pipes from the runner and the init: of the init's, the first RECORD_BYTES; of
    the runner's (`runner`), only what `RunnerLines` looks for."""

    def __init__(self, fds, runner):
        self.open = list(fds)
        self.kept = {fd: bytearray() for fd in fds if fd != runner}
        self.runner = runner
        self.said = RunnerLines()

    def read(self, ready):
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                self.open.remove(fd)
            elif fd == self.runner:
                self.said.feed(chunk)
            elif len(self.kept[fd]) + len(chunk) <= RECORD_BYTES:
                self.kept[fd] += chunk

    def drain(self):
        """What is left in the pipes, whose writers are dead or killed now; never blocks on a stray writer."""
        while self.open:
            ready, _, _ = select.select(self.open, [], [], 0)
            if not ready:
                break
            self.read(ready)


class RunnerLines:
    """The two lines of the runner's pipe that count: the first (`ready FILTERED TOKEN`, written before the
    program ran) and the last that the runner's final write made: a line break, the token, a space and the
    record, in one write(2) of less than PIPE_BUF bytes, so never interleaved with another writer's bytes.

    Everything else on the pipe is the program's (the runner's memory is the program's, and so is its pipe)
    and is ignored, however much of it there is and whenever it comes: lines a thread, a signal handler or a
    profile hook writes before or after the runner's verdict, racing it, cannot change the verdict. Only a
    program that reads the token out of the runner's memory can write a line that counts (the limit of any
    in-process harness: docs/VALIDITY.md). The scan is bytes.rfind over each chunk, with a carry of
    len(marker) - 1 bytes for a marker cut between two reads: linear, and nowhere near the supervisor's
    CPU limit however fast the program floods the pipe. Memory stays bounded.
    """

    def __init__(self):
        self.head = bytearray()  # the first line, until it ends
        self.ready = None  # READY's match, once the first line has come
        self.failed = False  # the first line is no `ready`
        self.marker = b""  # b"\n" + token + b" "
        self.carry = b""
        self.line = None  # what follows the last marker (up to VERDICT_BYTES + 1 bytes), or None
        self.complete = False  # whether that line's end has come

    def feed(self, chunk):
        if self.ready is None:
            if self.failed:
                return
            end = chunk.find(b"\n")
            self.head += chunk[:VERDICT_BYTES + 1] if end < 0 else chunk[:min(end, VERDICT_BYTES + 1)]
            if end < 0 or len(self.head) > VERDICT_BYTES:
                self.failed = len(self.head) > VERDICT_BYTES
                return
            self.ready = READY.fullmatch(bytes(self.head))
            if self.ready is None:
                self.failed = True
                return
            self.marker = b"\n" + self.ready.group(2) + b" "
            chunk = chunk[end:]  # from the line break that ends `ready`
        buffer = self.carry + chunk
        at = buffer.rfind(self.marker)
        if at >= 0:
            self.line, self.complete = b"", False
            self._extend(buffer[at + len(self.marker):])
        elif self.line is not None and not self.complete:
            self._extend(chunk)
        self.carry = buffer[max(0, len(buffer) - len(self.marker) + 1):]

    def _extend(self, data):
        end = data.find(b"\n")
        piece = data if end < 0 else data[:end]
        self.line += piece[:VERDICT_BYTES + 1 - len(self.line)]
        self.complete = end >= 0


def kill_descendants():
    """Kill and reap every child this process has left, until none is left.

    Without the kernel layer the supervisor is a child subreaper, so every
    process the runner started (in any session, after any number of forks) is
    reparented to it when its parent dies: killing the children over and over
    reaches them all. A child, not yet reaped, keeps its PID, so no other
    process can be hit.
    """
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        children = own_children()
        if not children:
            return  # children this process cannot see; the parent's kill of the process group is what is left
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def own_children():
    """The PIDs whose parent is this process, from /proc/*/stat."""
    me, found = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()
            except OSError:
                continue
            if len(fields) > 1 and int(fields[1]) == me:
                found.append(int(entry))
    return found


def decide(said, status, timed_out, labels, exception_names):
    """(outcome, detail, seccomp filter applied) from what the runner wrote and how it ended; None: never ready.

    `said` is the runner's pipe as `RunnerLines` found it, `status` the runner's exit status (negative: the
    signal that killed it; None if unknown). Only two lines count: the first, which must be `ready`
    (written before the program ran, so the runner's own), and the last one carrying the run's token, which
    is taken for a verdict only when the runner then exited with status 0 and the record is in the fixed
    format with a part that exists and a built-in exception class. The detail is built here, from the
    labels of the job.
    """
    if said.ready is None:
        return ("timeout", "wall-clock limit", False) if timed_out else None
    filtered = said.ready.group(1) == b"1"
    if status == 0 and said.complete:
        verdict = VERDICT.fullmatch(said.line)
        if verdict is not None:
            if verdict.group(0) == b"passed":
                return "passed", "", filtered
            index = int(verdict.group(1) or verdict.group(2))
            name = (verdict.group(3) or b"AssertionError").decode("ascii")
            if index < len(labels) and name in exception_names:
                return ("failed" if verdict.group(1) else "error"), f"{name} in {labels[index]}", filtered
    if timed_out:
        return "timeout", "wall-clock limit", filtered
    if status is None:
        return "crashed", "invalid verdict", filtered
    if status in (-signal.SIGKILL, -signal.SIGXCPU):
        return "timeout", "CPU limit", filtered
    if status < 0:
        try:
            return "crashed", f"killed by {signal.Signals(-status).name}", filtered
        except ValueError:
            return "crashed", f"killed by signal {-status}", filtered
    if status == 0 and said.line is not None:
        return "crashed", "invalid verdict", filtered
    return "crashed", f"exited with status {status} before the tests finished", filtered


def supervise(job, child, kernel, layers, libc, read_ends, nonce_fd):
    """The supervisor after the fork: wall clock, reaping, verdict. Returns (nonce, the line for the parent)."""
    verdict_r, status_r = read_ends
    labels = [label for label, _ in job["parts"]]
    exception_names = set(builtin_exception_names().values())
    nonce = read_nonce(nonce_fd)
    if libc is not None:
        libc.prctl(PR_SET_DUMPABLE, 0)  # neither the runner nor anything else of its user reads this memory
    fds = [verdict_r] + ([status_r] if kernel else [])
    pipes, timed_out, status = wait_for(child, fds, time.monotonic() + float(job["limits"]["wall_seconds"]))
    kill_descendants()  # the init is gone and with it the namespace; without one, what the runner started
    pipes.drain()
    status = os.waitstatus_to_exitcode(status)
    proc = True
    if kernel:  # that status is the init's; the runner's comes from the init
        init_lines = bytes(pipes.kept[status_r]).split(b"\n")
        proc = init_lines[0] == b"proc 1"
        relayed = INIT_STATUS.fullmatch(init_lines[1]) if len(init_lines) > 2 else None
        status = int(relayed.group(1)) if relayed else None
    decided = decide(pipes.said, status, timed_out, labels, exception_names)
    if decided is None:
        code = "unknown" if status is None else status
        return nonce, {"kind": "setup", "detail": f"the sandbox child exited with status {code} "
                                                  "before running anything"}
    outcome, detail, filtered = decided
    isolation = list(layers)
    if kernel and not proc:
        isolation[isolation.index("PID namespace")] = "PID namespace (the machine's /proc still visible)"
    if kernel:
        isolation.append("no capabilities")
    wanted = not job["limits"]["processes"]
    isolation.append("resource limits" if filtered or not wanted else "resource limits (no seccomp filter)")
    if job["guard"]:
        isolation.append("audit-hook guard")
    return nonce, {"kind": "verdict", "outcome": outcome, "detail": detail, "isolation": isolation}


def read_nonce(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 256)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode("ascii", "replace")


def read_job():
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    return json.loads(b"".join(chunks).decode("utf-8"))


def main():
    result_fd, nonce_fd = int(sys.argv[1]), int(sys.argv[2])
    job = read_job()
    limits = job["limits"]

    def report(nonce, fields):
        os.write(result_fd, (json.dumps({"nonce": nonce, **fields}, sort_keys=True) + "\n").encode("utf-8"))

    layers, libc, kernel = [], None, False
    if job["kernel"] != "off":
        try:
            layers, libc = isolate_kernel(job["workdir"], limits["workdir_bytes"])
            kernel = True
        except (OSError, AttributeError, ImportError) as exc:
            if job["kernel"] == "require":
                report(read_nonce(nonce_fd), {"kind": "setup", "detail": f"kernel isolation unavailable: {exc}"})
                return 0
            layers = []
    if libc is None:
        libc = load_libc()
    os.chdir(job["workdir"])
    try:
        set_limits(limits)
    except LimitError as exc:
        report(read_nonce(nonce_fd), {"kind": "setup", "detail": str(exc)})
        return 0
    verdict_r, verdict_w = os.pipe()
    status_r, status_w = os.pipe() if kernel else (-1, -1)
    if not kernel and libc is not None:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    supervisor = os.getpid()
    child = os.fork()
    if child:  # the supervisor
        os.close(verdict_w)
        if kernel:
            os.close(status_w)
        report(*supervise(job, child, kernel, layers, libc, (verdict_r, status_r), nonce_fd))
        os._exit(0)  # nothing to flush or finalize, and finalizing an interpreter takes milliseconds
    inherited = [fd for fd in (result_fd, nonce_fd, verdict_r, status_r) if fd >= 0]
    if kernel:
        become_init(libc, status_w, verdict_w, inherited)  # returns only in the runner it starts
        inherited = [status_w]
    token = prepare_runner(job, libc, kernel, verdict_w, inherited, supervisor)
    del inherited, report
    write, leave = os.write, os._exit  # taken before the program could replace them in the os module
    record = run_parts(job["parts"])
    # One write(2) of less than PIPE_BUF bytes: whatever else the program's threads, signal handlers or hooks
    # write to the pipe, before or after, lands before or after this line, never inside it, and has no token.
    write(verdict_w, b"\n" + token + b" " + record)
    leave(0)  # no atexit handlers or finalizers of the program run after the verdict


if __name__ == "__main__":
    sys.exit(main())
