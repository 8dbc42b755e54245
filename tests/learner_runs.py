"""Many learner-style pytest runs for the price of one interpreter start.

The checks that run the public tests once per catalogue entry or per exercise (``test_hint_truth``,
``test_public_selection``) would start ~170 interpreters, each importing pytest, Hypothesis, NumPy
and torch again (about 1.5 s of CPU each). Here one driver process imports them once and forks a
child per run: every run still starts from the same clean state (nothing of one run reaches the
next: each is a fresh fork of the untouched driver), with its own environment, working directory
and output file, as ``python -m pytest ARGS`` started from ``cwd`` would.

    results = run_many([Job(args=[...], env={...}, cwd=REPO_ROOT), ...], workers=2)
    results[i].returncode, results[i].stdout

Run as a script (``python tests/learner_runs.py``) it is the driver: jobs as JSON on stdin,
results as JSON on stdout.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field

# What every learner run imports. Not torch._dynamo (1.2 s of CPU a driver): the toys' Adam is written out
# (toy_optim.py), so no learner run reaches it; a run that did would import it itself.
PRELOAD = ("numpy", "pytest", "hypothesis", "torch", "torch.optim")


@dataclass
class Job:
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)  # the whole environment of the run
    cwd: str = "."


@dataclass
class Result:
    returncode: int
    stdout: str  # stdout and stderr together, as the learner's terminal shows them


def run_many(jobs: list[Job], workers: int = 2, timeout: float = 1200) -> list[Result]:
    """Run every job's pytest in a child forked from one preloaded driver, ``workers`` at a time."""
    if not jobs:
        return []
    driver = subprocess.run([sys.executable, __file__, str(workers)],
                            input=json.dumps([asdict(job) for job in jobs]),
                            capture_output=True, text=True, timeout=timeout)
    if driver.returncode != 0:
        raise RuntimeError(f"pytest pool driver failed ({driver.returncode}):\n{driver.stderr[-3000:]}")
    return [Result(**result) for result in json.loads(driver.stdout)]


def _child(job: dict, out_path: str) -> None:
    """In the forked child: become ``cd cwd && env ... python -m pytest ARGS`` and exit with its status."""
    code = 4
    try:
        fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.environ.clear()
        os.environ.update(job["env"])
        os.chdir(job["cwd"])
        sys.pycache_prefix = os.environ.get("PYTHONPYCACHEPREFIX") or None  # read at start-up otherwise
        sys.path.insert(0, os.getcwd())  # what `python -m` puts first
        import pytest

        # the driver imported Hypothesis (a pytest plugin) before pytest could rewrite its asserts
        quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
        code = int(pytest.main([*quiet, *job["args"]]))
    except BaseException as exc:  # noqa: BLE001 - reported as the run's output
        print(f"pytest pool child: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _drive(jobs: list[dict], workers: int) -> list[dict]:
    for name in PRELOAD:
        __import__(name)
    # the preloaded objects (torch's above all) out of the collector's reach: otherwise every full
    # collection in every child walks them again (pytest.main took 0.75 s instead of 0.4 s)
    gc.freeze()
    results: list[dict | None] = [None] * len(jobs)
    running: dict[int, tuple[int, str]] = {}
    with tempfile.TemporaryDirectory(prefix="rl4llm-pytest-pool-") as tmp:
        pending = list(enumerate(jobs))
        while pending or running:
            while pending and len(running) < workers:
                index, job = pending.pop(0)
                out_path = os.path.join(tmp, f"{index}.out")
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(job, out_path)
                running[pid] = (index, out_path)
            pid, status = os.wait()
            if pid not in running:
                continue
            index, out_path = running.pop(pid)
            with open(out_path, encoding="utf-8", errors="replace") as handle:
                output = handle.read()
            results[index] = {"returncode": os.waitstatus_to_exitcode(status), "stdout": output}
    return results  # type: ignore[return-value]


if __name__ == "__main__":
    print(json.dumps(_drive(json.load(sys.stdin), int(sys.argv[1]) if len(sys.argv) > 1 else 2)))
