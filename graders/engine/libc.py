"""The C library, for the few system calls Python's ``os`` lacks (``prctl``, ``mount``, ``unshare``, Landlock)."""

from __future__ import annotations

import ctypes
import functools


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library the interpreter already runs on: ``dlopen(NULL)`` sees its symbols.

    Not ``ctypes.util.find_library("c")``: on Linux that starts ``/sbin/ldconfig -p`` on every call
    (about 25 ms, four times in every worker before this).
    """
    return ctypes.CDLL(None, use_errno=True)
