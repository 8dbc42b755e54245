"""The grading protocol: what a judged case, exercise and submission are.

Typed from the judge to the report files (docs/style.md, rule 13): :mod:`graders.engine.judging.judge`
decides every status and point, :mod:`graders.engine.outputs.feedback` only renders
text, and :meth:`SubmissionReport.to_dict` is the one place the ``report.json``
schema is written:

    {"submission": str, "score": float, "max_score": float,
     "exercises": [{"id", "status", "points", "max_points", "feedback", "misconceptions"}],
     # optional per exercise: "not_implemented": true, "candidates": [names], "hints": {name: {language: text}},
     #   "cause": {"kind": str, "text": {language: str}} (why an error or a timeout: its first line, never an
     #   input of a check), "failing": [kinds] (the CaseResult values of the failing checks, sorted)
     "sandbox": {layer: bool, ..., "identity": str}}

Statuses: ``passed`` (every check passed), ``failed`` (a wrong answer or a
changed input), ``error`` (a case raised unexpectedly, the file could not be
loaded, the worker crashed, the sandbox refused something, the kit could not
grade), ``timeout``, ``missing`` (no file or no function).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from graders.text import Text


class Status(str, Enum):
    """An exercise's status in a report (its value is the schema's string)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    MISSING = "missing"


STATUSES = tuple(status.value for status in Status)


class CaseResult(Enum):
    """How one check of an exercise came out."""

    PASSED = "passed"
    WRONG = "wrong"  # returned a value that does not match the reference's
    WRONG_TYPE = "wrong type"  # returned a value of another type than the spec's (the reference's)
    UNREADABLE = "unreadable"  # returned something the grader cannot decode
    NOT_RAISED = "not raised"  # returned a value where the check expects an exception
    WRONG_EXCEPTION = "wrong exception"  # raised, but not the exception the check expects
    RAISED = "raised"  # raised where the check expects a value
    MODIFIED_INPUT = "modified input"  # changed an input in place
    NO_RESULT = "no result"  # nothing came back for this check

    @property
    def is_error(self) -> bool:
        """A result that makes the exercise's status ``error`` rather than ``failed``."""
        return self in (CaseResult.RAISED, CaseResult.NO_RESULT)


@dataclass
class CaseOutcome:
    """One failing check, with everything feedback needs to describe it."""

    index: int
    case: object  # graders.checks.Case
    result: CaseResult
    expected: object = None  # the reference's normalised value (WRONG)
    got: object = None  # the learner's normalised value (WRONG, NOT_RAISED)
    reason: str | None = None  # the comparator's line (WRONG)
    error: dict | None = None  # {"type", "message", "where", "mro"} (RAISED, WRONG_EXCEPTION)
    changed: tuple = ()  # positions (int) or keywords (str) of changed inputs (MODIFIED_INPUT)
    named: list[tuple[str, str]] = field(default_factory=list)  # (misconception, its hint: a Text) named here
    trap: float | None = None  # a value where exactly 0 is expected that floating point explains (WRONG)

    @property
    def not_implemented(self) -> bool:
        """The learner's function raised ``NotImplementedError`` (an untouched stub)."""
        return self.error is not None and "NotImplementedError" in (self.error.get("mro") or [self.error.get("type")])


class Reason(Enum):
    """Why an exercise's checks were not judged one by one (each scores 0; :attr:`status` says which)."""

    SUBMISSION_UNGRADABLE = "submission ungradable"  # the submission as a whole (bad zip, too large...)
    FILE_UNREADABLE = "file unreadable"  # the learner file (encoding, syntax)
    FILE_MISSING = "file missing"
    NOT_GRADABLE = "not gradable"  # the kit has no usable checks for this exercise
    NO_RESULT = "no result"  # the worker returned nothing
    LOAD_FAILED = "load failed"
    LOAD_REFUSED = "load refused"  # loading the file tried something the sandbox refuses
    LOAD_TIMEOUT = "load timeout"
    LOAD_CRASHED = "load crashed"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    FUNCTION_MISSING = "function missing"
    REFUSED = "refused"  # the exercise tried something the sandbox refuses
    NO_CHECKS = "no checks"  # every check was a kit problem

    @property
    def status(self) -> Status:
        if self in (Reason.FILE_MISSING, Reason.FUNCTION_MISSING):
            return Status.MISSING
        if self in (Reason.LOAD_TIMEOUT, Reason.TIMEOUT):
            return Status.TIMEOUT
        return Status.ERROR


@dataclass
class Judgement:
    """The judge's decision on one exercise: status and points, and the facts behind them."""

    status: Status
    points: float = 0.0
    notes: list[str] = field(default_factory=list)  # remarks about the file (where it was found...)
    reason: Reason | None = None  # set when the checks were not judged one by one
    detail: str = ""  # the reason's particulars (a problem text, an error, a message)
    error: dict | None = None  # the load error (LOAD_FAILED, LOAD_REFUSED)
    output: str = ""  # the learner code's last output (load errors, crashes)
    checks: int = 0  # usable checks
    problems: list[CaseOutcome] = field(default_factory=list)  # the failing checks, in order
    kit_problems: list[str] = field(default_factory=list)  # checks skipped for the kit's own fault
    # name -> (hint, label of the check it was named on), each a graders.text.Text; at most one: the one
    # catalogue entry that agrees with the learner's answer on every check where both returned a value
    misconceptions: dict[str, tuple[str, str]] = field(default_factory=dict)
    candidates: tuple[str, ...] = ()  # several entries agree on every check: listed, none claimed
    not_implemented: bool = False  # every failing check raised NotImplementedError: the untouched stub


