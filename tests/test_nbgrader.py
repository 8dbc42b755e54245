"""The nbgrader course in assignments/: the generated notebooks, the engine's scoring, and the REAL nbgrader.

Fast tests check the committed notebooks (current, valid, one graded cell per
exercise with the spec's points, Russian = English code), the course
configuration (``Execute`` replaced by the kit's ``EngineScores``), that the
verdict outputs make nbgrader read exactly the engine's points, and the
in-process checks of ``graders.engine.routes.inline``.

The slow part copies the course to a temporary folder and runs ``nbgrader
generate_assignment``, ``autograde``, ``generate_feedback`` and ``export`` in
subprocesses (a kernel spec pointing at this interpreter, no user-level
Jupyter config), with these submissions:

- alice: the complete source notebooks (every assignment) -- full marks;
- bob: the untouched release (every assignment) -- the placebo, 0 everywhere;
- carol: one catalogued misconception (English) -- loses points on that
  exercise only, and the feedback names it;
- dave: ``fixed_tolerance`` in ``verify_numeric_answer`` (module_09, graded
  with the default, hidden inputs withheld, and module_09_ru with
  ``RL4LLM_SHOW_HIDDEN_INPUTS=1``) -- hidden inputs reach the feedback only there;
- frank (module_09): the complete notebooks written as Jupyter runs them --
  ``from __future__ import annotations`` and a line magic heading a solution
  cell, a cell with an import and a shell line, a comment-only cell, a
  ``%%bash`` cell reading the solutions, and one cell with a syntax error --
  full marks, and that cell is one WARNING line of the autograde log; his
  notebooks are then touched and a second ``autograde`` names the
  resubmission it skips;

and module_09 (English) gets the hostile notebooks:

- mallory: complete, but two exercises left as stubs, and cells that
  monkey-patch the kit (``assert_exercise``, ``grade_exercise``, ``assess``,
  the scoring module, nbgrader's ``determine_grade``, IPython's traceback
  display) from the kernel and, at definition time, in whatever process loads
  the notebook;
- eve: the release, with forged test cells (a printed "passed" verdict and a
  numeric last expression, outputs pre-filled, cells unlocked, a decoy copy
  of a test cell, another test cell deleted);
- trudy: the release, with code that writes the gradebook, the course folder
  and another student's results at import, at call time and at top level
  (graded in a separate ``autograde --student trudy`` run).

Every score in the gradebook, the feedback and the export is compared with
``grade_paths`` on the same notebooks.
"""

from __future__ import annotations

import ast
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graders import course as registry  # `course` is the fixture of the course folder
from graders.build import notebooks
from graders.build.notebooks.cells import split_source
from graders.build.notebooks.checks import hidden_exercise
from graders.checks import spec_for
from graders.engine.judging.kit import DEFAULT_KIT
from graders.fences import exercises_in, find_fences
from graders.paths import ASSIGNMENTS_DIR, STARTER_DIR

pytestmark = pytest.mark.slow  # the real nbgrader workflow: minutes

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from graders.engine.nbgrader import course_guard, scoring as nbgrader_scoring  # noqa: E402 - needs nbgrader
from graders.text import table_in

ASSIGNMENTS = {  # assignment -> (folder, language)
    notebooks.assignment_name(folder, language): (folder, language)
    for folder in registry.FOLDERS for language in registry.LANGUAGES
}
MISCONCEPTIONS = {  # English assignment -> (exercise id, catalogue entry) put into carol's notebook
    "module_08": ("module_8_reference.simpo_loss", "simpo_without_length_normalisation"),
    "module_09": ("module_9_reference.group_relative_advantages", "sample_std"),
}
TOLERANCES = ("module_9_reference.verify_numeric_answer", "fixed_tolerance")  # dave's mistake: a hidden check fails alone
HOSTILE_ASSIGNMENT = "module_09"  # the assignment the hostile notebooks are submitted to
ATTACKED = {  # exercises mallory leaves as stubs and claims by patching the kit
    HOSTILE_ASSIGNMENT: ("module_9_reference.group_relative_advantages", "module_9_training.grpo_loss"),
}
HIDE_ASSIGNMENT = "module_09"  # autograded with the default (hidden inputs withheld); the others show them
COMPLETE, UNTOUCHED, MISTAKE, TOLERANCE, JUPYTER = "alice", "bob", "carol", "dave", "frank"
PATCHER, FAKER, TAMPERER = "mallory", "eve", "trudy"
DECOY = "DO_NOT_DELETE.txt"


def _committed() -> dict[str, dict]:
    """assignment/notebook stem -> the committed notebook JSON."""
    found = {}
    for assignment, (folder, language) in ASSIGNMENTS.items():
        for stem in registry.module(folder).files:
            path = notebooks.notebook_path(folder, stem, language)
            found[f"{assignment}/{stem}"] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _source(cell) -> str:
    return "".join(cell["source"])


def _points(assignment: str) -> float:
    folder, _ = ASSIGNMENTS[assignment]
    return sum(spec_for(e).points for stem in registry.module(folder).files
               for e in exercises_in(DEFAULT_KIT.solution_path(stem)))


def _module(assignment: str) -> str:
    return registry.module(ASSIGNMENTS[assignment][0]).number


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
        if path.suffix != ".ipynb":  # a given module beside the notebooks
            continue
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
        for stem in registry.module(folder).files:
            cells = committed[f"{assignment}/{stem}"]["cells"]
            graded = [c for c in cells if c["metadata"]["nbgrader"]["grade"]]
            calls = {}
            for cell in graded:
                grade_id = cell["metadata"]["nbgrader"]["grade_id"]
                named = hidden_exercise(_source(cell))  # what the hidden part says
                assert named == nbgrader_scoring.exercise_for(stem, grade_id), (assignment, grade_id)
                calls[named] = cell["metadata"]["nbgrader"]["points"]
            expected = {e: spec_for(e).points for e in exercises_in(DEFAULT_KIT.solution_path(stem))}
            assert len(calls) == len(graded) == len(expected)
            assert calls == expected, f"{assignment}/{stem}"
            solutions = [c["id"] for c in cells if c["metadata"]["nbgrader"]["solution"]]
            assert all(f"test-{name.split('.')[1]}" in [c["id"] for c in graded] for name in expected)
            assert set(name.split(".")[1] for name in expected) <= set(solutions)


def test_the_hidden_part_refuses_to_score_in_a_kernel():
    """A test cell executed in a kernel (nbgrader without the course config) fails: it never scores there."""
    committed = _committed()
    cell = next(c for c in committed["module_09/module_9_reference"]["cells"] if c["id"] == "test-clip_activity")
    hidden = _source(cell).partition("### BEGIN HIDDEN TESTS")[2].partition("### END HIDDEN TESTS")[0]
    with pytest.raises(RuntimeError, match="module_9_reference.clip_activity is scored by the kit's engine"):
        exec(compile(hidden, "<hidden>", "exec"), {})  # noqa: S102 - the kit's own generated code


