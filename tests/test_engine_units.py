"""Unit tests of the engine's parts: codec, comparison, zip safety, notebooks, fence, checks API,
misconception catalogue, call modes and report formats. No worker process is started here."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
import textwrap
import types
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from graders.checks import Case, Harness, LossAndGrads, Tensor, exercise, hypothesis_cases, spec_for, st
from graders.engine.judging import calls
from graders.engine.outputs import reports
from graders.engine.sandbox import layers as sandbox
from graders.engine.values import bundles, codec
from graders.engine.values.compare import describe, mismatch
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.engine.judging.references import ReferenceBook
from graders.loader import load_module
from graders.paths import REPO_ROOT
from graders.engine.judging.misconceptions import (CatalogueError, catalogue_file, load_misconceptions, mutant_source,
                                            read_entries)
from graders.engine.intake.submission import MAX_MEMBERS, UnsafeSubmission, discover, learner_source, notebook_definitions, read_directory, read_zip
from graders.engine.values.protocol import Submission

GRA = "module_9_reference.group_relative_advantages"


# ---------------------------------------------------------------------------- codec
@dataclasses.dataclass
class _Pair:
    left: float
    right: list


@pytest.mark.parametrize("value", [
    np.array([0.5, -1.25], dtype=np.float32), [0.5, -1.25], (0.5, -1.25), torch.tensor([0.5, -1.25]),
    np.array([0.5, -1.25]),
])
def test_float32_lists_tuples_and_tensors_normalise_alike(value):
    got = codec.normalise(value)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert mismatch(np.array([0.5, -1.25]), got, rtol=1e-9, atol=0) is None


def test_scalars_dataclasses_ragged_lists_and_objects():
    assert codec.normalise(np.float32(0.25)) == 0.25 and isinstance(codec.normalise(np.int64(3)), float)
    assert codec.normalise(True) == 1.0 and codec.normalise(Fraction(1, 4)) == 0.25
    assert codec.normalise(torch.tensor(2.0)) == 2.0 and codec.normalise(np.array(7)) == 7.0
    ragged = codec.normalise([np.ones(2), np.ones(3)])
    assert isinstance(ragged, list) and [a.shape for a in ragged] == [(2,), (3,)]
    assert codec.normalise(_Pair(1, [1, 2])) == {"left": 1.0, "right": pytest.approx(np.array([1.0, 2.0]))}
    assert codec.normalise(object()) == codec.Opaque("object")
    assert codec.normalise({2: "b", 1: None}) == {"1": None, "2": "b"}


def test_inputs_round_trip_with_exact_types(tmp_path):
    value = (3, 2.5, float("nan"), "s", None, True, np.arange(3, dtype=np.int32), np.float32(1.5),
             {"k": [1, (2, 3)]}, Tensor([[1.0, 2.0]], "float32", requires_grad=True))
    encoder = codec.Encoder()
    data = encoder.encode(value)
    bundles.write_bundle(tmp_path / "x", {"value": data}, encoder.arrays)
    payload, arrays = bundles.read_bundle(tmp_path / "x")
    back = codec.decode(payload["value"], arrays, make_tensor=codec.make_torch_tensor)
    assert back[0] == 3 and type(back[0]) is int and back[1] == 2.5 and np.isnan(back[2])
    assert back[3:6] == ("s", None, True)
    assert back[6].dtype == np.int32 and back[7].dtype == np.float32 and back[7] == 1.5
    assert back[8] == {"k": [1, (2, 3)]}
    assert back[9].dtype == torch.float32 and back[9].requires_grad


def test_object_arrays_never_travel():
    with pytest.raises(TypeError):
        codec.Encoder().encode(np.array([object()], dtype=object))
    with pytest.raises(TypeError):
        codec.Encoder().encode({1: "not a string key"})


# ---------------------------------------------------------------------------- comparison
def test_mismatch_messages_say_where_and_how():
    assert mismatch(1.0, 1.0 + 1e-7, rtol=1e-6, atol=0) is None
    assert "expected 1, got 2" in mismatch(1.0, 2.0, rtol=1e-6, atol=0)
    assert "shape (3,)" in mismatch(np.zeros(2), np.zeros(3), rtol=1e-6, atol=0)
    message = mismatch(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]), rtol=1e-6, atol=0)
    assert "1 of 3 entries differ; first at index [1]" in message
    assert mismatch(np.array([np.nan, np.inf]), np.array([np.nan, np.inf]), rtol=1e-6, atol=0) is None
    assert "missing key 'b'" in mismatch({"a": 1.0, "b": 2.0}, {"a": 1.0}, rtol=1e-6, atol=0)
    assert mismatch({"a": 1.0}, {"a": 1.0, "extra": "ignored"}, rtol=1e-6, atol=0) is None
    assert "expected a number, got a string" in mismatch(1.0, "1", rtol=1e-6, atol=0)
    assert "at [1]" in mismatch([np.ones(1), np.ones(2)], [np.ones(1), np.zeros(2)], rtol=1e-6, atol=0)


def test_describe_is_short_and_deterministic():
    assert describe(np.arange(100.0)).startswith("[0, 1, 2, ...") or "..." in describe(np.arange(100.0))
    assert len(describe("x" * 10_000)) <= 160
    assert describe(np.zeros((2, 0))) == "[] (shape (2, 0))"
    assert describe([1.5, "a", None]) == "[1.5, 'a', None]"


# ---------------------------------------------------------------------------- submissions
def _zip(path: Path, members) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info, data)
    return path


@pytest.mark.parametrize("name, reason", [
    ("../escape.py", "escapes the folder"),
    ("/etc/abs.py", "absolute path"),
    ("a\\..\\..\\win.py", "escapes the folder"),
    ("C:/win.py", "absolute path"),
])
def test_unsafe_zip_member_names_are_refused(tmp_path, name, reason):
    path = _zip(tmp_path / "s.zip", [("ok/module_9_reference.py", b"x = 1\n"), (name, b"y = 2\n")])
    with pytest.raises(UnsafeSubmission, match=reason):
        read_zip(path)


def test_zip_links_counts_and_sizes_are_capped(tmp_path, monkeypatch):
    link = zipfile.ZipInfo("module_9_reference.py")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with pytest.raises(UnsafeSubmission, match="symbolic link"):
        read_zip(_zip(tmp_path / "l.zip", [(link, b"/work/main/solutions/x.py")]))
    many = [(f"f{i}.txt", b"") for i in range(MAX_MEMBERS + 1)]
    with pytest.raises(UnsafeSubmission, match="members"):
        read_zip(_zip(tmp_path / "m.zip", many))
    with pytest.raises(UnsafeSubmission, match="decompressed"):
        read_zip(_zip(tmp_path / "t.zip", [("a.bin", b"\0" * 600), ("b.bin", b"\0" * 600)]), max_total_bytes=1000)
    with pytest.raises(UnsafeSubmission, match="not a readable zip"):
        (tmp_path / "bad.zip").write_bytes(b"not a zip")
        read_zip(tmp_path / "bad.zip")


def test_directories_refuse_links_and_prefer_the_shallowest_copy(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "module_9_reference.py").write_text("deep = 1\n")
    (tmp_path / "deep" / "module_9_reference.py").write_text("shallow = 1\n")
    (tmp_path / "module_9_training.py").symlink_to(DEFAULT_KIT.solution_path("module_9_training"))
    with pytest.raises(UnsafeSubmission, match="module_9_training.py' is a symbolic link"):
        read_directory(tmp_path)
    refused = discover(tmp_path, {"module_9_reference": ["f"], "module_9_training": ["g"]})
    assert "symbolic link" in refused.problem and not refused.raw
    (tmp_path / "module_9_training.py").unlink()
    found = discover(tmp_path, {"module_9_reference": ["f"], "module_9_training": ["g"]})
    assert found.where == {"module_9_reference": "deep/module_9_reference.py"}
    assert "found 2 copies" in found.notes["module_9_reference"][0]


def test_a_misspelt_learner_file_is_pointed_out_but_another_learner_file_is_not(tmp_path):
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "Module9_Reference.py").write_text("x = 1\n")
    (tmp_path / "module_8_reference.py").write_text("y = 1\n")
    (tmp_path / "notes.py").write_text("z = 1\n")
    found = discover(tmp_path, {"module_9_reference": ["f"], "module_9_training": ["g"],
                                "module_8_reference": ["h"]})
    assert found.where == {"module_8_reference": "module_8_reference.py"}
    (note,) = found.notes["module_9_reference"]
    assert "hw/Module9_Reference.py" in note and "rename it to module_9_reference.py" in note
    assert "module_9_training" not in found.notes  # nothing resembles it


def test_learner_source_reports_encoding_syntax_and_size(tmp_path):
    sub = Submission("s", tmp_path, raw={"a": b"x = 1\n", "b": b"caf\xe9 = 1\n", "c": b"def f(:\n", "d": b""})
    assert learner_source(sub, "a") == ("x = 1\n", None)
    assert "not valid UTF-8 (byte 3" in learner_source(sub, "b")[1]
    assert "syntax error at line 1" in learner_source(sub, "c")[1]
    assert learner_source(sub, "missing") == (None, None)


def test_a_notebook_stands_in_with_its_definitions_only(tmp_path):
    cells = [
        {"cell_type": "markdown", "source": "# title"},
        {"cell_type": "code", "source": ["import numpy as np\n", "from module_9_reference import x\n", "%matplotlib inline\n"]},
        {"cell_type": "code", "source": "G = 4\nrun_experiment()\ndef informative_group_probability(p, group_size):\n    return 0.5\n"},
        {"cell_type": "code", "source": "this is not python"},
    ]
    data = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    source = notebook_definitions(data)
    assert "import numpy as np" in source and "G = 4" in source and "def informative_group_probability" in source
    assert "run_experiment" not in source and "module_9_reference" not in source
    (tmp_path / "work.ipynb").write_bytes(data)
    found = discover(tmp_path, {"module_9_reference": ["informative_group_probability"]})
    assert "informative_group_probability" in found.sources["module_9_reference"]
    assert "notebook work.ipynb" in found.notes["module_9_reference"][0]


# ---------------------------------------------------------------------------- the fence
def test_the_fence_refuses_forbidden_paths_modules_and_processes(tmp_path):
    secret, own = tmp_path / "solutions", tmp_path / "sub"
    secret.mkdir()
    own.mkdir()
    fence = sandbox.Fence([secret, tmp_path], ["solutions", "graders.checks"], allowed_paths=[own])
    fence.armed = True
    with pytest.raises(PermissionError):
        fence.hook("open", (str(secret / "module_9_reference.py"), "r", 0))
    fence.hook("open", (str(own / "file.py"), "r", 0))  # allowed beats forbidden
    with pytest.raises(PermissionError):
        fence.hook("import", ("graders.checks.module_9_reference", None, [], [], []))
    fence.hook("import", ("graders.engine.values.codec", None, [], [], []))
    with pytest.raises(PermissionError):
        fence.hook("subprocess.Popen", ("cat", ["cat"], None, None))
    assert len(fence.take_violations()) == 3 and fence.take_violations() == []


def test_nobody_is_used_only_when_it_can_start_the_interpreter(tmp_path):
    user, reason = sandbox.unprivileged_user(str(tmp_path / "no-such-python"), "", str(tmp_path))
    assert user is None and reason


def test_nobody_is_probed_once_a_process_while_it_runs_and_again_after_each_failure(tmp_path, monkeypatch):
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("the probe runs only as root")
    monkeypatch.delenv("RL4LLM_KEEP_ROOT", raising=False)
    probed = []

    def probe(args, **_kwargs):  # "good": nobody imports the worker; "bad": it cannot
        probed.append(args[0])
        return subprocess.CompletedProcess(args, 0 if args[0] == "good" else 1, "", "ImportError: no numpy")

    monkeypatch.setattr(sandbox.subprocess, "run", probe)
    monkeypatch.setattr(sandbox, "_NOBODY_RUNS", set())
    for _ in range(3):
        assert sandbox.unprivileged_user("good", "kit", str(tmp_path / "a"))[0] == sandbox.NOBODY
        user, reason = sandbox.unprivileged_user("bad", "kit", str(tmp_path / "a"))
        assert user is None and "no numpy" in reason
    assert probed == ["good", "bad", "bad", "bad"]
    for python, pythonpath, cwd in (("good", "other kit", tmp_path / "a"), ("good", "kit", tmp_path / "b" / "c")):
        assert sandbox.unprivileged_user(python, pythonpath, str(cwd))[0] == sandbox.NOBODY
    assert probed == ["good", "bad", "bad", "bad", "good", "good"]  # another path or folder: probed again


# ---------------------------------------------------------------------------- the checks API
def test_hypothesis_cases_are_the_same_every_time():
    strategy = st.lists(st.floats(-1, 1, allow_subnormal=False), min_size=1, max_size=4)
    first = hypothesis_cases(strategy, count=8, seed=5, to_case=lambda xs: Case(args=(xs,)))
    second = hypothesis_cases(strategy, count=8, seed=5, to_case=lambda xs: Case(args=(xs,)))
    assert [c.args for c in first] == [c.args for c in second] and len(first) == 8
    assert first[0].label == "property case #1"


def test_specs_are_registered_and_validated():
    spec = spec_for(GRA)
    assert spec is not None and spec.points > 0 and spec.cases() and spec.stem == "module_9_reference"
    assert spec_for("module_9_reference.no_such_function") is None
    with pytest.raises(ValueError):
        exercise("no_dot_here", points=1)
    with pytest.raises(ValueError):
        exercise("a.b", points=0)


# ---------------------------------------------------------------------------- call modes
def _toy_loss(values, weights):
    return (values * weights).sum() ** 2, weights * 2


def _toy_harness(fn, learner, starter, scale):
    return {"value": float(fn(scale)), "module": learner.__name__}


def test_loss_and_grads_mode_returns_value_and_named_gradients():
    args = (codec.make_torch_tensor(codec.TensorSpec(np.array([1.0, 2.0]), "float64", True)),)
    kwargs = {"weights": codec.make_torch_tensor(codec.TensorSpec(np.array([3.0, 4.0]), "float64", False))}
    out = calls.call_case(LossAndGrads(output=0).describe(), _toy_loss, None, None, args, kwargs)
    assert set(out["grad"]) == {"arg0"}
    assert np.allclose(out["grad"]["arg0"].numpy(), 2 * 11.0 * np.array([3.0, 4.0]))
    constant = calls.call_case(LossAndGrads().describe(), lambda v: torch.tensor(0.0), None, None, args, {})
    assert constant["grad"] == {"arg0": None}  # an all-zero loss has no gradient: it fails, never crashes


def test_harness_mode_ships_source_text():
    call = Harness(_toy_harness).describe()
    assert call["kind"] == "harness" and "def _toy_harness" in call["source"]
    module = types.SimpleNamespace(__name__="learner")
    assert calls.call_case(call, lambda s: 2 * s, module, None, (3.0,), {}) == {"value": 6.0, "module": "learner"}


def test_in_place_changes_are_detected():
    array, tensor = np.array([1.0, np.nan]), torch.tensor([1.0, 2.0])
    before = calls.snapshot(((array, [tensor]), {}))
    array[0] = 5.0
    assert calls.modified_inputs(before[0], {}, (array, [tensor]), {}) == [0]
    assert calls.modified_inputs(*calls.snapshot(((np.array([np.nan]),), {})), (np.array([np.nan]),), {}) == []


# ---------------------------------------------------------------------------- the catalogue
def test_misconceptions_load_in_the_reference_namespace_and_differ_from_it():
    entries = {e.name: e for e in load_misconceptions(GRA)}
    assert {"sample_std", "batch_statistics"} <= set(entries) and list(entries) == sorted(entries)
    reference_module = DEFAULT_KIT.reference_module("module_9_reference")
    reference = reference_module.group_relative_advantages
    rewards = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
    for entry in (entries["sample_std"], entries["batch_statistics"]):
        assert entry.hint and not np.allclose(entry.function(rewards), reference(rewards))
        assert entry.module.group_relative_advantages is entry.function  # only this function is wrong
        assert entry.module.leave_one_out_baseline is reference_module.leave_one_out_baseline
    assert np.allclose(reference(rewards)[0], [np.sqrt(3), -1 / np.sqrt(3), -1 / np.sqrt(3), -1 / np.sqrt(3)], atol=1e-5)
    swapped = next(e for e in load_misconceptions("module_9_reference.clipped_surrogate_terms") if e.name == "eps_swapped")
    ratios, advantages = np.array([0.5, 1.5, 0.5, 1.5]), np.array([1.0, 1.0, -1.0, -1.0])
    assert np.array_equal(swapped.function(ratios, advantages, 0.1, 0.3),  # _right: the reference, eps swapped
                          reference_module.clipped_surrogate_terms(ratios, advantages, 0.3, 0.1))


def test_mutant_source_is_the_reference_with_the_entry_applied(tmp_path):
    text = mutant_source(GRA, "sample_std")
    reference = DEFAULT_KIT.solution_path("module_9_reference").read_text(encoding="utf-8")
    assert text.startswith(reference.rstrip("\n")) and "\ndef _right(rewards, scale: bool = True" in text
    assert text.rstrip().endswith('def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):\n'
                                  '    """looks like sample std (ddof=1); the lecture uses population std (ddof=0)\n\n'
                                  '    ru: похоже на выборочное std (ddof=1); в лекции используется std генеральной '
                                  'совокупности (ddof=0)\n    """\n'
                                  '    return _advantages(rewards, scale, eps, 1)')
    (tmp_path / "module_9_reference.py").write_text(text, encoding="utf-8")
    mutant = load_module(tmp_path / "module_9_reference.py", "_test_mutant_module_9_reference")
    assert np.allclose(mutant.group_relative_advantages(np.array([1.0, 0.0])), [1 / np.sqrt(2), -1 / np.sqrt(2)],
                       atol=1e-5)
    assert np.allclose(mutant._right(np.array([1.0, 0.0])), [1.0, -1.0], atol=1e-5)
    with pytest.raises(KeyError):
        mutant_source(GRA, "no_such_name")


