"""What the grader and its workers agree on: a worker's configuration, one exercise's run, the time limits.

:class:`WorkerConfig` (how workers start and what they must report), :class:`ExerciseRun` (what came
back for one exercise, before comparison), the errors of a worker that cannot start, and the
wall-clock backstop of a CPU-time budget (:func:`wall_backstop`). Used by :mod:`graders.engine.worker.runner`,
:mod:`graders.engine.worker.fork_client` and the grading modules.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from graders.engine.sandbox import cgroups


WALL_FACTOR, WALL_GRACE = 3.0, 15.0  # the wall-clock backstop: 3 x the CPU budget + 15 s


def wall_backstop(cpu_seconds: float) -> float:
    """Wall-clock seconds after which the grader ends a worker whose child spends ``cpu_seconds`` of CPU.

    The budget itself is CPU time, held by the worker's parent (:meth:`graders.engine.worker.parent.Parent.relay`),
    so the verdict does not depend on how busy the machine is; the clock only catches a child that sleeps
    or deadlocks (no CPU spent, no progress). Generous: on a machine so loaded that a child gets a third of
    a core, a child within its CPU budget still finishes before it.
    """
    return WALL_FACTOR * float(cpu_seconds) + WALL_GRACE


class WorkerStartError(RuntimeError):
    """The worker could not even start: the grader itself is broken (exit non-zero)."""




@dataclass
class WorkerConfig:
    python: str = sys.executable
    kit_parent: str = ""
    user: int | None = None
    load_timeout: float = 60.0
    env: dict = field(default_factory=dict)
    namespaces: bool = True  # workers enter fresh namespaces (graders.engine.worker.forkserver.enter_namespaces)
    require: tuple = ()  # layers every worker must report active (--require-sandbox)
    ready: object = None  # a threading.Event: set once the grader has loaded all it executes
    abort: bool = False  # set before ``ready`` when that loading failed: workers run nothing
    cgroup: cgroups.Limits | None = None  # each worker's cgroup limits (graders.engine.sandbox.cgroups), where given


class SandboxMissing(WorkerStartError):
    """A worker came up without a layer that ``--require-sandbox`` demands."""
