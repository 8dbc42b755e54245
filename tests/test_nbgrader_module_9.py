"""The real nbgrader workflow of tests/test_nbgrader.py on Module 9's assignments (English, graded with hidden
inputs withheld, with the hostile notebooks, frank's Jupyter-style notebooks and his resubmission; Russian, with
hidden inputs shown).

tests/test_nbgrader.py runs the workflow on Module 8's assignments; this file runs the same course tests (imported
from there, so they are collected here too, on this file's own module-scoped course) and the tests that only
Module 9's submissions make possible, and a learner's ``nbgrader validate`` on Module 9's release (its own
course's, as tests/test_nbgrader.py does for Module 8's). Two files, so that ``--dist loadfile`` hands the two halves to two
pytest-xdist workers: one course of all four assignments took about 11 minutes on one worker.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow  # the real nbgrader workflow: minutes

pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from graders import course as registry  # noqa: E402 - `course` is the fixture of the course folder
from graders.checks import spec_for  # noqa: E402
from graders.engine.judging.kit import DEFAULT_KIT  # noqa: E402
from graders.text import table_in  # noqa: E402
from test_nbgrader import (  # noqa: E402, F401 - the fixtures and the course tests, collected here on Module 9's course
    ASSIGNMENTS, ATTACKED, COMPLETE, DECOY, FAKER, HIDE_ASSIGNMENT, HOSTILE_ASSIGNMENT, JUPYTER, PATCHER, TAMPERER,
    TOLERANCE, TOLERANCES, UNTOUCHED, _autograded_text, _cell_grades, _feedback_text, _graded_students, _log_by_student,
    check_validate, confined, course, engine, nbgrader_scoring, released, validated_in,
    test_a_misconception_loses_points_on_its_cell_only_and_is_named, test_complete_notebooks_get_full_marks,
    test_feedback_and_export_show_the_engine_score, test_feedback_never_holds_the_reference_solution,
    test_no_grader_artefact_lands_in_the_course, test_release_holds_stubs_and_visible_tests_only,
    test_the_autograde_log_keeps_only_what_needs_reading, test_the_gradebook_records_the_engine_score_for_every_cell,
    test_the_nbgrader_route_gets_the_class_report, test_the_untouched_release_scores_zero_on_every_graded_cell)


@pytest.fixture(scope="module")
def assignments() -> dict[str, tuple[str, str]]:
    """The assignments this file's course runs: Module 9's, both languages."""
    return {name: value for name, value in ASSIGNMENTS.items() if value[0] == "module_09"}


@pytest.mark.parametrize("assignment", validated_in("module_09"))
def test_nbgrader_validate_fails_with_stubs_left_and_passes_when_solved(released, assignment):
    check_validate(released, assignment)


def test_hostile_notebooks_score_no_more_than_the_placebo_on_what_they_attack(course, confined):
    grades = _cell_grades(course["root"])
    for assignment in ATTACKED:
        for stem in registry.module(ASSIGNMENTS[assignment][0]).files:
            placebo = grades[(assignment, UNTOUCHED, stem)]
            complete = grades[(assignment, COMPLETE, stem)]
            attacked = {f"test-{e.split('.', 1)[1]}" for e in ATTACKED[assignment] if e.startswith(f"{stem}.")}
            patched = grades[(assignment, PATCHER, stem)]
            for cell in attacked:
                assert patched[cell][0] <= placebo[cell][0], (assignment, stem, cell, patched[cell])
            faked = grades[(assignment, FAKER, stem)]
            assert all(faked[cell][0] <= placebo[cell][0] for cell in placebo), (assignment, stem, faked)
            tampered = grades.get((assignment, TAMPERER, stem), {})
            assert all((score or 0.0) <= placebo[cell][0] for cell, (score, _) in tampered.items()), tampered
            # mallory's other exercises are the complete source's: the patches cost them nothing -- except those
            # that call an exercise she left as a stub, which earn nothing by the one rule for dependents
            stubs = {e.split(".", 1)[1] for e in ATTACKED[assignment] if e.startswith(f"{stem}.")}
            gated = {cell for cell in complete if stubs & set(
                getattr(spec_for(f"{stem}.{cell[len('test-'):]}").call, "answers", ()))}
            unattacked = {cell for cell in complete if cell not in attacked | gated}
            assert all(patched[cell] == complete[cell] for cell in unattacked), (assignment, stem, patched)
            assert all(patched[cell][0] == 0 for cell in gated), (assignment, stem, patched)


def test_the_tamperer_changes_nothing(course, confined):
    """With the engine's sandbox: nothing is written. Without it: the guard restores the gradebook and refuses."""
    root = course["root"]
    assert course["tamper"], "trudy was never graded"
    for assignment, run in course["tamper"].items():
        assert run["before"]["grades"] == run["after"]["grades"], assignment  # nobody else's grade moved
        assert sorted(root.glob("PWNED*")) == [] or not confined, sorted(root.glob("PWNED*"))
        if confined:
            assert run["returncode"] == 0 and "Traceback" not in run["output"], run["output"][-4000:]
            assert run["before"]["files"] == run["after"]["files"], assignment
            assert (root / DECOY).exists() and not (root / "PWNED-in-the-kernel").exists()
        else:
            assert run["returncode"] != 0 and "CourseTampered" in run["output"], run["output"][-4000:]
    with open(root / "gradebook.db", "rb") as handle:
        assert handle.read(16) == b"SQLite format 3\x00"


