"""The child side of the sandbox: isolate this process, run the program, report one line.

Started by `validity.sandbox.run_program` as

    python -P -s -S -B sandbox_child.py RESULT_FD        (the job as JSON on stdin)

It imports nothing from seam and only the standard library, because the child's
`sys.path` holds neither the repository nor site-packages. Model output is
untrusted, so everything that protects the machine happens here, in this order,
before the first line of it runs:

1. Kernel layer (Linux; as root, or as any user where unprivileged user
   namespaces are allowed): new network, mount and PID namespaces; a fresh,
   size-limited tmpfs on the working directory; every other mount re-mounted
   read-only, nodev and nosuid. The program then runs in a forked child that
   is PID 1 of its namespace, with a /proc of that namespace mounted over the
   machine's (so it sees no other process, and every process it might start
   dies with it), all capabilities dropped and no_new_privs set.
   With `kernel = "auto"` a failure here falls back to the layers below and the
   report says which layers applied; with `"require"` it is a setup error.
2. Resource limits (setrlimit): CPU seconds, address space, size of any file
   written (stdout included), open files, and no new processes.
3. Guard (PEP 578 audit hook, which Python code cannot remove): sockets,
   subprocesses, fork/exec, signals to other processes, changing resource
   limits, links, ctypes and sqlite3 are refused, and so are opening a
   directory (a directory descriptor would let `dir_fd=` calls write where the
   audit events do not show), any `dir_fd=` argument, and any write, rename,
   removal or mode change outside the working directory; modules that write
   files in C without an audit event (readline, dbm) cannot be imported. On
   its own it is not a security boundary: C code, and the Python functions
   that raise no audit event at all (for example `signal.pidfd_send_signal`,
   `os.setpriority`, `os.mkfifo`), get past it. It is the fallback where the
   kernel layer is unavailable, and a second wall where it is.

The result line carries the job's nonce, so a program that prints, exits early
(`sys.exit(0)`, `os._exit(0)`) or writes a verdict of its own into the pipe is
not read as a pass. That stops accidents, not intent: the program shares this
interpreter and could find the nonce (or fool its tests in simpler ways).
"""

import json
import os
import sys

# Linux constants (include/uapi/linux/sched.h, mount.h, prctl.h, capability.h).
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 4096
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
CAPABILITY_VERSION_3 = 0x20080522

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

    Run by the namespace's PID 1, before it drops its capabilities. Without it
    the PID namespace hides nothing: the machine's /proc would still list every
    process and its command line. Where a proc mount is refused (some
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


def set_limits(limits, *, processes):
    import resource

    cpu = int(limits["cpu_seconds"])
    # soft = hard: the kernel sends SIGKILL at the limit, which also stops a namespace's PID 1
    # (that one ignores SIGXCPU), so a CPU timeout looks the same in every mode
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"], limits["memory_bytes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    if not processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


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
    """Execute the parts in one namespace; (outcome, detail)."""
    import builtins
    import random

    builtin_names = builtin_exception_names()
    random.seed(0)  # the same pseudo-random numbers on every run
    namespace = {"__name__": "seam_sandbox", "__builtins__": builtins}
    for label, source in parts:
        try:
            code = compile(source, f"<{label}>", "exec")
            exec(code, namespace)
        except AssertionError:
            return "failed", f"AssertionError in {label}"
        except BaseException as exc:  # noqa: BLE001 - SystemExit, MemoryError, anything the program raises
            return "error", f"{exception_name(exc, builtin_names)} in {label}"
    return "passed", ""


def main():
    result_fd = int(sys.argv[1])
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    nonce, workdir = job["nonce"], job["workdir"]

    def report(**fields):
        os.write(result_fd, (json.dumps({"nonce": nonce, **fields}, sort_keys=True) + "\n").encode("utf-8"))

    layers, libc = [], None
    if job["kernel"] != "off":
        try:
            layers, libc = isolate_kernel(workdir, job["limits"]["workdir_bytes"])
        except (OSError, AttributeError, ImportError) as exc:
            if job["kernel"] == "require":
                report(kind="setup", detail=f"kernel isolation unavailable: {exc}")
                return 0
            layers, libc = [], None
    os.chdir(workdir)
    set_limits(job["limits"], processes=libc is not None)
    if libc is not None:  # we hold the namespaces; the program runs as PID 1 of the new one
        pid = os.fork()
        if pid:
            _, status, usage = os.wait4(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            report(kind="status", exit=code, cpu=usage.ru_utime + usage.ru_stime)
            return 0
        libc.prctl(PR_SET_PDEATHSIG, 9)  # SIGKILL if the parent side is killed (wall-clock limit)
        if not own_proc(libc):
            layers[layers.index("PID namespace")] = "PID namespace (the machine's /proc still visible)"
        libc.drop_capabilities()
        layers.append("no capabilities")
        import resource

        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    layers.append("resource limits")
    if job["guard"]:
        install_guard(workdir)
        layers.append("audit-hook guard")
    report(kind="ready", isolation=layers)
    outcome, detail = run_parts(job["parts"])
    report(kind="result", outcome=outcome, detail=detail)
    os._exit(0)  # no atexit handlers or finalizers of the program run after the verdict


if __name__ == "__main__":
    sys.exit(main())
