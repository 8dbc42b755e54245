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
   :func:`graders.engine.batch.grade_paths`: its definitions (functions,
   classes, imports, constants -- :func:`graders.engine.submission.notebook_definitions`)
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
:class:`CourseTampered` -- nbgrader logs the error, records no grade from that
run and exits with an error.

Grader artefacts never land in the course folder: the engine runs with a
temporary working directory and Hypothesis's storage directory in that
temporary folder (Hypothesis would otherwise write ``.hypothesis/`` -- with
literal constants of the hidden checks -- into the current directory, from
where ``generate_feedback`` would copy it to the students), and the engine's
reports go to a temporary folder that is deleted afterwards.

``RL4LLM_HIDE_HIDDEN_INPUTS=1`` (or ``c.EngineScores.hide_hidden_inputs =
True``) withholds the inputs of hidden checks from the feedback.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import string
import tempfile
from pathlib import Path

from nbformat.notebooknode import NotebookNode, from_dict
from traitlets import Bool, Unicode, default

from nbgrader import utils as nbgrader_utils
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

from graders.course import LANGUAGES
from graders.engine import texts
from graders.text import Text

HIDE_ENV = "RL4LLM_HIDE_HIDDEN_INPUTS"
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
                "Оценку выставил движок проверки кита по определениям этого ноутбука, в изолированном процессе; "
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
    "no_exercise": Text("{cell}: the kit has no exercise for this graded cell; it scores 0.",
                        "{cell}: у кита нет упражнения для этой оцениваемой ячейки; она приносит 0 баллов."),
    "no_report": Text("{exercise}: the engine returned no result for this exercise; it scores 0.",
                      "{exercise}: движок не вернул результат по этому упражнению; оно приносит 0 баллов."),
}


class CourseTampered(RuntimeError):
    """Files of the course folder or the gradebook changed while a notebook was being graded."""


