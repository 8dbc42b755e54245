"""A system-call filter (seccomp-bpf) for the confined child, compiled by libseccomp.

The kernel runs the filter on every system call the child (and every thread
it starts) makes, from :func:`install` on; nothing can remove it. It refuses
what learner code never needs and what the other layers cannot stop:

- **sockets of every family** (``socket``, ``socketpair``, ``connect``, ...):
  a path-named UNIX socket of the host (dbus, systemd, a container daemon) is
  outside Landlock's reach before ABI 9 and outside the network namespace;
- **memory outside the address-space limit**: ``memfd_create`` (and
  ``memfd_secret``) files, System V shared memory (a segment attached, filled
  and detached again), System V and POSIX message queues are not counted by
  ``RLIMIT_AS``;
- **new processes other than threads**: ``fork``, ``vfork``, ``clone``
  without ``CLONE_THREAD``, ``execve``/``execveat``; ``clone3`` answers
  ``ENOSYS``, so the C library falls back to ``clone`` for its threads (what
  Docker's default profile does). As uid 0 outside, ``RLIMIT_NPROC`` does
  not bind; this does;
- **reaching other processes or the kernel**: ``ptrace``,
  ``process_vm_readv``/``writev``, ``pidfd_getfd``, ``kcmp``,
  ``io_uring_*``, ``bpf``, ``userfaultfd``, ``perf_event_open``, the key
  ring, mounts and namespaces, module loading, reboot, clocks.

Every refused call fails with ``EPERM`` (``clone3``: ``ENOSYS``), so learner
code sees an ordinary ``PermissionError``; a call from another architecture
(``int 0x80``, x32) kills the process (libseccomp's default for a foreign
architecture). The filter's default is to allow: the interpreter, NumPy and
torch need hundreds of calls, and an allow-list of them would break on the
next library release; what is dangerous is listed here, and every rule is
tested (``tests/test_seccomp.py``).

libseccomp (``libseccomp.so.2``, Debian's ``libseccomp2``, a dependency of
systemd and apt) compiles the rules into BPF: the kernel's filter language is
not written by hand here. The only PyPI binding on the project's package list,
``pyseccomp`` 0.1.2 (2021), is a ctypes file like this one and unmaintained;
this module calls the same five library functions itself. A machine without
libseccomp, or a kernel without seccomp, grades without this layer and says
so (``syscall_filter`` missing in the report and in ``rl4llm doctor``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from functools import lru_cache

ALLOW = 0x7FFF0000
CLONE_THREAD = 0x00010000
CMP_MASKED_EQ = 7
LIBRARY = "libseccomp.so.2"

REFUSED = (
    # sockets of every family, and connections on any socket a child might hold
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    # memory the address-space limit does not count: memfd files, System V shared memory (a segment
    # attached, filled and detached stays), message queues (kernel memory per queue)
    "memfd_create", "memfd_secret", "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv",
    "msgctl", "semget", "semop", "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend",
    "mq_timedreceive", "mq_notify", "mq_getsetattr",
    # new processes (threads go through clone with CLONE_THREAD: see CLONE_RULE)
    "fork", "vfork", "execve", "execveat",
    # other processes' memory and file descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp",
    # kernel interfaces learner code never needs
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "userfaultfd", "perf_event_open",
    "keyctl", "add_key", "request_key", "lookup_dcookie", "name_to_handle_at", "open_by_handle_at",
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    # the machine itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
    "swapoff", "acct", "quotactl", "syslog", "iopl", "ioperm", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "vhangup", "uselib",
)
CLONE_RULE = "clone"  # refused unless its flags carry CLONE_THREAD (a new thread of this process)
NO_SUCH_CALL = "clone3"  # answers ENOSYS: the C library then makes its threads with clone


class _ArgCompare(ctypes.Structure):
    """``struct scmp_arg_cmp`` (``seccomp.h``)."""

    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)  # SCMP_ACT_ERRNO(code)


@lru_cache(maxsize=1)
def _library():
    """libseccomp, with the prototypes used here; ``None`` where it is absent (not Linux, not installed)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(LIBRARY, use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.argtypes, lib.seccomp_init.restype = (ctypes.c_uint32,), ctypes.c_void_p
    lib.seccomp_release.argtypes, lib.seccomp_release.restype = (ctypes.c_void_p,), None
    lib.seccomp_load.argtypes, lib.seccomp_load.restype = (ctypes.c_void_p,), ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = (ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCompare))
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    return lib


def available() -> bool:
    """Whether this machine can install the filter at all (libseccomp is there)."""
    return _library() is not None


class FilterError(OSError):
    """libseccomp could not build or load the filter."""


def install(code: int = errno.EPERM) -> list[str]:
    """Load the filter into this process (and every thread it starts later); returns the calls it refuses.

    ``code``: the error the refused calls fail with (``EPERM``; the kit's tests pass an unusual one, to
    tell the filter's refusal from the kernel's own).

    Calls this kernel or libseccomp does not know are skipped (they cannot be made here either). Raises
    :class:`FilterError` where libseccomp is missing or the kernel refuses the filter. ``no_new_privs``
    is set by libseccomp (its default), as the kernel requires of an unprivileged caller.
    """
    lib = _library()
    if lib is None:
        raise FilterError(errno.ENOSYS, f"{LIBRARY} is not available on this machine")
    context = lib.seccomp_init(ALLOW)
    if not context:
        raise FilterError(errno.ENOMEM, "seccomp_init failed")
    refused: list[str] = []
    try:
        def add(name: str, action: int, *compare: _ArgCompare) -> None:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:  # __NR_SCMP_ERROR: no such call on this architecture
                return
            array = (_ArgCompare * max(1, len(compare)))(*compare)
            code = lib.seccomp_rule_add_array(context, action, number, len(compare), array)
            if code != 0:
                raise FilterError(-code, f"seccomp_rule_add({name}) failed: {os.strerror(-code)}")
            refused.append(name)

        for name in REFUSED:
            add(name, _errno_action(code))
        # clone(flags, ...): refused when (flags & CLONE_THREAD) == 0, i.e. anything but a thread
        add(CLONE_RULE, _errno_action(code), _ArgCompare(0, CMP_MASKED_EQ, CLONE_THREAD, 0))
        add(NO_SUCH_CALL, _errno_action(errno.ENOSYS))
        code = lib.seccomp_load(context)
        if code != 0:
            raise FilterError(-code, f"seccomp_load failed: {os.strerror(-code)}")
    finally:
        lib.seccomp_release(context)
    return refused


def active() -> bool:
    """Whether this process runs under a seccomp filter (``Seccomp: 2`` in ``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Seccomp:"):
                    return line.split()[1] == "2"
    except OSError:
        pass
    return False
