"""One nbgrader notebook graded by the engine: its code, never executed here, as a submission of one learner file.

:func:`grade_notebook` runs :func:`graders.engine.routes.batch.grade_paths` on the notebook in a fresh temporary
folder (the working directory and Hypothesis's storage in it too, so nothing lands in the course
folder) and says which functions are still the untouched stubs (:func:`untouched_stubs`);
:func:`keep_report` keeps the entries as a student's ``report.json``. The nbgrader preprocessor that
calls it is :mod:`graders.engine.nbgrader.scoring`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path


def module_of(stem: str) -> str | None:
    """The module number of a learner file stem, or ``None`` for a notebook that is not a learner file."""
    from graders import course

    return course.module_of(stem).number if stem in course.STEMS else None


# ---------------------------------------------------------------------------
# Grading one notebook with the engine
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def _artefacts_in(folder: Path):
    """Working directory and Hypothesis's storage in ``folder`` for the duration (restored afterwards)."""
    previous_cwd = os.getcwd()
    try:
        from hypothesis import configuration
    except ImportError:  # pragma: no cover - hypothesis is a core dependency
        configuration = None
    setter = getattr(configuration, "set_hypothesis_home_dir", None)
    saved_env = os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY")
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(folder / ".hypothesis")
    if setter is not None:
        setter(folder / ".hypothesis")
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous_cwd)
        if saved_env is None:
            os.environ.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
        else:
            os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = saved_env
        if setter is not None:
            setter(None)  # next use reads the environment (or the default) again


def grade_notebook(notebook_text: str, stem: str, *, hide_hidden_inputs: bool, require_sandbox: bool = False,
                   kit=None, log=None, language: str = "en") -> dict[str, dict]:
    """``{exercise id: report entry}`` of the engine for a notebook saved as ``<stem>.ipynb``.

    Runs :func:`graders.engine.routes.batch.grade_paths` on a fresh temporary folder
    (the submission, the reports, the working directory and Hypothesis's
    storage all inside it; everything is deleted afterwards), its feedback in
    ``language``. Each entry also says whether the notebook's function is
    still the untouched stub, ``"not_implemented"`` (:func:`untouched_stubs`).
    """
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions
    from graders.engine.judging.kit import DEFAULT_KIT

    kit = kit or DEFAULT_KIT
    module = module_of(stem)
    if module is None:
        raise ValueError(f"{stem!r} is not a learner file of the kit")
    with tempfile.TemporaryDirectory(prefix="rl4llm-nbgrader-") as temp:
        root = Path(temp)
        submission = root / "submission"
        submission.mkdir()
        # a lone surrogate in a cell (a JSON "\ud800" escape) goes back to the same escape: only that cell is lost
        (submission / f"{stem}.ipynb").write_text(notebook_text, encoding="utf-8", errors="backslashreplace")
        options = GradeOptions(modules=(module,), hide_hidden_inputs=hide_hidden_inputs,
                               require_sandbox=require_sandbox, lang=language)
        with _artefacts_in(root):
            result = grade_paths([submission], root / "reports", options, jobs=1, kit=kit, progress=False,
                                 log=log or (lambda _message: None))
        if result.internal_errors:  # the grader's fault, not the learner's: never recorded as a score
            raise RuntimeError("the kit's engine failed on this notebook: " + "; ".join(result.internal_errors))
        (report,) = result.reports
    stubs = untouched_stubs(notebook_text)
    return {entry["id"]: {**entry, "not_implemented": entry["id"].split(".", 1)[1] in stubs}
            for entry in report["exercises"] if entry["id"].startswith(f"{stem}.")}


def keep_report(report_dir: Path, assignment: str, student: str, entries: dict[str, dict]) -> Path:
    """Merge one notebook's entries into ``report_dir/<assignment>/<student>/report.json`` (the kit's report
    schema, :class:`graders.engine.values.protocol.SubmissionReport`; the exercises in course order) and return its path."""
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.engine.values.learner_text import file_name
    from graders.engine.values.protocol import ExerciseReport, Status, SubmissionReport
    from graders.engine.outputs.reports import report_json

    # names, never paths: ".." or a NUL in a student id would leave the folder or stop nbgrader
    folder = report_dir / file_name(Path(assignment).name, "assignment") / file_name(student, "student")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.json"
    merged = {entry["id"]: entry for entry in
              (json.loads(path.read_text(encoding="utf-8"))["exercises"] if path.exists() else [])}
    merged.update(entries)
    order = {exercise_id: index for index, exercise_id in enumerate(DEFAULT_KIT.exercises())}
    exercises = tuple(ExerciseReport(e["id"], Status(e["status"]), e["points"], e["max_points"], e["feedback"],
                                     tuple(e["misconceptions"]), bool(e.get("not_implemented")),
                                     tuple(e.get("candidates") or ()), e.get("cause"), tuple(e.get("failing") or ()))
                      for e in sorted(merged.values(), key=lambda e: (order.get(e["id"], len(order)), e["id"])))
    path.write_text(report_json(SubmissionReport(str(student), exercises, {}).to_dict()), encoding="utf-8",
                    errors="backslashreplace")  # the id as it is, cleaned; the class report escapes it
    return path


def untouched_stubs(notebook_text: str) -> set[str]:
    """The functions a notebook defines (its last definition of each, as the engine grades) whose body, a
    docstring aside, is only ``raise NotImplementedError`` (with or without a message): the exercises the
    learner has not started. Read from the code, so it does not depend on the feedback's language; the
    notebook is reduced once, in the budgeted child of :mod:`graders.engine.intake.notebook_reader`."""
    from graders.engine.intake.notebook_reader import reduce_notebooks

    (found,) = reduce_notebooks({"notebook.ipynb": notebook_text.encode("utf-8", "backslashreplace")}).values()
    return set() if isinstance(found, str) else set(found.stubs)
