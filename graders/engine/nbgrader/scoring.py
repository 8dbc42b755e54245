"""nbgrader's scores from the kit's engine, computed outside the student's kernel.

``nbgrader autograde`` normally executes a submitted notebook in a Jupyter
kernel and scores each autograded test cell by its outputs (nbgrader's
``determine_grade``: an ``error`` output or a ``stderr`` stream scores 0, a
numeric ``execute_result`` is partial credit, anything else full points).
Whatever runs in that kernel -- the student's own cells first -- can rewrite
those outputs: replace the kit's checking function, print fake verdicts, hide
tracebacks, and, running unconfined as the grader's user, write the gradebook
or the course folder.

:class:`EngineScores` replaces nbgrader's ``Execute`` preprocessor in the
autograde pass (``assignments/nbgrader_config.py`` sets
``Autograde.autograde_preprocessors`` to :func:`autograde_preprocessors`):

1. The student's notebook is **not executed**. After nbgrader's sanitising
   pass (outputs cleared, locked cells and test cells restored from the
   gradebook's copy of the source), the notebook is written to a fresh
   temporary folder outside the course and graded by the engine,
   :func:`graders.engine.routes.batch.grade_paths`: its definitions (functions,
   classes, imports, constants -- :func:`graders.engine.intake.submission.notebook_definitions`)
   are loaded in the engine's sandboxed worker process, and every exercise is
   checked there against reference values computed in the grading process.
2. Every autograded test cell gets outputs written from the engine's report
   for its exercise (grade id ``test-<function>`` in notebook ``<stem>``:
   exercise ``<stem>.<function>``, the generator's convention in
   :mod:`graders.build.notebooks`): full points -- a ``stdout`` stream with the
   verdict; partial -- the verdict and feedback on ``stdout`` and the points
   as a numeric ``execute_result``; zero -- an ``error`` output with the
   verdict and feedback. nbgrader's ``SaveAutoGrades`` then records exactly
   the engine's points; ``generate_feedback`` and ``export`` show them.
3. Every other code cell is left without outputs.

Nothing the student's code does can reach this: it runs only inside the
engine's worker (on a copy, confined by the engine's sandbox), and the score
is computed in this process from the worker's encoded results. As a second
line of defence, the course folder and the gradebook are fingerprinted
around each grading run (size, times and inode of every entry, ``ctime``
included, which no process can set back): if anything changed, the gradebook
is restored from a copy taken just before, and the notebook fails with
:class:`~graders.engine.nbgrader.course_guard.CourseTampered` -- nbgrader logs the
error, records no grade from that run and exits with an error
(:mod:`graders.engine.nbgrader.course_guard`).

Grader artefacts never land in the course folder: the engine runs with a
temporary working directory and Hypothesis's storage directory in that
temporary folder (Hypothesis would otherwise write ``.hypothesis/`` -- with
literal constants of the hidden checks -- into the current directory, from
where ``generate_feedback`` would copy it to the students), and the engine's
reports go to a temporary folder that is deleted afterwards (:mod:`graders.engine.nbgrader.notebook_engine`).

The inputs of hidden checks are withheld from the feedback by default (as on Gradescope);
``RL4LLM_SHOW_HIDDEN_INPUTS=1`` (or ``c.EngineScores.hide_hidden_inputs = False``) shows them.
A code cell the engine cannot read (a syntax error ...) is a WARNING in the autograde log naming
the student, the notebook, the cell and the reason, in the notebook's language; only that cell is
lost, as when Jupyter runs the notebook (:mod:`graders.engine.intake.notebook_cells`).
"""

from __future__ import annotations

import os
import re
import string
from pathlib import Path

from nbformat.notebooknode import NotebookNode, from_dict
from traitlets import Bool, Unicode, default

from nbgrader import utils as nbgrader_utils
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

from graders import settings
from graders.cleaner import log_line
from graders.course import LANGUAGES
from graders.engine.values import texts
from graders.engine.nbgrader.course_guard import _Guard
from graders.engine.nbgrader.log import VERBOSE_ENV
from graders.engine.nbgrader.notebook_engine import grade_notebook, keep_report, module_of
from graders.engine.intake.submission import is_cell_note
from graders.engine.nbgrader.notebook_engine import untouched_stubs  # noqa: F401 - re-exported: the tests take it from here
from graders.text import Text

SHOW_ENV = "RL4LLM_SHOW_HIDDEN_INPUTS"
TEST_PREFIX = "test-"
ERROR_NAME = "KitEngineVerdict"


def _note_pattern(template: str) -> re.Pattern:
    """A feedback line made from ``template``, whatever fills its placeholders."""
    return re.compile("".join(re.escape(literal) + (".*" if field is not None else "")
                              for literal, field, _, _ in string.Formatter().parse(template)))


