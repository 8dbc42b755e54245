"""The worker confining itself, by the kernel, before any learner code runs.

:func:`confine` runs in the worker process after the kit's own code is
imported and the job is read, and before the first learner file is loaded.
In order:

1. **scratch quota** (in the worker's own mount namespace): a fresh ``tmpfs``
   of a fixed size is mounted on the scratch folder, so everything the
   learner's code writes is capped in total and vanishes with the worker;
2. **closed root** (:func:`enter_closed_root`, in the child's own mount
   namespace): a minimal file tree becomes ``/`` -- the allow-list of
   :func:`readable_roots` bound read-only, the scratch folder read-write;
   host paths, ``/tmp``, ``/run`` (named sockets), the kit checkout and
   earlier output folders do not exist for learner code;
3. **hard resource limits** (soft = hard): address space, processes and
   threads (in the worker's own user namespace only: elsewhere the count is
   the whole user's), file size, CPU seconds, open files, no core dumps;
4. **no capabilities**: the bounding and ambient sets emptied, root's
   special treatment turned off (``SECBIT_NOROOT``), every capability
   dropped, ``no_new_privs`` set -- so none of the limits can be raised again
   (raising a hard limit needs ``CAP_SYS_RESOURCE`` in the initial user
   namespace, which a worker never has);
5. **Landlock**: read-only the same allow-list; read-write the scratch
   folder; nothing else. TCP denied, signals and abstract UNIX sockets
   scoped to the worker (see :mod:`.landlock`);
6. **system-call filter** (:mod:`.seccomp`): no sockets, no ``memfd``, no
   new processes other than threads, no ptrace, io_uring, bpf or mounts.

The grader adds what a process cannot do to itself: the per-exercise
CPU-time budget (the worker's parent, :meth:`graders.engine.worker.Parent.relay`)
and cgroup limits on the whole worker (:mod:`.cgroups`).

Each step reports whether it took effect; the list travels back to the grader
and into every report (``sandbox`` in ``report.json``).
"""

from __future__ import annotations

import ctypes
import os
import resource
import site
import sys
import sysconfig
from pathlib import Path

from graders import settings as kit_settings  # `settings` below is the sandbox's (job.json)
from graders.engine import landlock, seccomp
from graders.engine.libc import libc as _libc

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 0x20, 0x1000, 0x4000, 0x400, 0x800, 1 << 21
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine if hasattr(os, "uname") else "", 155)
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
SECBIT_NO_SETUID_FIXUP, SECBIT_NO_SETUID_FIXUP_LOCKED = 1 << 2, 1 << 3
SECBIT_KEEP_CAPS_LOCKED = 1 << 5
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SYSTEM_READ_ONLY = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/usr/share/zoneinfo",
                    "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
                    "/dev/urandom", "/dev/random", "/dev/zero",
                    # the CPU's description: math libraries size their kernels by it (other numbers without it)
                    "/proc/cpuinfo", "/sys/devices/system/cpu")
SYSTEM_READ_WRITE = ("/dev/null",)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def mount_scratch(scratch: Path, size_bytes: int) -> bool:
    """Mount a ``tmpfs`` of ``size_bytes`` on ``scratch`` (needs the worker's own mount namespace)."""
    options = f"size={max(1 << 20, int(size_bytes))},mode=0700,nr_inodes=4096".encode()
    result = _libc().mount(b"tmpfs", os.fsencode(scratch), b"tmpfs", ctypes.c_ulong(MS_NOSUID | MS_NODEV),
                           ctypes.c_char_p(options))
    return result == 0


def set_limits(limits: dict, *, count_processes: bool) -> list[str]:
    """Hard limits (soft = hard) from ``limits``; returns the names of those set."""
    chosen = {
        "core": (resource.RLIMIT_CORE, 0),
        "file_size": (resource.RLIMIT_FSIZE, limits.get("file_bytes")),
        "cpu_seconds": (resource.RLIMIT_CPU, limits.get("cpu_seconds")),
        "open_files": (resource.RLIMIT_NOFILE, limits.get("open_files")),
    }
    if limits.get("memory_bytes"):
        chosen["memory"] = (resource.RLIMIT_AS, current_address_space() + int(limits["memory_bytes"]))
    if count_processes and limits.get("processes"):
        chosen["processes"] = (resource.RLIMIT_NPROC, limits["processes"])
    done = []
    for name, (which, value) in chosen.items():
        if value is None:
            continue
        value = int(value)
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
            done.append(name)
        except (ValueError, OSError):
            pass
    return done