CYRILLIC = re.compile("[а-яА-ЯёЁ]")


def _test_code(cell) -> list[str]:
    """A test cell's code without its comments (in the notebook's language)."""
    lines = []
    for line in _source(cell).splitlines():
        line = re.sub(r"(with checks\.use\('\w+'\)):  # .*$", r"\1:", line)  # the label of a dependency's case
        if not line.lstrip().startswith("#") or line.lstrip().startswith("###"):
            lines.append(line)
    return lines


def test_russian_notebooks_have_the_english_code_cells():
    committed = _committed()
    for folder in registry.FOLDERS:
        for stem in registry.module(folder).files:
            english = committed[f"{notebooks.assignment_name(folder, 'en')}/{stem}"]["cells"]
            russian = committed[f"{notebooks.assignment_name(folder, 'ru')}/{stem}"]["cells"]
            assert [(c["id"], c["cell_type"], c["metadata"]) for c in english] == \
                   [(c["id"], c["cell_type"], c["metadata"]) for c in russian]
            for en, ru in zip(english, russian):
                if en["cell_type"] == "code" and en["id"].startswith("test-"):  # comments in the notebook's language
                    assert _test_code(en) == _test_code(ru), en["id"]
                    assert CYRILLIC.search(_source(ru).splitlines()[0]), ru["id"]
                    assert not CYRILLIC.search(_source(en)), en["id"]
                elif en["id"] == "helpers":  # the same but for the language of its messages
                    assert _source(en).replace("_LANGUAGE = 'en'", "_LANGUAGE = 'ru'") == _source(ru)
                elif en["cell_type"] == "code":
                    assert en["source"] == ru["source"], en["id"]
                else:
                    assert en["source"] != ru["source"], en["id"]
            intro = _source(russian[0])
            assert "Как работать" in intro and "Модуль" in intro and "Как проверяется ноутбук" in intro
            assert "How your notebook is graded" in _source(english[0])


def test_cells_cover_the_solution_file_line_by_line():
    for stem in registry.STEMS:
        source = DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
        docstring, segments = split_source(source)
        cells_text = "\n".join(segment.text for segment in segments)
        body = source.split('"""', 2)[2]  # the file after its module docstring
        assert [line for line in cells_text.splitlines() if line.strip()] == \
               [line for line in body.splitlines() if line.strip()]
        assert docstring and all(s.text.strip() for s in segments)


RUN_CELLS = r"""
import json, sys
notebook = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
errors = {}
for cell in notebook["cells"]:
    if cell["cell_type"] != "code":
        continue
    source = "".join(cell["source"])
    head, _, rest = source.partition("### BEGIN HIDDEN TESTS")
    source = head + rest.partition("### END HIDDEN TESTS")[2]
    try:
        exec(compile(source, cell["id"], "exec"), namespace)
    except Exception as error:
        errors[cell["id"]] = f"{type(error).__name__}: {error}"
print("CELL ERRORS " + json.dumps(errors))
"""


def _run_cells(notebook_path: Path) -> dict[str, str]:
    """Every code cell of a notebook run in order in a fresh interpreter (hidden parts left out, as in the
    release), in the notebook's folder: cell id -> the error it raised."""
    completed = subprocess.run([sys.executable, "-c", RUN_CELLS, str(notebook_path)], cwd=notebook_path.parent,
                               env={**os.environ, "MPLBACKEND": "Agg"}, capture_output=True, text=True, timeout=300)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("CELL ERRORS ")]
    assert completed.returncode == 0 and lines, completed.stderr[-3000:]
    return json.loads(lines[-1].removeprefix("CELL ERRORS "))


def test_the_visible_checks_pass_on_the_reference_and_name_a_wrong_answer_as_the_engine_does(tmp_path):
    for stem in registry.STEMS:  # the English notebooks: the other languages have the same code cells
        assert _run_cells(notebooks.notebook_path(registry.module_of(stem).folder, stem, "en")) == {}, stem
    source = notebooks.notebook_path("module_09", "module_9_reference", "en")
    notebook = json.loads(source.read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if c["id"] == "group_relative_advantages")
    cell["source"] += ["\n\n_right = group_relative_advantages\n\n\n",
                       "def group_relative_advantages(*args, **kwargs):\n",
                       "    return 2.0 * np.asarray(_right(*args, **kwargs))\n"]
    (tmp_path / source.name).write_text(json.dumps(notebook), encoding="utf-8")
    errors = _run_cells(tmp_path / source.name)
    assert list(errors) == ["test-group_relative_advantages"], errors
    assert re.fullmatch(r"AssertionError: \d+ of \d+ entries differ; first at index \[[\d, ]+\]: expected .*, got .* "
                        r"\(rtol .*, atol .*\)", errors["test-group_relative_advantages"]), errors


# =============================================================================
# Fast: the course configuration and the verdict outputs
# =============================================================================
def test_the_course_config_replaces_execute_with_the_engine():
    from nbgrader.preprocessors import Execute, OverwriteCells, SaveAutoGrades
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ASSIGNMENTS_DIR)).load_config()
    chain = config.Autograde.autograde_preprocessors
    assert nbgrader_scoring.EngineScores in chain and Execute not in chain
    assert chain.index(nbgrader_scoring.EngineScores) < chain.index(SaveAutoGrades)
    assert config.OverwriteCells.add_missing_cells is True
    sanitizing = config.Autograde.sanitize_preprocessors
    assert nbgrader_scoring.RestoreCells in sanitizing and OverwriteCells not in sanitizing


def _grade_cell(points: float, outputs: list[dict]):
    from nbformat.notebooknode import from_dict

    return from_dict({"cell_type": "code", "execution_count": None, "id": "test-x", "source": "",
                      "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True,
                                                "grade_id": "test-x", "points": points, "schema_version": 3}},
                      "outputs": outputs})


