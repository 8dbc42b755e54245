"""The worker's fences, as the grader sees them: which kernel layers this machine has, and how to start a worker in them.

The layers, outermost first (each one that a machine lacks is reported, and
``--require-sandbox`` refuses to grade without every one of them):

- **outer_wall** (:mod:`.wall`): the batch's fork servers, so every worker,
  run inside bubblewrap: a read-only view of the interpreter and the kit's
  engine only, fresh namespaces, no capability, dying with the grader;
- **namespaces** (``unshare(2)``, as the fork server calls it): the worker starts in its own
  user, PID, mount, network and IPC namespaces, as PID 1 of its PID
  namespace, so everything it starts dies with it; it sees no network and no
  other process;
- **scratch_quota**: a size-capped ``tmpfs`` is its only writable folder;
- **closed_root**: a minimal root (``pivot_root``): the allow-list bound
  read-only and the scratch folder, no other host path;
- **resource_limits** / **process_limit**: hard memory, file size, CPU and
  open-file limits it cannot raise; no new process at all (the filter);
- **syscall_filter**: seccomp (:mod:`.seccomp`): no sockets, ``memfd``,
  processes, ptrace, io_uring, bpf, mounts or namespaces;
- **no_capabilities**: every capability dropped, ``no_new_privs``;
- **landlock_files** / **landlock_tcp** / **landlock_scopes**: the kernel
  refuses it every file outside the allow-list and its scratch folder, TCP,
  and signals and abstract sockets outside itself;
- **cpu_budget** (grader side): each exercise's time limit is CPU seconds,
  held by the worker's parent, with a wall-clock backstop;
- **cgroup_limits** (grader side, :mod:`.cgroups`): memory, processes +
  threads and one core for the whole worker, whoever it runs as;
- **grader_not_dumpable**: the grading process's memory cannot be read
  (``/proc/<pid>/mem``) or traced by a process of the same user.

A flag is true only when its limit binds (``process_limit`` needs the filter:
``RLIMIT_NPROC`` does not bind outer uid 0; ``resource_limits`` needs it too:
``memfd`` files are outside ``RLIMIT_AS``).

The worker applies the inner layers to itself (:mod:`graders.engine.sandbox.confine`)
before any learner code runs. :class:`Fence`, an in-process audit hook, sits
on top: it refuses and *records* reads of the answers and process starts, so
an exercise whose code tried scores 0 even when the kernel already refused.
As root, workers run as user ``nobody`` when that user can start the
interpreter (:func:`unprivileged_user`); otherwise as a root user without any
capability inside the namespaces.
"""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from graders import settings
from graders.engine.sandbox import wall
from graders.engine.sandbox.confine import WALL_MARK
from graders.engine.sandbox.libc import libc as _libc
from graders.engine.values.texts import detail
from graders.text import Particular

NOBODY = 65534
LAYERS = ("outer_wall", "namespaces", "scratch_quota", "closed_root", "resource_limits", "process_limit",
          "syscall_filter", "no_capabilities", "landlock_files", "landlock_tcp", "landlock_scopes", "cpu_budget",
          "cgroup_limits", "unprivileged_user", "grader_not_dumpable")
# what each layer does, in one line (`rl4llm doctor`)
LAYER_TEXT = {
    "outer_wall": "bubblewrap around the fork servers: a read-only view, own namespaces, no capabilities",
    "namespaces": "own user, PID, mount, network and IPC namespaces (unshare): nothing outlives the worker",
    "scratch_quota": "a size-capped tmpfs is the only writable folder",
    "closed_root": "a minimal root: only the allow-listed paths exist (no host sockets, /tmp or kit folders)",
    "resource_limits": "hard memory, file-size, CPU-time and open-file limits (memfd refused: memory binds)",
    "process_limit": "no new process: fork, vfork, exec and non-thread clone refused by the system-call filter",
    "syscall_filter": "seccomp: no sockets, memfd, ptrace, io_uring, bpf, mounts or namespaces",
    "no_capabilities": "no capability, no_new_privs: the limits cannot be raised",
    "landlock_files": "Landlock: only the interpreter, its libraries and the scratch folder",
    "landlock_tcp": "Landlock: no TCP bind or connect",
    "landlock_scopes": "Landlock: no signals or abstract UNIX sockets outside the worker",
    "cpu_budget": "each exercise's time limit counts CPU seconds, not the clock (load does not change grades)",
    "cgroup_limits": "a cgroup per worker: memory, processes + threads and one core, whoever the worker is",
    "unprivileged_user": "workers run as a user other than root (as root: user nobody)",
    "grader_not_dumpable": "the grading process's memory is not readable by the worker's user",
}