# the engine's note that it graded a notebook's definitions, in every language: obvious here, so left out
_NOTEBOOK_NOTES = [_note_pattern(texts.DETAILS["note_notebook"].in_(language)) for language in LANGUAGES]

# Learner-facing text of the test-cell outputs, each a Text read with .in_(language) (the engine's own lines,
# below them, come in the same language: grade_notebook passes it on as GradeOptions.lang).
TEXT = {
    "headline": Text("{exercise}: {score} of {points} points ({status}).",
                     "{exercise}: баллы — {score} из {points} ({status})."),
    "how": Text("Scored by the kit's grading engine from this notebook's definitions, in an isolated process; "
                "this notebook was not executed for grading.",
                "Оценку выставил движок проверки комплекта заданий по определениям этого ноутбука, в изолированном процессе; "
                "для проверки ноутбук не выполнялся."),
    "hidden": Text("Inputs of hidden checks are withheld from this feedback.",
                   "Входные данные скрытых проверок в этом отзыве не показываются."),
    "misconceptions": Text("Likely misconception(s): {names}", "Вероятная типичная ошибка: {names}"),
    "status": {
        "passed": Text("every check passed", "все проверки пройдены"),
        "failed": Text("some checks failed", "часть проверок не пройдена"),
        "error": Text("an error stopped some checks", "ошибка прервала часть проверок"),
        "timeout": Text("time limit exceeded", "превышено время"),
        "missing": Text("not found", "не найдено"),
        "not_implemented": Text("not implemented yet", "ещё не реализовано"),
    },
    "stub_cell": Text("The notebook cell that defines {function} still holds the stub (raise NotImplementedError): "
                      "write the function in that cell and submit the notebook again.",
                      "Ячейка ноутбука, в которой определена функция {function}, всё ещё содержит заготовку "
                      "(raise NotImplementedError): напишите функцию в этой ячейке и сдайте ноутбук заново."),
    "no_exercise": Text("{cell}: the kit has no exercise for this graded cell; it scores 0.",
                        "{cell}: в комплекте заданий нет упражнения для этой оцениваемой ячейки; она приносит 0 баллов."),
    "no_report": Text("{exercise}: the engine returned no result for this exercise; it scores 0.",
                      "{exercise}: движок не вернул результат по этому упражнению; оно приносит 0 баллов."),
}


def _hide_default() -> bool:
    return not settings.get(SHOW_ENV)


def language_of(assignment_id: str) -> str:
    """``ru`` for the Russian assignments (``module_09_ru``), else ``en`` (``graders.build.notebooks.assignment_name``)."""
    for language in LANGUAGES:
        if language != "en" and assignment_id.endswith(f"_{language}"):
            return language
    return "en"


def exercise_for(notebook_id: str, grade_id: str, kit=None) -> str | None:
    """The exercise id a graded cell stands for (``test-<function>`` in notebook ``<stem>``), or None."""
    from graders.engine.judging.kit import DEFAULT_KIT

    kit = kit or DEFAULT_KIT
    if not grade_id.startswith(TEST_PREFIX):
        return None
    module = module_of(notebook_id)
    if module is None:
        return None
    exercise_id = f"{notebook_id}.{grade_id[len(TEST_PREFIX):]}"
    return exercise_id if exercise_id in kit.exercises((module,)) else None


def _number(value: float) -> str:
    return f"{round(value, 4):g}"


def verdict_outputs(entry: dict | None, exercise_id: str, cell_points: float, language: str,
                    hide: bool) -> tuple[float, list[dict]]:
    """(score, nbformat outputs) for one graded cell from the engine's report entry.

    The score is the engine's points (scaled if the cell's points differ from
    the engine's maximum), and the outputs make nbgrader's ``determine_grade``
    read exactly that score.
    """
    if entry is None:
        return 0.0, [_error(TEXT["no_report"].in_(language, exercise=exercise_id), [])]
    points, top = float(entry["points"]), float(entry["max_points"])
    score = points if top == cell_points else (points * cell_points / top if top else 0.0)
    score = round(min(max(score, 0.0), cell_points), 4)
    status = entry["status"]
    if status == "error" and entry.get("not_implemented") and points == 0:  # from the code (grade_notebook)
        status = "not_implemented"
    status = TEXT["status"][status].in_(language) if status in TEXT["status"] else status
    headline = TEXT["headline"].in_(language, exercise=exercise_id, score=_number(score),
                                    points=_number(cell_points), status=status)
    if entry["status"] == "error" and entry.get("not_implemented") and points == 0:
        # the untouched stub: two lines naming its cell, never the line of the file the engine graded
        return 0.0, [_error(headline, [TEXT["stub_cell"].in_(language, function=exercise_id.split(".", 1)[-1])])]
    lines = [TEXT["how"].in_(language)] + ([TEXT["hidden"].in_(language)] if hide else [])
    if entry.get("misconceptions"):
        lines.append(TEXT["misconceptions"].in_(language, names=", ".join(entry["misconceptions"])))
    lines += [line for line in str(entry.get("feedback", "")).splitlines() if not any(note.fullmatch(line) for note in _NOTEBOOK_NOTES)]
    if score >= cell_points:
        return score, [_stdout([headline] + lines)]
    if score <= 0:
        return 0.0, [_error(headline, lines)]
    return score, [_stdout([headline] + lines),
                   {"output_type": "execute_result", "execution_count": None, "metadata": {},
                    "data": {"text/plain": _number(score)}}]


