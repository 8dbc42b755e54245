"""Landlock, the Linux security module for unprivileged sandboxing, through its three system calls.

A process restricts *itself*: it lists the file hierarchies it may still use
and how (read, execute, write), and from :func:`restrict_self` on the kernel
refuses everything else to it and to every process it starts, whatever the
path (``dir_fd``, renames, hard links, ``/proc/self/fd`` all resolve to the
real file, which is what Landlock checks). Where the kernel's Landlock ABI
allows it, the same domain also refuses TCP ``bind``/``connect`` (ABI 4),
signals to processes outside the domain and abstract UNIX sockets (ABI 6);
ptrace of a process outside the domain is refused from ABI 1 on.

Written against the kernel's UAPI (``include/uapi/linux/landlock.h``,
https://docs.kernel.org/userspace-api/landlock.html): the system call numbers
444-446 are the same on every architecture. The PyPI bindings on this
project's package list (``landlock`` 1.0.0.dev5, a pre-release, and
``landlockpy`` 0.2.0, two months old) were not adopted: this module is small,
has no dependency, and its behaviour is tested here (``tests/test_sandbox.py``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from dataclasses import dataclass

from graders.engine.sandbox.libc import libc as _libc

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

# file-system rights, by the ABI that introduced them
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
                    5: (1 << 16) - 1}
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # rights a rule on a plain file may carry
READ_ONLY = EXECUTE | READ_FILE | READ_DIR
READ_WRITE = (1 << 16) - 1  # everything, within the handled set
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    """The kernel refused to build or apply the ruleset."""


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is absent or disabled (or not Linux)."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return 0
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, int(version))


@dataclass(frozen=True)
class Applied:
    """What :func:`restrict_self` put in force."""

    abi: int
    filesystem: bool
    tcp: bool
    scoped: bool


def restrict_self(read_only: list[str], read_write: list[str]) -> Applied:
    """Confine this process (and everything it starts) to ``read_only`` and ``read_write`` hierarchies.

    Paths that do not exist are skipped. Also denies TCP bind/connect (ABI ≥ 4)
    and scopes signals and abstract UNIX sockets to the domain (ABI ≥ 6).
    Sets ``no_new_privs`` (required by Landlock for an unprivileged caller).
    Raises :class:`LandlockError` when Landlock is unavailable or refuses.
    """
    abi = abi_version()
    if abi < 1:
        raise LandlockError(errno.EOPNOTSUPP, "Landlock is not available in this kernel")
    libc = _libc()
    fs_rights = FS_RIGHTS_BY_ABI[min(abi, 5)]
    attr = _RulesetAttr(handled_access_fs=fs_rights,
                        handled_access_net=(NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0,
                        scoped=(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        code = ctypes.get_errno()
        raise LandlockError(code, f"landlock_create_ruleset failed: {os.strerror(code)}")
    try:
        for paths, rights in ((read_only, READ_ONLY), (read_write, READ_WRITE)):
            for path in paths:
                _add_path(libc, ruleset, path, rights & fs_rights)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(code)}")
        if libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"landlock_restrict_self failed: {os.strerror(code)}")
    finally:
        os.close(ruleset)
    return Applied(abi=abi, filesystem=True, tcp=abi >= 4, scoped=abi >= 6)


def _add_path(libc, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # an absent path grants nothing
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_ONLY
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        if libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                        ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"landlock_add_rule({path}) failed: {os.strerror(code)}")
    finally:
        os.close(fd)
