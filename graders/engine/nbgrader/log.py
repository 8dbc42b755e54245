"""The nbgrader course's log: nbgrader's own noise quiet, resubmissions that ``autograde`` would skip named.

Both are called from ``assignments/nbgrader_config.py`` when nbgrader loads it:

- :func:`quiet_database_warnings`: nbgrader 0.9's gradebook raises SQLAlchemy's "Object of type
  <SubmittedAssignment> not in session" warnings for every submission (harmless: nbgrader adds the
  object itself just after); they are ignored unless ``RL4LLM_NBGRADER_VERBOSE=1``.
- :func:`warn_skipped_resubmissions`: ``nbgrader autograde`` without ``--force`` skips a student it has
  autograded before ("Skipping existing assignment", exit 0) unless the submission's ``timestamp.txt``
  is newer -- and a submission placed by hand has none. Before autograde runs, every submission whose
  notebooks changed after its autograded copy, and that nbgrader will therefore skip, is one WARNING
  line naming it and the command that grades it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graders import settings
from graders.cleaner import say
from graders.text import Text

VERBOSE_ENV = "RL4LLM_NBGRADER_VERBOSE"
_WARNED: set[str] = set()  # the lines written in this process

TEXT = {
    "skipped": Text("[rl4llm | WARNING] {student}/{assignment}: the submission changed after it was autograded, and "
                    "nbgrader will skip it (\"Skipping existing assignment\"); grade it again with "
                    "`nbgrader autograde {assignment} --student {student} --force`",
                    "[rl4llm | WARNING] {student}/{assignment}: сдача изменилась после автопроверки, и nbgrader "
                    "её пропустит (\"Skipping existing assignment\"); чтобы проверить её заново: "
                    "`nbgrader autograde {assignment} --student {student} --force`"),
}


def quiet_database_warnings() -> None:
    """Ignore the gradebook's "not in session" SQLAlchemy warnings, unless ``RL4LLM_NBGRADER_VERBOSE=1``."""
    import warnings

    if settings.get(VERBOSE_ENV):
        return
    try:
        from sqlalchemy.exc import SAWarning
    except ImportError:  # pragma: no cover - nbgrader depends on SQLAlchemy
        return
    warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session", category=SAWarning)


def skipped_resubmissions(course: Path, argv: list[str]) -> list[tuple[str, str]]:
    """(student, assignment) of every submission ``nbgrader <argv>`` would skip although it changed since it was
    autograded: only for ``autograde`` without ``--force``; a submission with a ``timestamp.txt`` is left to
    nbgrader (it compares those itself)."""
    if "autograde" not in argv or any(arg == "--force" or arg.startswith("--force=") for arg in argv):
        return []
    found = []
    for notebooks in sorted(course.glob("submitted/*/*")):
        student, assignment = notebooks.parent.name, notebooks.name
        graded = course / "autograded" / student / assignment
        if not notebooks.is_dir() or not graded.is_dir() or (notebooks / "timestamp.txt").exists():
            continue
        if not _wanted(argv, student, assignment):
            continue
        graded_at = min((path.stat().st_mtime for path in graded.glob("*.ipynb")), default=None)
        changed = max((path.stat().st_mtime for path in notebooks.glob("*.ipynb")), default=None)
        if graded_at is not None and changed is not None and changed > graded_at:
            found.append((student, assignment))
    return found


def _wanted(argv: list[str], student: str, assignment: str) -> bool:
    """Whether the command line names this student and assignment (or none: all of them)."""
    words = argv[argv.index("autograde") + 1:]
    students = [w.split("=", 1)[1] for w in words if w.startswith("--student=")]
    students += [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--student"]
    positional = [w for i, w in enumerate(words) if not w.startswith("-") and (i == 0 or words[i - 1] != "--student")]
    return (not students or student in students) and (not positional or assignment in positional)


def warn_skipped_resubmissions(course: Path, argv: list[str] | None = None, language: str | None = None,
                               stream=None) -> list[str]:
    """Write (to stderr) and return one WARNING line per resubmission nbgrader would skip (:func:`skipped_resubmissions`)."""
    from graders.language import default_language

    language = language or default_language()
    lines = [TEXT["skipped"].in_(language, student=student, assignment=assignment)
             for student, assignment in skipped_resubmissions(Path(course), list(sys.argv if argv is None else argv))]
    for line in lines:
        if line not in _WARNED:  # nbgrader loads its config file more than once
            say(line, file=stream or sys.stderr, flush=True)
        _WARNED.add(line)
    return lines

