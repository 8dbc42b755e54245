"""The worker's fences: an audit hook, resource limits, and (as root) an unprivileged user.

- :func:`install_audit_hook` refuses, with ``PermissionError``, any open,
  directory listing or import of a forbidden path or module (the reference
  solutions, the hidden checks, the misconception catalogue, other
  submissions, the reports), and any attempt to start a process or load
  native code through ``ctypes``. Every refusal is also *recorded*, so an
  exercise whose code tried scores 0 even if it swallowed the exception.
- :func:`limit_resources` caps address space (memory), file size and core dumps.
- :func:`unprivileged_user` says whether, running as root, workers can run as
  ``nobody`` (uid/gid 65534): only when that user can start the interpreter
  and import the worker (otherwise they keep root and the audit hook alone
  guards the answers).

An audit hook is a fence against accidents and casual peeking, not a jail
against a determined attacker with native code; the privilege drop, the
separate process and the fact that reference values never enter the worker
are what keep the answers out of reach.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

NOBODY = 65534

BLOCKED_EVENTS = {
    "subprocess.Popen": "starting a process",
    "os.system": "starting a process",
    "os.exec": "starting a process",
    "os.posix_spawn": "starting a process",
    "os.spawn": "starting a process",
    "os.fork": "forking the worker",
    "os.forkpty": "forking the worker",
    "ctypes.dlopen": "loading native code with ctypes",
    "ctypes.dlsym": "looking up native functions with ctypes",
    "ctypes.dlsym/handle": "looking up native functions with ctypes",
    "os.symlink": "creating symbolic links",
    "os.link": "creating hard links",
    "socket.connect": "opening network connections",
}
PATH_EVENTS = {"open": 0, "os.listdir": 0, "os.scandir": 0, "glob.glob": 0, "os.chdir": 0,
               "shutil.copyfile": 0, "shutil.copytree": 0, "os.rename": 0, "pathlib.Path.glob": 0}


class Fence:
    """The audit hook's configuration and its record of refusals."""

    def __init__(self, forbidden_paths, forbidden_modules, allowed_paths=()) -> None:
        self.forbidden = tuple(sorted({os.path.realpath(str(p)) for p in forbidden_paths}))
        self.allowed = tuple(sorted({os.path.realpath(str(p)) for p in allowed_paths}))
        self.modules = tuple(forbidden_modules)
        self.violations: list[str] = []
        self.armed = False

    @staticmethod
    def _under(path: str, roots: tuple[str, ...]) -> bool:
        return any(path == root or path.startswith(root + os.sep) for root in roots)

    def path_is_forbidden(self, raw) -> bool:
        if isinstance(raw, int) or raw is None:
            return False
        try:
            path = os.path.realpath(os.fsdecode(raw))
        except (TypeError, ValueError):
            return False
        if self._under(path, self.allowed):
            return False
        return self._under(path, self.forbidden)

    def module_is_forbidden(self, name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in self.modules)

    def refuse(self, what: str) -> None:
        self.violations.append(what)
        raise PermissionError(f"the grader does not allow {what}")

    def hook(self, event: str, args: tuple) -> None:
        if not self.armed:
            return
        if event in PATH_EVENTS and args:
            if self.path_is_forbidden(args[0]):
                self.refuse(f"access to {os.fsdecode(args[0])!s} ({event})")
        elif event == "import" and args:
            name = args[0]
            if isinstance(name, str) and self.module_is_forbidden(name):
                self.refuse(f"importing {name}")
        elif event in BLOCKED_EVENTS:
            self.refuse(BLOCKED_EVENTS[event])
        elif event in ("os.kill", "os.killpg") and args and args[0] not in (0, os.getpid()):
            self.refuse("signalling other processes")

    def take_violations(self) -> list[str]:
        found, self.violations[:] = list(self.violations), []
        return found


def install_audit_hook(fence: Fence) -> Fence:
    """Install ``fence`` as an audit hook (hooks cannot be removed) and arm it."""
    sys.addaudithook(fence.hook)
    fence.armed = True
    return fence


def limit_resources(memory_bytes: int | None, file_bytes: int) -> None:
    """Cap the address space at (current size + ``memory_bytes``), file sizes, and core dumps."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, hard if hard != resource.RLIM_INFINITY else file_bytes))
    if memory_bytes:
        limit = current_address_space() + memory_bytes
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def current_address_space() -> int:
    """This process's virtual memory size in bytes (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[0])
        return pages * resource.getpagesize()
    except OSError:
        return 0


def unprivileged_user(python: str, pythonpath: str, cwd: str) -> tuple[int | None, str]:
    """``(65534, reason)`` when workers should run as ``nobody``, else ``(None, reason)``.

    Only when running as root, and only when ``nobody`` can actually start the
    worker's interpreter and import the worker (probed once, in ``cwd``).
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, "not running as root: workers run as the current user"
    if os.environ.get("RL4LLM_KEEP_ROOT") == "1":
        return None, "RL4LLM_KEEP_ROOT=1: workers keep root (audit hook only)"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath, "HOME": cwd,
           "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        probe = subprocess.run([python, "-c", "import numpy, graders.engine.worker"], cwd=cwd, env=env,
                               user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True, text=True,
                               timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"running as root, but user nobody cannot start {python} ({error}): workers keep root"
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"running as root, but user nobody cannot import the worker ({last}): workers keep root"
    return NOBODY, "running as root: workers run as user nobody"
