"""The grading commands end to end: `rl4llm grade` (exit code, files, columns, byte-identical
reports, hidden inputs), torch call modes through the worker, `rl4llm demo`, `rl4llm gradescope`."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from graders.checks import REGISTRY, Case, ExerciseSpec, Harness, LossAndGrads, Tensor, band, spec_for
from graders.cli import main
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.demo import run_demo
from graders.engine.routes.gradescope import build_bundle
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import mutant_source
from graders.text import Text

GRA = "module_9_reference.group_relative_advantages"


def _folder(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def submissions(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("subs")
    reference = DEFAULT_KIT.solution_path("module_9_reference").read_text(encoding="utf-8")
    starter = DEFAULT_KIT.starter_path("module_9_reference").read_text(encoding="utf-8")
    return {
        "correct": _folder(root / "correct", {"module_9_reference.py": reference}),
        "mutant": _folder(root / "mutant", {"module_9_reference.py": mutant_source(GRA, "sample_std")}),
        "starter": _folder(root / "starter", {"module_9_reference.py": starter}),
    }


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_grade_exits_0_and_writes_every_file(submissions, tmp_path, capsys):
    out = tmp_path / "out"
    paths = [str(submissions[name]) for name in ("correct", "mutant", "starter")]
    assert main(["grade", *paths, "--out", str(out), "--module", "9", "--jobs", "2", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "correct" in printed and "score" in printed
    for name in ("correct", "mutant", "starter"):
        assert {"report.json", "results.json", "junit.xml"} <= set(os.listdir(out / name))
    rows = list(csv.reader((out / "grades.csv").open(encoding="utf-8")))
    assert rows[0] == ["submission", "name", *DEFAULT_KIT.exercises(("9",)), "total", "max_total"]
    assert [row[0] for row in rows[1:]] == ["correct", "mutant", "starter"]
    starter = json.loads((out / "starter" / "report.json").read_text(encoding="utf-8"))
    assert starter["score"] == 0
    checked = [e for e in starter["exercises"] if e["id"].startswith("module_9_reference.") and spec_for(e["id"])]
    assert checked and all(e["status"] == "error" and "not implemented yet" in e["feedback"] for e in checked)


@pytest.mark.slow
def test_the_same_submissions_graded_twice_give_identical_bytes(submissions, tmp_path):
    paths = [submissions[name] for name in ("correct", "mutant", "starter")]
    options = GradeOptions(modules=("9",))
    grade_paths(paths, tmp_path / "first", options, jobs=2, progress=False)
    grade_paths(list(reversed(paths)), tmp_path / "second", options, jobs=1, progress=False)
    first, second = _tree(tmp_path / "first"), _tree(tmp_path / "second")
    assert first.keys() == second.keys() and "mutant/report.json" in first
    for name in first:
        if name != "grades.csv":
            assert first[name] == second[name], name
    assert b"/tmp" not in first["mutant/report.json"] and b"sample_std" in first["mutant/report.json"]


def test_a_mutant_loses_points_on_its_exercise_only_and_is_named(submissions, tmp_path):
    result = grade_paths([submissions["mutant"]], tmp_path, GradeOptions(modules=("9",)), progress=False)
    for entry in result.reports[0]["exercises"]:
        if not entry["id"].startswith("module_9_reference.") or spec_for(entry["id"]) is None:
            continue
        if entry["id"] == GRA:
            assert entry["points"] < entry["max_points"] and entry["misconceptions"] == ["sample_std"]
            assert "ddof=1" in entry["feedback"]
        else:
            assert entry["status"] == "passed" and not entry["misconceptions"], entry["id"]


# withheld (True) stays fast; shown (False), what every other grading test sees, is a second batch (about 1.2 s)
@pytest.mark.parametrize("hide", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_hidden_inputs_can_be_withheld(submissions, tmp_path, monkeypatch, hide):
    def cases():
        yield Case(args=(np.array([1.0, 0.0, 0.0]),), label=Text("public one", "открытая проверка"), hidden=False)
        yield Case(args=(np.array([[2.0, 0.0], [1.0, 3.0]]),), label=Text("hidden one", "скрытая проверка"))
    spec_for(GRA)  # import the real checks first, so that they cannot replace this spec later
    monkeypatch.setitem(REGISTRY, GRA, ExerciseSpec(GRA, 1.0, cases))
    options = GradeOptions(modules=("9",), hide_hidden_inputs=hide)
    report = grade_paths([submissions["mutant"]], tmp_path, options, progress=False).reports[0]
    feedback = next(e for e in report["exercises"] if e["id"] == GRA)["feedback"]
    assert "'public one' (public): input rewards=[1., 0., 0.]" in feedback
    assert ("'hidden one' (hidden): input hidden input" in feedback) == hide
    assert ("'hidden one' (hidden): input rewards=[[2., 0.], [1., 3.]]" in feedback) == (not hide)


# ---------------------------------------------------------------------------- torch call modes in the worker
def tiny_grpo_run(fn, learner, starter, updates):
    """Harness: the starter's toy GRPO experiment, shrunk, with ``fn`` as the loss."""
    from dataclasses import replace

    from types import SimpleNamespace

    import numpy as np

    def advantages(rewards, scale=True, *, eps=1e-6):  # enough for this test: no all-equal groups matter
        r = np.asarray(rewards, dtype=np.float64)
        centred = r - r.mean(axis=-1, keepdims=True)
        return centred / (r.std(axis=-1, keepdims=True) + eps) if scale else centred

    formulas = SimpleNamespace(group_relative_advantages=advantages,
                               clip_activity=lambda ratios, advantages, **_: np.zeros(np.shape(ratios), bool),
                               categorical_entropy=lambda p: np.zeros(np.shape(p)[:-1]),
                               pass_at_k_unbiased=lambda n, c, k: 0.0)
    toy = starter("grpo_toy")
    config = replace(toy.profile_config("smoke"), updates=updates, warmup_steps=20, eval_samples=4,
                     num_train_prompts=4, num_heldout_prompts=4, prompt_batch=4, group_size=4)
    out = toy.run_toy_grpo_experiment(config, loss_fn=fn, formulas=formulas)
    return {"loss": [row["loss"] for row in out["history"]], "after": out["after_train"]["accuracy"]}


