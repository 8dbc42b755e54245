"""The C library, for the few system calls Python's ``os`` lacks (``prctl``, ``mount``, ``unshare``, Landlock)."""

from __future__ import annotations

import ctypes
import functools
import os


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library the interpreter already runs on: ``dlopen(NULL)`` sees its symbols.

    Not ``ctypes.util.find_library("c")``: on Linux that starts ``/sbin/ldconfig -p`` on every call
    (about 25 ms, four times in every worker before this).
    """
    return ctypes.CDLL(None, use_errno=True)


_libc = libc


# Namespaces as a worker enters them (the fork server and the doctor's probe call these same functions)
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
CLONE_NEWNET, CLONE_NEWIPC = 0x40000000, 0x08000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
PR_SET_PDEATHSIG = 1


def enter_namespaces() -> bool:
    """Fresh user (this user mapped to root, no capability outside), PID, mount, network and IPC namespaces.

    Must be called by a single-threaded process (a fresh fork); the PID namespace applies to its next
    child. True when it worked.
    """
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    if _libc().unshare(flags) != 0:
        return False
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)
    except OSError:
        return False
    return True


def mount_own_proc() -> bool:
    """Mounts private, and a ``/proc`` of this PID namespace (what ``unshare --mount-proc`` does)."""
    libc = _libc()
    if libc.mount(b"none", b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) != 0:
        return False
    return libc.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOEXEC), None) == 0