CATALOGUE_ENTRY = '''"""A catalogue file for k3_kl."""


def k1(logprobs, ref_logprobs):
    """looks like k1,
    not k3

    ru: похоже на k1,
    а не на k3"""
    return -_right(logprobs, ref_logprobs)
'''
MALFORMED = {  # what is wrong -> (the file, the error it must give)
    "no docstring": ("def k1(logprobs, ref_logprobs):\n    return 0\n", ":1: entry k1 has no docstring"),
    "a constant": ('NAME = "k1"\n' + CATALOGUE_ENTRY, ":1: only entries and helpers (def) may stand"),
    "twice": (CATALOGUE_ENTRY + "\n\n" + CATALOGUE_ENTRY.split("\n", 3)[3], ":13: k1 is defined twice"),
    "signature": (CATALOGUE_ENTRY.replace("k1(logprobs, ref_logprobs)", "k1(logprobs)"), ":4: entry k1(logprobs) does"),
    "shadowing helper": (CATALOGUE_ENTRY + "\n\ndef _float_array(values):\n    return values\n",
                         ":13: helper _float_array would replace module_9_reference's own _float_array"),
    "reserved name": (CATALOGUE_ENTRY.replace("def k1(", "def _right("), ":4: _right is reserved"),
    "calls itself": (CATALOGUE_ENTRY.replace("-_right(", "-k3_kl("), ":10: k1 uses k3_kl, which the entry replaces"),
    "no Russian hint": (CATALOGUE_ENTRY.replace("\n\n    ru: похоже на k1,\n    а не на k3", ""),
                        ":5: entry k1: no ru hint: add a paragraph ru: ... to the docstring"),
    "an unknown language": (CATALOGUE_ENTRY.replace("ru: похоже", "de: sieht"), ":5: entry k1: de: the course speaks"),
    "ru twice": (CATALOGUE_ENTRY.replace("а не на k3", "а не на k3\n\n    ru: ещё раз"), ":5: entry k1: two ru: hints"),
    "no language code": (CATALOGUE_ENTRY.replace("ru: похоже", "похоже"),
                         ":5: entry k1: a paragraph after the English hint must open with a language code"),
    "syntax": ("def k1(:\n", ":1: syntax error"),
    "not snake_case": (CATALOGUE_ENTRY.replace("def k1(", "def K1("), ":4: entry K1: a NAME is snake_case"),
}


