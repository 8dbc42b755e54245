"""The layers that hold as root: the system-call filter, the closed root, cgroups and CPU-time budgets.

Each attack below is one the kit's own sandbox let through before these layers
(issue 19): a connection to a host's path-named UNIX socket, reading an
earlier output folder inside the checkout, seeing host paths at all, memory in
``memfd`` files or System V shared memory past the memory limit, a fork loop as outer uid 0, hundreds of
threads, busy threads that keep cores busy. Each turns its success into a
number or a word in the feedback (its import raises it), beside a correct
submission that keeps full marks.

The same attacks are graded a second time with the new layers switched off
(``RL4LLM_NO_NAMESPACES``, ``RL4LLM_NO_SECCOMP``, ``RL4LLM_NO_CLOSED_ROOT``, ``RL4LLM_NO_CGROUPS``,
``RL4LLM_NO_CPU_BUDGET``, ``RL4LLM_NO_LANDLOCK``): there every attack must
work, which shows that what stops it is the layer (and that each attack is real).
(Namespaces are off in the control because, on this kernel, the worker's own user namespace makes
``RLIMIT_NPROC`` count its tasks; the grader's outer uid 0 is exempt from it everywhere else.)
A report's flag claims a limit; with the layers on, every flag is true here and
the attack it names fails.

Also here: grades do not depend on machine load. The same batch graded on an
idle machine and beside ``2 x cores`` busy processes writes byte-identical
``report.json`` files.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from graders.engine.sandbox import cgroups, layers as sandbox
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from hostile_code import DISARM, Listener, placebo, submission_folders

pytestmark = pytest.mark.slow

STEM = "module_9_reference"
KIT = DEFAULT_KIT.root
OPTIONS = GradeOptions(modules=("9",), timeout=4.0, memory_mb=512, load_timeout=20.0)
CANARY = "canary-" + secrets.token_hex(10)
SWITCHES_OFF = {"RL4LLM_NO_BWRAP": "1", "RL4LLM_NO_NAMESPACES": "1", "RL4LLM_NO_SECCOMP": "1", "RL4LLM_NO_CLOSED_ROOT": "1", "RL4LLM_NO_CGROUPS": "1",
                "RL4LLM_NO_CPU_BUDGET": "1", "RL4LLM_NO_LANDLOCK": "1"}
NEW_LAYERS = ("syscall_filter", "closed_root", "process_limit", "resource_limits", "cgroup_limits", "cpu_budget")

PRELUDE = f'''
import gc, os, sys
{DISARM}
_disarm()  # the audit hook off: what follows meets the kernel's layers only
'''

ATTACKS = {
    # a host service on a path-named UNIX socket: outside Landlock (ABI < 9) and the network namespace
    "host_unix_socket": """
        import socket
        try:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(SOCKET_PATH)
        except OSError as error:
            raise RuntimeError(f"ATTACK:refused {type(error).__name__}")
        raise RuntimeError("ATTACK:connected")
    """,
    # another student's report in an earlier output folder inside the checkout
    "earlier_output": """
        try:
            data = open(EARLIER).read()
        except OSError as error:
            raise RuntimeError(f"ATTACK:refused {type(error).__name__}")
        raise RuntimeError("ATTACK:read " + data)
    """,
    # host paths are not even there (the folders above an allowed path exist, holding that path only)
    "host_paths": """
        seen = [p for p in ("/run", "/home", "/etc/hostname", KIT + "/solutions", KIT + "/graders", OUTSIDE)
                if os.path.lexists(p)]
        try:
            seen += ["/tmp/" + n for n in os.listdir("/tmp") if not n.startswith("rl4llm-grade-")]
        except OSError:
            pass
        raise RuntimeError("ATTACK:seen " + ",".join(seen) if seen else "ATTACK:nothing")
    """,
    # memory that RLIMIT_AS does not count: memfd files, each below the file-size limit
    "memfd_hoard": """
        held, files = 0, []
        try:
            for _ in range(20):
                fd = os.memfd_create("hoard")
                files.append(fd)
                chunk = b"x" * (1 << 20)
                for _ in range(63):
                    os.write(fd, chunk)
                held += 63
        except OSError as error:
            raise RuntimeError(f"ATTACK:held {held} MiB ({type(error).__name__})")
        raise RuntimeError(f"ATTACK:held {held} MiB")
    """,
    # System V shared memory: a segment attached, filled and detached stays, outside RLIMIT_AS
    "sysv_shm_hoard": """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        held = 0
        for number in range(5):
            segment = libc.shmget(SHM_KEY + number, 256 << 20, 0o1600)  # IPC_CREAT | 0600
            if segment < 0:
                raise RuntimeError(f"ATTACK:shm held {held} MiB (errno {ctypes.get_errno()})")
            address = libc.shmat(segment, None, 0)
            ctypes.memset(address, 1, 256 << 20)
            libc.shmdt(ctypes.c_void_p(address))
            held += 256
        raise RuntimeError(f"ATTACK:shm held {held} MiB")
    """,
    # RLIMIT_NPROC does not bind outer uid 0
    "fork_loop": """
        import time
        started = 0
        try:
            for _ in range(100):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                started += 1
        except OSError:
            pass
        raise RuntimeError(f"ATTACK:forked {started}")
    """,
    # threads are processes for the kernel's pids controller
    "many_threads": """
        import threading, time
        threading.stack_size(1 << 16)
        started = 0
        try:
            for _ in range(200):
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
                started += 1
        except (RuntimeError, OSError):
            pass
        raise RuntimeError(f"ATTACK:threads {started}")
    """,
}

# busy threads inside an exercise (more than the cores): the CPU budget (and the cgroup's one core) bound what they burn
SPIN_NAME = "rl4spin" + secrets.token_hex(3)
BUSY = f'''
import ctypes, gc, threading

for obj in gc.get_objects():  # the audit hook off (it refuses ctypes), to name the threads
    if type(obj).__name__ == "Fence":
        obj.armed = False

def _spin():
    ctypes.CDLL(None).prctl(15, {SPIN_NAME!r}.encode(), 0, 0, 0)  # PR_SET_NAME: the test measures it
    while True:
        pass

def group_relative_advantages(*args, **kwargs):
    threading.stack_size(1 << 16)  # (each thread's stack and malloc arena count against RLIMIT_AS)
    for _ in range(6):
        threading.Thread(target=_spin, daemon=True).start()
    threading.Event().wait()
'''


def _placebo() -> str:
    return placebo(STEM)


def _attack(body: str, values: dict) -> str:
    text = textwrap.dedent(body)
    for key, value in values.items():
        text = text.replace(key, repr(value))
    return _placebo() + PRELUDE + text


SHM_KEY = 0x726C3400  # the System V keys the shared-memory attack uses (SHM_KEY + 0..4)


def _remove_shared_memory() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for number in range(5):
        segment = libc.shmget(SHM_KEY + number, 0, 0)
        if segment >= 0:
            libc.shmctl(segment, 0, None)  # IPC_RMID


@contextlib.contextmanager
def _environment(env: dict):
    """``env`` set in this process's environment (the grader reads its switches there), then restored."""
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _attack_word(report: dict) -> str:
    text = json.dumps(report, ensure_ascii=False)
    found = re.search(r"ATTACK:([^\"\\]*)", text)
    return found.group(1).split(f" ({STEM}.py")[0] if found else ""