def merge_reported(into: dict, reported: dict) -> None:
    """Add one process's reported layers to ``into`` (those of the processes that reported before it): a layer
    is in force only where every process had it (a learner's child, a trusted process, another lane's
    worker); the first ``identity`` is kept."""
    first = not into
    for name, value in reported.items():
        if name == "identity":
            into.setdefault(name, value)
        else:
            into[name] = bool(value) if first else (into.get(name) is True and bool(value))
    for name in into:
        if name != "identity" and name not in reported:
            into[name] = False


# the instructor's switches, one per layer, for machines where a layer misbehaves (each reported missing)
SWITCHES = settings.SANDBOX_SWITCHES
WORKER_TASKS = 64  # processes + threads in one worker's cgroup: its parent, one child and their threads


def worker_cgroup_limits(memory_mb: float, scratch_mb: float):
    """The cgroup limits of one worker (:mod:`graders.engine.sandbox.cgroups`): a child's memory limit and its
    scratch ``tmpfs`` (whose pages the cgroup counts), twice over for the parent and copy-on-write pages,
    plus 512 MiB; :data:`WORKER_TASKS` tasks; one core. ``None`` under ``RL4LLM_NO_CGROUPS=1`` (read per batch)."""
    from graders.engine.sandbox.cgroups import Limits

    if settings.get("RL4LLM_NO_CGROUPS"):
        return None

    return Limits(memory_bytes=int(2 * (memory_mb + scratch_mb) + 512) << 20, tasks=WORKER_TASKS, cpus=1.0)
PR_SET_DUMPABLE = 4

BLOCKED_EVENTS = {  # audit event -> the refusal's key (graders.engine.values.texts.DETAILS)
    "subprocess.Popen": "refused_process",
    "os.system": "refused_process",
    "os.exec": "refused_process",
    "os.posix_spawn": "refused_process",
    "os.spawn": "refused_process",
    "os.fork": "refused_fork",
    "os.forkpty": "refused_fork",
    "ctypes.dlopen": "refused_dlopen",
    "ctypes.dlsym": "refused_dlsym",
    "ctypes.dlsym/handle": "refused_dlsym",
    "os.symlink": "refused_symlink",
    "os.link": "refused_link",
    "socket.connect": "refused_network",
}
PATH_EVENTS = {"open": 0, "os.listdir": 0, "os.scandir": 0, "glob.glob": 0, "os.chdir": 0,
               "shutil.copyfile": 0, "shutil.copytree": 0, "os.rename": 0, "pathlib.Path.glob": 0}


class Fence:
    """The audit hook's configuration and its record of refusals."""

    def __init__(self, forbidden_paths, forbidden_modules, allowed_paths=()) -> None:
        self.forbidden = tuple(sorted({os.path.realpath(str(p)) for p in forbidden_paths}))
        self.allowed = tuple(sorted({os.path.realpath(str(p)) for p in allowed_paths}))
        self.modules = tuple(forbidden_modules)
        self.violations: list[dict] = []  # {"what": a refusal's key, its fields}: the door's Refused
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

    def refuse(self, what: str, **fields: str) -> None:
        """Record the refusal ``what`` (a key of DETAILS, ``refused_*``) with its fields, and raise."""
        self.violations.append({"what": what, **fields})
        raise PermissionError(f"the grader does not allow {detail(what, **fields)}")

    def hook(self, event: str, args: tuple) -> None:
        if not self.armed:
            return
        if event in PATH_EVENTS and args:
            if self.path_is_forbidden(args[0]):
                self.refuse("refused_path", path=str(os.fsdecode(args[0]))[:2000], event=event)
        elif event == "import" and args:
            name = args[0]
            if isinstance(name, str) and self.module_is_forbidden(name):
                self.refuse("refused_import", module=name[:200])
        elif event in BLOCKED_EVENTS:
            self.refuse(BLOCKED_EVENTS[event])
        elif event in ("os.kill", "os.killpg") and args and args[0] not in (0, os.getpid()):
            self.refuse("refused_signal")

    def take_violations(self) -> list[dict]:
        found, self.violations[:] = list(self.violations), []
        return found


def install_audit_hook(fence: Fence) -> Fence:
    """Install ``fence`` as an audit hook (hooks cannot be removed) and arm it."""
    sys.addaudithook(fence.hook)
    fence.armed = True
    return fence