@pytest.mark.parametrize("language", sorted(nbgrader_scoring.TEXT))
def test_verdict_outputs_make_nbgrader_record_the_engine_points(language):
    from nbgrader.utils import determine_grade

    def entry(points, status, feedback="1/3 checks passed.", misconceptions=()):
        return {"id": "m.f", "points": points, "max_points": 3.0, "status": status, "feedback": feedback,
                "misconceptions": list(misconceptions)}

    for engine, cell_points, expected in ((entry(3.0, "passed"), 3, 3.0), (entry(1.25, "failed"), 3, 1.25),
                                          (entry(0.0, "error"), 3, 0.0), (entry(0.0, "timeout"), 3, 0.0),
                                          (entry(1.5, "failed", misconceptions=["x"]), 6, 3.0), (None, 3, 0.0)):
        score, outputs = nbgrader_scoring.verdict_outputs(engine, "m.f", cell_points, language, hide=True)
        cell = _grade_cell(cell_points, outputs)
        nbformat.validate(nbformat.v4.new_notebook(cells=[cell]))
        assert score == expected and determine_grade(cell) == (expected, cell_points), (engine, outputs)
        text = json.dumps(outputs, ensure_ascii=False)
        if engine is not None:
            assert table_in(nbgrader_scoring.TEXT, language)["how"] in text and table_in(nbgrader_scoring.TEXT, language)["hidden"] in text
    stub = {**entry(0.0, "error", feedback="0/3 checks passed.\nnot implemented yet: m.f"), "not_implemented": True}
    _, outputs = nbgrader_scoring.verdict_outputs(stub, "m.f", 3, language, hide=False)
    assert table_in(nbgrader_scoring.TEXT, language)["status"]["not_implemented"] in outputs[0]["evalue"]
    started = entry(0.0, "error", feedback="0/3 checks passed.\nnot implemented yet: m.f")  # the code, not the text
    _, outputs = nbgrader_scoring.verdict_outputs(started, "m.f", 3, language, hide=False)
    assert table_in(nbgrader_scoring.TEXT, language)["status"]["not_implemented"] not in outputs[0]["evalue"]
    english, russian = table_in(nbgrader_scoring.TEXT, "en"), table_in(nbgrader_scoring.TEXT, "ru")
    assert english.keys() == russian.keys() and english["status"].keys() == russian["status"].keys()


def test_the_engine_leaves_nothing_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    text = notebooks.notebook_path("module_09", "module_9_reference", "en").read_text(encoding="utf-8")
    entries = nbgrader_scoring.grade_notebook(text, "module_9_reference", hide_hidden_inputs=False)
    assert set(entries) == set(exercises_in(DEFAULT_KIT.solution_path("module_9_reference")))
    assert all(e["status"] == "passed" and e["points"] == e["max_points"] for e in entries.values()), entries
    assert os.getcwd() == str(tmp_path) and list(tmp_path.iterdir()) == []
    assert "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ


def test_the_guard_restores_the_gradebook_and_refuses(tmp_path):
    (tmp_path / "gradebook.db").write_bytes(b"the gradebook")
    (tmp_path / "kept.txt").write_text("x")
    guard = course_guard._Guard(tmp_path, f"sqlite:///{tmp_path / 'gradebook.db'}")
    guard.check()  # nothing changed
    (tmp_path / "gradebook.db").write_bytes(b"forged")
    (tmp_path / "gradebook.db-journal").write_bytes(b"hot journal")
    (tmp_path / "new.txt").write_text("x")
    with pytest.raises(course_guard.CourseTampered, match="new.txt"):
        guard.check()
    assert (tmp_path / "gradebook.db").read_bytes() == b"the gradebook"
    assert not (tmp_path / "gradebook.db-journal").exists()


# =============================================================================
# Fast: the in-process checks (graders.engine.routes.inline; no longer nbgrader's scoring path)
# =============================================================================
def test_assert_exercise_passes_the_reference_and_names_a_misconception(capsys):
    from graders.engine.routes.inline import assert_exercise, grade_exercise
    from graders.engine.judging.misconceptions import entry_source

    reference = DEFAULT_KIT.reference_module("module_9_reference")
    assert_exercise("module_9_reference.group_relative_advantages", reference.group_relative_advantages)
    count = len(spec_for("module_9_reference.group_relative_advantages").cases())
    assert f"group_relative_advantages: {count}/{count} checks passed." in capsys.readouterr().out

    namespace = dict(vars(reference))
    exec(entry_source("module_9_reference.group_relative_advantages", "sample_std"), namespace)  # noqa: S102
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
# Slow: the real nbgrader -- the submissions
# =============================================================================
def _code_cell(cell_id: str, text: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": cell_id, "metadata": {}, "outputs": [],
            "source": text}


def _insert_after_helpers(notebook: dict, cells: list[dict]) -> dict:
    """``cells`` right after the helpers cell (after the file's imports, so ``from __future__`` stays first)."""
    changed = json.loads(json.dumps(notebook))
    at = next(i for i, c in enumerate(changed["cells"]) if c["id"] == "helpers") + 1
    changed["cells"][at:at] = cells
    return changed


def _with_misconception(notebook: dict, exercise_id: str, name: str) -> dict:
    """The notebook with that exercise's solution cell replaced by the catalogue entry's definitions."""
    from graders.engine.judging.misconceptions import entry_source

    function = exercise_id.split(".", 1)[1]
    changed = json.loads(json.dumps(notebook))
    (cell,) = [c for c in changed["cells"] if c["id"] == function]
    cell["source"] = entry_source(exercise_id, name)  # _right (the reference, renamed), then the wrong definition
    return changed


def _with_stubs(notebook: dict, release: dict, functions: list[str]) -> dict:
    """The notebook with those functions' solution cells as released (stubs)."""
    changed = json.loads(json.dumps(notebook))
    stubs = {c["id"]: c["source"] for c in release["cells"]}
    for cell in changed["cells"]:
        if cell["id"] in functions:
            cell["source"] = stubs[cell["id"]]
    return changed


KERNEL_PATCHES = '''\
# Patch the kit and nbgrader from the kernel (what defeated the old in-kernel hidden tests).
try:
    import graders.engine.routes.inline as _inline
    _inline.assert_exercise = lambda *args, **kwargs: None
    _inline.grade_exercise = lambda exercise_id, *args, **kwargs: {
        "id": exercise_id, "points": 99.0, "max_points": 99.0, "status": "passed", "feedback": "",
        "misconceptions": []}
    import graders.engine.outputs.feedback as _feedback
    _feedback.assess = lambda exercise, *args, **kwargs: {
        "id": exercise.id, "points": exercise.max_points, "max_points": exercise.max_points,
        "status": "passed", "feedback": "", "misconceptions": []}
    import graders.engine.nbgrader.scoring as _scoring
    _scoring.grade_notebook = lambda *args, **kwargs: {}
    _scoring.verdict_outputs = lambda entry, exercise_id, points, *args, **kwargs: (points, [])
    import nbgrader.utils as _nbgrader_utils
    _nbgrader_utils.determine_grade = lambda cell, log=None: (cell.metadata.nbgrader["points"],) * 2
except Exception:
    pass
try:  # no traceback, no error output: a raising test cell would look like a passing one
    get_ipython().showtraceback = lambda *args, **kwargs: None
    get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)
except NameError:
    pass
'''

DEFINITION_PATCHES = '''\
def _patch_the_kit():
    """Replace the kit's and nbgrader's judging functions in whatever process loads this notebook."""
    import sys
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("graders", "nbgrader")):
            continue
        for attribute in ("assert_exercise", "grade_exercise", "assess", "determine_grade", "get_partial_grade",
                          "grade_notebook", "verdict_outputs", "judge_inputs", "compare"):
            try:
                if hasattr(module, attribute):
                    setattr(module, attribute, lambda *args, **kwargs: None)
            except Exception:
                pass
    return None


def _at_definition_time(_patched=_patch_the_kit()):
    return _patched
'''


