"""A toy check's measurement runs once per distinct value (graders/engine/judging/judge.py, ``_scored``).

The grader measures the parameters a toy run trained with its own copy of the toy
(graders/checks/toy_scores.py): torch in the grading process, about 2 s of CPU for
its import alone. The measurement is a function of the value, so the reference's
outcome keeps the digest of the value it measured (``Outcome.measured_from``,
:func:`graders.engine.values.codec.digest`), and a learner's value equal to it bit
for bit measures as the reference's without measuring again:

- the digest is the value's bits: a round trip through the worker's encoding keeps
  it, one ulp, a dtype, a shape, a key or a container changes it;
- a value equal to the measured one is not measured again; any other value is, and
  an outcome without a digest always is;
- a warm batch of correct toy runs never imports torch in the grading process, at
  full marks (a subprocess: the test process has torch already).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

from graders.engine.judging.judge import _scored
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.references import Outcome
from graders.engine.values import codec
from graders.paths import REPO_ROOT

TRAINED = {"epochs": [{"w": np.linspace(-1.0, 1.0, 6).reshape(2, 3)}], "final": {"w": np.arange(6.0).reshape(2, 3)}}


def _round_trip(value):
    encoder = codec.Encoder()
    return codec.decode(json.loads(json.dumps(encoder.encode(value))), encoder.arrays)


def _changed(path: str):
    value = {"epochs": [dict(TRAINED["epochs"][0])], "final": dict(TRAINED["final"])}
    w = value["final"]["w"]
    if path == "one ulp":
        w = w.copy()
        w[1, 2] = np.nextafter(w[1, 2], np.inf)
    elif path == "dtype":
        w = w.astype(np.float32)
    elif path == "shape":
        w = w.reshape(3, 2)
    elif path == "key":
        value["final"] = {"v": w}
    elif path == "container":
        value["epochs"] = tuple(value["epochs"])
    value["final"] = value["final"] if path == "key" else {"w": w}
    return value


def test_the_digest_is_the_values_bits():
    assert codec.digest(_round_trip(TRAINED)) == codec.digest(TRAINED)
    for path in ("one ulp", "dtype", "shape", "key", "container"):
        assert codec.digest(_changed(path)) != codec.digest(TRAINED), path
    with pytest.raises(TypeError):
        codec.digest({"w": object()})


def test_a_value_of_another_layout_is_told_apart_before_its_bytes_are_hashed(monkeypatch):
    """A learner's reply of the wrong shape or dtype (up to the door's 48 MiB of arrays) costs the grader no
    hashing: the layout part of the digest differs, and no array's bytes are read."""
    found = codec.digest(TRAINED)
    assert codec.has_digest(_round_trip(TRAINED), found)
    assert not codec.has_digest(_changed("one ulp"), found)  # same layout: the bytes decide

    def no_bytes(array):
        raise AssertionError("an array's bytes were read for a value of another layout")

    monkeypatch.setattr(codec, "_array_bytes", no_bytes)
    for path in ("dtype", "shape", "key", "container"):
        assert not codec.has_digest(_changed(path), found), path
    huge = {**TRAINED, "final": {"w": np.zeros((2048, 2048), dtype=np.float64)}}
    assert not codec.has_digest(huge, found)


def _spec(calls: list):
    def score(value, case, kit):
        calls.append(value)
        return {"accuracy": 0.25}

    return types.SimpleNamespace(call=types.SimpleNamespace(score=score))


def test_a_value_equal_to_the_measured_one_is_not_measured_again():
    calls: list = []
    spec, ctx = _spec(calls), types.SimpleNamespace(book=types.SimpleNamespace(kit=DEFAULT_KIT))
    want = Outcome(value={"accuracy": 1.0}, measured_from=codec.digest(TRAINED))
    assert _scored(spec, _round_trip(TRAINED), None, ctx, want) == {"accuracy": 1.0} and calls == []
    for path in ("one ulp", "dtype", "shape", "key", "container"):
        assert _scored(spec, _changed(path), None, ctx, want) == {"accuracy": 0.25}, path
    assert len(calls) == 5
    unmeasured = Outcome(value={"accuracy": 1.0})  # no digest (a record without one): always measured
    assert _scored(spec, _round_trip(TRAINED), None, ctx, unmeasured) == {"accuracy": 0.25} and len(calls) == 6
    assert _scored(spec, {"w": object()}, None, ctx, want) == {"accuracy": 0.25}  # no digest: measured, never raised


GRADE_AND_TELL = """
import runpy, sys
sys.argv = ["graders.cli", *sys.argv[1:]]
try:
    runpy.run_module("graders.cli", run_name="__main__")
finally:
    print("torch imported:", "torch" in sys.modules, flush=True)
"""


@pytest.mark.slow  # two graded batches of both training files in subprocesses (about 10 s)
def test_a_warm_batch_of_correct_toy_runs_never_imports_torch_in_the_grader(tmp_path):
    folder = tmp_path / "correct"
    folder.mkdir()
    for stem in ("module_8_training", "module_9_training"):
        (folder / f"{stem}.py").write_text(DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8"),
                                           encoding="utf-8")
    env = {**os.environ, "RL4LLM_CACHE": str(tmp_path / "store")}  # the test environment: no bytecode written
    runs = []
    for name in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-c", GRADE_AND_TELL, "grade", str(folder), "--out",
                               str(tmp_path / name), "--quiet", "--no-class-report"], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        report = json.loads((tmp_path / name / "correct" / "report.json").read_text(encoding="utf-8"))
        runs.append((done.stdout, report))
    assert "torch imported: True" in runs[0][0]  # cold: the reference's toy runs are measured here
    assert "torch imported: False" in runs[1][0]  # warm: equal to what was measured, bit for bit
    (_, cold), (_, warm) = runs
    assert warm["score"] == cold["score"] > 0
    graded = [e["status"] for e in warm["exercises"] if e["id"].split(".")[0] in ("module_8_training", "module_9_training")]
    assert graded and set(graded) == {"passed"}, graded
    assert [e["status"] for e in warm["exercises"]] == [e["status"] for e in cold["exercises"]]
