"""Which modules a class handed in: what ``rl4llm grade`` without ``--module`` grades.

Grading both modules' exercises when a class handed in one module's files shows a perfect submission as a
fraction of the course's points ("missing" every exercise of the other module). So without ``--module`` the
grader looks at the file names the submissions hold (folders, zips, notebooks; an LMS prefix such as
``alice_1234_module_9_reference.py`` still names the file):

- every submission that holds a learner file holds one module's files only, the same module: that module is
  graded, and a note says so with the option that makes it explicit;
- some submissions hold one module and others the other: both modules are graded, and one warning names the
  two commands to use instead;
- otherwise (every submission holds both, or none names a learner file): both modules, silently.

Only names are read, never contents, and at most ``MAX_NAMES`` per submission (a folder is walked without
following links; a zip is opened by :func:`graders.engine.intake.reader.open_zip`, its end records checked
first: a zip the reader would refuse has no names).
"""

from __future__ import annotations

import os
from pathlib import Path

from graders import course
from graders.engine.intake import reader as intake
from graders.text import Text

MAX_NAMES = 2000  # file names read per submission: enough for any real one, bounded for a hostile one
SAID = {
    "one": Text("note: every submission holds Module {number}'s files only: grading Module {number} "
                "(--module {number} says so; --module with another number overrides)",
                "примечание: во всех работах только файлы модуля {number}: проверяется модуль {number} "
                "(явно: --module {number}; другой номер в --module это отменяет)"),
    "mixed": Text("warning: some submissions hold only Module 8's files and others only Module 9's: grading both "
                  "modules, so each submission misses the other module's points; grade each module on its own: "
                  "{commands}",
                  "предупреждение: в одних работах только файлы модуля 8, в других только модуля 9: проверяются "
                  "оба модуля, и каждая работа теряет баллы другого модуля; проверяйте каждый модуль отдельно: "
                  "{commands}"),
}


def file_names(path: Path) -> list[str]:
    """The file names ``path`` holds (a folder's, without following links; a zip's members), at most MAX_NAMES."""
    path = Path(path)
    names: list[str] = []
    try:
        if path.is_dir() and not path.is_symlink():
            for _root, folders, files in os.walk(path, followlinks=False):
                folders[:] = [folder for folder in folders if not folder.startswith(".")]
                names.extend(files)
                if len(names) >= MAX_NAMES:
                    break
        elif path.suffix.lower() == ".zip" and path.is_file():
            with intake.open_zip(path, intake.SUBMISSION_CAPS.but(files=MAX_NAMES)) as archive:
                names = [Path(info.filename).name for info in archive.infolist()[:MAX_NAMES]]
        else:
            names = [path.name]
    except (OSError, ValueError, RuntimeError):  # intake.UnsafeSubmission is a ValueError
        return []
    return names[:MAX_NAMES]


def modules_in(names: list[str]) -> set[str]:
    """The modules (numbers) whose learner files appear among ``names`` (a stem anywhere in a name: LMS
    prefixes and ``(1)`` copies kept; a notebook named after the module's folder counts too)."""
    found = set()
    for name in names:
        lowered = name.lower().replace("-", "_").replace(" ", "_")
        for module in course.MODULES:
            if any(stem in lowered for stem in module.files) or (
                    lowered.endswith(".ipynb") and (module.folder in lowered or module.alias in lowered)):
                found.add(module.number)
    return found


def infer(paths: list[Path], language: str = "en") -> tuple[tuple[str, ...], str | None]:
    """(the modules to grade, a note or warning in ``language`` to print, or None), from the submissions' file
    names."""
    per_submission = [modules_in(file_names(path)) for path in paths]
    handed_in = [found for found in per_submission if found]
    singles = {next(iter(found)) for found in handed_in if len(found) == 1}
    if handed_in and all(len(found) == 1 for found in handed_in) and len(singles) == 1:
        (number,) = singles
        return (number,), SAID["one"].in_(language, number=number)
    if len(singles) > 1:
        commands = ", ".join(f"`rl4llm grade ... --module {number}`" for number in sorted(singles))
        return course.NUMBERS, SAID["mixed"].in_(language, commands=commands)
    return course.NUMBERS, None
