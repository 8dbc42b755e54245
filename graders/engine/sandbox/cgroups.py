"""Control groups for grading workers: memory, process and CPU limits that hold whoever the worker is.

A process's own limits (``setrlimit``) do not hold everywhere: ``RLIMIT_NPROC``
does not bind a process whose outer uid is 0, ``RLIMIT_AS`` does not count
``tmpfs`` or ``memfd`` pages, and nothing in ``setrlimit`` bounds how many
cores a process keeps busy. A cgroup does, for every process and thread in
it, counted by the kernel: ``memory`` (all pages its processes charge,
shared memory included; the kernel's OOM killer ends the worker past it),
``pids`` (processes *and* threads), ``cpu`` (at most one core's worth of
CPU time per period).

The grader creates one cgroup per worker under its own (``rl4llm-<pid>/w<n>``),
moves the worker (and anything it already forked) into it before the worker
is told to start, and removes it when the worker has ended, killing whatever is
left. A grader killed mid-batch cannot: each batch first sweeps the ``rl4llm-<pid>``
folders whose process is gone (:meth:`Manager.sweep_stale`), killing what is left in them.
It needs write access to its own cgroup:

- **cgroup v1** (one hierarchy per controller, ``/sys/fs/cgroup/memory`` ...):
  as root, usually so; each controller is set up on its own;
- **cgroup v2** (one unified hierarchy): the grader's cgroup must delegate
  ``memory``, ``pids`` and ``cpu`` to its children, which a cgroup with
  processes of its own cannot do (the "no internal processes" rule). Run the
  grader in a delegated scope of its own, e.g. ``systemd-run --user --scope
  -p Delegate=yes rl4llm grade ...``: the grader then moves itself (and its
  fork servers) into a leaf of the scope (``rl4llm-self-<pid>``) and passes
  the controllers on (:meth:`Manager._delegate`), so the workers' limits come
  from the service manager's delegation;
- anywhere else (a container without write access, macOS), the layer is
  missing: ``cgroup_limits`` is false in every report and ``rl4llm doctor``
  says why; the other layers still hold (the system-call filter refuses
  new processes and ``memfd``; the CPU budget bounds each exercise).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
PERIOD_US = 100_000


@dataclass
class Limits:
    """What one worker may use in all: bytes of memory, processes + threads, cores' worth of CPU."""

    memory_bytes: int
    tasks: int
    cpus: float = 1.0


@dataclass
class Group:
    """One worker's cgroup: a folder per controller (v1) or one folder (v2)."""

    folders: list[Path] = field(default_factory=list)

    def add(self, pid: int) -> None:
        """Move ``pid`` and all its descendants in (repeated until none is left outside: a fork that was
        under way when the parent moved lands in the parent's new group by itself)."""
        for _ in range(20):
            moved = False
            for task in [pid, *_descendants(pid)]:
                for folder in self.folders:
                    if str(task) not in _members(folder):
                        (folder / "cgroup.procs").write_text(str(task))
                        moved = True
            if not moved:
                return

    def close(self) -> None:
        """Kill whatever is still in the group, then remove it (retried while the kernel reaps)."""
        for folder in self.folders:
            kill = folder / "cgroup.kill"
            if kill.exists():
                try:
                    kill.write_text("1")
                except OSError:
                    pass
        deadline = time.monotonic() + 5
        for folder in self.folders:
            while True:
                for pid in _members(folder):
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError, PermissionError):
                        pass
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)