def _loss_cases():
    rng = np.random.default_rng(0)
    new, old = rng.normal(-1.0, 0.3, (3, 5)), rng.normal(-1.0, 0.3, (3, 5))
    mask = (np.arange(5)[None, :] < np.array([[5], [3], [1]])).astype(float)
    for loss_type in ("grpo", "dr_grpo", "dapo"):
        yield Case(args=(Tensor(new, requires_grad=True), Tensor(old), Tensor([1.0, -0.5, 0.25]), Tensor(mask)),
                   kwargs={"loss_type": loss_type, "eps_low": 0.2, "eps_high": 0.28, "max_length": 6},
                   label=Text(loss_type, loss_type))  # an identifier reads the same in Russian


FLIPPED = '''

_right_grpo_loss = grpo_loss


def grpo_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    return -_right_grpo_loss(new_logprobs, old_logprobs, advantages, mask, loss_type=loss_type, eps_low=eps_low,
                             eps_high=eps_high, max_length=max_length)
'''


@pytest.mark.slow
@pytest.mark.parametrize("call, cases, compare", [
    (LossAndGrads(), _loss_cases, None),
    (Harness(tiny_grpo_run, given=("grpo_toy",)), lambda: [Case(args=(2,), label=Text("two updates", "два обновления"))], None),
    (Harness(tiny_grpo_run, given=("grpo_toy",)), lambda: [Case(args=(1,), label=Text("band", "полоса"))],
     band(lambda expected, got: got["loss"][0] == pytest.approx(expected["loss"][0]), Text("first loss differs", "первое значение функции потерь отличается"))),
])
def test_torch_call_modes_grade_through_the_worker(tmp_path, monkeypatch, call, cases, compare):
    exercise_id = "module_9_training.grpo_loss"
    spec_for(exercise_id)  # import the real checks first, so that they cannot replace this spec later
    monkeypatch.setitem(REGISTRY, exercise_id, ExerciseSpec(exercise_id, 2.0, cases, call, compare=compare,
                                                            timeout=60))
    reference = DEFAULT_KIT.solution_path("module_9_training").read_text(encoding="utf-8")
    good = _folder(tmp_path / "good", {"module_9_training.py": reference})
    flipped = _folder(tmp_path / "flipped", {"module_9_training.py": reference + FLIPPED})
    result = grade_paths([good, flipped], tmp_path / "out", GradeOptions(modules=("9",)), jobs=2, progress=False)
    good_entry, flipped_entry = (next(e for e in r["exercises"] if e["id"] == exercise_id) for r in result.reports)
    assert good_entry["status"] == "passed", good_entry["feedback"]
    assert flipped_entry["status"] == "failed" and flipped_entry["points"] == 0, flipped_entry["feedback"]