def _grade(root: Path, label: str, env: dict) -> dict:
    earlier = KIT / "rl4llm-out" / f"earlier-{CANARY}"
    earlier.mkdir(parents=True, exist_ok=True)
    (earlier / "report.json").write_text(json.dumps({"submission": "someone-else", "secret": CANARY}))
    outside = root / f"outside-{label}.txt"
    outside.write_text("outside")
    socket_path = root / f"host-{label}.sock"
    host_service = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # a host service on a path-named socket
    host_service.bind(str(socket_path))
    os.chmod(socket_path, 0o777)
    listener = Listener(host_service)
    values = {"SOCKET_PATH": str(socket_path), "EARLIER": str(earlier / "report.json"), "KIT": str(KIT),
              "OUTSIDE": str(outside), "SHM_KEY": SHM_KEY}
    paths = submission_folders(root / label, {"correct": DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8"),
                                              **{name: _attack(body, values) for name, body in ATTACKS.items()}}, STEM)
    try:
        with _environment(env):
            result = grade_paths(paths, root / label / "out", OPTIONS, jobs=2, progress=False, log=lambda _m: None)
    finally:
        listener.close()
        shutil.rmtree(earlier, ignore_errors=True)
        _remove_shared_memory()  # without an IPC namespace (the control) the segments would outlive it
    reports = dict(zip(result.names, result.reports))
    return {"reports": reports, "words": {name: _attack_word(reports[name]) for name in ATTACKS},
            "connections": listener.connections}


