"""The sandbox's own parts: Landlock, self-confinement, the layer probe, result caps, hide mode, the tripwire.

The Landlock and confinement tests run in a child process (a restriction
cannot be lifted once applied) and are skipped where the kernel lacks it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from graders.engine.sandbox import landlock, layers as sandbox
from graders.engine.values import bundles
from graders.engine.routes.batch import GraderError, grade_paths, kit_fingerprint, unique_names
from graders.engine.outputs.feedback import _verdict_only
from graders.engine.routes.grading import GradeOptions
from graders.engine.values.protocol import CaseOutcome, CaseResult
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.paths import REPO_ROOT

LANDLOCK = landlock.abi_version() >= 1
needs_landlock = pytest.mark.skipif(not LANDLOCK, reason="this kernel has no Landlock")


def _child(code: str, tmp_path: Path) -> dict:
    """Run ``code`` in a fresh interpreter (kit importable); it prints one JSON line."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_landlock
def test_landlock_allows_only_the_listed_hierarchies(tmp_path):
    (tmp_path / "allowed").mkdir()
    (tmp_path / "allowed" / "a.txt").write_text("a")
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "b.txt").write_text("b")
    found = _child(f"""
        import json, os, sys
        from graders.engine.sandbox import landlock, confine
        closed = [{str(REPO_ROOT / "solutions")!r}, {str(REPO_ROOT / "graders")!r}]
        applied = landlock.restrict_self(confine.readable_roots(closed), [{str(tmp_path / "allowed")!r}])
        out = {{"abi": applied.abi}}
        def attempt(name, action):
            try:
                action()
                out[name] = "allowed"
            except OSError as error:
                out[name] = type(error).__name__
        attempt("read_allowed", lambda: open({str(tmp_path / "allowed" / "a.txt")!r}).read())
        attempt("write_allowed", lambda: open({str(tmp_path / "allowed" / "new.txt")!r}, "w").write("x"))
        attempt("read_closed", lambda: open({str(tmp_path / "closed" / "b.txt")!r}).read())
        attempt("dir_fd", lambda: os.open("closed/b.txt", os.O_RDONLY, dir_fd=os.open({str(tmp_path)!r}, os.O_RDONLY)))
        attempt("rename_into", lambda: os.rename({str(tmp_path / "closed" / "b.txt")!r}, {str(tmp_path / "allowed" / "b.txt")!r}))
        attempt("link_into", lambda: os.link({str(tmp_path / "closed" / "b.txt")!r}, {str(tmp_path / "allowed" / "c.txt")!r}))
        attempt("kit", lambda: open({str(REPO_ROOT / "solutions" / "module_09" / "module_9_reference.py")!r}).read())
        attempt("proc_parent", lambda: open(f"/proc/{{os.getppid()}}/environ", "rb").read())
        print(json.dumps(out))
    """, tmp_path)
    assert found["read_allowed"] == found["write_allowed"] == "allowed"
    for name in ("read_closed", "dir_fd", "kit", "proc_parent"):
        assert found[name] == "PermissionError", (name, found)
    for name in ("rename_into", "link_into"):  # refused with EACCES or, across domains, EXDEV
        assert found[name] in ("PermissionError", "OSError"), (name, found)
    assert (tmp_path / "closed" / "b.txt").exists()
    assert not (tmp_path / "allowed" / "b.txt").exists() and not (tmp_path / "allowed" / "c.txt").exists()


def test_readable_roots_cut_the_forbidden_folders_out(tmp_path):
    site = tmp_path / "site-packages"
    for name in ("numpy", "graders", "solutions", "torch"):
        (site / name).mkdir(parents=True)
    from graders.engine.sandbox.closed_root import _open_up

    roots = _open_up(str(site), [str(site / "graders"), str(site / "solutions")], depth=0)
    assert sorted(Path(r).name for r in roots) == ["numpy", "torch"]
    assert _open_up(str(site / "graders" ), [str(site / "graders")], depth=0) == []
    assert _open_up(str(site / "numpy"), [str(site / "graders")], depth=0) == [str(site / "numpy")]