# ---------------------------------------------------------------------------- demo and gradescope
@pytest.mark.slow
def test_demo_grades_the_three_examples(tmp_path, capsys):
    assert run_demo(tmp_path, jobs=2) == 0
    printed = capsys.readouterr().out
    assert "correct" in printed and "untouched_starter" in printed and "typical_mistakes" in printed
    reports = {name: json.loads((tmp_path / name / "report.json").read_text(encoding="utf-8"))
               for name in ("correct", "untouched_starter", "typical_mistakes")}
    for entry in reports["correct"]["exercises"]:
        if spec_for(entry["id"]) is not None:
            assert entry["status"] == "passed", (entry["id"], entry["feedback"])
    assert reports["untouched_starter"]["score"] == 0
    mistakes = {e["id"]: e for e in reports["typical_mistakes"]["exercises"]}
    assert "sample_std" in mistakes[GRA]["misconceptions"] and mistakes[GRA]["status"] == "failed"
    assert "sample_std" in printed


@pytest.mark.slow
def test_gradescope_bundle_grades_a_fake_autograder_layout(tmp_path):
    bundle = build_bundle(tmp_path / "autograder.zip")
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        for name in ("setup.sh", "run_autograder"):
            assert (archive.getinfo(name).external_attr >> 16) & 0o111, f"{name} is not executable"
        assert "torch==2.13.0" in archive.read("setup.sh").decode()
        assert {"kit/pyproject.toml", "kit/graders/engine/worker/parent.py", "kit/graders/checks/__init__.py",
                "kit/solutions/module_09/module_9_reference.py"} <= names
        assert not any("__pycache__" in name for name in names)
        root = tmp_path / "autograder"
        archive.extractall(root / "source")
    os.chmod(root / "source" / "run_autograder", 0o755)
    submission = root / "submission" / "nested"
    submission.mkdir(parents=True)
    shutil.copyfile(DEFAULT_KIT.solution_path("module_9_reference"), submission / "module_9_reference.py")
    env = {**os.environ, "RL4LLM_AUTOGRADER_ROOT": str(root), "RL4LLM_PYTHON": shutil.which("python") or "python"}
    env["RL4LLM_PYTHON"] = str(Path(os.sys.executable))
    completed = subprocess.run([str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                               timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert {"score", "tests", "output"} <= set(results)
    tests = {t["name"]: t for t in results["tests"]}
    assert set(tests) == set(DEFAULT_KIT.exercises())
    assert tests[GRA]["status"] == "passed" and tests[GRA]["score"] == tests[GRA]["max_score"]
    assert tests["module_8_reference.optimal_kl_policy"]["status"] == "failed"  # absent file: missing


@pytest.mark.slow
def test_grade_sources_grades_in_memory_mutants_in_one_batch():
    from graders.engine import grade_sources, load_misconceptions

    names = [entry.name for entry in load_misconceptions(GRA)]
    reports = grade_sources({name: {"module_9_reference.py": mutant_source(GRA, name)} for name in names},
                            GradeOptions(modules=("9",)))
    assert sorted(reports) == sorted(names)
    for name, report in reports.items():
        entry = next(e for e in report["exercises"] if e["id"] == GRA)
        assert entry["points"] < entry["max_points"] and name in entry["misconceptions"], (name, entry["feedback"])


@pytest.mark.slow
def test_completed_course_notebooks_are_graded_in_full(tmp_path, capsys):
    """The nbgrader source notebooks (complete solutions) as a submission: every exercise passes.

    Only definitions and UPPER_CASE constants of a notebook are graded (``DIGITS = tuple(...)``
    and ``PROFILES = {...}`` are given code the functions need); its runs are not repeated.
    """
    from graders.paths import ASSIGNMENTS_DIR

    folder = tmp_path / "notebooks"
    folder.mkdir()
    for module in ("module_08", "module_09"):
        for notebook in (ASSIGNMENTS_DIR / "source" / module).glob("*.ipynb"):
            shutil.copyfile(notebook, folder / notebook.name)
    assert main(["grade", str(folder), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    report = json.loads((tmp_path / "out" / "notebooks" / "report.json").read_text(encoding="utf-8"))
    not_passed = [(e["id"], e["feedback"][:200]) for e in report["exercises"] if e["status"] != "passed"]
    assert not not_passed and report["score"] == report["max_score"]
