"""The outer wall: each batch's fork servers run inside bubblewrap (``bwrap``), a proven sandbox tool.

:func:`wall_command` is the command prefix that starts a fork server (:mod:`graders.engine.worker.forkserver`)
inside the wall: a read-only view of what the server needs and nothing else, fresh namespaces, no
capabilities, dying with the grader. The kit's own layers (namespaces per worker, the closed root,
Landlock, seccomp, rlimits, the CPU budget) still act inside it, on every forked worker; the wall is
one more fence around all of them, built by a tool that is not the kit's code.

What the server sees (everything else of the host does not exist for it):

- read-only: ``/usr`` and the merged-``/usr`` links, the few files of ``/etc`` the C library reads,
  ``/sys/devices/system/cpu`` (math libraries size their kernels by it), the interpreter (its
  ``sys.prefix`` and ``sys.base_prefix``) and every folder on its import path that is not the kit
  checkout, and of the kit only the ``graders`` package, with its reference checks
  (``graders/checks``) and misconceptions covered by empty folders;
- read-write: the batch's own temporary folder (the job, the submissions' folders, their scratch);
- a fresh ``/dev`` (``null``, ``zero``, ``urandom``...), a small ``tmpfs`` on ``/tmp``, and the host's
  ``/proc`` (each worker mounts its own, in its own PID namespace, from it).

No PID namespace at the wall: the grader signals each worker's process group and moves it into its
cgroup by the PID the server reports, which must be the host's. Where ``bwrap`` is missing, cannot
make its namespaces here, or ``RL4LLM_NO_BWRAP=1``, servers start as before and ``outer_wall`` is
reported missing with the reason (:func:`wall_works`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import sys
from functools import lru_cache
from pathlib import Path

from graders import settings

NAMESPACES = ("--unshare-user", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")
BEHAVIOUR = ("--die-with-parent", "--new-session", "--cap-drop", "ALL")
SYSTEM = ("/usr", "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
          "/sys/devices/system/cpu")
MERGED = ("/bin", "/sbin", "/lib", "/lib64", "/lib32")
HIDDEN = ("checks", "misconceptions")  # under the kit's graders package: covered by empty folders
CHECKOUT = ("pyproject.toml", ".git", "tests", "solutions")  # a folder holding one of these is a kit checkout
TMP_BYTES = 16 << 20
INNER_ROOT_UID = 65534  # the user a server started by root is inside the wall (still root's files outside)
PROBE = ("import json, os, sys; import numpy, graders.engine.worker.parent; "
         "places = [os.path.dirname(m.__file__) for n, m in list(sys.modules.items()) if '.' not in n "
         "and isinstance(getattr(m, '__file__', None), str) and getattr(m, '__path__', None)]; "
         "print(json.dumps({'path': sys.path + places, 'prefixes': [sys.prefix, sys.base_prefix], "
         "'graders': sys.modules['graders'].__path__[0]}))")


def grading_interpreter(worker_python: str | None = None, worker_pythonpath: tuple[str, ...] = ()) -> tuple[str, str]:
    """``(python, PYTHONPATH)`` of a batch's fork servers, so of every worker, of the wall around them and of the
    probes that speak for them: ``worker_python`` or this interpreter; the folder this process imports the kit
    from, then ``worker_pythonpath``, as :mod:`graders.engine.routes.batch` gives them to its servers and its
    probes. ``rl4llm doctor``, :func:`wall_works` and :func:`graders.engine.sandbox.layers.probe_layers` take
    their default from here, so a kit run from a copy on ``PYTHONPATH`` (not installed) is probed where its
    servers find it; tests/test_doctor_config.py holds the batch's pair equal to this one."""
    import graders

    kit_parent = str(Path(graders.__file__).resolve().parent.parent)
    return worker_python or sys.executable, os.pathsep.join([kit_parent, *worker_pythonpath])


def bwrap_path() -> str | None:
    """The ``bwrap`` binary, or ``None`` where it is not installed."""
    return shutil.which("bwrap")


