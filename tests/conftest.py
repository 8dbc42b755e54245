"""Shared helpers for the kit's own test suite."""

from __future__ import annotations

import atexit
import gc
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

# The kit's tests never write into the kit: no bytecode caches in graders/, solutions/ or starter/, from this
# process or any it starts, while tests run (pytest_configure compiles them once, before any test). (A cache
# written by one test while another grades trips the grader's check that the kit's files did not change during
# a batch, e.g. when pytest-xdist runs tests side by side.)
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
# This process's bytecode (the kit's modules, and pytest's assertion-rewritten test files, which it otherwise rewrites
# in every worker on every run: about 4 s of CPU a worker) is kept outside the tree, in a cache of the user's.
PYCACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rl4llm-kit" / "pycache"
sys.pycache_prefix = str(PYCACHE)
sys.dont_write_bytecode = False
os.environ["RL4LLM_LANG"] = "en"  # the kit's tests assert English texts whatever the machine's locale
# nbformat imports jsonschema, whose format checkers import rfc3987_syntax when installed, which builds a grammar
# at import (1.2 s, for IRI formats nbformat's schemas never name): in the tests' processes it is not found, as
# where it is not installed (the real nbgrader runs get the same, tests/test_nbgrader.py's _environment)
sys.modules.setdefault("rfc3987_syntax", None)


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")  # what sizes torch's and BLAS's pools


def _share_the_cores() -> int | None:
    """Under pytest-xdist, each worker's torch (and every process it starts) gets its share of the cores: the
    CPUs this process may use over the number of workers, at least one. Torch otherwise starts a thread per
    core in every worker, so ``-n 2`` on two cores ran four busy threads on two (about 20% more CPU on the
    capstone's tests; issue 30, docs/timings.md). A user's own ``OMP_NUM_THREADS`` is kept. The engine's workers set
    their own single thread, and no result depends on the count (the toys and references fix it to one)."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not workers.isdigit() or "OMP_NUM_THREADS" in os.environ:
        return None
    share = str(max(1, len(os.sched_getaffinity(0)) // int(workers)))
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, share)
    if "torch" in sys.modules:  # imported before this file: its pool may be sized already
        sys.modules["torch"].set_num_threads(int(share))
    return int(share)


THREADS_PER_WORKER = _share_the_cores()


# The files that take longest first, so that `-n 2 --dist loadfile` ends with both workers busy (longest
# processing time first: each file goes to whichever worker is free, and the short files fill the end). The
# seconds each file took are recorded in tests/file_seconds.json by a run of the README's suite with
# `--update-file-seconds`; a file not recorded yet goes last. (By default pytest-xdist hands out the files with
# the most tests first, which left the real nbgrader workflow to start late and run alone at the end; a hand list
# of the ten slowest files still left a 52 s file to start last: about 30 s of one worker alone, issue 30.)
FILE_SECONDS = Path(__file__).with_name("file_seconds.json")


def _file_seconds() -> dict[str, float]:
    try:
        return {name: float(value) for name, value in json.loads(FILE_SECONDS.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def pytest_collection_modifyitems(session, config, items) -> None:
    """The files that took longest first, the rest in collection order (a stable sort: a file's order is kept)."""
    seconds = _file_seconds()
    items.sort(key=lambda item: -seconds.get(item.path.name, 0.0))


_ran_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report) -> None:
    """The seconds each test file took (setup, call and teardown), for ``--update-file-seconds``; in the
    pytest-xdist controller too, which receives every worker's reports."""
    name = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    _ran_seconds[name] = _ran_seconds.get(name, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus) -> None:
    """With ``--update-file-seconds``, after a run of the whole suite, record the seconds each file took
    (the other files' recorded seconds are kept); a run that deselected tests records nothing."""
    config = session.config
    if not config.getoption("--update-file-seconds") or hasattr(config, "workerinput"):
        return
    if config.option.keyword or config.option.markexpr not in ("", "not exhaustive"):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("tests/file_seconds.json not updated: record it from the whole suite "
                                "(-m \"not exhaustive\", no -k)")
        return
    seconds = {**_file_seconds(), **{name: round(value, 1) for name, value in _ran_seconds.items()}}
    FILE_SECONDS.write_text(json.dumps(dict(sorted(seconds.items())), indent=1) + "\n", encoding="utf-8")


WHOLLY_SLOW = re.compile(r"^pytestmark = pytest\.mark\.slow\b", re.MULTILINE)


def _deselects_every_slow_test(markexpr: str) -> bool:
    """Whether ``-m markexpr`` deselects a test marked ``slow`` whatever its other marks (every set of the
    expression's other names tried alongside ``slow``); False when unsure."""
    import itertools

    from _pytest.mark.expression import Expression

    names = set(re.findall(r"[A-Za-z_]\w*", markexpr)) - {"and", "or", "not"}
    if "slow" not in names:
        return False
    try:
        expression = Expression.compile(markexpr)
        others = sorted(names - {"slow"})
        return not any(expression.evaluate(lambda name, chosen={"slow", *subset}, **_: name in chosen)
                       for size in range(len(others) + 1) for subset in itertools.combinations(others, size))
    except Exception:  # noqa: BLE001 - an expression this cannot read: collect as usual
        return False


