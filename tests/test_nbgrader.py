"""The nbgrader course in assignments/: the generated notebooks, and the REAL nbgrader run on them.

Fast tests check the committed notebooks (current, valid, one graded cell per
exercise with the spec's points, Russian = English code) and the in-process
hidden checks. The slow part copies the course to a temporary folder and runs
``nbgrader generate_assignment``, ``autograde``, ``generate_feedback`` and
``export`` in subprocesses, with a kernel spec that points at this interpreter
(no user-level kernel, no network):

- English assignments: a complete notebook (the source) gets full marks, the
  untouched release gets 0 on every graded cell, and a notebook with one
  catalogued misconception loses exactly that exercise's cell, whose feedback
  names the misconception;
- Russian assignments: the complete and the untouched notebooks (their code
  cells are the English ones, which a fast test proves).
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders import notebooks
from graders.build import exercises_in
from graders.checks import spec_for
from graders.engine.kit import DEFAULT_KIT
from graders.paths import ASSIGNMENTS_DIR, STARTER_DIR

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

ASSIGNMENTS = {  # assignment -> (folder, language)
    notebooks.assignment_name(folder, language): (folder, language)
    for folder in notebooks.MODULES for language in notebooks.LANGUAGES
}
MISCONCEPTIONS = {  # English assignment -> (exercise id, catalogue entry) put into the misconception notebook
    "module_08": ("module_8_reference.simpo_loss", "simpo_without_length_normalisation"),
    "module_09": ("module_9_reference.group_relative_advantages", "sample_std"),
}
COMPLETE, UNTOUCHED, MISTAKE = "alice", "bob", "carol"


def _committed() -> dict[str, dict]:
    """assignment/notebook stem -> the committed notebook JSON."""
    found = {}
    for assignment, (folder, language) in ASSIGNMENTS.items():
        for stem in notebooks.MODULES[folder][1]:
            path = notebooks.notebook_path(folder, stem, language)
            found[f"{assignment}/{stem}"] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _source(cell) -> str:
    return "".join(cell["source"])


def _points(assignment: str) -> float:
    folder, _ = ASSIGNMENTS[assignment]
    return sum(spec_for(e).points for stem in notebooks.MODULES[folder][1]
               for e in exercises_in(DEFAULT_KIT.solution_path(stem)))


# =============================================================================
# Fast: the committed notebooks
# =============================================================================
def test_committed_notebooks_equal_a_fresh_build():
    for path, text in notebooks.build_outputs().items():
        assert path.exists(), f"missing {path}: run `rl4llm build`"
        assert path.read_text(encoding="utf-8") == text, f"stale {path}: run `rl4llm build`"


def test_notebooks_are_valid_nbformat_45_with_valid_nbgrader_metadata():
    from nbgrader.nbgraderformat import MetadataValidator

    validator = MetadataValidator()
    for path in notebooks.build_outputs():
        text = path.read_text(encoding="utf-8")
        notebook = nbformat.reads(text, as_version=4)
        nbformat.validate(notebook)
        assert (notebook.nbformat, notebook.nbformat_minor) == (4, 5)
        assert nbformat.writes(notebook) + "\n" == text, f"{path} is not in nbformat's own layout"
        validator.validate_nb(notebook)
        assert notebook.metadata.kernelspec.name == "python3"
        for cell in notebook.cells:
            assert cell.get("execution_count") is None and not cell.get("outputs")


def test_every_exercise_is_one_graded_cell_with_the_spec_points():
    committed = _committed()
    for assignment, (folder, _) in ASSIGNMENTS.items():
        for stem in notebooks.MODULES[folder][1]:
            cells = committed[f"{assignment}/{stem}"]["cells"]
            graded = [c for c in cells if c["metadata"]["nbgrader"]["grade"]]
            calls = {}
            for cell in graded:
                tree = ast.parse(_source(cell))
                ids = [node.args[0].value for node in ast.walk(tree) if isinstance(node, ast.Call)
                       and getattr(node.func, "id", "") == "assert_exercise"]
                assert len(ids) == 1, cell["id"]
                calls[ids[0]] = cell["metadata"]["nbgrader"]["points"]
            expected = {e: spec_for(e).points for e in exercises_in(DEFAULT_KIT.solution_path(stem))}
            assert len(calls) == len(graded) == len(expected)
            assert calls == expected, f"{assignment}/{stem}"
            solutions = [c["id"] for c in cells if c["metadata"]["nbgrader"]["solution"]]
            assert all(f"test-{name.split('.')[1]}" in [c["id"] for c in graded] for name in expected)
            assert set(name.split(".")[1] for name in expected) <= set(solutions)


def test_russian_notebooks_have_the_english_code_cells():
    committed = _committed()
    for folder in notebooks.MODULES:
        for stem in notebooks.MODULES[folder][1]:
            english = committed[f"{notebooks.assignment_name(folder, 'en')}/{stem}"]["cells"]
            russian = committed[f"{notebooks.assignment_name(folder, 'ru')}/{stem}"]["cells"]
            assert [(c["id"], c["cell_type"], c["metadata"]) for c in english] == \
                   [(c["id"], c["cell_type"], c["metadata"]) for c in russian]
            for en, ru in zip(english, russian):
                if en["cell_type"] == "code":
                    assert en["source"] == ru["source"], en["id"]
                else:
                    assert en["source"] != ru["source"], en["id"]
            intro = _source(russian[0])
            assert "Как работать" in intro and "Модуль" in intro


def test_cells_cover_the_solution_file_line_by_line():
    for folder, (_, stems) in notebooks.MODULES.items():
        for stem in stems:
            source = DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
            docstring, segments = notebooks.split_source(source)
            cells_text = "\n".join(segment.text for segment in segments)
            body = source.split('"""', 2)[2]  # the file after its module docstring
            assert [line for line in cells_text.splitlines() if line.strip()] == \
                   [line for line in body.splitlines() if line.strip()]
            assert docstring and all(s.text.strip() for s in segments)