def test_catalogue_format(tmp_path):
    kit = dataclasses.replace(DEFAULT_KIT, misconceptions_dir=tmp_path)
    path = catalogue_file("module_9_reference.k3_kl", kit)
    path.parent.mkdir()
    path.write_text(CATALOGUE_ENTRY, encoding="utf-8")
    (entry,) = read_entries(path)
    assert (entry.exercise, entry.name, entry.hint) == ("module_9_reference.k3_kl", "k1", "looks like k1, not k3")
    assert (entry.hint.in_("en"), entry.hint.in_("ru")) == ("looks like k1, not k3", "похоже на k1, а не на k3")
    (loaded,) = load_misconceptions("module_9_reference.k3_kl", kit)
    logprobs, ref_logprobs = np.array([0.0, -1.0]), np.array([-1.0, 0.0])
    right = DEFAULT_KIT.reference_module("module_9_reference").k3_kl
    assert np.array_equal(loaded.function(logprobs, ref_logprobs), -right(logprobs, ref_logprobs))


@pytest.mark.parametrize("problem", MALFORMED)
def test_a_malformed_catalogue_file_is_refused_naming_the_file_and_the_problem(tmp_path, problem):
    kit = dataclasses.replace(DEFAULT_KIT, misconceptions_dir=tmp_path)
    path = catalogue_file("module_9_reference.k3_kl", kit)
    path.parent.mkdir()
    text, message = MALFORMED[problem]
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogueError) as raised:
        load_misconceptions("module_9_reference.k3_kl", kit)
    assert str(raised.value).startswith(str(path) + message), str(raised.value)