def current_address_space() -> int:
    """This process's virtual memory size in bytes (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * resource.getpagesize()
    except OSError:
        return 0


def drop_capabilities() -> bool:
    """Empty the bounding and ambient sets, lock out root's privileges, drop every capability.

    True when this process ends with no capability at all (also when it had none).
    """
    libc = _libc()
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last
            break
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    libc.prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
               | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    libc.capset(ctypes.byref(header), ctypes.byref(data))
    libc.prctl(landlock.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return not any(_capability_mask(field) for field in ("CapEff", "CapPrm", "CapBnd"))


def _capability_mask(field: str) -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def readable_roots(closed: list[str]) -> list[str]:
    """What learner code may read (and map as code): an allow-list, never "the kit minus a deny list".

    The interpreter's standard library (with ``lib-dynload``), its site-packages (the venv's and, where the
    venv sees them, the base interpreter's), its shared library (``libpython``, where it has one), and the system
    libraries and files of :data:`SYSTEM_READ_ONLY`; a ``closed`` hierarchy inside one of them (the kit's
    own packages, when the kit is installed into site-packages) is cut out, its siblings opened up one
    by one. The kit checkout, earlier output folders, ``/tmp`` and the home folder are not on the list,
    whatever the import path says: the child's given modules and learner files are copied into its
    scratch folder, and everything else it runs was imported before it was confined.
    """
    closed_real = [os.path.realpath(p) for p in closed]
    paths = sysconfig.get_paths()
    candidates = [paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    candidates += [os.path.join(paths.get("stdlib", ""), "lib-dynload"), *site.getsitepackages()]
    roots: list[str] = []
    library = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("LDLIBRARY") or "")
    if os.path.isfile(library):  # libpython, for a shared-library build (the file alone)
        roots.append(os.path.realpath(library))
    for candidate in dict.fromkeys(os.path.realpath(p) for p in candidates if p and os.path.isdir(p)):
        roots += _open_up(candidate, closed_real, depth=0)
    for path in SYSTEM_READ_ONLY:
        if os.path.exists(path):
            roots += _open_up(os.path.realpath(path), closed_real, depth=0)
    return sorted(dict.fromkeys(roots))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _open_up(path: str, forbidden: list[str], depth: int) -> list[str]:
    if any(_under(path, f) for f in forbidden):
        return []
    if not any(_under(f, path) for f in forbidden):
        return [path]
    if depth > 6:
        return []
    try:
        children = sorted(os.listdir(path))
    except OSError:
        return []
    found: list[str] = []
    for child in children:
        full = os.path.join(path, child)
        if os.path.islink(full):
            full = os.path.realpath(full)
        found += _open_up(full, forbidden, depth + 1)
    return found


def enter_closed_root(root: Path, read_only: list[str], read_write: list[str], keep: list[str] = ()) -> bool:
    """Make a minimal file tree this process's ``/``: only ``read_only`` (bound read-only) and ``read_write``.

    Needs the process's own mount namespace and ``CAP_SYS_ADMIN`` in its user namespace (the child has
    both until :func:`drop_capabilities`). A small ``tmpfs`` is mounted on ``root`` (an empty folder);
    each allowed path is bind-mounted at its own path inside it (files onto empty files), the symbolic
    links along the allowed paths and along ``keep`` (the import path as the interpreter spells it) are
    made again, ``/proc`` of the worker's PID namespace is bound too (Landlock narrows it to
    ``/proc/cpuinfo``), then ``pivot_root`` makes the tree ``/`` and the old root is detached. From then
    on the host's named sockets, ``/tmp``, ``/run``, the kit checkout and every earlier output folder do
    not exist for this process: nothing to connect to, read or list. The paths keep their names, so
    ``sys.path`` and the modules already imported stay valid. True when all of it took effect.
    """
    libc = _libc()
    if libc.mount(b"tmpfs", os.fsencode(root), b"tmpfs", ctypes.c_ulong(MS_NOSUID | MS_NODEV),
                  b"size=4m,mode=0755,nr_inodes=8192") != 0:
        return False
    top = str(root)
    bound: list[str] = []

    def visible(path: str) -> bool:
        return any(_under(path, done) for done in bound)

    def bind(source: str, writable: bool) -> bool:
        real = os.path.realpath(source)
        _mirror_links(top, source)
        if visible(real) or not os.path.exists(real):
            return True
        target = top + real
        _mirror_links(top, os.path.dirname(real))
        if os.path.isdir(real):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "ab").close()
        if libc.mount(os.fsencode(real), os.fsencode(target), None, ctypes.c_ulong(MS_BIND | MS_REC), None) != 0:
            return False
        if not writable:
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(real)
            if libc.mount(None, os.fsencode(target), None, ctypes.c_ulong(flags), None) != 0:
                return False
        bound.append(real)
        return True

    try:
        ok = all([bind(path, False) for path in sorted(read_only, key=lambda p: len(os.path.realpath(p)))]
                 + [bind(path, True) for path in read_write] + [bind("/proc", True)])
        for path in keep:
            _mirror_links(top, path)
        old = os.path.join(top, ".old-root")
        os.mkdir(old, 0o700)
        if not ok or libc.syscall(SYS_PIVOT_ROOT, os.fsencode(top), os.fsencode(old)) != 0:
            return False
        os.chdir("/")
        if libc.umount2(b"/.old-root", MNT_DETACH) != 0:
            return False
        os.rmdir("/.old-root")
        # the new root itself read-only: nothing can be created beside the bound paths
        return libc.mount(None, b"/", None, ctypes.c_ulong(MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV),
                          None) == 0
    except OSError:
        return False


def _mirror_links(top: str, path: str) -> None:
    """Make each symbolic link along ``path`` again under ``top`` (``/lib -> usr/lib``, a venv's ``lib64``)."""
    current = "/"
    for part in Path(path).parts[1:]:
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            inside = top + candidate
            if not os.path.lexists(inside):
                os.makedirs(os.path.dirname(inside), exist_ok=True)
                os.symlink(os.readlink(candidate), inside)
            current = os.path.realpath(candidate)
        else:
            current = candidate


def _locked_flags(path: str) -> int:
    """The mount flags of ``path``'s mount that a bind remount must keep (the kernel refuses to drop
    ``nosuid``, ``nodev``, ``noexec`` or the access-time mode of a mount inherited from another namespace)."""
    try:
        found = os.statvfs(path).f_flag
    except OSError:
        return 0
    flags = 0
    for st_flag, ms_flag in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                             (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                             (os.ST_RELATIME, MS_RELATIME)):
        if found & st_flag:
            flags |= ms_flag
    return flags


def confine(scratch: Path, settings: dict, layers: dict, readable: list[str] | None = None,
            root: Path | None = None) -> dict:
    """Apply every remaining layer this machine allows (after :func:`mount_scratch`, whose result is in
    ``layers``, and after the scratch folder is filled); return ``{layer: True/False}`` for the report.

    ``root``: an empty folder for :func:`enter_closed_root` (only in the child's own mount namespace).
    A flag is true only when what it claims binds: ``resource_limits`` needs the system-call filter too
    (``memfd_create`` files are outside ``RLIMIT_AS``), ``process_limit`` is the filter's refusal of
    every new process (``RLIMIT_NPROC`` does not bind for uid 0 outside).
    """
    namespaced = layers.get("namespaces", False)
    allowed = readable if readable is not None else readable_roots(list(settings.get("forbidden_paths", [])))
    writable = [str(scratch), *(p for p in SYSTEM_READ_WRITE if os.path.exists(p))]
    layers["closed_root"] = False
    if root is not None and namespaced and settings.get("closed_root", True) \
            and not kit_settings.get("RL4LLM_NO_CLOSED_ROOT"):
        layers["closed_root"] = enter_closed_root(root, allowed, writable, keep=[p for p in sys.path if p])
        if (scratch / "work").is_dir():  # the working folder again, now inside the new root
            os.chdir(scratch / "work")
    limits = set_limits(settings, count_processes=namespaced)
    rlimits = {"memory", "file_size", "cpu_seconds", "open_files"} <= set(limits)
    layers["no_capabilities"] = drop_capabilities()
    if kit_settings.get("RL4LLM_NO_LANDLOCK") or settings.get("landlock") is False:
        # the instructor's switch, for machines where Landlock misbehaves (and for the kit's own
        # test that the hostile suite fails without it); reported as missing layers
        layers["landlock_files"] = layers["landlock_tcp"] = layers["landlock_scopes"] = False
    else:
        try:
            applied = landlock.restrict_self(allowed, writable)
            layers["landlock_files"], layers["landlock_tcp"], layers["landlock_scopes"] = (
                applied.filesystem, applied.tcp, applied.scoped)
        except (landlock.LandlockError, OSError):
            layers["landlock_files"] = layers["landlock_tcp"] = layers["landlock_scopes"] = False
    layers["syscall_filter"] = False
    if not kit_settings.get("RL4LLM_NO_SECCOMP") and settings.get("seccomp", True):
        try:
            seccomp.install()
            layers["syscall_filter"] = True
        except OSError:
            pass
    layers["resource_limits"] = rlimits and layers["syscall_filter"]
    layers["process_limit"] = layers["syscall_filter"]
    return layers


def identity() -> str:
    """Who the confined process is, in words (for reports and ``rl4llm doctor``)."""
    uid = os.getuid()
    outer = _outer_uid(uid)
    if outer == 0:
        return "root (uid 0 outside) without any capability"
    if outer == 65534:
        return "user nobody (65534)"
    return f"uid {outer}, without any capability"


def _outer_uid(uid: int) -> int:
    try:
        with open("/proc/self/uid_map", encoding="ascii") as handle:
            for line in handle:
                inner, outer, count = (int(x) for x in line.split())
                if inner <= uid < inner + count:
                    return outer + uid - inner
    except (OSError, ValueError):
        pass
    return uid


def _probe(argv: list[str]) -> None:
    """``python -m graders.engine.confine --probe SCRATCH --secret FILE [--namespaced]``: confine, attack, report."""
    import argparse
    import json
    import socket

    parser = argparse.ArgumentParser(prog="python -m graders.engine.confine")
    parser.add_argument("--probe", required=True, type=Path)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--namespaced", action="store_true")
    args = parser.parse_args(argv)
    who = identity()
    layers = {"namespaces": args.namespaced}
    layers["scratch_quota"] = args.namespaced and mount_scratch(args.probe, 1 << 20)
    (args.probe / "work").mkdir(exist_ok=True)
    root = args.probe.with_name("root")
    root.mkdir(exist_ok=True)
    settings = {"memory_bytes": 1 << 30, "file_bytes": 1 << 20, "cpu_seconds": 30, "open_files": 64,
                "processes": 16, "forbidden_paths": [os.path.dirname(args.secret)]}
    layers = confine(args.probe, settings, layers, root=root if args.namespaced else None)
    notes = []
    try:
        with open(args.secret, encoding="utf-8") as handle:
            handle.read()
        layers["landlock_files"] = False
        notes.append("a file outside the scratch folder was readable")
    except OSError:
        pass
    if layers["closed_root"] and (os.path.lexists(args.secret) or os.path.lexists("/run")):
        layers["closed_root"] = False
        notes.append("a host path was still there after the closed root")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
        layers["resource_limits"] = False
        notes.append("a hard limit could be raised")
    except (ValueError, OSError):
        pass
    try:
        with socket.create_connection(("127.0.0.1", 9), timeout=1):
            pass
    except PermissionError:
        pass
    except OSError:
        layers["landlock_tcp"] = False  # the kernel let the connection attempt through (refused or timed out)
    if layers["syscall_filter"]:
        for what, attempt in (("a UNIX socket", lambda: socket.socket(socket.AF_UNIX)),
                              ("a memfd file", lambda: os.memfd_create("probe")), ("a fork", os.fork)):
            try:
                if attempt() == 0:
                    os._exit(0)  # a child of the fork that should not have happened
            except PermissionError:
                continue
            except OSError:
                pass
            layers["syscall_filter"] = layers["process_limit"] = layers["resource_limits"] = False
            notes.append(f"{what} was allowed under the system-call filter")
    print(json.dumps({"layers": layers, "identity": who, "detail": "; ".join(notes)}), flush=True)
    os._exit(0)


if __name__ == "__main__":
    _probe(sys.argv[1:])