def _stdout(lines: list[str]) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": "\n".join(lines) + "\n"}


def _error(headline: str, lines: list[str]) -> dict:
    return {"output_type": "error", "ename": ERROR_NAME, "evalue": headline, "traceback": [headline, *lines]}


# ---------------------------------------------------------------------------
# The preprocessor
# ---------------------------------------------------------------------------
class EngineScores(NbGraderPreprocessor):
    """Score autograded test cells with the kit's engine instead of executing the notebook (see the module doc)."""

    hide_hidden_inputs = Bool(help="Withhold the inputs of hidden checks from the feedback (default: True, "
                                   f"unless the environment variable {SHOW_ENV}=1).").tag(config=True)
    language = Unicode("", help="Language of the verdict lines: 'en', 'ru', or '' for the assignment's own "
                                "(assignments whose name ends in _ru are Russian).").tag(config=True)
    require_sandbox = Bool(False, help="Refuse to grade (the notebook fails) unless every layer of the engine's "
                                       "sandbox is in force on this machine (see `rl4llm doctor`).").tag(config=True)
    guard_course = Bool(True, help="Fingerprint the course folder and the gradebook around each grading run "
                                   "and refuse the notebook if anything changed.").tag(config=True)
    report_dir = Unicode("", help="Also keep the engine's report of each student, all the assignment's notebooks "
                                  "in one, as <report_dir>/<assignment>/<student>/report.json: `rl4llm report "
                                  "<report_dir>/<assignment>` then builds the class report. '' keeps none. Put it "
                                  "outside the course folder.").tag(config=True)

    @default("hide_hidden_inputs")
    def _hide_hidden_inputs_default(self) -> bool:
        return _hide_default()

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        import nbformat

        info = resources["nbgrader"]
        stem, assignment, student = info["notebook"], info["assignment"], info.get("student", "student")
        scores: list[tuple[float, float]] = []
        language = self.language if self.language in LANGUAGES else language_of(assignment)
        for cell in nb.cells:  # no kernel ran: no output, no execution count, from anyone
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        graded = [cell for cell in nb.cells if cell.cell_type == "code" and nbgrader_utils.is_grade(cell)
                  and not nbgrader_utils.is_solution(cell)]
        exercises = {id(cell): exercise_for(stem, cell.metadata.nbgrader.get("grade_id", "")) for cell in graded}

        entries: dict[str, dict] = {}
        if any(exercises.values()):
            messages: list[str] = []
            guard = _Guard(Path(os.getcwd()), info.get("db_url", "")) if self.guard_course else None
            entries = grade_notebook(nbformat.writes(nb), stem, hide_hidden_inputs=self.hide_hidden_inputs,
                                     require_sandbox=self.require_sandbox, log=messages.append, language=language)
            if guard is not None:
                guard.check()
            for message in dict.fromkeys(messages):
                if is_cell_note(message.split(": ", 2)[-1]):
                    continue  # said below, with the student's name, in the notebook's language
                level = self.log.info if message.startswith("note") else self.log.warning
                log_line(level, "kit engine: %s", message)
            for line in unreadable_cells(nbformat.writes(nb), stem, student, language,
                                         graded=any(e["status"] != "missing" for e in entries.values())):
                log_line(self.log.warning, "%s", line)
            if self.report_dir:
                keep_report(Path(self.report_dir), assignment, student, entries)

        for cell in graded:
            exercise_id = exercises[id(cell)]
            points = float(cell.metadata.nbgrader.get("points", 0))
            if exercise_id is None:
                grade_id = cell.metadata.nbgrader.get("grade_id", "?")
                log_line(self.log.error, "%s/%s: graded cell %s is no exercise of the kit; it scores 0",
                         assignment, stem, grade_id)
                cell.outputs = [from_dict(_error(TEXT["no_exercise"].in_(language, cell=grade_id), []))]
                continue
            score, outputs = verdict_outputs(entries.get(exercise_id), exercise_id, points, language,
                                             self.hide_hidden_inputs)
            cell.outputs = [from_dict(output) for output in outputs]
            scores.append((score, points))
            self._cell_log("%s/%s: %s scored %s of %s by the kit's engine", assignment, stem, exercise_id,
                           _number(score), _number(points))
        if scores:
            log_line(self.log.info, "%s/%s/%s: %s of %s points in %d graded cells, scored by the kit's engine",
                     student, assignment, stem, _number(sum(s for s, _ in scores)),
                     _number(sum(p for _, p in scores)), len(scores))
        return nb, resources

    def _cell_log(self, *args) -> None:
        """One graded cell's score: at INFO with RL4LLM_NBGRADER_VERBOSE=1, else DEBUG (the notebook's sum is INFO)."""
        log_line(self.log.info if settings.get(VERBOSE_ENV) else self.log.debug, *args)