def pytest_ignore_collect(collection_path, config):
    """With ``-m "not slow"`` (the fast tier), a test file marked slow as a whole (``pytestmark =
    pytest.mark.slow``) is not imported at all: every test in it would be deselected, and both pytest-xdist
    workers would otherwise import it (nbgrader, the checks' cases) only to collect it."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if _deselects_every_slow_test(config.option.markexpr or "") and \
            WHOLLY_SLOW.search(collection_path.read_text(encoding="utf-8")):
        return True
    return None


# What a test file may not import at collection unless it is marked slow as a whole: packages that take a second or
# more to import and that few tests use (the nbgrader stack, TRL and transformers). Every pytest-xdist worker
# collects every file, so such an import at a file's top costs each worker its time, and only one worker runs
# the file's tests (issue 30: tests/test_feedback_html.py's nbconvert cost both workers 2 s); import them in
# a fixture or the test instead. tests/test_collection_cost.py checks the record below.
HEAVY_PACKAGES = ("nbgrader", "nbconvert", "nbformat", "nbclient", "jupyter_server", "bs4", "trl", "transformers",
                  "peft", "datasets", "accelerate", "playwright")
HEAVY_AT_COLLECTION: dict[str, list[str]] = {}  # test file -> the heavy packages it imported at collection


def pytest_collectreport(report) -> None:
    """Record the heavy packages (:data:`HEAVY_PACKAGES`) that first appeared while a test file was collected."""
    name = report.nodeid.rsplit("/", 1)[-1]
    if "::" in report.nodeid or not name.startswith("test_") or not name.endswith(".py"):
        return
    seen = {package for found in HEAVY_AT_COLLECTION.values() for package in found}
    new = [package for package in HEAVY_PACKAGES if package in sys.modules and package not in seen]
    if new:
        HEAVY_AT_COLLECTION[name] = new


def pytest_collection_finish(session) -> None:
    """Everything imported and built by collection (torch, the kit, every test module: most of a worker's
    objects) goes to the collector's permanent generation, as the grader's fork servers do: otherwise every full
    collection during the run walks it again (issue 30: a third of the full collections' CPU). Nothing the tests
    run in this process looks for objects through the collector (the hostile code that does runs in grading
    workers, fresh interpreters), and what becomes garbage later is still freed by reference counting."""
    gc.collect()
    gc.freeze()
    _PLAIN_AT_START.update({name: sys.modules.get(name) for name in _plain_names()})


# The plain names learner code is imported by (module_9_reference, grpo_toy, ...), as collection left them. A test
# that loads a module under such a name in this process (a learner's file, a hostile one) leaves it in sys.modules,
# where a later file's `import module_9_reference` would get it: each file's last test puts them back.
_PLAIN_AT_START: dict[str, object] = {}


def _plain_names() -> list[str]:
    from graders import course

    return sorted({f.stem for f in course.learner_files()} | set(course.given_modules()))


def _restore_plain_modules() -> list[str]:
    """Put the plain-named modules back as collection left them; the names that had changed."""
    changed = []
    for name, module in _PLAIN_AT_START.items():
        if sys.modules.get(name) is not module:
            changed.append(name)
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return changed


def pytest_runtest_teardown(item, nextitem) -> None:
    """After a test file's last test, empty the caches its own functions keep (``functools.cache``): what they
    hold (parsed trees, tables of cases) stayed alive for the rest of the run otherwise, and every later full
    garbage collection in that pytest-xdist worker walked it again (issue 30: about 0.5 s a collection after
    the settings scan's trees). The learner-named modules its tests left in ``sys.modules`` go too."""
    module = getattr(item, "module", None)
    if module is None or getattr(nextitem, "module", None) is module:
        return
    _restore_plain_modules()  # and the learner-named modules it loaded go (see _PLAIN_AT_START)
    for value in list(vars(module).values()):
        if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == module.__name__:
            value.cache_clear()


def pytest_addoption(parser) -> None:
    """``--update-sweep-record``: where the public-test sweep of an exercise passes, record its digest
    (tests/public_sweep.py, tests/sweep_record.json) instead of failing on a stale record.
    ``--update-file-seconds``: record the seconds each test file took (tests/file_seconds.json)."""
    parser.addoption("--update-sweep-record", action="store_true", default=False,
                     help="record the exercises whose public-test sweep passed in tests/sweep_record.json")
    parser.addoption("--update-file-seconds", action="store_true", default=False,
                     help="record the seconds each test file took in tests/file_seconds.json (the order of files)")


def _leave_at_once() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def share_the_cores(workers: int) -> int:
    """Each of ``workers`` pytest-xdist workers gets its share of the cores for torch's and the BLAS's own
    threads, and so does every process its tests start (the variables are inherited); a count the caller set
    is kept. With two workers on two cores, torch's default (a thread a core) in both had each wait on the
    other's core, spinning: a Qwen3 dry-run step beside a busy process took 31-34 s of CPU with the default,
    25-28 s with one thread. Results do not depend on it (the toys' goldens are tested at 1 and 2 threads).
    Returns the share it computed (what a caller's own setting replaces)."""
    threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(threads))
    if "torch" in sys.modules:  # imported already: its pool is sized now
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    return threads


def pytest_configure(config) -> None:
    """Compile the kit's bytecode once, before any test (and before pytest-xdist starts its workers)."""
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: hand files out in our order (longest first)
        config.option.loadscopereorder = False
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        share_the_cores(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))
        # and when the worker has sent its last report, it leaves without tearing down its interpreter: freeing
        # the heap of torch, the kit and two thousand tests' modules one object at a time kept the controller
        # waiting about 1.5 s at the end of every run (issue 30). Registered now, before the tests import
        # anything, so every exit handler registered later (thread pools, temporary folders) still runs first.
        atexit.register(_leave_at_once)
        return
    import compileall

    for folder in ("graders", "solutions", "starter"):
        compileall.compile_dir(str(REPO_ROOT / folder), quiet=2, workers=1)
    # and into the kit's own __pycache__ folders, as `rl4llm grade` keeps them (Kit.keep_bytecode) and a package
    # install does: the tests' children (graders, fork servers, readers, learner runs) run with
    # PYTHONDONTWRITEBYTECODE=1 and read it, instead of compiling the kit's modules in every process. Written
    # here, before any test, never during one: the check below starts from the state after it.
    from graders.engine.judging.kit import DEFAULT_KIT

    DEFAULT_KIT.keep_bytecode(whatever_the_environment=True)
    _BYTECODE["state"] = bytecode_state(_KIT_PACKAGES)