def _patcher(notebook: dict, release: dict, attacked: list[str]) -> dict:
    """Mallory: complete except the attacked exercises (stubs), plus the kit-patching cells."""
    changed = _with_stubs(notebook, release, attacked)
    return _insert_after_helpers(changed, [_code_cell("hostile-kernel", KERNEL_PATCHES),
                                           _code_cell("hostile-definitions", DEFINITION_PATCHES)])


def _faker(release: dict, stem: str) -> dict:
    """Eve: the release with forged test cells (fake verdicts, numeric last expressions, outputs, unlocked),
    a decoy copy of one and another deleted."""
    changed = json.loads(json.dumps(release))
    forged = []
    for cell in changed["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if not meta.get("grade"):
            if meta.get("solution"):  # a fake verdict printed from the solution cell too
                cell["source"] = "print('all checks passed')\n" + _source(cell)
            continue
        exercise_id = f"{stem}.{meta['grade_id'][len('test-'):]}"
        points = meta["points"]
        cell["source"] = f"print({exercise_id + ': 99/99 checks passed.'!r})\n{float(points)!r}"
        cell["metadata"]["nbgrader"]["locked"] = False
        cell["metadata"].pop("editable", None)
        cell["execution_count"] = 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": f"{exercise_id}: 99/99 checks passed.\n"},
                           {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                            "data": {"text/plain": repr(float(points))}}]
        forged.append(cell)
    decoy = json.loads(json.dumps(forged[0]))  # an earlier copy of the first test cell: nbgrader keeps the last
    decoy["id"] = "decoy-" + decoy["id"]
    at = changed["cells"].index(forged[0])
    changed["cells"].insert(at, decoy)
    if len(forged) > 1:  # a deleted test cell: nbgrader puts it back (add_missing_cells), the engine scores it
        changed["cells"].remove(forged[-1])
    changed["cells"].append(_code_cell("hostile-last", f"{sum(float(c['metadata']['nbgrader']['points']) for c in forged)!r}"))
    return changed


def _tamperer(release: dict, course: Path, stem: str, victim: Path) -> dict:
    """Trudy: the release plus code that writes the gradebook and the course folder (import, call, top level)."""
    first = exercises_in(DEFAULT_KIT.solution_path(stem))[0].split(".", 1)[1]
    code = f'''\
import os as _os
COURSE_FOLDER = {str(course)!r}
VICTIM = {str(victim)!r}


def _tamper(marker):
    """Write the gradebook, the course folder and another student's results; delete a file."""
    targets = [(_os.path.join(COURSE_FOLDER, "gradebook.db"), "r+b", b"SQLite format 3 tampered"),
               (_os.path.join(COURSE_FOLDER, marker), "w", "tampered"),
               (_os.path.join(COURSE_FOLDER, "nbgrader_config.py"), "a", "\\n# tampered\\n"),
               (VICTIM, "a", "tampered")]
    for path, mode, data in targets:
        try:
            with open(path, mode) as handle:
                handle.write(data)
        except Exception:
            pass
    try:
        _os.remove(_os.path.join(COURSE_FOLDER, {DECOY!r}))
    except Exception:
        pass
    return marker


def _at_import(_done=_tamper("PWNED-at-import")):
    return _done


def {first}(*args, **kwargs):
    _tamper("PWNED-at-call")
    raise NotImplementedError()


_tamper("PWNED-in-the-kernel")
'''
    changed = json.loads(json.dumps(release))
    changed["cells"].append(_code_cell("hostile-tamper", code))
    return changed


def test_the_kernel_patches_defeat_in_process_checks(monkeypatch):
    """Positive control for mallory: run in the checking process, her cell turns a stub into a pass."""
    import graders.engine.outputs.feedback as feedback
    import graders.engine.routes.inline as inline
    import nbgrader.utils as nbgrader_utils

    for module, name in ((inline, "assert_exercise"), (inline, "grade_exercise"), (feedback, "assess"),
                         (nbgrader_scoring, "grade_notebook"), (nbgrader_scoring, "verdict_outputs"),
                         (nbgrader_utils, "determine_grade")):
        monkeypatch.setattr(module, name, getattr(module, name))  # put back after the test

    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="not implemented yet"):
        inline.assert_exercise("module_9_reference.clip_activity", stub)
    exec(compile(KERNEL_PATCHES, "<mallory>", "exec"), {})  # noqa: S102 - the test's own hostile cell
    assert inline.assert_exercise("module_9_reference.clip_activity", stub) is None


def test_the_tamperer_writes_when_nothing_confines_it(tmp_path):
    """Positive control for trudy: run unconfined, her cell changes every file it aims at."""
    course = tmp_path / "course"
    course.mkdir()
    files = {"gradebook.db": b"SQLite format 3\x00" + bytes(64), "nbgrader_config.py": b"c = 1\n", DECOY: b"x"}
    for name, data in files.items():
        (course / name).write_bytes(data)
    victim = tmp_path / "victim.ipynb"
    victim.write_text("{}", encoding="utf-8")
    base = json.loads(notebooks.notebook_path("module_09", "module_9_reference", "en").read_text(encoding="utf-8"))
    cell = _tamperer(base, course, "module_9_reference", victim)["cells"][-1]
    namespace: dict = {}
    exec(compile(_source(cell), "<trudy>", "exec"), namespace)  # noqa: S102 - the test's own hostile cell
    with pytest.raises(NotImplementedError):
        namespace[exercises_in(DEFAULT_KIT.solution_path("module_9_reference"))[0].split(".", 1)[1]]()
    assert {p.name for p in course.glob("PWNED*")} == {"PWNED-at-import", "PWNED-at-call", "PWNED-in-the-kernel"}
    assert (course / "gradebook.db").read_bytes() != files["gradebook.db"]
    assert (course / "nbgrader_config.py").read_bytes() != files["nbgrader_config.py"]
    assert not (course / DECOY).exists() and victim.read_text(encoding="utf-8") != "{}"