class _SpinMeter:
    """Samples the CPU seconds of every thread named SPIN_NAME (``/proc/<pid>/task/<tid>/stat``) while a
    batch runs; :attr:`seconds` is their sum (each thread's last reading before it ended). With
    ``kill_past``, the meter itself kills the spinning process once their sum passes that many seconds:
    a control has shown what it must by then, and need not wait for the wall-clock backstop."""

    TICKS = os.sysconf("SC_CLK_TCK")

    def __init__(self, kill_past: float | None = None) -> None:
        self.kill_past = kill_past
        self.killed = False
        self.seen: dict[tuple[str, str], float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.1):
            for pid in (p for p in os.listdir("/proc") if p.isdigit()):
                try:
                    tasks = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tasks:
                    try:
                        if Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip() != SPIN_NAME:
                            continue
                        fields = Path(f"/proc/{pid}/task/{tid}/stat").read_bytes().rsplit(b")", 1)[1].split()
                    except OSError:
                        continue
                    self.seen[(pid, tid)] = (int(fields[11]) + int(fields[12])) / self.TICKS
                    if self.kill_past is not None and sum(self.seen.values()) > self.kill_past:
                        with contextlib.suppress(OSError):
                            os.kill(int(pid), signal.SIGKILL)
                            self.killed = True

    @property
    def seconds(self) -> float:
        self.stop.set()
        self.thread.join(2)
        return sum(self.seen.values())


def _grade_busy(root: Path, label: str, env: dict, kill_past: float | None = None) -> tuple[dict, _SpinMeter]:
    """Grade the busy-threads submission alone; returns its report and the meter of the CPU seconds its
    spinning threads used (sampled: a kill reparents the worker, so no rusage of ours ever counts them)."""
    folder = root / label / "in" / "busy"
    folder.mkdir(parents=True)
    placebo = _placebo().replace("def group_relative_advantages(*args, **kwargs):\n    return 0.0\n", "")
    (folder / f"{STEM}.py").write_text(placebo + BUSY, encoding="utf-8")
    meter = _SpinMeter(kill_past)
    with _environment(env):
        result = grade_paths([folder], root / label / "out", OPTIONS, jobs=1, progress=False, log=lambda _m: None)
    return result.reports[0], meter


@pytest.fixture(scope="module")
def layers():
    probe = sandbox.probe_layers()
    missing = [name for name in NEW_LAYERS + ("namespaces", "landlock_files") if not probe.layers.get(name)]
    if missing:
        pytest.skip(f"this machine lacks {missing} (rl4llm doctor): the attacks would reach it")
    return probe


@pytest.fixture(scope="module")
def confined(layers, tmp_path_factory):
    return _grade(tmp_path_factory.mktemp("confined"), "on", {})


@pytest.fixture(scope="module")
def unconfined(layers, tmp_path_factory):
    return _grade(tmp_path_factory.mktemp("unconfined"), "off", SWITCHES_OFF)


def test_the_correct_submission_keeps_full_marks(confined):
    report = confined["reports"]["correct"]
    graded = [e for e in report["exercises"] if e["id"].startswith(STEM)]
    assert graded and all(e["status"] == "passed" for e in graded), [
        (e["id"], e["feedback"][:300]) for e in graded if e["status"] != "passed"]
    for name in NEW_LAYERS:
        assert report["sandbox"][name] is True, name


def test_no_attack_gets_through_the_layers(confined):
    words = confined["words"]
    assert confined["connections"] == 0
    assert words["host_unix_socket"].startswith("refused PermissionError"), words
    assert words["earlier_output"].startswith("refused"), words
    assert words["host_paths"] == "nothing", words
    assert words["memfd_hoard"].startswith("held 0 MiB (PermissionError"), words
    assert words["sysv_shm_hoard"] == "shm held 0 MiB (errno 1)", words  # EPERM from the filter
    assert words["fork_loop"] == "forked 0", words
    assert int(words["many_threads"].split()[1]) < sandbox.WORKER_TASKS, words
    for name in ATTACKS:
        assert CANARY not in json.dumps(confined["reports"][name])


