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

import contextlib
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
    """The import path, prefixes and kit package of ``python`` as a server sees them (probed once, and kept:
    :func:`_kept`)."""
    kept = _kept("interpreter", python, pythonpath)  # checked there: its "info" is an import path
    if kept is not None:
        return kept["info"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}
    found = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60, check=True)
    info = json.loads(found.stdout.strip().splitlines()[-1])
    _keep("interpreter", python, pythonpath, {"info": info}, info)
    return info


def _is_info(info) -> bool:
    return (isinstance(info, dict) and isinstance(info.get("graders"), str)
            and all(isinstance(info.get(k), list) and all(isinstance(e, str) for e in info[k])
                    for k in ("path", "prefixes")))


# -- kept probes: each probe above costs an interpreter start (about 0.26 s, before the servers can start) --
# A probe's success is kept in the grader's cache folder (settings.cache_folder; RL4LLM_CACHE=off: never) under
# the SHA-256 of what it depends on, and read back only while every stamp it was kept with is unchanged: the
# interpreter file, each folder of its import path and prefixes (a package installed or removed changes its
# folder), bwrap's binary, this file, the user, the boot, and the kernel's switches for user namespaces. A
# failure is never kept. Whoever can write the folder can change the wall's view, as they can change grades
# through the reference store beside it (docs/security.md).
USERNS_SWITCHES = ("/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
                   "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "/proc/sys/kernel/random/boot_id")


def _stamp(path: str) -> list:
    try:
        found = os.stat(path)
    except OSError:
        return [path, None]
    return [path, found.st_ino, found.st_size, found.st_mtime_ns]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _stamps(python: str, info: dict | None, files: tuple[str, ...] = ()) -> list:
    """What a kept probe of ``python`` (its import path ``info``; ``files`` besides) is valid for, now."""
    folders = [] if info is None else [*info["prefixes"], *info["path"], info["graders"]]
    return json.loads(json.dumps([_stamp(os.path.realpath(python)), _stamp(__file__), *map(_stamp, files),
                                  *(_stamp(f) for f in folders if f), os.getuid(),
                                  [_read(p) for p in USERNS_SWITCHES]]))  # as JSON reads it back


def _kept_path(kind: str, python: str, pythonpath: str, files: tuple[str, ...]) -> Path | None:
    import hashlib

    folder = settings.cache_folder()
    if folder is None:
        return None
    key = hashlib.sha256(json.dumps([kind, python, pythonpath, *files]).encode("utf-8")).hexdigest()
    return folder / "wall" / f"{kind}-{key[:32]}.json"


def _kept(kind: str, python: str, pythonpath: str, info: dict | None = None, files: tuple[str, ...] = ()):
    """What :func:`_keep` kept for this probe, if every stamp it was kept with still holds; else None. The
    interpreter's probe is stamped with the import path it found; the wall's with ``info`` and ``files``."""
    path = _kept_path(kind, python, pythonpath, files)
    if path is None or not path.is_file():
        return None
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeError):
        return None
    value = kept.get("value") if isinstance(kept, dict) else None
    if not isinstance(value, dict):
        return None
    if kind == "interpreter":
        info = value.get("info")
    if not _is_info(info):
        return None
    return value if kept.get("stamps") == _stamps(python, info, files) else None


def _keep(kind: str, python: str, pythonpath: str, value: dict, info: dict, files: tuple[str, ...] = ()) -> None:
    """Keep a probe's success (written beside, then renamed; a folder that cannot be written keeps nothing)."""
    path = _kept_path(kind, python, pythonpath, files)
    if path is None:
        return
    import tempfile

    try:
        text = json.dumps({"stamps": _stamps(python, info, files), "value": value})
        path.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the cache folder: its user's alone,
        path.parent.mkdir(exist_ok=True, mode=0o700)  # as the reference store beside it makes it
        handle, temp = tempfile.mkstemp(dir=path.parent, suffix=".writing")
    except (OSError, ValueError):
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def forget_kept_probes() -> None:
    """Drop the kept probes (a walled server that would not start: the next batch probes again)."""
    folder = settings.cache_folder()
    for path in [] if folder is None else (folder / "wall").glob("*.json"):
        with contextlib.suppress(OSError):
            path.unlink()


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

    try:
        info = _interpreter(python, pythonpath)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        return False, f"the interpreter could not be probed ({error})"
    if _kept("wall", python, pythonpath, info, (binary,)) is not None:
        return True, ""  # this interpreter started inside the wall before, and nothing it depends on changed
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
    _keep("wall", python, pythonpath, {"works": True}, info, (binary,))
    return True, ""