from graders.paths import REPO_ROOT  # noqa: E402


@dataclass(frozen=True)
class PytestRun:
    returncode: int
    output: str
    cases: list[dict]  # one per test case: name, outcome, message


def run_learner_tests(test_dir: Path, impl_root: Path, tmp_path: Path) -> PytestRun:
    """Run the public learner tests in ``test_dir`` against ``impl_root`` in a fresh interpreter."""
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "RL4LLM_IMPL_ROOT": str(impl_root), "MPLBACKEND": "Agg"}
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", str(test_dir), "-q", "-p", "no:cacheprovider",
         f"--junitxml={junit}", "-o", "junit_family=xunit1"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    cases = []
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            outcome, message = "passed", ""
            for tag in ("failure", "error", "skipped"):
                node = case.find(tag)
                if node is not None:
                    outcome, message = tag, (node.get("message") or "") + "\n" + (node.text or "")
            cases.append({"name": case.get("name"), "outcome": outcome, "message": message.strip()})
    return PytestRun(completed.returncode, completed.stdout + completed.stderr, cases)


# ----------------------------------------------------------------------------- no bytecode written into the kit
# A test, or any process it starts, that writes bytecode into the kit's folders fails here, named, instead of
# tripping a grading test that runs beside it (the batch's check that no kit file changed while it graded: a
# child started with an environment of its own, without PYTHONDONTWRITEBYTECODE, did exactly that on a busy run).
# What is checked: each kit folder's __pycache__ (its presence and modification time), against the state this
# process found at start-up, after every test: 37 stat calls, about 40 microseconds.
KIT_FOLDERS = ("graders", "solutions", "starter", "devtools")


def kit_package_folders(root: Path = REPO_ROOT) -> list[Path]:
    """Every folder of the kit's source trees (``__pycache__`` folders left out)."""
    found = []
    for folder in KIT_FOLDERS:
        for parent, dirs, _files in os.walk(root / folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            found.append(Path(parent))
    return found


def bytecode_state(folders: list[Path]) -> dict[str, int]:
    """``{cache folder: modification time}`` for each of ``folders``' ``__pycache__`` that exists."""
    state = {}
    for folder in folders:
        try:
            state[str(folder / "__pycache__")] = os.stat(folder / "__pycache__").st_mtime_ns
        except FileNotFoundError:
            pass
    return state


def bytecode_written(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """The cache folders that appeared or changed between two states."""
    return sorted(cache for cache, stamp in after.items() if before.get(cache) != stamp)


_KIT_PACKAGES = kit_package_folders()
_BYTECODE = {"state": bytecode_state(_KIT_PACKAGES)}


@pytest.fixture(autouse=True)
def _no_bytecode_written_into_the_kit():
    yield
    now = bytecode_state(_KIT_PACKAGES)
    written, _BYTECODE["state"] = bytecode_written(_BYTECODE["state"], now), now
    if written:
        shown = ", ".join(str(Path(cache).relative_to(REPO_ROOT)) for cache in written[:5])
        pytest.fail(f"bytecode was written into the kit ({shown}) by this test, a process it started, or a test "
                    "running beside it: give every child the test environment (PYTHONDONTWRITEBYTECODE=1, as "
                    "tests/conftest.py sets in os.environ) or PYTHONPYCACHEPREFIX", pytrace=False)