# =============================================================================
# Fast: the in-process hidden checks
# =============================================================================
def test_assert_exercise_passes_the_reference_and_names_a_misconception(capsys):
    from graders.engine.inline import assert_exercise, grade_exercise
    from graders.engine.misconceptions import catalogue_files, read_header

    reference = DEFAULT_KIT.reference_module("module_9_reference")
    assert_exercise("module_9_reference.group_relative_advantages", reference.group_relative_advantages)
    assert "group_relative_advantages: 51/51 checks passed." in capsys.readouterr().out

    namespace = dict(vars(reference))
    entry = next(p for p in catalogue_files("module_9_reference.group_relative_advantages")
                 if read_header(p)["NAME"] == "sample_std")
    exec(compile(entry.read_text(encoding="utf-8"), str(entry), "exec"), namespace)  # noqa: S102
    with pytest.raises(AssertionError, match="sample_std"):
        assert_exercise("module_9_reference.group_relative_advantages", namespace["group_relative_advantages"])
    # a dependent exercise is graded with trusted copies of its dependency: the wrong std costs nothing here
    namespace["original_grpo_token_weights"] = _rebind(reference.original_grpo_token_weights, namespace)
    assert_exercise("module_9_reference.original_grpo_token_weights", namespace["original_grpo_token_weights"])

    def wrong_on_batches(rewards, scale=True, *, eps=1e-6, ddof=0):  # right on one group, wrong on several
        result = reference.group_relative_advantages(rewards, scale, eps=eps, ddof=ddof)
        return result if len(getattr(rewards, "shape", (0,))) < 2 else 2 * result

    shown = grade_exercise("module_9_reference.group_relative_advantages", wrong_on_batches)
    withheld = grade_exercise("module_9_reference.group_relative_advantages", wrong_on_batches,
                              hide_hidden_inputs=True)
    assert shown["status"] == withheld["status"] == "failed" and shown["points"] == withheld["points"]
    assert "(hidden): input rewards=" in shown["feedback"] and "hidden input" not in shown["feedback"]
    assert "(hidden): input hidden input" in withheld["feedback"]

    def stub(*args, **kwargs):
        raise NotImplementedError()

    entry = grade_exercise("module_9_training.grpo_loss", stub)
    assert (entry["status"], entry["points"]) == ("error", 0.0) and "not implemented yet" in entry["feedback"]