def _members(folder: Path) -> set[str]:
    try:
        return set((folder / "cgroup.procs").read_text().split())
    except OSError:
        return set()


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    children = [int(child) for child in handle.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            queue += children
    return found


def _own_path(controller: str) -> str | None:
    """This process's cgroup in ``controller``'s hierarchy (v1), or in the unified one (``""``)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, names, path = line.split(":", 2)
        if (controller == "" and number == "0") or controller in names.split(","):
            return path
    return None


class Manager:
    """Creates and removes the workers' cgroups of one grader process; ``reason`` says why not, where not."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.version, self.bases, self.reason = 0, {}, ""
        try:
            self._find()
        except OSError as error:
            self.version, self.bases = 0, {}
            self.reason = f"cannot set up cgroups here ({error})"

    def _find(self) -> None:
        name = f"rl4llm-{os.getpid()}"
        if (ROOT / "cgroup.controllers").exists():  # v2 only
            own = _own_path("")
            folder = ROOT / (own or "/").lstrip("/")
            missing = self._delegate(folder)
            if missing:
                self.reason = (f"cgroup v2: the grader's cgroup {own} does not delegate {missing} (run it in a "
                               "delegated scope: systemd-run --user --scope -p Delegate=yes ...)")
                return
            base = folder / name
            base.mkdir(exist_ok=True)
            self.bases = {"": base}
            (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))
            self.version = 2
            return
        bases = {}
        for controller in CONTROLLERS:
            mount = ROOT / controller
            own = _own_path(controller)
            if own is None or not (mount / "cgroup.procs").exists():
                self.reason = f"cgroup v1: no {controller} hierarchy is mounted"
                for base in bases.values():
                    base.rmdir()
                return
            base = mount / own.lstrip("/") / name
            base.mkdir(exist_ok=True)
            bases[controller] = base
        self.bases, self.version = bases, 1

    def _delegate(self, folder: Path) -> str:
        """Make the controllers reach the grader's own cgroup's children; what is missing, or ``""``.

        Where they already do (a cgroup whose ``cgroup.subtree_control`` has them), nothing changes. In a
        delegated scope of the service manager (``systemd-run --user --scope -p Delegate=yes``), the scope has
        them (``cgroup.controllers``) but passes none on, and cannot while a process lives in it (cgroup v2's
        "no internal processes" rule): the grader first moves itself into a leaf of its own (``rl4llm-self-
        <pid>``), then passes them on. A scope that holds another process is left as it is (it is not the
        grader's to rearrange)."""
        wanted = set(CONTROLLERS)
        passed = set((folder / "cgroup.subtree_control").read_text().split())
        if wanted <= passed:
            return ""
        available = set((folder / "cgroup.controllers").read_text().split())
        if not wanted <= available:
            return ", ".join(sorted(wanted - available))
        mine = [os.getpid(), *_descendants(os.getpid())]  # the grader and what it started (its fork servers)
        others = _members(folder) - {str(pid) for pid in mine}
        if others:
            return (f"{', '.join(sorted(wanted - passed))} to its children (it holds other processes: "
                    f"{', '.join(sorted(others)[:5])})")
        leaf = folder / f"rl4llm-self-{os.getpid()}"
        leaf.mkdir(exist_ok=True)
        for pid in mine:
            (leaf / "cgroup.procs").write_text(str(pid))
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in sorted(wanted - passed)))
        return ""

    def sweep_stale(self) -> list[Path]:
        """Remove the cgroups that graders killed before they could clean up left beside this one's
        (``rl4llm-<pid>`` whose process is gone), killing what is still in them; returns what it removed."""
        removed: list[Path] = []
        for _attempt in range(3):  # a killed worker may still be exiting (a busy machine): look again
            # rl4llm-<pid> (a grader's workers) and rl4llm-self-<pid> (a grader in a delegated scope)
            stale = [folder for base in self.bases.values() for folder in base.parent.glob("rl4llm-*")
                     if folder != base and folder.name.rsplit("-", 1)[1].isdigit()
                     and folder.name.rsplit("-", 1)[0] in ("rl4llm", "rl4llm-self")
                     and not Path(f"/proc/{folder.name.rsplit('-', 1)[1]}").exists()]
            if not stale:
                break
            for folder in stale:
                for child in sorted(folder.glob("w*"), reverse=True):
                    Group([child]).close()
                Group([folder]).close()
                if not folder.exists():
                    removed.append(folder)
            time.sleep(0.2)
        return removed

    @property
    def works(self) -> bool:
        return self.version in (1, 2)

    def create(self, limits: Limits) -> Group:
        """A fresh group with ``limits`` (raises ``OSError`` where the kernel refuses)."""
        with self.lock:
            self.count += 1
            number = self.count
        group = Group()
        try:
            if self.version == 2:
                folder = self.bases[""] / f"w{number}"
                folder.mkdir()
                group.folders.append(folder)
                (folder / "memory.max").write_text(str(limits.memory_bytes))
                if (folder / "memory.swap.max").exists():
                    (folder / "memory.swap.max").write_text("0")
                (folder / "pids.max").write_text(str(limits.tasks))
                (folder / "cpu.max").write_text(f"{int(limits.cpus * PERIOD_US)} {PERIOD_US}")
            else:
                for controller, base in self.bases.items():
                    folder = base / f"w{number}"
                    folder.mkdir()
                    group.folders.append(folder)
                memory, pids, cpu = (self.bases[c] / f"w{number}" for c in CONTROLLERS)
                (memory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                if (memory / "memory.memsw.limit_in_bytes").exists():
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_bytes))
                (pids / "pids.max").write_text(str(limits.tasks))
                (cpu / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (cpu / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * PERIOD_US)))
        except OSError:
            group.close()
            raise
        return group

    def close(self) -> None:
        """Remove the grader's own folders (the workers' are gone by then)."""
        for base in self.bases.values():
            for child in sorted(base.glob("w*"), reverse=True):
                Group([child]).close()
            try:
                base.rmdir()
            except OSError:
                pass


_MANAGER: Manager | None = None
_MANAGER_LOCK = threading.Lock()


def manager() -> Manager:
    """The process's one :class:`Manager` (made on first use, removed when the process exits)."""
    global _MANAGER
    with _MANAGER_LOCK:
        if _MANAGER is None:
            import atexit

            _MANAGER = Manager()
            atexit.register(_MANAGER.close)
        return _MANAGER