def test_the_probe_reports_every_layer_and_the_identity():
    probe = sandbox.probe_layers()
    assert set(probe.layers) == set(sandbox.LAYERS)
    assert probe.identity
    if LANDLOCK:
        assert probe.layers["landlock_files"] and probe.layers["no_capabilities"]


def test_switched_off_layers_are_reported_missing(monkeypatch):
    monkeypatch.setenv("RL4LLM_NO_LANDLOCK", "1")
    probe = sandbox.probe_layers()
    assert {"landlock_files", "landlock_tcp", "landlock_scopes"} <= set(probe.missing)


def test_require_sandbox_refuses_a_machine_without_every_layer(tmp_path, monkeypatch):
    monkeypatch.setenv("RL4LLM_NO_LANDLOCK", "1")
    folder = tmp_path / "learner"
    folder.mkdir()
    with pytest.raises(GraderError, match="--require-sandbox refuses to grade"):
        grade_paths([folder], tmp_path / "out", GradeOptions(modules=("9",), require_sandbox=True),
                    progress=False, log=lambda _m: None)


@pytest.mark.slow  # the doctor's probes (about 1.6 s); test_the_probe_reports_every_layer_and_the_identity stays fast
def test_doctor_lists_the_layers():
    done = subprocess.run([sys.executable, "-m", "graders.cli", "doctor"], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in sandbox.LAYERS:
        assert name in done.stdout
    assert "worker identity:" in done.stdout


def test_result_arrays_are_checked_and_capped_before_they_are_built():
    arrays = {"a0": np.arange(10.0), "a1": np.array([[True, False]]), "a2": np.array(["ab", "c"]),
              "a3": np.zeros((0, 3), np.float32), "a4": np.array(3, np.int64)}
    packed = bundles.pack_blob(arrays)
    back = bundles.unpack_blob(json.loads(json.dumps(packed)), 1 << 20)
    assert sorted(back) == sorted(arrays)
    for name, array in arrays.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape
        assert np.array_equal(back[name], array)
    with pytest.raises(ValueError, match="larger than"):
        bundles.unpack_blob(packed, 16)
    forged = [
        {**packed, "index": [["a0", "<f8", [1 << 37]]]},  # a terabyte claimed in 80 bytes
        {**packed, "index": packed["index"][:-1]},  # data left over
        {**packed, "index": [["a0", "|O", [1]]]},  # objects (pickles) never
        {**packed, "index": [["a0", "f8,i4", [1]]]},  # structured never
        {**packed, "index": [["a0", "<f8", [-1]]]},
        {**packed, "index": [["a0", "<f8", [True]]]},
        {**packed, "index": [["a0", "no such dtype", [1]]]},
        {**packed, "index": "a0"},
        {**packed, "data": "not base64!"},
        "not a dict",
    ]
    for bad in forged:
        with pytest.raises(ValueError):
            bundles.unpack_blob(bad, 1 << 20)
    with pytest.raises(TypeError):
        bundles.pack_blob({"a0": np.array([object()])})



def test_array_files_round_trip_and_refuse_what_is_not_one(tmp_path):
    """A job's inputs and the reference store's records: the blob's index as a JSON line, then raw bytes."""
    arrays = {"a0": np.arange(10.0), "a1": np.array([[True, False]]), "a2": np.array(["ab", "c"]),
              "a3": np.zeros((0, 3), np.float32), "a4": np.array(3, np.int64)}
    bundles.write_bundle(tmp_path / "ex_0", {"cases": [1]}, arrays)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ex_0.arrays", "ex_0.json"]
    payload, back = bundles.read_bundle(tmp_path / "ex_0")
    assert payload == {"cases": [1]} and sorted(back) == sorted(arrays)
    for name, array in arrays.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape
        assert np.array_equal(back[name], array) and back[name].flags.writeable
    blob = bundles.pack_file(arrays)
    index, _, data = blob.partition(b"\n")
    for bad in (data, b"[not json\n" + data, index + b"\n" + data[:-1], index + b"\n" + data + b"\0",
                b'[["a0","|O",[1]]]\n' + bytes(8), b"[" * 100_000 + b"\n"):
        with pytest.raises(ValueError):
            bundles.unpack_file(bad)
    with pytest.raises(ValueError, match="larger than"):
        bundles.unpack_file(blob, 16)
    bundles.write_bundle(tmp_path / "none", {}, {})
    assert not (tmp_path / "none.arrays").exists() and bundles.read_bundle(tmp_path / "none") == ({}, {})

def test_hide_mode_keeps_only_the_verdict_of_a_hidden_check():
    from graders.text import Text

    raised = CaseOutcome(0, None, CaseResult.RAISED, error={"type": "RuntimeError",
                                                           "message": "the hidden input was [0.25, 0.5]"},
                         named=[("x", Text("hint", "подсказка"))])
    assert _verdict_only(raised, []) == (
        "raised an exception (details withheld: hidden check)\n    misconception 'x': hint")
    wrong = CaseOutcome(0, None, CaseResult.WRONG, expected=1.0, got=2.0, reason="expected 1, got 2")
    assert _verdict_only(wrong, []) == "wrong answer (details withheld: hidden check)"  # not data: dropped
    changed = CaseOutcome(0, None, CaseResult.MODIFIED_INPUT, changed=(1,))
    assert _verdict_only(changed, ["logits", "rewards"]) == \
        "modified its input(s) in place: rewards; inputs must never change"


def test_reserved_output_names_are_renamed():
    assert unique_names(["grades.csv", "GRADES.CSV", "alice", "alice"]) == [
        "grades.csv-submission", "GRADES.CSV-submission", "alice", "alice-2"]


def test_the_tripwire_sees_a_changed_or_new_kit_file(tmp_path):
    for folder in ("solutions", "starter", "misconceptions"):
        (tmp_path / folder).mkdir()
    (tmp_path / "solutions" / "a.py").write_text("x = 1\n")
    kit = Kit(solutions_dir=tmp_path / "solutions", starter_dir=tmp_path / "starter",
              misconceptions_dir=tmp_path / "misconceptions", root=tmp_path)
    before = kit_fingerprint(kit)
    assert str(tmp_path / "solutions" / "a.py") in before
    (tmp_path / "solutions" / "a.py").write_text("x = 2\n")
    (tmp_path / "starter" / "__pycache__").mkdir()
    (tmp_path / "starter" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"poison")
    after = kit_fingerprint(kit)
    changed = {path for path in set(before) | set(after) if before.get(path) != after.get(path)}
    assert changed == {str(tmp_path / "solutions" / "a.py"),
                       str(tmp_path / "starter" / "__pycache__" / "b.cpython-311.pyc")}


@pytest.mark.slow  # a grading batch end to end (about 3 s); hide mode's rules are tested fast in test_engine_cli.py
def test_hide_mode_end_to_end_withholds_what_learner_code_produced_on_hidden_checks(tmp_path):
    stem = "module_9_reference"
    text = DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8") + textwrap.dedent('''

        def k3_kl(*args, **kwargs):
            print("PRINTED-" + repr(args)[:40])
            raise RuntimeError("RAISED-" + repr(args)[:40])
    ''')
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / f"{stem}.py").write_text(text, encoding="utf-8")
    shown = {}
    for hide in (False, True):
        result = grade_paths([folder], tmp_path / f"out{hide}", GradeOptions(modules=("9",), hide_hidden_inputs=hide),
                             progress=False, log=lambda _m: None)
        entry = next(e for e in result.reports[0]["exercises"] if e["id"] == f"{stem}.k3_kl")
        shown[hide] = entry["feedback"]
    assert "(hidden)" in shown[False] and "RAISED-" in shown[False]
    hidden_lines = [line for line in shown[True].splitlines() if "(hidden)" in line]
    assert hidden_lines and all("hidden input" in line for line in hidden_lines)
    assert "details withheld: hidden check" in shown[True]
    body = shown[True].split("\n")
    for index, line in enumerate(body):
        if "(hidden)" in line:
            assert "RAISED-" not in body[index + 1] and "PRINTED-" not in body[index + 1]
    assert "PRINTED-" not in shown[True]


@pytest.mark.slow  # a grading batch with layers switched off (about 1.3 s); the probe is tested fast above
def test_a_machine_without_namespaces_or_landlock_still_grades_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("RL4LLM_NO_NAMESPACES", "1")
    monkeypatch.setenv("RL4LLM_NO_LANDLOCK", "1")
    monkeypatch.setattr(sandbox, "_namespaces_work", lambda: False)
    stem = "module_9_reference"
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / f"{stem}.py").write_text(DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8"), encoding="utf-8")
    notes: list[str] = []
    result = grade_paths([folder], tmp_path / "out", GradeOptions(modules=("9",)), progress=False, log=notes.append)
    report = result.reports[0]
    graded = [e for e in report["exercises"] if e["id"].startswith(f"{stem}.")]
    assert graded and all(e["status"] == "passed" for e in graded), [e["feedback"] for e in graded]
    for layer in ("namespaces", "scratch_quota", "closed_root", "landlock_files"):
        assert report["sandbox"][layer] is False
    # the system-call filter needs no namespace: no new process, and memory binds, all the same
    assert report["sandbox"]["no_capabilities"] and report["sandbox"]["resource_limits"]
    assert report["sandbox"]["syscall_filter"] and report["sandbox"]["process_limit"]
    assert any("sandbox layers missing" in note for note in notes)


@pytest.mark.parametrize("degraded", [False, pytest.param(True, marks=pytest.mark.slow)],  # a batch each (about 1.3 s)
                         ids=["every layer", "no namespaces, no Landlock"])
def test_an_import_inside_an_exercise_is_no_violation(tmp_path, monkeypatch, degraded):
    """Learner code may import a module the worker has not imported yet, after its child is confined:
    the import system must never be sent to list a forbidden folder (the fork server's working folder,
    the submission's) on the way, which the audit hook would record as an attempt at the answers."""
    if degraded:
        monkeypatch.setenv("RL4LLM_NO_NAMESPACES", "1")
        monkeypatch.setenv("RL4LLM_NO_LANDLOCK", "1")
    stem = "module_9_reference"
    reference = DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
    lazy = reference + textwrap.dedent('''

        _k3_kl = k3_kl


        def k3_kl(*args, **kwargs):
            import colorsys  # noqa: F401 - a module no worker imports by itself
            return _k3_kl(*args, **kwargs)
        ''')
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / f"{stem}.py").write_text(lazy, encoding="utf-8")
    result = grade_paths([folder], tmp_path / "out", GradeOptions(modules=("9",)), progress=False,
                         log=lambda _m: None)
    entry = next(e for e in result.reports[0]["exercises"] if e["id"] == f"{stem}.k3_kl")
    assert entry["status"] == "passed", entry["feedback"]


def test_a_folder_nobody_cannot_enter_is_named_with_the_fix():
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp())  # not under pytest's tmp_path: its own parent is closed to others
    try:
        _named_with_the_fix(base)
    finally:
        shutil.rmtree(base)


def _named_with_the_fix(tmp_path):
    closed = tmp_path / "home"
    (closed / "venv" / "bin").mkdir(parents=True)
    python = closed / "venv" / "bin" / "python"
    python.write_text("", encoding="utf-8")
    os.chmod(tmp_path, 0o755)
    os.chmod(closed, 0o700)
    assert sandbox._closed_folder(str(python)) == str(closed)
    advice = sandbox._what_to_do(str(python), "")
    assert f"cannot enter {closed}" in advice and f"chmod o+x {closed}" in advice and "venv" in advice
    os.chmod(closed, 0o711)  # o+x: nobody may pass through
    assert sandbox._closed_folder(str(python)) is None and sandbox._what_to_do(str(python), "") == ""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="workers keep root only under root")
def test_workers_that_keep_root_are_a_missing_layer_and_require_sandbox_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "unprivileged_user", lambda *_: (None, "nobody cannot start it: workers keep root"))
    assert sandbox.unprivileged_layer(sys.executable, "") == (False, "nobody cannot start it: workers keep root")
    folder = tmp_path / "learner"
    folder.mkdir()
    with pytest.raises(GraderError, match="unprivileged_user.*--require-sandbox refuses to grade"):
        grade_paths([folder], tmp_path / "out", GradeOptions(modules=("9",), require_sandbox=True),
                    progress=False, log=lambda _m: None)
    monkeypatch.setattr(sandbox, "unprivileged_user", lambda *_: (sandbox.NOBODY, "runs as nobody"))
    assert sandbox.unprivileged_layer(sys.executable, "") == (True, "")  # the control: nobody can start it