def _hide_default() -> bool:
    return os.environ.get(HIDE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def language_of(assignment_id: str) -> str:
    """``ru`` for the Russian assignments (``module_09_ru``), else ``en`` (``graders.build.notebooks.assignment_name``)."""
    for language in LANGUAGES:
        if language != "en" and assignment_id.endswith(f"_{language}"):
            return language
    return "en"


def exercise_for(notebook_id: str, grade_id: str, kit=None) -> str | None:
    """The exercise id a graded cell stands for (``test-<function>`` in notebook ``<stem>``), or None."""
    from graders.engine.kit import DEFAULT_KIT

    kit = kit or DEFAULT_KIT
    if not grade_id.startswith(TEST_PREFIX):
        return None
    module = module_of(notebook_id)
    if module is None:
        return None
    exercise_id = f"{notebook_id}.{grade_id[len(TEST_PREFIX):]}"
    return exercise_id if exercise_id in kit.exercises((module,)) else None


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

    Runs :func:`graders.engine.batch.grade_paths` on a fresh temporary folder
    (the submission, the reports, the working directory and Hypothesis's
    storage all inside it; everything is deleted afterwards), its feedback in
    ``language``. Each entry also says whether the notebook's function is
    still the untouched stub, ``"not_implemented"`` (:func:`untouched_stubs`).
    """
    from graders.engine.batch import grade_paths
    from graders.engine.grading import GradeOptions
    from graders.engine.kit import DEFAULT_KIT

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
    schema, :class:`graders.engine.protocol.SubmissionReport`; the exercises in course order) and return its path."""
    from graders.engine.kit import DEFAULT_KIT
    from graders.engine.learner_text import file_name
    from graders.engine.protocol import ExerciseReport, Status, SubmissionReport
    from graders.engine.reports import report_json

    # names, never paths: ".." or a NUL in a student id would leave the folder or stop nbgrader
    folder = report_dir / file_name(Path(assignment).name, "assignment") / file_name(student, "student")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.json"
    merged = {entry["id"]: entry for entry in
              (json.loads(path.read_text(encoding="utf-8"))["exercises"] if path.exists() else [])}
    merged.update(entries)
    order = {exercise_id: index for index, exercise_id in enumerate(DEFAULT_KIT.exercises())}
    exercises = tuple(ExerciseReport(e["id"], Status(e["status"]), e["points"], e["max_points"], e["feedback"],
                                     tuple(e["misconceptions"]), bool(e.get("not_implemented")))
                      for e in sorted(merged.values(), key=lambda e: (order.get(e["id"], len(order)), e["id"])))
    path.write_text(report_json(SubmissionReport(str(student), exercises, {}).to_dict()), encoding="utf-8",
                    errors="backslashreplace")  # the id as it is, cleaned; the class report escapes it
    return path


def untouched_stubs(notebook_text: str) -> set[str]:
    """The functions a notebook defines (its last definition of each, as the engine grades) whose body, a
    docstring aside, is only ``raise NotImplementedError`` (with or without a message): the exercises the
    learner has not started. Read from the code, so it does not depend on the feedback's language."""
    import ast

    from graders.engine.submission import notebook_definitions

    try:
        tree = ast.parse(notebook_definitions(notebook_text.encode("utf-8", "backslashreplace")))
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return set()
    last = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {name for name, node in last.items() if _raises_not_implemented_only(node.body)}


def _raises_not_implemented_only(body: list) -> bool:
    import ast

    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


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
# The course folder's fingerprint (defence in depth)
# ---------------------------------------------------------------------------
def fingerprint(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (links not followed): type, size, mtime, ctime, inode."""
    found: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (info.st_mode, info.st_size, info.st_mtime_ns,
                                                  info.st_ctime_ns, info.st_ino)
    return found


def _sqlite_path(db_url: str) -> Path | None:
    if db_url.startswith("sqlite:///") and not db_url.startswith("sqlite:///:memory:"):
        return Path(db_url[len("sqlite:///"):])
    return None


class _Guard:
    """Fingerprints of the course folder and the gradebook, and a copy of the gradebook, before grading."""

    SIDECARS = ("-journal", "-wal", "-shm")

    def __init__(self, course: Path, db_url: str) -> None:
        self.course = course
        self.db = _sqlite_path(db_url)
        self.before = fingerprint(course)
        self.db_before = self._db_state()
        self.db_bytes = self.db.read_bytes() if self.db is not None and self.db.is_file() else None

    def _db_state(self):
        if self.db is None:
            return None
        state = {}
        for suffix in ("",) + self.SIDECARS:
            path = Path(f"{self.db}{suffix}")
            try:
                info = os.lstat(path)
            except OSError:
                continue
            state[suffix] = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        return state

    def check(self) -> None:
        """Raise :class:`CourseTampered` (after restoring the gradebook) if anything changed."""
        after = fingerprint(self.course)
        changed = sorted(path for path in set(self.before) | set(after) if self.before.get(path) != after.get(path))
        db_changed = self._db_state() != self.db_before
        if not changed and not db_changed:
            return
        restored = ""
        if db_changed and self.db is not None and self.db_bytes is not None:
            for suffix in self.SIDECARS:
                if suffix not in self.db_before:
                    with contextlib.suppress(OSError):
                        os.remove(f"{self.db}{suffix}")
            with contextlib.suppress(OSError):
                os.remove(self.db)  # a fresh file: the learner's code may have kept it open or linked it
            self.db.write_bytes(self.db_bytes)
            restored = f"; the gradebook {self.db} was restored from the copy taken before grading"
        shown = ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else "")
        raise CourseTampered(f"files changed while the kit's engine graded this notebook ({shown or 'the gradebook'})"
                             f"{restored}. The engine's sandbox should have prevented this; no grade is "
                             "recorded from this run. Inspect the submission and the course folder.")


# ---------------------------------------------------------------------------
# The preprocessor
# ---------------------------------------------------------------------------
class EngineScores(NbGraderPreprocessor):
    """Score autograded test cells with the kit's engine instead of executing the notebook (see the module doc)."""

    hide_hidden_inputs = Bool(help="Withhold the inputs of hidden checks from the feedback "
                                   f"(default: the environment variable {HIDE_ENV}).").tag(config=True)
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
        stem, assignment = info["notebook"], info["assignment"]
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
                level = self.log.info if message.startswith("note") else self.log.warning
                level("kit engine: %s", message)
            if self.report_dir:
                keep_report(Path(self.report_dir), assignment, info.get("student", "student"), entries)

        for cell in graded:
            exercise_id = exercises[id(cell)]
            points = float(cell.metadata.nbgrader.get("points", 0))
            if exercise_id is None:
                grade_id = cell.metadata.nbgrader.get("grade_id", "?")
                self.log.error("%s/%s: graded cell %s is no exercise of the kit; it scores 0", assignment, stem,
                               grade_id)
                cell.outputs = [from_dict(_error(TEXT["no_exercise"].in_(language, cell=grade_id), []))]
                continue
            score, outputs = verdict_outputs(entries.get(exercise_id), exercise_id, points, language,
                                             self.hide_hidden_inputs)
            cell.outputs = [from_dict(output) for output in outputs]
            self.log.info("%s/%s: %s scored %s of %s by the kit's engine", assignment, stem, exercise_id,
                          _number(score), _number(points))
        return nb, resources


class RestoreCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` that tolerates the empty metadata ``DeduplicateIds`` leaves on duplicates.

    With ``add_missing_cells`` (deleted test cells come back and are scored),
    nbgrader 0.9 reads ``grade_id`` from every cell that has nbgrader metadata,
    but a duplicated graded cell keeps ``{}`` there after ``DeduplicateIds``,
    and the whole submission fails. Empty nbgrader metadata means the same as
    none, so it is removed first.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        for cell in nb.cells:
            if "nbgrader" in cell.metadata and not cell.metadata.nbgrader:
                del cell.metadata["nbgrader"]
        return super().preprocess(nb, resources)


def sanitize_preprocessors() -> list:
    """nbgrader's default sanitizing preprocessors with ``OverwriteCells`` replaced by :class:`RestoreCells`."""
    from nbgrader.converters import Autograde

    defaults = list(Autograde.class_traits()["sanitize_preprocessors"].default())
    if OverwriteCells not in defaults:
        raise RuntimeError("this nbgrader's sanitizing pass has no OverwriteCells preprocessor to replace; "
                           "update graders/engine/nbgrader_scoring.py")
    return [RestoreCells if preprocessor is OverwriteCells else preprocessor for preprocessor in defaults]


def autograde_preprocessors() -> list:
    """nbgrader's default autograde preprocessors with ``Execute`` replaced by :class:`EngineScores`."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    defaults = list(Autograde.class_traits()["autograde_preprocessors"].default())
    if Execute not in defaults:
        raise RuntimeError("this nbgrader's autograde pass has no Execute preprocessor to replace; "
                           "update graders/engine/nbgrader_scoring.py")
    return [EngineScores if preprocessor is Execute else preprocessor for preprocessor in defaults]