# ---------------------------------------------------------------------------- report formats
REPORT = {"submission": "s", "score": 1.5, "max_score": 4.0, "exercises": [
    {"id": "m.f", "points": 1.5, "max_points": 2.0, "status": "failed", "feedback": "1/2 checks passed.\n- x",
     "misconceptions": ["sample_std"]},
    {"id": "m.g", "points": 0.0, "max_points": 1.0, "status": "timeout", "feedback": "timeout: ...", "misconceptions": []},
    {"id": "m.h", "points": 0.0, "max_points": 1.0, "status": "passed", "feedback": "", "misconceptions": []},
]}


def test_gradescope_results_follow_its_schema():
    results = reports.gradescope_results(REPORT)
    assert results["score"] == 1.5 and len(results["tests"]) == 3
    for test in results["tests"]:
        assert set(test) == {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed")
    json.dumps(results)


def test_junit_has_one_testcase_per_exercise_with_failure_or_error():
    root = ET.fromstring(reports.junit_xml(REPORT))
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["f", "g", "h"]
    assert cases[0].find("failure") is not None and cases[1].find("error") is not None
    assert cases[2].find("failure") is None and cases[2].find("error") is None


def test_grades_csv_has_a_column_per_exercise():
    text = reports.grades_csv([REPORT], ["m.f", "m.g", "m.h"])
    assert text.splitlines() == ["submission,name,m.f,m.g,m.h,total,max_total", "s,s,1.5,0,0,1.5,4"]


def test_feedback_has_no_addresses_or_temporary_paths():
    from graders.engine.outputs.feedback import deterministic

    text = deterministic("TypeError: <object object at 0x7f12ab34cd56> at /tmp/rl4llm-grade-ab_12/sub_3/work/x.txt")
    assert text == "TypeError: <object object at 0x...> at <submission>/work/x.txt"


def test_a_notebook_keeps_constants_but_not_its_runs():
    cell = ("DIGITS = tuple(str(d) for d in range(10))\nBOS, EOS = make(), make()\nLIMIT = 3\n"
            "experiment = run_toy_grpo_experiment()\nconfig.lr = 3\nlower = dict()\n")
    source = notebook_definitions(json.dumps({"cells": [{"cell_type": "code", "source": cell}]}).encode())
    assert "DIGITS = " in source and "BOS, EOS = " in source and "LIMIT = 3" in source
    assert "experiment" not in source and "config.lr" not in source and "lower" not in source


@pytest.mark.slow  # notebooks read from parallel threads (about 1.3 s); not a risk of everyday changes
def test_notebooks_are_read_safely_from_parallel_batch_threads():
    """CPython 3.11's AST conversion is not thread-safe (SystemError "AST constructor recursion depth
    mismatch"): batch threads reading notebooks at once must still all succeed."""
    from concurrent.futures import ThreadPoolExecutor

    cell = "\n".join(f"def f{i}(x):\n    return [[[[x + {i}]]]]\n" for i in range(100))
    data = json.dumps({"cells": [{"cell_type": "code", "source": cell}] * 3}).encode()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: notebook_definitions(data), range(16)))
    assert len(set(results)) == 1 and "def f99" in results[0]


