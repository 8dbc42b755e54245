"""Every rule of the system-call filter (graders/engine/sandbox/seccomp.py), tried one by one in a filtered process.

The filter is built by libseccomp, but what it refuses is ours: each listed call must fail with the
filter's own error, threads must still start, NumPy and torch must still work. The refused calls are made
with zero arguments inside fresh user, mount, UTS, IPC and network namespaces (so a rule that failed to
refuse could not touch this machine), and the filter answers with an unusual errno (ENOTRECOVERABLE) so that
its refusal cannot be mistaken for the kernel's own EPERM.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sys

import pytest

from graders.engine.sandbox import seccomp

pytestmark = pytest.mark.skipif(not seccomp.available(), reason="libseccomp is not on this machine")
MARK = errno.ENOTRECOVERABLE  # 131: no call here answers it by itself
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = (0x10000000, 0x00020000, 0x04000000,
                                                                      0x08000000, 0x40000000)
SIGCHLD = 17


def _in_filtered_child(body) -> dict:
    """Run ``body()`` in a forked child under the filter (answering MARK); return what it reported."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            isolated = libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET) == 0
            refused = seccomp.install(code=MARK)
            result = {"isolated": isolated, "refused": refused, **body(libc)}
        except BaseException as error:  # noqa: BLE001 - reported to the test
            result = {"error": repr(error)}
        os.write(write_fd, json.dumps(result).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _numbers() -> dict[str, int]:
    lib = seccomp._library()
    return {name: lib.seccomp_syscall_resolve_name(name.encode()) for name in seccomp.REFUSED}


def test_every_listed_call_is_refused_by_the_filter():
    numbers = {name: number for name, number in _numbers().items() if number >= 0}

    def body(libc):
        libc.syscall.restype = ctypes.c_long
        answers = {}
        for name, number in numbers.items():
            ctypes.set_errno(0)
            value = libc.syscall(ctypes.c_long(number), 0, 0, 0, 0, 0, 0)
            answers[name] = [value, ctypes.get_errno()]
        return {"answers": answers}

    found = _in_filtered_child(body)
    assert "error" not in found, found
    assert found["isolated"], "the test needs a user namespace of its own"
    assert set(found["refused"]) >= set(numbers), set(numbers) - set(found["refused"])
    wrong = {name: answer for name, answer in found["answers"].items() if answer != [-1, MARK]}
    assert not wrong, f"calls the filter did not refuse: {wrong}"
    # the list covers what the issue names, on this architecture
    for name in ("socket", "connect", "memfd_create", "fork", "vfork", "ptrace", "process_vm_readv",
                 "io_uring_setup", "bpf", "userfaultfd", "perf_event_open", "keyctl", "mount", "unshare", "setns"):
        assert name in numbers, name


def test_clone_makes_threads_only_and_clone3_falls_back():
    def body(libc):
        import threading

        import numpy
        import torch

        libc.syscall.restype = ctypes.c_long
        lib = seccomp._library()
        ctypes.set_errno(0)
        forked = libc.syscall(ctypes.c_long(lib.seccomp_syscall_resolve_name(b"clone")), SIGCHLD, 0, 0, 0, 0)
        fork_errno = ctypes.get_errno()
        ctypes.set_errno(0)
        clone3 = libc.syscall(ctypes.c_long(lib.seccomp_syscall_resolve_name(b"clone3")), 0, 0)
        clone3_errno = ctypes.get_errno()
        ran = []
        thread = threading.Thread(target=lambda: ran.append(float(numpy.ones(3).sum())))
        thread.start()
        thread.join()
        try:
            os.fork()
            python_fork = "allowed"
        except OSError as error:
            python_fork = error.errno
        value = float((torch.ones(4, 4) @ torch.ones(4, 4)).sum())
        return {"clone": [forked, fork_errno], "clone3": [clone3, clone3_errno], "thread": ran,
                "fork": python_fork, "torch": value}

    found = _in_filtered_child(body)
    assert "error" not in found, found
    assert found["clone"] == [-1, MARK]  # a fork-style clone (no CLONE_THREAD)
    assert found["clone3"] == [-1, errno.ENOSYS]
    assert found["thread"] == [3.0]  # glibc made the thread with clone(CLONE_THREAD)
    assert found["fork"] == MARK
    assert found["torch"] == 64.0


def test_the_filter_cannot_be_lifted():
    def body(libc):
        # a second filter may only add refusals; no prctl removes the first
        PR_GET_SECCOMP = 21
        return {"mode": libc.prctl(PR_GET_SECCOMP, 0, 0, 0, 0), "active": seccomp.active()}

    found = _in_filtered_child(body)
    assert found["mode"] == 2 and found["active"] is True


@pytest.mark.skipif(sys.platform != "linux", reason="Linux only")
def test_an_absent_library_is_a_missing_layer(monkeypatch):
    monkeypatch.setattr(seccomp, "LIBRARY", "libseccomp-does-not-exist.so.9")
    seccomp._library.cache_clear()
    try:
        assert not seccomp.available()
        with pytest.raises(seccomp.FilterError, match="not available"):
            seccomp.install()
    finally:
        monkeypatch.undo()
        seccomp._library.cache_clear()