def _rebind(function, namespace: dict):
    """``function`` with ``namespace`` as its globals (as if defined in that notebook)."""
    import types

    rebound = types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__,
                                 function.__closure__)
    rebound.__kwdefaults__ = function.__kwdefaults__
    return rebound


# =============================================================================
# Slow: the real nbgrader
# =============================================================================
def _environment(root: Path) -> dict:
    """An environment whose only Jupyter kernel is this interpreter, and no user-level Jupyter config."""
    kernels = root / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (rl4llm)", "language": "python"}), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "IPYTHON"))}
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` from PATH
    env.update({"JUPYTER_PATH": str(root / "jupyter"), "JUPYTER_DATA_DIR": str(root / "data"),
                "JUPYTER_CONFIG_DIR": str(root / "config"), "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
                "IPYTHONDIR": str(root / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
                "PATH": bin_dir + os.pathsep + env.get("PATH", ""), "MPLBACKEND": "Agg",
                "PYTHONDONTWRITEBYTECODE": "1"})
    env.pop("RL4LLM_HIDE_HIDDEN_INPUTS", None)
    return env


def _nbgrader(course: Path, env: dict, *args: str, timings: dict) -> str:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                               capture_output=True, text=True, timeout=600)
    timings[" ".join(args)] = round(time.perf_counter() - started, 1)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{output[-4000:]}"
    assert "[ERROR]" not in output and "| ERROR]" not in output, output[-4000:]
    return output


def _with_misconception(notebook: dict, exercise_id: str, name: str) -> dict:
    """The notebook with that exercise's solution cell replaced by the catalogue entry's function."""
    from graders.engine.misconceptions import catalogue_files, read_header

    path = next(p for p in catalogue_files(exercise_id) if read_header(p)["NAME"] == name)
    text = path.read_text(encoding="utf-8")
    function = exercise_id.split(".", 1)[1]
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == function)
    changed = json.loads(json.dumps(notebook))
    (cell,) = [c for c in changed["cells"] if c["id"] == function]
    cell["source"] = ast.get_source_segment(text, node)
    return changed


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Run the whole nbgrader workflow once; the tests below read its results."""
    root = tmp_path_factory.mktemp("nbgrader")
    course = root / "course"
    course.mkdir()
    shutil.copy2(ASSIGNMENTS_DIR / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(ASSIGNMENTS_DIR / "source", course / "source",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = _environment(root)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    for assignment, (folder, language) in ASSIGNMENTS.items():
        _nbgrader(course, env, "generate_assignment", assignment, timings=timings)
        students = [COMPLETE, UNTOUCHED] + ([MISTAKE] if language == "en" else [])
        for student in students:
            target = course / "submitted" / student / assignment
            target.mkdir(parents=True)
            for stem in notebooks.MODULES[folder][1]:
                origin = course / ("release" if student == UNTOUCHED else "source") / assignment / f"{stem}.ipynb"
                notebook = json.loads(origin.read_text(encoding="utf-8"))
                exercise_id, name = MISCONCEPTIONS.get(assignment, ("", ""))
                if student == MISTAKE and exercise_id.startswith(f"{stem}."):
                    notebook = _with_misconception(notebook, exercise_id, name)
                (target / f"{stem}.ipynb").write_text(json.dumps(notebook, indent=1), encoding="utf-8")
        _nbgrader(course, env, "autograde", assignment, timings=timings)
        _nbgrader(course, env, "generate_feedback", assignment, timings=timings)
    _nbgrader(course, env, "export", timings=timings)
    timings["total"] = round(time.perf_counter() - started, 1)
    print(f"\nnbgrader timings (s): {timings}")
    return course


def _cell_grades(course: Path) -> dict[tuple[str, str, str], dict[str, tuple[float, float]]]:
    """(assignment, student, notebook) -> {grade cell id: (score, max score)} from the gradebook."""
    from nbgrader.api import Gradebook

    grades = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in ASSIGNMENTS:
            for submission in gradebook.assignment_submissions(assignment):
                for notebook in submission.notebooks:
                    grades[(assignment, submission.student.id, notebook.name)] = {
                        grade.name: (grade.score, grade.max_score) for grade in notebook.grades}
    return grades


def _normalised_function(tree: ast.AST, name: str) -> str:
    """The AST of a top-level function with every ``raise NotImplementedError(...)`` made argument-free."""
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    for child in ast.walk(node):
        if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call) \
                and getattr(child.exc.func, "id", "") == "NotImplementedError":
            child.exc.args = []
    return ast.dump(node)


def test_release_holds_stubs_and_visible_tests_only(course):
    for assignment, (folder, _) in ASSIGNMENTS.items():
        for stem in notebooks.MODULES[folder][1]:
            release = json.loads((course / "release" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
            text = json.dumps(release)
            for leak in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "assert_exercise", "graders"):
                assert leak not in text, f"{assignment}/{stem}: the release contains {leak!r}"
            starter = ast.parse((STARTER_DIR / folder / f"{stem}.py").read_text(encoding="utf-8"))
            for cell in release["cells"]:
                meta = cell["metadata"]["nbgrader"]
                source = _source(cell)
                if meta["solution"]:  # the stub is exactly the starter's (no solution line left)
                    assert "# YOUR CODE HERE\n" in source and "raise NotImplementedError()" in source
                    tree = ast.parse(source)
                    assert _normalised_function(tree, cell["id"]) == _normalised_function(starter, cell["id"])
                if meta["grade"]:
                    assert "check_close(" in source or "check_raises(" in source, cell["id"]
                    assert meta["locked"] and cell["metadata"].get("editable") is False


def test_complete_notebooks_get_full_marks(course):
    grades = _cell_grades(course)
    for assignment, (folder, _) in ASSIGNMENTS.items():
        for stem in notebooks.MODULES[folder][1]:
            cells = grades[(assignment, COMPLETE, stem)]
            assert cells and all(score == top for score, top in cells.values()), (assignment, stem, cells)


def test_the_untouched_release_scores_zero_on_every_graded_cell(course):
    grades = _cell_grades(course)
    for assignment, (folder, _) in ASSIGNMENTS.items():
        for stem in notebooks.MODULES[folder][1]:
            cells = grades[(assignment, UNTOUCHED, stem)]
            graded = {name: value for name, value in cells.items() if name.startswith("test-")}
            assert len(graded) == len(exercises_in(DEFAULT_KIT.solution_path(stem)))
            assert all(score == 0 for score, _ in graded.values()), (assignment, stem, graded)
            feedback = (course / "feedback" / UNTOUCHED / assignment / f"{stem}.html").read_text(encoding="utf-8")
            assert "not implemented yet" in feedback


def test_a_misconception_loses_exactly_its_cell_and_is_named(course):
    grades = _cell_grades(course)
    for assignment, (exercise_id, name) in MISCONCEPTIONS.items():
        folder, _ = ASSIGNMENTS[assignment]
        stem, function = exercise_id.split(".", 1)
        for notebook in notebooks.MODULES[folder][1]:
            cells = grades[(assignment, MISTAKE, notebook)]
            lost = {cell: value for cell, value in cells.items() if value[0] != value[1]}
            if notebook == stem:
                assert lost == {f"test-{function}": (0.0, spec_for(exercise_id).points)}, lost
                feedback = (course / "feedback" / MISTAKE / assignment / f"{notebook}.html").read_text(
                    encoding="utf-8")
                assert name in feedback and "misconception" in feedback
            else:
                assert not lost, (notebook, lost)


def test_export_writes_the_expected_scores(course):
    with open(course / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {(row["assignment"], row["student_id"]): row for row in csv.DictReader(handle)}
    for assignment, (_, language) in ASSIGNMENTS.items():
        total = _points(assignment)
        assert float(rows[(assignment, COMPLETE)]["score"]) == total
        assert float(rows[(assignment, COMPLETE)]["max_score"]) == total
        assert float(rows[(assignment, UNTOUCHED)]["score"]) == 0.0
        if language == "en":
            exercise_id, _ = MISCONCEPTIONS[assignment]
            assert float(rows[(assignment, MISTAKE)]["score"]) == total - spec_for(exercise_id).points
    for (assignment, student), row in rows.items():
        submitted = (course / "submitted" / student / assignment).is_dir()
        assert (course / "feedback" / student / assignment).is_dir() == submitted
        if not submitted:  # a student who did not take this language version
            assert float(row["score"]) == 0.0