_NOBODY_RUNS: set[tuple[str, str, str]] = set()  # (python, pythonpath, cwd's folder) nobody was seen to run


def unprivileged_user(python: str, pythonpath: str, cwd: str) -> tuple[int | None, str]:
    """``(65534, reason)`` when workers should run as ``nobody``, else ``(None, reason)``.

    Only when running as root, and only when ``nobody`` can actually start the
    worker's interpreter and import the worker (probed in ``cwd``: a subprocess that imports NumPy and the
    worker, about 0.35 s of CPU). A success is kept for the process, per interpreter, import path and folder
    ``cwd`` is in (:data:`_NOBODY_RUNS`): a process that grades batch after batch (an nbgrader autograde, one
    batch per notebook) probes once. A failure is never kept: the next batch probes again, so a fixed
    folder mode is seen at once. A kept success that stopped being true costs no confinement: workers still
    start as ``nobody``, and fail loudly where ``nobody`` can no longer start them.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, "not running as root: workers run as the current user"
    if settings.get("RL4LLM_KEEP_ROOT"):
        return None, detail("keep_root_env")
    key = (python, pythonpath, os.path.dirname(os.path.abspath(cwd)))
    if key in _NOBODY_RUNS:
        return NOBODY, "running as root: workers run as user nobody"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath, "HOME": cwd,
           "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        probe = subprocess.run([python, "-c", "import numpy, graders.engine.worker.parent"], cwd=cwd, env=env,
                               user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True, text=True,
                               timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return None, detail("keep_root_start", python=python, error=str(error), fix=_what_to_do(python, pythonpath))
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return None, detail("keep_root_import", last=last, fix=_what_to_do(python, pythonpath))
    _NOBODY_RUNS.add(key)
    return NOBODY, "running as root: workers run as user nobody"


def _closed_folder(path: str) -> str | None:
    """The first folder on the way to ``path`` that other users may not enter (no ``o+x``), else None."""
    import stat

    folder = Path(os.path.realpath(path))
    for parent in [*reversed(folder.parents), folder]:
        try:
            mode = parent.stat().st_mode
        except OSError:
            return None
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return str(parent)
    return None


def _what_to_do(python: str, pythonpath: str) -> Particular | str:
    """How to let ``nobody`` run the workers: the folder that keeps it out, and the two ways round it ("" when
    no folder does)."""
    for what, path in [("keep_root_to_interpreter", python),
                       *(("keep_root_to_kit", entry) for entry in pythonpath.split(os.pathsep) if entry)]:
        folder = _closed_folder(path)
        if folder:
            return detail("keep_root_fix", folder=folder, what=detail(what), path=os.path.realpath(path))
    return ""


# ---------------------------------------------------------------------------
# Kernel layers (grader side)
# ---------------------------------------------------------------------------
def namespaces_wanted() -> bool:
    """Whether workers should enter fresh namespaces (they say in their reports whether they could)."""
    return not settings.get("RL4LLM_NO_NAMESPACES") and sys.platform.startswith("linux")


def _namespaces_work() -> bool:
    """Whether the probe should enter fresh namespaces (it does so with the worker's own system calls,
    :func:`graders.engine.sandbox.confine._enter_like_a_worker`, and says whether they took effect)."""
    return namespaces_wanted()


def make_grader_not_dumpable() -> bool:
    """Make this process's memory unreadable to processes of the same user (``PR_SET_DUMPABLE`` 0)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass
class Probe:
    """The layers a worker on this machine gets, as :func:`probe_layers` measured them."""

    layers: dict[str, bool] = field(default_factory=dict)
    identity: str = ""
    detail: str = ""

    @property
    def missing(self) -> list[str]:
        return [name for name in LAYERS if not self.layers.get(name)]