def _hidden_inputs(exercise_id: str) -> list[str]:
    """How the engine renders the inputs of the exercise's hidden cases (``describe_input`` unhidden)."""
    import inspect

    from graders.engine.outputs.feedback import describe_input

    stem, function = exercise_id.split(".", 1)
    names = list(inspect.signature(getattr(DEFAULT_KIT.reference_module(stem), function)).parameters)
    cases = spec_for(exercise_id).cases()
    public = {describe_input(case, names, False) for case in cases if not case.hidden}
    return [text for text in (describe_input(case, names, False) for case in cases if case.hidden) if text not in public]


def test_hide_mode_keeps_hidden_inputs_out_of_the_feedback(course):
    root = course["root"]
    exercise_id, _ = TOLERANCES
    stem = exercise_id.split(".", 1)[0]
    hidden = _hidden_inputs(exercise_id)
    # without hide mode (module_09_ru), dave's feedback shows hidden inputs: the scan below can see them
    from graders.engine.values.texts import feedback_text

    shown = _feedback_text(root, TOLERANCE, "module_09_ru", stem)  # in Russian, like the assignment
    marker = feedback_text("ru", "check", label="", visibility=feedback_text("ru", "hidden"), input="")[3:]
    assert [text for text in hidden if f"{marker}{text}" in shown], shown
    assert re.search(re.escape(marker) + f"(?!{re.escape(feedback_text('ru', 'hidden_input'))})", shown)
    for student in _graded_students(root, HIDE_ASSIGNMENT):
        for notebook in registry.module(ASSIGNMENTS[HIDE_ASSIGNMENT][0]).files:
            for text in (_feedback_text(root, student, HIDE_ASSIGNMENT, notebook),
                         _autograded_text(root, student, HIDE_ASSIGNMENT, notebook)):
                assert not re.search(r"\(hidden\): input (?!hidden input)", text), (student, notebook)
                if notebook == stem:
                    assert not [t for t in hidden if f"input {t}" in text], (student, notebook)
    withheld = _feedback_text(root, TOLERANCE, HIDE_ASSIGNMENT, stem)
    assert "(hidden): input hidden input" in withheld and table_in(nbgrader_scoring.TEXT, "en")["hidden"] in withheld


def test_a_notebook_written_as_jupyter_runs_it_gets_full_marks_and_its_bad_cell_is_one_warning(course):
    grades = _cell_grades(course["root"])
    folder, _ = ASSIGNMENTS[HOSTILE_ASSIGNMENT]
    for stem in registry.module(folder).files:
        cells = grades[(HOSTILE_ASSIGNMENT, JUPYTER, stem)]
        assert cells and all(score == top for score, top in cells.values()), (stem, cells)
    log = course["logs"][HOSTILE_ASSIGNMENT]
    warnings = [line for line in log.splitlines() if "WARNING" in line and f"{JUPYTER}: " in line]
    assert sorted(warnings) == sorted(
        f"[AutogradeApp | WARNING] {JUPYTER}: {stem}.ipynb cell 5 (def broken(:): SyntaxError: invalid syntax "
        "(line 1); this cell was left out, as Jupyter fails it alone, and the notebook's other cells were graded"
        for stem in registry.module(folder).files)
    feedback = _feedback_text(course["root"], JUPYTER, HOSTILE_ASSIGNMENT, "module_9_reference")
    assert "module_9_reference.ipynb cell 5 (def broken(:)" in feedback


def test_a_resubmission_nbgrader_skips_is_named_with_the_command_that_grades_it(course):
    log = course["logs"]["resubmitted"]
    assert "Skipping existing assignment" in log
    assert (f"[rl4llm | WARNING] {JUPYTER}/{HOSTILE_ASSIGNMENT}: the submission changed after it was autograded, "
            f"and nbgrader will skip it") in log
    assert f"`nbgrader autograde {HOSTILE_ASSIGNMENT} --student {JUPYTER} --force`" in log
    assert log.count("[rl4llm | WARNING]") == 1
    assert "[rl4llm | WARNING]" not in course["logs"][HOSTILE_ASSIGNMENT]