def test_each_attack_works_with_the_layers_off(unconfined):
    """The control: the same attacks, the new layers switched off, all succeed (so the layers stop them)."""
    words = unconfined["words"]
    assert unconfined["connections"] >= 1 and words["host_unix_socket"] == "connected", words
    assert words["earlier_output"].startswith("read ") and CANARY in json.dumps(unconfined["reports"]["earlier_output"])
    assert "/run" in words["host_paths"] and str(KIT) + "/solutions" in words["host_paths"], words
    held = int(words["memfd_hoard"].split()[1])
    assert held > OPTIONS.memory_mb, words  # past the memory limit the report claims
    assert words["sysv_shm_hoard"] == "shm held 1280 MiB", words
    assert words["fork_loop"] == "forked 100", words
    assert int(words["many_threads"].split()[1]) == 200, words
    sandbox_record = unconfined["reports"]["correct"]["sandbox"]
    for name in ("syscall_filter", "closed_root", "process_limit", "resource_limits", "cgroup_limits",
                 "cpu_budget", "landlock_files"):
        assert sandbox_record[name] is False, name  # and the report says so


def test_busy_threads_are_held_to_the_cpu_budget(layers, tmp_path):
    """Six spinning threads in one exercise: stopped after its CPU budget (4 s, on at most one core).
    The control, with the budget and cgroups off: nothing of the grader stops them at twice the budget
    (only the wall-clock backstop would, 3 x 4 + 15 s later; the meter kills them at twice the budget
    instead, since the point is made by then)."""
    budget = OPTIONS.timeout
    report, meter = _grade_busy(tmp_path, "on", {})
    entry = next(e for e in report["exercises"] if e["id"] == f"{STEM}.group_relative_advantages")
    assert entry["status"] == "timeout" and "CPU time" in entry["feedback"], entry
    # CPU seconds of the spinning threads, not wall time: about the budget (sampled every 0.1 s: a little under)
    assert meter.seconds <= budget + 1.0, meter.seconds
    assert not meter.killed
    off_report, off_meter = _grade_busy(tmp_path, "off", {"RL4LLM_NO_CPU_BUDGET": "1", "RL4LLM_NO_CGROUPS": "1"},
                                        kill_past=2 * budget)
    off_entry = next(e for e in off_report["exercises"] if e["id"] == f"{STEM}.group_relative_advantages")
    assert off_entry["status"] != "passed" and "CPU time" not in off_entry["feedback"], off_entry
    assert off_meter.seconds > 2 * budget and off_meter.killed, off_meter.seconds


BUSY_LOOP = "while True:\n    pass\n"


def test_grades_do_not_depend_on_machine_load(layers, tmp_path):
    """The same batch, idle and beside 2 x cores busy processes: byte-identical report.json files.

    The batch holds a correct submission, one with typical mistakes, the placebo, one whose exercise
    spins past its budget and one that sleeps past the wall-clock backstop's reach of its CPU budget.
    """
    submissions = {
        "correct": DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8"),
        "placebo": _placebo(),
        "spins": _placebo().replace("def k3_kl(*args, **kwargs):\n    return 0.0\n",
                                    "def k3_kl(*args, **kwargs):\n    while True:\n        pass\n"),
        "mistaken": DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8").replace(
            "def k3_kl(", "def _right_k3_kl(") + "\n\ndef k3_kl(logp_new, logp_ref):\n    import numpy as np\n"
            "    return np.asarray(logp_new) - np.asarray(logp_ref)\n",
    }
    paths = submission_folders(tmp_path, submissions, STEM)
    idle = grade_paths(paths, tmp_path / "idle", OPTIONS, jobs=2, progress=False, log=lambda _m: None)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(2 * (os.cpu_count() or 2))]
    try:
        grade_paths(paths, tmp_path / "loaded", OPTIONS, jobs=2, progress=False, log=lambda _m: None)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    spins = next(e for e in idle.reports[2]["exercises"] if e["id"] == f"{STEM}.k3_kl")
    assert spins["status"] == "timeout"
    for name in idle.names:
        first = (tmp_path / "idle" / name / "report.json").read_bytes()
        second = (tmp_path / "loaded" / name / "report.json").read_bytes()
        assert first == second, name


def test_a_cgroup_holds_its_limits_and_goes_away(layers):
    manager = cgroups.manager()
    group = manager.create(cgroups.Limits(memory_bytes=256 << 20, tasks=8, cpus=0.5))
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        group.add(process.pid)
        assert all(str(process.pid) in (folder / "cgroup.procs").read_text().split() for folder in group.folders)
    finally:
        group.close()
    assert process.wait(timeout=10) == -9  # closing the group ended what was in it
    assert not any(folder.exists() for folder in group.folders)