# =============================================================================
# Slow: the real nbgrader -- running it
# =============================================================================
def _environment(root: Path) -> dict:
    """An environment whose only Jupyter kernel is this interpreter, and no user-level Jupyter config."""
    kernels = root / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (rl4llm)", "language": "python"}), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "IPYTHON"))}
    # nbformat imports jsonschema, whose format checkers import rfc3987_syntax when it is installed, which builds
    # a grammar at import: 1.2 s of every nbgrader process's 2 s import (issue 30), for IRI formats nbformat's
    # schemas never name. Here it is not found, as where it is not installed.
    shims = root / "shims"
    shims.mkdir(exist_ok=True)
    (shims / "rfc3987_syntax.py").write_text('raise ImportError("not needed by nbformat")\n', encoding="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shims), env.get("PYTHONPATH")]))
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` from PATH
    env.update({"JUPYTER_PATH": str(root / "jupyter"), "JUPYTER_DATA_DIR": str(root / "data"),
                "JUPYTER_CONFIG_DIR": str(root / "config"), "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
                "IPYTHONDIR": str(root / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
                "PATH": bin_dir + os.pathsep + env.get("PATH", ""), "MPLBACKEND": "Agg",
                "PYTHONDONTWRITEBYTECODE": "1"})
    for name in ("RL4LLM_HIDE_HIDDEN_INPUTS", "RL4LLM_SHOW_HIDDEN_INPUTS", "RL4LLM_NBGRADER_VERBOSE"):
        env.pop(name, None)
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    return env


def _run_nbgrader(course: Path, env: dict, *args: str, timings: dict) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                               capture_output=True, text=True, timeout=600)
    timings[" ".join(args)] = round(time.perf_counter() - started, 1)
    return completed


def failure_text(output: str, log: Path) -> str:
    """What a failed nbgrader run said: the whole log kept in ``log``, and shown here its first error (the
    traceback that explains it, which a tail alone cut off once) and its last lines."""
    log.write_text(output, encoding="utf-8")
    marks = [i for i in (output.find("Traceback"), output.find("[ERROR]"), output.find("| ERROR]")) if i >= 0]
    first = output[min(marks):min(marks) + 4000] if marks else ""
    return f"(whole log: {log})\n--- first error ---\n{first}\n--- last lines ---\n{output[-2000:]}"


def _nbgrader(course: Path, env: dict, *args: str, timings: dict) -> str:
    completed = _run_nbgrader(course, env, *args, timings=timings)
    output = completed.stdout + completed.stderr
    failed = completed.returncode != 0 or "[ERROR]" in output or "| ERROR]" in output
    if failed:
        log = course.parent / f"nbgrader-{'-'.join(args).replace('/', '_')[:80]}.log"
        pytest.fail(f"nbgrader {' '.join(args)} failed (exit {completed.returncode}):\n{failure_text(output, log)}")
    assert "IPKernelApp" not in output, "a kernel was started: student code ran during autograde"
    return output


def _students(assignment: str) -> list[str]:
    _, language = ASSIGNMENTS[assignment]
    found = [COMPLETE, UNTOUCHED]
    if language == "en":
        found.append(MISTAKE)
    if assignment == HOSTILE_ASSIGNMENT:
        found += [PATCHER, FAKER, TAMPERER, JUPYTER]
    if assignment.startswith("module_09"):
        found.append(TOLERANCE)
    return found


def _submission(course: Path, student: str, assignment: str, stem: str) -> dict:
    source = json.loads((course / "source" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
    release = json.loads((course / "release" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
    mine = [e.split(".", 1)[1] for e in ATTACKED.get(assignment, ()) if e.startswith(f"{stem}.")]
    if student == COMPLETE:
        return source
    if student == UNTOUCHED:
        return release
    if student == MISTAKE:
        exercise_id, name = MISCONCEPTIONS[assignment]
        return _with_misconception(source, exercise_id, name) if exercise_id.startswith(f"{stem}.") else source
    if student == TOLERANCE:
        exercise_id, name = TOLERANCES
        return _with_misconception(source, exercise_id, name) if exercise_id.startswith(f"{stem}.") else source
    if student == PATCHER:
        return _patcher(source, release, mine)
    if student == JUPYTER:
        return _jupyter_style(source)
    if student == FAKER:
        return _faker(release, stem)
    if student == TAMPERER:
        victim = course / "autograded" / COMPLETE / assignment / f"{stem}.ipynb"
        return _tamperer(release, course, stem, victim)
    raise AssertionError(student)


BROKEN_CELL = "def broken(:\n    pass\n"


def _jupyter_style(source: dict) -> dict:
    """The complete notebook as a learner's Jupyter runs it: a future import and a magic heading the first
    solution cell, shell and comment-only cells, a %%bash cell reading the solutions, one broken cell (cell 5)."""
    notebook = json.loads(json.dumps(source))
    cells = notebook["cells"]

    def code(text: str, number: int) -> dict:
        return {"cell_type": "code", "execution_count": None, "id": f"frank-{number}", "metadata": {},
                "outputs": [], "source": text}

    first = next(cell for cell in cells if cell["metadata"].get("nbgrader", {}).get("solution"))
    first["source"] = "from __future__ import annotations\n%matplotlib inline\n" + _source(first)
    cells.insert(1, code("import numpy as np\n!echo setting up\n", 1))
    cells.insert(2, code("# only comments in this cell\n", 2))
    cells.insert(4, code(BROKEN_CELL, 3))
    solutions = DEFAULT_KIT.solution_path("module_9_reference")
    cells.append(code(f"%%bash\ncat {solutions}\n", 4))
    return notebook


def _snapshot(course: Path) -> dict:
    """What trudy must not change: other students' results and grades, the config, the decoy."""
    files = {}
    for folder in ("autograded", "feedback"):
        for path in sorted((course / folder).rglob("*")) if (course / folder).exists() else []:
            if path.is_file() and f"/{TAMPERER}/" not in str(path):
                files[str(path.relative_to(course))] = path.read_bytes()
    for name in ("nbgrader_config.py", DECOY):
        path = course / name
        files[name] = path.read_bytes() if path.exists() else None
    grades = {key: value for key, value in _cell_grades(course).items() if key[1] != TAMPERER}
    return {"files": files, "grades": grades}


@pytest.fixture(scope="module")
def assignments() -> dict[str, tuple[str, str]]:
    """The assignments this file's course runs: Module 8's, both languages (Module 9's, with the hostile
    notebooks, in tests/test_nbgrader_module_9.py, which runs the same tests on its own course, so that
    pytest-xdist hands the two halves of the workflow to two workers)."""
    return {name: value for name, value in ASSIGNMENTS.items() if value[0] == "module_08"}


@pytest.fixture(scope="module")
def course(tmp_path_factory, assignments):
    """Run the whole nbgrader workflow once on ``assignments``; the tests below read its results."""
    root = tmp_path_factory.mktemp("nbgrader")
    course = root / "course"
    course.mkdir()
    shutil.copy2(ASSIGNMENTS_DIR / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(ASSIGNMENTS_DIR / "source", course / "source",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (course / DECOY).write_text("the tamperer tries to delete this file\n", encoding="utf-8")
    env = _environment(root)
    shown_env = dict(env, RL4LLM_SHOW_HIDDEN_INPUTS="1")
    timings: dict[str, float] = {}
    tamper: dict[str, dict] = {}
    logs: dict[str, str] = {}
    started = time.perf_counter()
    for assignment, (folder, _) in assignments.items():
        run_env = env if assignment == HIDE_ASSIGNMENT else shown_env
        _nbgrader(course, env, "generate_assignment", assignment, timings=timings)
        students = _students(assignment)
        for student in students:
            target = course / "submitted" / student / assignment
            target.mkdir(parents=True)
            for stem in registry.module(folder).files:
                notebook = _submission(course, student, assignment, stem)
                (target / f"{stem}.ipynb").write_text(json.dumps(notebook, indent=1), encoding="utf-8")
        logs[assignment] = _nbgrader(course, run_env, "autograde", assignment,
                                     f"--CourseDirectory.student_id_exclude={TAMPERER}",
                                     f"--EngineScores.report_dir={root / 'engine_reports'}", timings=timings)
        if JUPYTER in students:  # a resubmission (same content, newer files): nbgrader skips it, the kit says so
            for path in (course / "submitted" / JUPYTER / assignment).glob("*.ipynb"):
                os.utime(path, (time.time() + 60, time.time() + 60))
            logs["resubmitted"] = _nbgrader(course, run_env, "autograde", assignment, "--student", JUPYTER,
                                            timings=timings)
        if TAMPERER in students:  # on its own, after the others: what it touches is checked below
            before = _snapshot(course)
            completed = _run_nbgrader(course, run_env, "autograde", assignment, "--student", TAMPERER,
                                      timings=timings)
            tamper[assignment] = {"before": before, "after": _snapshot(course), "returncode": completed.returncode,
                                  "output": completed.stdout + completed.stderr}
        _nbgrader(course, env, "generate_feedback", assignment, timings=timings)
    _nbgrader(course, env, "export", timings=timings)
    timings["total"] = round(time.perf_counter() - started, 1)
    print(f"\nnbgrader timings (s): {timings}")
    return {"root": course, "tamper": tamper, "engine_reports": root / "engine_reports", "logs": logs,
            "assignments": assignments}


@pytest.fixture(scope="module")
def confined() -> bool:
    """Whether the engine's workers are kept out of every file but their scratch folder on this machine."""
    from graders.engine.sandbox import layers as sandbox

    pythonpath = str(Path(nbgrader_scoring.__file__).resolve().parents[2])
    return bool(sandbox.probe_layers(sys.executable, pythonpath).layers.get("landlock_files"))


@pytest.fixture(scope="module")
def engine(course, confined):
    """(assignment, student, notebook) -> {exercise id: points} from grade_paths on the submitted notebooks."""
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    root = course["root"]
    found = {}
    for module in sorted({_module(assignment) for assignment in course["assignments"]}):
        keys, paths = [], []
        for assignment in course["assignments"]:
            if _module(assignment) != module:
                continue
            for student in _students(assignment):
                if student == TAMPERER and not confined:
                    continue  # it would write the course folder from this test's own workers
                keys.append((assignment, student))
                paths.append(root / "submitted" / student / assignment)
        out = root.parent / f"engine-{module}"
        # two at a time: the grader parses notebooks under one lock (CPython 3.11's ast.parse is not thread-safe)
        result = grade_paths(paths, out, GradeOptions(modules=(module,)), jobs=2, progress=False,
                             log=lambda _message: None)
        assert not result.internal_errors, result.internal_errors
        for (assignment, student), report in zip(keys, result.reports):
            for entry in report["exercises"]:
                stem = entry["id"].split(".", 1)[0]
                found.setdefault((assignment, student, stem), {})[entry["id"]] = entry["points"]
    return found


def _cell_grades(course: Path) -> dict[tuple[str, str, str], dict[str, tuple[float, float]]]:
    """(assignment, student, notebook) -> {grade cell id: (score, max score)} from the gradebook."""
    from nbgrader.api import Gradebook

    grades = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in ASSIGNMENTS:
            try:
                submissions = gradebook.assignment_submissions(assignment)
            except Exception:  # noqa: BLE001 - not generated yet
                continue
            for submission in submissions:
                for notebook in submission.notebooks:
                    grades[(assignment, submission.student.id, notebook.name)] = {
                        grade.name: (grade.score, grade.max_score) for grade in notebook.grades}
    return grades


def _feedback_text(course: Path, student: str, assignment: str, stem: str) -> str:
    """The feedback HTML as text: tags removed, entities decoded."""
    raw = (course / "feedback" / student / assignment / f"{stem}.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def _autograded_text(course: Path, student: str, assignment: str, stem: str) -> str:
    """Every cell source and every output text of the autograded notebook."""
    notebook = json.loads((course / "autograded" / student / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
    parts = []
    for cell in notebook["cells"]:
        parts.append(_source(cell))
        for output in cell.get("outputs", []):
            for value in (output.get("text"), output.get("evalue"), output.get("traceback"),
                          *(output.get("data") or {}).values()):
                if value:
                    parts.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(parts)


def _graded_students(course: Path, assignment: str) -> list[str]:
    return [s for s in _students(assignment) if (course / "autograded" / s / assignment).is_dir()]


# =============================================================================
# Slow: what nbgrader recorded
# =============================================================================
def test_release_holds_stubs_and_visible_tests_only(course):
    root = course["root"]
    for assignment, (folder, _) in course["assignments"].items():
        for stem in registry.module(folder).files:
            release = json.loads((root / "release" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
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
        for given in sorted((root / "source" / assignment).glob("*.py")):  # given modules the notebooks import
            assert (root / "release" / assignment / given.name).read_bytes() == given.read_bytes(), given


def _normalised_function(tree: ast.AST, name: str) -> str:
    """The AST of a top-level function with every ``raise NotImplementedError(...)`` made argument-free."""
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    for child in ast.walk(node):
        if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call) \
                and getattr(child.exc.func, "id", "") == "NotImplementedError":
            child.exc.args = []
    return ast.dump(node)


def test_the_gradebook_records_the_engine_score_for_every_cell(course, engine):
    grades = _cell_grades(course["root"])
    compared = set()
    for (assignment, student, stem), points in engine.items():
        cells = grades[(assignment, student, stem)]
        expected = {f"test-{exercise.split('.', 1)[1]}": value for exercise, value in points.items()}
        assert set(cells) == set(expected), (assignment, student, stem)
        for cell, value in expected.items():
            assert cells[cell][0] == pytest.approx(value, abs=1e-9), (assignment, student, stem, cell, cells[cell])
            compared.add((assignment, student))
    graded = {(a, s) for (a, s, _) in grades}
    assert compared == graded or (compared | {(a, TAMPERER) for a in course["tamper"]}) >= graded, graded - compared


def test_complete_notebooks_get_full_marks(course):
    grades = _cell_grades(course["root"])
    assert course["assignments"]
    for assignment, (folder, _) in course["assignments"].items():
        for stem in registry.module(folder).files:
            cells = grades[(assignment, COMPLETE, stem)]
            assert cells and all(score == top for score, top in cells.values()), (assignment, stem, cells)


def test_the_untouched_release_scores_zero_on_every_graded_cell(course):
    root = course["root"]
    grades = _cell_grades(root)
    for assignment, (folder, _) in course["assignments"].items():
        for stem in registry.module(folder).files:
            cells = grades[(assignment, UNTOUCHED, stem)]
            graded = {name: value for name, value in cells.items() if name.startswith("test-")}
            assert len(graded) == len(exercises_in(DEFAULT_KIT.solution_path(stem)))
            assert all(score == 0 for score, _ in graded.values()), (assignment, stem, graded)
            language = ASSIGNMENTS[assignment][1]  # the verdict and the engine's lines in the assignment's language
            assert table_in(nbgrader_scoring.TEXT, language)["status"]["not_implemented"] in \
                _feedback_text(root, UNTOUCHED, assignment, stem)


def test_a_misconception_loses_points_on_its_cell_only_and_is_named(course):
    root = course["root"]
    grades = _cell_grades(root)
    chosen = {assignment: mistake for assignment, mistake in MISCONCEPTIONS.items()
              if assignment in course["assignments"]}
    assert chosen, "no assignment of this course has carol's mistake"
    for assignment, (exercise_id, name) in chosen.items():
        folder, _ = ASSIGNMENTS[assignment]
        stem, function = exercise_id.split(".", 1)
        for notebook in registry.module(folder).files:
            cells = grades[(assignment, MISTAKE, notebook)]
            lost = {cell: value for cell, value in cells.items() if value[0] != value[1]}
            if notebook == stem:
                assert set(lost) == {f"test-{function}"}, lost
                assert lost[f"test-{function}"][0] < spec_for(exercise_id).points
                feedback = _feedback_text(root, MISTAKE, assignment, notebook)
                assert name in feedback and "isconception" in feedback
            else:
                assert not lost, (notebook, lost)


def test_feedback_and_export_show_the_engine_score(course, engine):
    root = course["root"]
    totals: dict[tuple[str, str], float] = {}
    for (assignment, student, stem), points in engine.items():
        _, language = ASSIGNMENTS[assignment]
        totals[(assignment, student)] = totals.get((assignment, student), 0.0) + sum(points.values())
        raw = (root / "feedback" / student / assignment / f"{stem}.html").read_text(encoding="utf-8")
        text = html.unescape(re.sub(r"<[^>]+>", "", raw))
        for exercise_id, value in points.items():
            cell = f"test-{exercise_id.split('.', 1)[1]}"
            shown = re.search(rf'href="#{re.escape(cell)}">Test cell</a> \(Score: ([0-9.]+) / ([0-9.]+)\)', raw)
            assert shown and float(shown.group(1)) == pytest.approx(round(value, 2), abs=0.006), (student, cell)
            top = spec_for(exercise_id).points
            headline = table_in(nbgrader_scoring.TEXT, language)["headline"].format(
                exercise=exercise_id, score=nbgrader_scoring._number(value), points=nbgrader_scoring._number(top),
                status="").split(" ()")[0]
            assert headline in text, (student, exercise_id, headline)
    with open(root / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {(row["assignment"], row["student_id"]): row for row in csv.DictReader(handle)}
    for (assignment, student), total in totals.items():
        assert float(rows[(assignment, student)]["score"]) == pytest.approx(total, abs=1e-6), (assignment, student)
        assert float(rows[(assignment, student)]["max_score"]) == _points(assignment)
    for (assignment, student), row in rows.items():
        submitted = (root / "submitted" / student / assignment).is_dir()
        if not submitted:  # a student who did not take this language version
            assert float(row["score"]) == 0.0
    for assignment in course["assignments"]:
        assert float(rows[(assignment, COMPLETE)]["score"]) == _points(assignment)
        assert float(rows[(assignment, UNTOUCHED)]["score"]) == 0.0


def test_the_nbgrader_route_gets_the_class_report(course):
    # EngineScores.report_dir keeps one report.json per student (the assignment's notebooks merged), outside
    # the course; `rl4llm report` builds the same class report from it as from `rl4llm grade --out`
    import pandas as pd

    from graders.classreport import SUMMARY_FILE, build_class_report

    gradebook = _cell_grades(course["root"])
    for assignment in course["assignments"]:
        folder = course["engine_reports"] / assignment
        students = sorted(p.name for p in folder.iterdir())
        assert students == sorted(s for s in _students(assignment) if s != TAMPERER), assignment
        build_class_report(folder, "en")
        summary = pd.read_csv(folder / SUMMARY_FILE).set_index("exercise")
        for exercise in summary.index:
            reports = [json.loads((folder / s / "report.json").read_text(encoding="utf-8")) for s in students]
            # a missing exercise is not a wrong answer, nor is an untouched stub: the mean is over those handed in
            points = [e["points"] for r in reports for e in r["exercises"] if e["id"] == exercise
                      and e["status"] != "missing" and not e.get("not_implemented")]
            if not points:
                continue
            assert summary.loc[exercise, "mean_fraction"] == pytest.approx(
                sum(points) / len(points) / summary.loc[exercise, "max_points"], abs=1e-4)
        for student in students:  # the kept report agrees with what nbgrader recorded, exercise by exercise
            report = json.loads((folder / student / "report.json").read_text(encoding="utf-8"))
            recorded = {nbgrader_scoring.exercise_for(notebook, grade_id): score
                        for (a, s, notebook), cells in gradebook.items() if (a, s) == (assignment, student)
                        for grade_id, (score, _max) in cells.items()}
            assert {entry["id"] for entry in report["exercises"]} == {e for e in recorded if e}, student
            for entry in report["exercises"]:
                assert recorded[entry["id"]] == pytest.approx(entry["points"], abs=1e-3), (student, entry["id"])


def test_no_grader_artefact_lands_in_the_course(course):
    root = course["root"]
    assert not [p for p in root.rglob(".hypothesis")], "a Hypothesis folder in the course"
    for folder, suffix in (("autograded", ".ipynb"), ("feedback", ".html")):
        for student_dir in (root / folder).iterdir():
            for assignment_dir in student_dir.iterdir():
                found = sorted(p.name for p in assignment_dir.rglob("*"))
                stems = registry.module(ASSIGNMENTS[assignment_dir.name][0]).files
                # the given modules and the module's page ship with the assignment
                extra = {p.name for pattern in ("*.py", "*.md", "*.json") for p in (root / "source" / assignment_dir.name).glob(pattern)}
                extra |= {"timestamp.txt"} if folder == "autograded" else set()
                assert set(found) <= {f"{stem}{suffix}" for stem in stems} | extra, (assignment_dir, found)
    leftovers = {p.name for p in root.iterdir()} - {"source", "release", "submitted", "autograded", "feedback",
                                                    "gradebook.db", "grades.csv", "nbgrader_config.py", DECOY}
    assert not {name for name in leftovers if not name.startswith("PWNED")}, leftovers  # PWNED: the tamper test


def _fenced_lines(stem: str) -> list[str]:
    """Distinctive lines of the reference solution's fenced bodies (not in the starter)."""
    source = DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
    starter = DEFAULT_KIT.starter_path(stem).read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for fence in find_fences(source):
        for line in lines[fence.begin + 1:fence.end]:
            text = line.strip()
            if len(text) >= 30 and not text.startswith("#") and text not in starter:
                found.append(text)
    return found


def test_feedback_never_holds_the_reference_solution(course):
    root = course["root"]
    for assignment, (folder, _) in course["assignments"].items():
        for stem in registry.module(folder).files:
            lines = _fenced_lines(stem)
            assert len(lines) >= 3, stem
            # the scan sees solution code when it is there: alice submitted it
            assert [line for line in lines if line in _feedback_text(root, COMPLETE, assignment, stem)]
            for student in (UNTOUCHED, FAKER, TAMPERER):
                if not (root / "feedback" / student / assignment).is_dir():
                    continue
                for text in (_feedback_text(root, student, assignment, stem),
                             _autograded_text(root, student, assignment, stem)):
                    leaked = [line for line in lines if line in text]
                    assert not leaked, (assignment, student, stem, leaked[:3])


# =============================================================================
# Slow: notebooks written as Jupyter runs them, the autograde log, resubmissions
# =============================================================================
def _log_by_student(log: str) -> dict[str, str]:
    """The autograde log cut at nbgrader's "Sanitizing .../submitted/<student>/..." lines: student -> lines."""
    parts: dict[str, list[str]] = {}
    student = ""
    for line in log.splitlines():
        found = re.search(r"Sanitizing .*/submitted/([^/]+)/", line)
        student = found.group(1) if found else student
        parts.setdefault(student, []).append(line)
    return {name: "\n".join(lines) for name, lines in parts.items()}


def test_the_autograde_log_keeps_only_what_needs_reading(course):
    for assignment in course["assignments"]:
        log = course["logs"][assignment]
        assert "SAWarning" not in log and "not in session" not in log, assignment
        assert not re.search(r" scored [0-9.]+ of [0-9.]+ by", log)  # each cell's: only with RL4LLM_NBGRADER_VERBOSE=1
        by_student = _log_by_student(log)
        for student in _students(assignment):
            if student in (TAMPERER, FAKER):
                continue
            assert "Attribute 'checksum'" not in by_student[student], (assignment, student)
            assert re.search(rf"{student}/{assignment}/\w+: [0-9.]+ of [0-9.]+ points in \d+ graded cells",
                             by_student[student]), (assignment, student)
    if HOSTILE_ASSIGNMENT in course["assignments"]:  # Module 9's course: eve's
        # a locked cell really edited is still nbgrader's warning: eve forged her test cells
        assert "Attribute 'checksum' for cell test-" in _log_by_student(course["logs"][HOSTILE_ASSIGNMENT])[FAKER]


# =============================================================================
# Slow: the real nbgrader -- a learner's `nbgrader validate` on the release
# =============================================================================
VALIDATE_STUBS = {  # assignment -> (notebook, exercises left as stubs): the advisory exercises
    "module_09": ("module_9_reference", ["verify_numeric_answer", "expected_draws_for_informative_groups",
                                         "dapo_token_weights"]),
    "module_09_ru": ("module_9_reference", ["verify_numeric_answer", "expected_draws_for_informative_groups",
                                            "dapo_token_weights"]),
    "module_08": ("module_8_reference", ["reward_kl_frontier"]),
}
VALIDATION_FAILED = "VALIDATION FAILED ON {count} CELL(S)!"
VALIDATION_PASSED = "Success! Your notebook passes all the tests."


@pytest.fixture(scope="module")
def released(tmp_path_factory, course):
    """A folder with the release of every assignment of this file's course that VALIDATE_STUBS names, and the
    environment to run nbgrader in. The release is the course's own (its ``nbgrader generate_assignment``, the
    same command on the same source), copied, so the learner's notebooks written beside it reach no course test;
    a second ``generate_assignment`` of each cost about 5 s of CPU (an nbgrader process)."""
    root = tmp_path_factory.mktemp("validate")
    folder = root / "course"
    folder.mkdir()
    shutil.copy2(ASSIGNMENTS_DIR / "nbgrader_config.py", folder / "nbgrader_config.py")
    shutil.copytree(ASSIGNMENTS_DIR / "source", folder / "source", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for assignment in course["assignments"]:
        if assignment in VALIDATE_STUBS:
            shutil.copytree(course["root"] / "release" / assignment, folder / "release" / assignment)
    return {"root": folder, "env": _environment(root)}


def _validate(released: dict, assignment: str, name: str, notebook: dict) -> str:
    """``nbgrader validate`` on ``notebook``, written beside the release's files as a learner has it."""
    folder = released["root"] / "release" / assignment
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    completed = subprocess.run([sys.executable, "-m", "nbgrader", "validate", path.name], cwd=folder,
                               env=released["env"], capture_output=True, text=True, timeout=600)
    return completed.stdout + completed.stderr


def validated_in(folder: str) -> list[str]:
    """The assignments of VALIDATE_STUBS in ``folder``: each file validates those of its own course (Module 9's
    in tests/test_nbgrader_module_9.py)."""
    return [assignment for assignment in VALIDATE_STUBS if ASSIGNMENTS[assignment][0] == folder]


@pytest.mark.parametrize("assignment", validated_in("module_08"))
def test_nbgrader_validate_fails_with_stubs_left_and_passes_when_solved(released, assignment):
    check_validate(released, assignment)


def check_validate(released: dict, assignment: str) -> None:
    """``nbgrader validate`` passes the solved notebook, fails the one with stubs left on exactly those cells,
    naming them in the assignment's language, and fails every test cell of the untouched release."""
    stem, stubs = VALIDATE_STUBS[assignment]
    language = ASSIGNMENTS[assignment][1]
    release = json.loads((released["root"] / "release" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
    source = json.loads((released["root"] / "source" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8"))
    solved = json.loads(json.dumps(release))
    answers = {c["id"]: c["source"] for c in source["cells"] if c["metadata"].get("nbgrader", {}).get("solution")}
    for cell in solved["cells"]:
        if cell["id"] in answers:
            cell["source"] = answers[cell["id"]]
    output = _validate(released, assignment, "solved", solved)
    assert VALIDATION_PASSED in output, output[-3000:]
    output = _validate(released, assignment, "stubs_left", _with_stubs(solved, release, stubs))
    assert VALIDATION_FAILED.format(count=len(stubs)) in output and VALIDATION_PASSED not in output, output[-3000:]
    marker = {"en": "NOT IMPLEMENTED: ", "ru": "НЕ РЕАЛИЗОВАНО: "}[language]
    assert all(f"{marker}{name}" in output for name in stubs), output[-3000:]
    output = _validate(released, assignment, "release", release)  # untouched: every test cell fails
    tests = sum(1 for c in release["cells"] if c["id"].startswith("test-"))
    assert VALIDATION_FAILED.format(count=tests) in output, output[-3000:]