def unreadable_cells(notebook_text: str, stem: str, student: str, language: str, *, graded: bool) -> list[str]:
    """One log line per code cell of the notebook the engine could not read: the student, the notebook, the
    cell, the reason, and whether the notebook's other cells were graded (``graded``), in ``language``."""
    from graders.engine.intake.notebook_reader import reduce_notebooks
    from graders.engine.intake.submission import cell_note

    (found,) = reduce_notebooks({f"{stem}.ipynb": notebook_text.encode("utf-8", "backslashreplace")}).values()
    if isinstance(found, str):
        return []
    return [f"{student}: " + texts.translated(cell_note(f"{stem}.ipynb", problem, graded=graded), language)
            for problem in found.problems]


class RestoreCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` that tolerates the empty metadata ``DeduplicateIds`` leaves on duplicates.

    With ``add_missing_cells`` (deleted test cells come back and are scored),
    nbgrader 0.9 reads ``grade_id`` from every cell that has nbgrader metadata,
    but a duplicated graded cell keeps ``{}`` there after ``DeduplicateIds``,
    and the whole submission fails. Empty nbgrader metadata means the same as
    none, so it is removed first.

    The other change: nbgrader warns "Attribute 'checksum' for cell test-... has changed!" for every test
    cell of an untouched release, because the gradebook keeps the cell with its hidden part; that
    warning is logged at DEBUG when the submitted cell is exactly the released one (the source with its
    hidden part removed), so that a real change to a locked cell, and the kit's own WARNING lines,
    stand out. ``RL4LLM_NBGRADER_VERBOSE=1`` logs them all as nbgrader does.
    """

    _released = False

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        for cell in nb.cells:
            if "nbgrader" in cell.metadata and not cell.metadata.nbgrader:
                del cell.metadata["nbgrader"]
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple[NotebookNode, dict]:
        self._released = self._is_released(cell)
        try:
            return super().preprocess_cell(cell, resources, cell_index)
        finally:
            self._released = False

    def _is_released(self, cell: NotebookNode) -> bool:
        """Whether a locked cell is exactly as ``generate_assignment`` released it."""
        from nbgrader.api import MissingEntry
        from nbgrader.preprocessors import ClearHiddenTests

        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is None or settings.get(VERBOSE_ENV):
            return False
        try:
            source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
        except MissingEntry:
            return False
        released = from_dict({"cell_type": source.cell_type, "source": source.source, "metadata": {}})
        try:
            ClearHiddenTests(parent=self)._remove_hidden_test_region(released)
        except RuntimeError:  # unbalanced markers: nbgrader's own warning stands
            return False
        return cell.source == released.source

    def report_change(self, name: str, attr: str, old, new) -> None:
        if attr == "checksum" and self._released:
            log_line(self.log.debug, "cell %s is the released one, its hidden part restored from the gradebook", name)
            return
        super().report_change(name, attr, old, new)


def sanitize_preprocessors() -> list:
    """nbgrader's default sanitizing preprocessors with ``OverwriteCells`` replaced by :class:`RestoreCells`."""
    from nbgrader.converters import Autograde

    defaults = list(Autograde.class_traits()["sanitize_preprocessors"].default())
    if OverwriteCells not in defaults:
        raise RuntimeError("this nbgrader's sanitizing pass has no OverwriteCells preprocessor to replace; "
                           "update graders/engine/nbgrader/scoring.py")
    return [RestoreCells if preprocessor is OverwriteCells else preprocessor for preprocessor in defaults]


def autograde_preprocessors() -> list:
    """nbgrader's default autograde preprocessors with ``Execute`` replaced by :class:`EngineScores`."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    defaults = list(Autograde.class_traits()["autograde_preprocessors"].default())
    if Execute not in defaults:
        raise RuntimeError("this nbgrader's autograde pass has no Execute preprocessor to replace; "
                           "update graders/engine/nbgrader/scoring.py")
    return [EngineScores if preprocessor is Execute else preprocessor for preprocessor in defaults]