@dataclass(frozen=True)
class ExerciseReport:
    """One exercise of one submission, as it appears in ``report.json``."""

    id: str
    status: Status
    points: float
    max_points: float
    feedback: str
    misconceptions: tuple[str, ...] = ()
    not_implemented: bool = False  # still the untouched stub (status error, 0 points)
    candidates: tuple[str, ...] = ()  # entries that each fit every check (none claimed)
    # why an error or a timeout: {"kind": a Reason's or CaseResult's value, "text": {language: one line}}
    cause: dict | None = None
    failing: tuple[str, ...] = ()  # the CaseResult values of the failing checks ("not raised": no validation)
    # each named misconception's hint in every language ({name: {language: text}}): what the class report and
    # the LMS export read (never the catalogue's source)
    hints: dict | None = None

    def to_dict(self) -> dict:
        entry = {"id": self.id, "points": round(self.points, 4), "max_points": round(self.max_points, 4),
                 "status": self.status.value, "feedback": self.feedback,
                 "misconceptions": sorted(set(self.misconceptions))}
        if self.not_implemented:  # only then: every other report reads as it always did
            entry["not_implemented"] = True
        if self.candidates:  # likewise: several catalogue entries fit, none is claimed
            entry["candidates"] = sorted(set(self.candidates))
        if self.cause:  # likewise: an error's or a timeout's cause, for the class report
            entry["cause"] = self.cause
        if self.failing:  # likewise: how the failing checks failed
            entry["failing"] = sorted(set(self.failing))
        if self.hints:  # likewise: the named misconceptions' hints, in every language
            entry["hints"] = {name: dict(sorted(texts.items())) for name, texts in sorted(self.hints.items())}
        return entry


@dataclass(frozen=True)
class SubmissionReport:
    """One graded submission: its exercises and the sandbox its worker had."""

    submission: str
    exercises: tuple[ExerciseReport, ...]
    sandbox: dict | None = None

    def to_dict(self) -> dict:
        entries = [exercise.to_dict() for exercise in self.exercises]
        report = {"submission": self.submission, "score": round(sum(e["points"] for e in entries), 4),
                  "max_score": round(sum(e["max_points"] for e in entries), 4), "exercises": entries}
        if self.sandbox is not None:
            report["sandbox"] = self.sandbox
        return report


# ---------------------------------------------------------------------------
# What came in, and what came back from a worker
# ---------------------------------------------------------------------------
@dataclass
class Submission:
    """A submission ready to grade: its name and, per file stem, the learner source to use."""

    name: str
    origin: Path
    sources: dict[str, str] = field(default_factory=dict)  # stem -> python source text (or bytes problem)
    raw: dict[str, bytes] = field(default_factory=dict)  # stem -> raw bytes of a .py file
    where: dict[str, str] = field(default_factory=dict)  # stem -> path inside the submission
    notes: dict[str, list[str]] = field(default_factory=dict)  # stem -> feedback notes
    problem: str | None = None  # the whole submission could not be read


CPU_BUDGET_MESSAGE = "the exercise used more CPU time than its budget"
MAX_SUBMISSION_BYTES = 192 << 20  # everything read from a submission's workers (one lane), together
TOO_MUCH_MESSAGE = Text(
    f"the submission's workers sent more than {MAX_SUBMISSION_BYTES >> 20} MiB: this exercise and those "
    "after it were stopped",
    f"рабочие процессы решения передали больше {MAX_SUBMISSION_BYTES >> 20} МиБ: это упражнение и "
    "следующие остановлены")
OUTSIDE_PROTOCOL_MESSAGE = Text(
    "the learner's code wrote on the grader's result pipe (a line outside the grading protocol, or more than "
    "its results may take): its process was stopped",
    "код решения писал в канал результатов проверяющей программы (строку вне протокола проверки или больше, "
    "чем занимают его результаты): его процесс остановлен")
WALL_CAP_MESSAGE = Text(
    "the submission ran past its wall-clock cap (its exercises' CPU budgets together, plus 30 s): this exercise "
    "and those after it were stopped",
    "решение работало дольше своего общего предела по времени (сумма бюджетов CPU его упражнений плюс 30 с): "
    "это упражнение и следующие остановлены")


@dataclass
class ExerciseRun:
    """What came back from the worker for one exercise (before comparison)."""

    status: str  # "done" | "timeout" | "crashed" | "load_error" | "load_timeout" | "load_crashed"
    payload: dict | None = None
    arrays: dict = field(default_factory=dict)
    message: str = ""
    output: str = ""
    # the worker parent's reading of the shared array inputs: per case, the array nodes whose values the
    # call changed (:mod:`graders.engine.values.shared_inputs`); None: not observed (only the child's report)
    inputs_changed: list | None = None