@lru_cache(maxsize=8)
def _interpreter(python: str, pythonpath: str) -> dict:
    """The import path, prefixes and kit package of ``python`` as a server sees them (probed once)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}
    found = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60, check=True)
    return json.loads(found.stdout.strip().splitlines()[-1])


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def wall_arguments(python: str, pythonpath: str, work: str) -> list[str]:
    """The ``bwrap`` arguments (without the binary and the command) for a server of ``python`` working in ``work``."""
    info = _interpreter(python, pythonpath)
    kit_package = os.path.realpath(info["graders"])
    # inside, the server's user is not the parent namespace's root: a worker's own user namespace may map
    # its root to this user without CAP_SETFCAP (which the wall drops); outside it stays who it was
    inner = os.getuid() or INNER_ROOT_UID
    args = [*NAMESPACES, *BEHAVIOUR, "--uid", str(inner), "--gid", str(os.getgid() or INNER_ROOT_UID)]
    # the small /tmp first: what is bound below it (an interpreter or a kit copy under /tmp) stays visible on top
    args += ["--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for path in MERGED:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in SYSTEM:
        args += ["--ro-bind-try", path, path]
    readable: list[str] = []
    links: list[str] = []
    for entry in [*info["prefixes"], *info["path"]]:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if _under(kit_package, real) and any(os.path.exists(os.path.join(real, n)) for n in CHECKOUT):
            continue  # the kit checkout itself (a PYTHONPATH entry): only its package, below
        readable.append(real)
        if os.path.islink(entry.rstrip(os.sep)):
            links.append(entry.rstrip(os.sep))  # also where the path says it is, as the same link
    readable.append(kit_package)
    kept: list[str] = []
    for path in sorted(dict.fromkeys(readable), key=len):
        if not any(_under(path, done) for done in kept):  # a folder inside one already bound comes with it
            kept.append(path)
            args += ["--ro-bind", path, path]
    for link in dict.fromkeys(links):
        if not any(_under(link, done) for done in kept):
            args += ["--symlink", os.readlink(link), link]
    covered = [os.path.join(kit_package, name) for name in HIDDEN]
    covered.append(os.path.join(os.path.dirname(kit_package), "solutions"))  # an installed kit's answers
    for path in covered:
        if os.path.isdir(path) and any(_under(path, r) for r in readable):
            args += ["--tmpfs", path, "--remount-ro", path]
    args += ["--dev", "/dev", "--bind", "/proc", "/proc"]
    work_real = os.path.realpath(work)
    args += ["--bind", work_real, work_real, "--chdir", work_real]
    if work_real != work:
        args += ["--bind", work_real, work]
    return args


def wall_command(python: str, pythonpath: str, work: str) -> list[str]:
    """The prefix that starts a server inside the wall, or ``[]`` where the wall is not in force here."""
    ok, _ = wall_works(python, pythonpath)
    if not ok:
        return []
    return [bwrap_path(), *wall_arguments(python, pythonpath, work), "--"]


def wall_works(python: str | None = None, pythonpath: str | None = None) -> tuple[bool, str]:
    """Whether servers of ``python`` on ``pythonpath`` (default: :func:`grading_interpreter`'s) run inside the
    wall on this machine, and why not (read per call: the switch)."""
    if settings.get("RL4LLM_NO_BWRAP"):
        return False, "RL4LLM_NO_BWRAP=1"
    default_python, default_path = grading_interpreter()
    with _PROBING:  # a batch asks from two threads at once (the fork servers' start, the layers' probe): one run
        return _probe(python or default_python, default_path if pythonpath is None else pythonpath)


_PROBING = threading.Lock()


@lru_cache(maxsize=8)
def _probe(python: str, pythonpath: str) -> tuple[bool, str]:
    """Start the interpreter inside the wall once and see it import the kit (cached per interpreter)."""
    if not sys.platform.startswith("linux"):
        return False, "not Linux"
    binary = bwrap_path()
    if binary is None:
        return False, "bubblewrap is not installed (apt-get install bubblewrap)"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rl4llm-wall-") as work:
        try:
            args = wall_arguments(python, pythonpath, work)
        except (OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
            return False, f"the interpreter could not be probed ({error})"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath,
               "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            found = subprocess.run([binary, *args, "--", python, "-c", "import numpy, graders.engine.worker.parent"],
                                   capture_output=True, text=True, env=env, timeout=60, cwd=work)
        except (OSError, subprocess.SubprocessError) as error:
            return False, f"bwrap could not run ({error})"
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"bwrap could not start the interpreter here ({last})"
    return True, ""
