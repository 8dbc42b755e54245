"""A grader killed mid-batch (SIGKILL: no clean-up of its own) leaves its workers' cgroups, with the
worker still in them; the next batch sweeps them away, workers included. The control: without the
sweep, they stay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders.engine.sandbox import cgroups, layers as sandbox

pytestmark = pytest.mark.slow
KIT = Path(__file__).resolve().parent.parent
GRADER = '''
import sys
from pathlib import Path
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
folder = Path(sys.argv[1])
grade_paths([folder], folder.parent / "out", GradeOptions(modules=("9",), timeout=60), progress=False,
            log=lambda _m: None)
'''
SLEEPER = "import time\ntime.sleep(120)\n\ndef group_relative_advantages(*a, **k):\n    return 0.0\n"


def _killed_grader_leaves(tmp_path: Path) -> tuple[list[Path], subprocess.Popen]:
    """The cgroups of a grader killed with a worker inside, and the grader, killed but not reaped: while it is a
    zombie its pid is taken, so no batch beside this test (the other pytest-xdist worker's) sweeps them yet."""
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "module_9_reference.py").write_text(SLEEPER, encoding="utf-8")
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(folder)], env={**os.environ, "PYTHONPATH": str(KIT)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine = cgroups.manager()
    deadline = time.monotonic() + 120
    left: list[Path] = []
    while time.monotonic() < deadline and not left:
        time.sleep(0.2)
        left = [base.parent / f"rl4llm-{grader.pid}" for base in mine.bases.values()]
        left = [f for f in left if any(cgroups._members(w) for w in f.glob("w*"))]  # a worker inside
    grader.send_signal(signal.SIGKILL)
    while _alive(grader.pid):
        time.sleep(0.05)
    assert left, "the grader never put a worker in a cgroup"
    return left, grader


def _alive(pid) -> bool:
    """Whether ``pid`` still runs: a zombie (killed, not yet reaped by PID 1, which on some machines is slow to
    reap orphans) has ended."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.fixture
def manager():
    found = cgroups.manager()
    if not found.works:
        pytest.skip(f"no cgroups here: {found.reason}")
    return found


def test_the_next_batch_sweeps_what_a_killed_grader_left(tmp_path, manager):
    left, grader = _killed_grader_leaves(tmp_path)
    time.sleep(0.5)
    assert all(f.exists() for f in left)  # SIGKILL: the grader removed nothing, its worker still inside
    workers = {pid for f in left for w in f.glob("w*") for pid in cgroups._members(w)}
    grader.wait()  # its pid is free now: the cgroups are stale
    ok, why = sandbox.cgroups_work()  # what every batch's probe runs first
    assert ok, why
    assert not any(f.exists() for f in left)
    time.sleep(0.5)
    assert not any(_alive(pid) for pid in workers)  # the orphaned worker is gone too


def test_control_without_the_sweep_they_stay(tmp_path, manager, monkeypatch):
    left, grader = _killed_grader_leaves(tmp_path)
    monkeypatch.setattr(cgroups.Manager, "sweep_stale", lambda self: [])
    try:
        grader.wait()  # stale from now on (a batch beside this test may sweep them from here: a short window)
        sandbox.cgroups_work()
        assert all(f.exists() for f in left)
    finally:
        monkeypatch.undo()
        manager.sweep_stale()
