"""The course registry: modules, learner files, exercises, points, languages.

The one place a module is spelled. Every part of the kit (the build, the
engine, the notebooks, the learner's hints, the CLI) asks here which modules
and learner files exist; nothing else lists them.

- A **module** has a number (``"8"``), a folder (``"module_08"``, its key
  everywhere: ``solutions/``, ``starter/``, ``assignments/source/``) and its
  learner files in teaching order.
- An **exercise** is a public top-level function of a learner file that holds a
  ``### BEGIN SOLUTION`` fence (:mod:`graders.fences`); its id is
  ``"<file stem>.<function>"``, e.g. ``"module_9_reference.grpo_loss"``.
  Exercises are read from ``solutions/``, so adding a fenced function adds the
  exercise; its points come from its checks (``graders/checks/``).
- **Given modules**: every other ``.py`` in a module's folder (:func:`given_modules`); one that
  several modules use (the toys' optimiser) is written once in ``solutions/common/`` and linked
  into each folder that imports it, so every folder still holds all it imports.
- **Languages**: every learner-facing text exists in each of ``LANGUAGES``.
- **Grader packages** (``GRADER_PACKAGES``): what a learner file may import on the grading machine besides the
  standard library, the given modules and the learner files.

A user may name a module as ``8``, ``module_08`` or ``module08``;
:func:`module` reads all three and returns the one :class:`Module`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graders.fences import exercises_in
from graders.paths import SOLUTIONS_DIR

LANGUAGES = ("en", "ru")
# The packages the grading machine has for a learner file, beside the Python standard library (the learner's
# sys.stdlib_module_names), the course's given modules and its learner files: the one list. The learner's pytest
# names each top-level import of their file outside it (starter/conftest.py, through the generated _kit_course.py);
# the grader stands in a placeholder for such a package (graders/engine/worker/missing.py), so only the functions
# that use it lose their checks.
GRADER_PACKAGES = ("numpy", "torch")


@dataclass(frozen=True)
class Module:
    """One course module and its learner files (file stems, in teaching order)."""

    number: str  # "8"
    folder: str  # "module_08": the module's key everywhere
    files: tuple[str, ...]  # ("module_8_reference", "module_8_training")

    @property
    def alias(self) -> str:
        """The CLI's historical spelling (``module08``), accepted on input only."""
        return self.folder.replace("_", "")


MODULES: tuple[Module, ...] = (
    Module("8", "module_08", ("module_8_reference", "module_8_training")),
    Module("9", "module_09", ("module_9_reference", "module_9_training")),
)
NUMBERS = tuple(m.number for m in MODULES)
FOLDERS = tuple(m.folder for m in MODULES)
STEMS = tuple(stem for m in MODULES for stem in m.files)


@dataclass(frozen=True)
class LearnerFile:
    """A file a learner edits: ``<folder>/<stem>.py`` in ``solutions/`` and ``starter/``."""

    module: str  # "8"
    folder: str  # "module_08"
    stem: str  # "module_8_reference"

    @property
    def relpath(self) -> str:
        return f"{self.folder}/{self.stem}.py"


def module(name: str | int | Module) -> Module:
    """The module named ``8``, ``"8"``, ``"module_08"`` or ``"module08"``; ``ValueError`` otherwise."""
    if isinstance(name, Module):
        return name
    text = str(name).strip()
    for candidate in MODULES:
        if text in (candidate.number, candidate.folder, candidate.alias):
            return candidate
    known = ", ".join(f"{m.number} ({m.folder})" for m in MODULES)
    raise ValueError(f"unknown module {name!r}; the course has modules {known}")


def module_of(stem: str) -> Module:
    """The module a learner file stem belongs to; ``ValueError`` for a stem the course does not have."""
    for candidate in MODULES:
        if stem in candidate.files:
            return candidate
    raise ValueError(f"unknown learner file {stem!r}; the course has {', '.join(STEMS)}")


def selected(modules=None) -> tuple[Module, ...]:
    """The modules named in ``modules`` (any spelling; ``None``: all), in course order."""
    if modules is None:
        return MODULES
    wanted = {module(name).folder for name in modules}
    return tuple(m for m in MODULES if m.folder in wanted)


def learner_files(modules=None) -> list[LearnerFile]:
    """Every learner file of the selected modules, in course order."""
    return [LearnerFile(m.number, m.folder, stem) for m in selected(modules) for stem in m.files]


def exercises(modules=None, solutions_dir: Path = SOLUTIONS_DIR) -> list[str]:
    """Every exercise id of the selected modules, in course order (file by file, function by function)."""
    ids: list[str] = []
    for learner_file in learner_files(modules):
        path = Path(solutions_dir) / learner_file.relpath
        if path.exists():
            ids.extend(exercises_in(path))
    return ids


def given_modules(solutions_dir: Path = SOLUTIONS_DIR, modules=None) -> dict[str, str]:
    """The given modules of the selected modules: name -> module folder.

    A given module is any other ``.py`` file in a module's folder (a toy
    environment, a training loop): the learner uses it and never edits it; the
    build copies it to ``starter/`` and the engine ships the kit's copy to
    every worker. A shared given module (a link to ``solutions/common/``) is
    named with the first selected folder that holds it; every folder's copy
    has the same text.
    """
    found: dict[str, str] = {}
    for candidate in selected(modules):
        for path in sorted((Path(solutions_dir) / candidate.folder).glob("*.py")):
            if path.stem not in candidate.files and path.name != "__init__.py":
                found.setdefault(path.stem, candidate.folder)
    return found