def test_property_cases_depend_on_the_seed_alone(tmp_path):
    """Hypothesis harvests constants from every loaded local module; the kit's cases must not see them."""
    values = ", ".join(str(i / 7) for i in range(1, 400))
    (tmp_path / "many_constants.py").write_text(f"VALUES = [{values}]\n", encoding="utf-8")
    script = textwrap.dedent("""
        import hashlib, sys
        if sys.argv[1] == "with":
            import many_constants  # noqa: F401 - a local module full of float constants
        from graders.checks import Case, hypothesis_cases, st
        cases = hypothesis_cases(st.lists(st.floats(-10, 10), min_size=1, max_size=4), count=40, seed=5,
                                 to_case=lambda x: Case(args=(x,)))
        print(hashlib.sha256(repr([c.args for c in cases]).encode()).hexdigest())
    """)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO_ROOT}"}
    digests = {mode: subprocess.run([sys.executable, "-c", script, mode], cwd=tmp_path, env=env, text=True,
                                    capture_output=True, check=True, timeout=120).stdout.strip()
               for mode in ("with", "without")}
    assert digests["with"] == digests["without"]


@pytest.mark.parametrize("got", [0.0, 1e308, -np.inf, np.nan])
def test_an_infinite_expected_value_matches_only_itself(got):
    assert mismatch(np.inf, float(got), rtol=1e-5, atol=1e-6) is not None
    assert mismatch(np.array([1.0, np.inf]), np.array([1.0, got]), rtol=1e-5, atol=1e-6) is not None
    assert mismatch(np.array([1.0, np.inf]), np.array([1.0, np.inf]), rtol=1e-5, atol=1e-6) is None


def test_the_batches_of_one_kit_share_its_reference_book():
    kit = Kit()
    assert ReferenceBook.of(kit) is ReferenceBook.of(kit)
    assert ReferenceBook.of(Kit()) is not ReferenceBook.of(kit)  # another kit object: its own modules, its own book


def test_a_torch_another_thread_is_still_importing_is_not_used(monkeypatch):
    # the grader judges submissions in threads; one may be importing torch (its module already in
    # sys.modules, half initialised, without Tensor yet) while another compares inputs
    half = types.ModuleType("torch")
    half.__spec__ = types.SimpleNamespace(_initializing=True)
    monkeypatch.setitem(sys.modules, "torch", half)
    assert codec.torch_module() is None
    assert calls.snapshot([1.0, 2.0]) == [1.0, 2.0] and calls.modified_inputs((np.ones(2),), {}, (np.ones(2),), {}) == []
    half.__spec__._initializing = False
    assert codec.torch_module() is half
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert codec.torch_module() is torch
