"""Time limits are CPU-time budgets, on every route: a busy machine does not change a verdict.

The worker route (``rl4llm grade``, nbgrader, Gradescope) is tested with whole batches in
``tests/test_engine_confinement.py``; here the in-process route (:mod:`graders.engine.routes.inline`, the
learner's and instructor's checks in their own process) and the backstop's arithmetic.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from graders.engine.routes import inline
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.worker.config import WALL_FACTOR, WALL_GRACE, wall_backstop
from graders.loader import load_module

EXERCISE = "module_9_reference.group_relative_advantages"


@pytest.fixture(scope="module")
def reference():
    path = DEFAULT_KIT.solution_path("module_9_reference")
    return load_module(path, "_cpu_budget_reference").group_relative_advantages


def test_the_backstop_is_generous():
    assert wall_backstop(10) == WALL_FACTOR * 10 + WALL_GRACE
    assert wall_backstop(0) == WALL_GRACE
    assert WALL_FACTOR >= 3  # a child that gets a third of a core still finishes within its budget


def test_spinning_past_the_budget_is_a_timeout():
    def spins(*args, **kwargs):
        while True:
            pass

    entry = inline.grade_exercise(EXERCISE, spins, timeout=0.5)
    assert entry["status"] == "timeout" and entry["points"] == 0
    assert "CPU time" in entry["feedback"]


def test_waiting_costs_no_cpu_budget(reference):
    """A function that sleeps longer than its budget but spends almost no CPU is not timed out by the
    budget (only the wall-clock backstop, far beyond, would end it)."""
    calls = []

    def sleeps_then_answers(*args, **kwargs):
        if not calls:
            time.sleep(0.6)
        calls.append(1)
        return reference(*args, **kwargs)

    entry = inline.grade_exercise(EXERCISE, sleeps_then_answers, timeout=0.5)
    assert entry["status"] == "passed", entry["feedback"][:500]


def test_the_in_process_route_gives_the_same_entry_on_a_busy_machine(reference):
    idle = inline.grade_exercise(EXERCISE, reference)
    busy = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
            for _ in range(2 * (os.cpu_count() or 2))]
    try:
        loaded = inline.grade_exercise(EXERCISE, reference)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert idle["status"] == "passed"
    assert loaded == idle


@pytest.mark.slow  # a thread spins beside the exercise on purpose (about 3 s of CPU); the budget's clock is kept in
# the fast tier by the tests above (spinning past it times out, waiting costs nothing)
def test_another_threads_cpu_does_not_count_against_the_exercise(reference):
    """A thread that was already spinning when the exercise began (a kernel's, an earlier grade's: under
    load they run longer) costs the exercise nothing; its process's CPU, which ``ITIMER_PROF`` counted,
    passes the budget (the control: the old clock would have timed this correct function out)."""
    import threading

    stop = threading.Event()

    def spin():
        while not stop.is_set():
            pass

    waited = []

    def waits_then_answers(*args, **kwargs):
        # the first call sleeps until the spinner alone has taken the process's clock past the budget: the
        # control below then holds however busy the machine is (a fixed sleep gave the spinner 0.33 s of CPU
        # beside 12 busy processes, under the budget, and the control failed)
        while not waited and time.process_time() - before < 0.6:
            time.sleep(0.01)
        waited.append(1)
        return reference(*args, **kwargs)

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        before = time.process_time()
        entry = inline.grade_exercise(EXERCISE, waits_then_answers, timeout=0.5)
        process_cpu = time.process_time() - before
    finally:
        stop.set()
        spinner.join()
    assert entry["status"] == "passed", entry["feedback"][:300]
    assert process_cpu > 0.5  # what the process-wide clock saw: past the budget