def probe_layers(python: str | None = None, pythonpath: str | None = None) -> Probe:
    """Start a confined probe the way a worker starts and read back which layers took effect.

    ``python`` and ``pythonpath`` are the fork servers' (default: :func:`graders.engine.sandbox.wall.grading_interpreter`'s,
    as a batch and ``rl4llm doctor`` use them): the probe runs, walled or not, as a server of that interpreter would.
    The probe also tries what a hostile submission would (read a file outside
    its scratch folder, open a TCP connection) and reports a layer as missing
    when the attempt succeeds.
    """
    default_python, default_path = wall.grading_interpreter()
    python, pythonpath = python or default_python, default_path if pythonpath is None else pythonpath
    with tempfile.TemporaryDirectory(prefix="rl4llm-probe-") as temp:
        os.chmod(temp, 0o755)
        scratch = os.path.join(temp, "scratch")
        os.mkdir(scratch)
        secret = os.path.join(temp, "secret.txt")
        with open(secret, "w", encoding="utf-8") as handle:
            handle.write("secret")
        # inside the outer wall where servers run in it, entering namespaces as a worker does
        command = [*wall.wall_command(python, pythonpath, temp), python, "-m", "graders.engine.sandbox.confine",
                   "--probe", scratch, "--secret", secret]
        if _namespaces_work():
            command.append("--enter")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath,
               "PYTHONDONTWRITEBYTECODE": "1",
               **{name: settings.raw(name) or "" for name in SWITCHES},
               WALL_MARK: str(os.getuid()) if command[0] != python else ""}
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=temp)
        except (OSError, subprocess.SubprocessError) as error:
            return Probe({name: False for name in LAYERS}, detail=f"the probe could not run: {error}")
    try:
        found = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (result.stderr.strip().splitlines() or ["?"])[-1]
        return Probe({name: False for name in LAYERS}, detail=f"the probe failed: {tail}")
    grader_side = ("outer_wall", "cpu_budget", "cgroup_limits", "unprivileged_user", "grader_not_dumpable")
    layers = {name: bool(found["layers"].get(name)) for name in LAYERS if name not in grader_side}
    layers["grader_not_dumpable"] = sys.platform.startswith("linux")
    layers["cpu_budget"] = (os.path.exists(f"/proc/{os.getpid()}/stat")  # the worker's parent reads it
                            and not settings.get("RL4LLM_NO_CPU_BUDGET"))
    layers["outer_wall"], why_not_walled = wall.wall_works(python, pythonpath)
    detail = [found.get("detail", ""), why_not_walled and f"outer wall: {why_not_walled}"]
    layers["cgroup_limits"], why = cgroups_work()
    detail.append(why)
    layers["unprivileged_user"], why = unprivileged_layer(python, pythonpath)
    detail.append(why)
    return Probe(layers, identity=found.get("identity", ""), detail="; ".join(d for d in detail if d))


def unprivileged_layer(python: str, pythonpath: str) -> tuple[bool, str]:
    """Whether workers run as a user other than root (``unprivileged_user``), with why not: a grader not running
    as root gives its own user to the workers; as root, they run as ``nobody`` where it can start them."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return True, ""
    with tempfile.TemporaryDirectory(prefix="rl4llm-user-") as temp:
        os.chmod(temp, 0o755)
        user, note = unprivileged_user(python, pythonpath, temp)
    return user is not None, "" if user is not None else note


def cgroups_work() -> tuple[bool, str]:
    """Whether this grader can give each worker a cgroup with limits (tried once), and why not."""
    from graders.engine.sandbox import cgroups

    if settings.get("RL4LLM_NO_CGROUPS"):
        return False, "RL4LLM_NO_CGROUPS=1"
    manager = cgroups.manager()
    if not manager.works:
        return False, manager.reason
    manager.sweep_stale()  # once per batch: what a killed grader left
    try:
        manager.create(worker_cgroup_limits(512, 128)).close()
    except OSError as error:
        return False, f"cgroup v{manager.version}: a worker's cgroup could not be made ({error})"
    return True, ""


_HYPOTHESIS_HOME: list[str] = []


def private_hypothesis_storage() -> str:
    """Send Hypothesis's storage (example database, constants cache, charmap) to this process's own
    temporary folder, removed at exit, and return it: never ``.hypothesis/`` in the current folder,
    where its constants cache would list the reference solution's literals. Every grading route calls
    it in the grading process (the batch, the in-process route); workers get their scratch folder."""
    if not _HYPOTHESIS_HOME:
        import atexit

        folder = tempfile.mkdtemp(prefix="rl4llm-hypothesis-")
        atexit.register(shutil.rmtree, folder, True)
        _HYPOTHESIS_HOME.append(folder)
    folder = _HYPOTHESIS_HOME[0]
    try:
        from hypothesis import configuration  # the grader imports it anyway (the drawn cases)
    except ImportError:  # pragma: no cover - a core dependency
        return folder
    setter = getattr(configuration, "set_hypothesis_home_dir", None)
    if setter is not None:
        setter(folder)
    else:  # pragma: no cover - an old Hypothesis reads the variable when it first needs its storage
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = folder
    return folder
