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
CPU-time budget (the worker's parent, :meth:`graders.engine.worker.parent.Parent.relay`)
and cgroup limits on the whole worker (:mod:`.cgroups`).

Each step reports whether it took effect; the list travels back to the grader
and into every report (``sandbox`` in ``report.json``).

The closed root itself (step 2) is :mod:`graders.engine.sandbox.closed_root`.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from pathlib import Path

from graders import settings as kit_settings  # `settings` below is the sandbox's (job.json)
from graders.engine.sandbox import landlock, seccomp
from graders.engine.sandbox.closed_root import MS_NODEV, MS_NOSUID, SYSTEM_READ_WRITE, enter_closed_root, readable_roots
from graders.engine.sandbox.libc import libc as _libc

PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
SECBIT_NO_SETUID_FIXUP, SECBIT_NO_SETUID_FIXUP_LOCKED = 1 << 2, 1 << 3
SECBIT_KEEP_CAPS_LOCKED = 1 << 5
LINUX_CAPABILITY_VERSION_3 = 0x20080522
WALL_MARK = "KIT_OUTER_WALL_UID"  # a walled fork server's environment: its uid outside the wall


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
    layers["outer_wall"] = os.environ.get(WALL_MARK, "").isdigit()  # set by the grader on a server it walled in
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
    walled = os.environ.get(WALL_MARK, "")
    # inside the outer wall, the map read here ends at the wall's user: the grader said who that is outside
    outer = int(walled) if walled.isdigit() else _outer_uid(uid)
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


def _enter_like_a_worker() -> bool:
    """Fresh namespaces exactly as the fork server gives a worker (``unshare(2)``, a fork into the new
    PID namespace, its own ``/proc``): the probe's answer is the workers' answer. True when all took effect."""
    from graders.engine.sandbox import libc as namespaces  # the fork server's own calls (graders.engine.worker.forkserver)

    if not namespaces.enter_namespaces():
        return False
    pid = os.fork()
    if pid != 0:  # end as the probe inside ends
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _libc().prctl(namespaces.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return namespaces.mount_own_proc() and os.getpid() == 1


def _probe(argv: list[str]) -> None:
    """``python -m graders.engine.sandbox.confine --probe SCRATCH --secret FILE [--namespaced]``: confine, attack, report."""
    import argparse
    import json
    import socket

    parser = argparse.ArgumentParser(prog="python -m graders.engine.sandbox.confine")
    parser.add_argument("--probe", required=True, type=Path)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--namespaced", action="store_true")
    parser.add_argument("--enter", action="store_true",
                        help="enter fresh namespaces first, with the system calls a worker makes")
    args = parser.parse_args(argv)
    if args.enter:
        args.namespaced = _enter_like_a_worker()
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
