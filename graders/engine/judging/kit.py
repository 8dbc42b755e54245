"""The kit as the grader sees it: where the course's files live, and its modules loaded once.

What exists (modules, learner files, exercises) is the course registry's
(:mod:`graders.course`); a :class:`Kit` adds the folders they are read from
(overridable for tests and bundles) and loads reference and starter modules
in the grading process.

A **given module** is any other ``.py`` of a module folder (``grpo_toy.py``,
no fence): given code a learner file imports by its plain name. A reference
or starter file is loaded with fresh copies of its folder's given modules
(:func:`graders.loader.load_module`'s ``given``), and a harness asks for a
given module by name (``starter("grpo_toy")``).
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from graders import course
from graders.course import LearnerFile
from graders.fences import exercises_in
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

GRADERS_DIR = Path(__file__).resolve().parents[2]  # graders/ (this file is graders/engine/judging/kit.py)
CHECKS_DIR = GRADERS_DIR / "checks"
MISCONCEPTIONS_DIR = GRADERS_DIR / "misconceptions"
EXAMPLES_DIR = GRADERS_DIR / "examples"


@dataclass(frozen=True)
class Kit:
    """Where the reference, the starter and the catalogue live (overridable for tests and bundles)."""

    solutions_dir: Path = SOLUTIONS_DIR
    starter_dir: Path = STARTER_DIR
    misconceptions_dir: Path = MISCONCEPTIONS_DIR
    root: Path = REPO_ROOT
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def keep_bytecode(self, *, whatever_the_environment: bool = False) -> bool:
        """Compile the kit's Python files (the engine, the references, the starter) whose bytecode is missing or
        stale, into their own ``__pycache__`` folders, as a package install does; True if it ran.

        Every process a batch starts (the fork servers, the notebook reader, the layers' probe) runs with
        ``PYTHONDONTWRITEBYTECODE`` and the grader itself writes nothing into the kit while it grades (its
        tripwire fingerprints the kit, bytecode included): without bytecode kept before the batch, each of them
        compiled the kit's modules again, about 1 s of CPU a batch (``docs/timings.md``). Skipped where the
        user asked for no bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``), where bytecode goes to a prefix of its
        own (``PYTHONPYCACHEPREFIX``: the batch's processes would not look there) or a folder cannot be written;
        an up-to-date kit costs a ``stat`` a file (about 10 ms). ``whatever_the_environment``: into the kit's
        folders all the same (the suite's controller and the benchmark, before any thread: the prefix is
        cleared for the while)."""
        if not whatever_the_environment and (sys.dont_write_bytecode or sys.pycache_prefix):
            return False
        import compileall

        prefix, sys.pycache_prefix = sys.pycache_prefix, None  # compileall writes where imports would read
        try:
            for folder in (GRADERS_DIR, self.solutions_dir, self.starter_dir):
                if folder.is_dir() and os.access(folder, os.W_OK):
                    try:
                        compileall.compile_dir(str(folder), quiet=2, workers=1)
                    except OSError:  # a read-only or full file system: the modules compile in memory, as before
                        continue
        finally:
            sys.pycache_prefix = prefix
        return True

    def files(self, modules=None) -> list[LearnerFile]:
        return course.learner_files(modules)

    def solution_path(self, stem: str) -> Path:
        return self.solutions_dir / course.module_of(stem).folder / f"{stem}.py"

    def starter_path(self, stem: str) -> Path:
        """The starter copy of a learner file or of a given module."""
        return self.starter_dir / self._folder(stem) / f"{stem}.py"

    def given_modules(self, modules=None) -> dict[str, str]:
        """Every given module of the selected modules: its name -> its module folder (``"module_09"``)."""
        return course.given_modules(self.solutions_dir, modules)

    def _folder(self, stem: str) -> str:
        given = self.given_modules()
        return given[stem] if stem in given else course.module_of(stem).folder

    def _given_files(self, root: Path, stem: str) -> dict[str, Path]:
        """The given modules next to ``stem`` under ``root`` (solutions or starter): name -> file."""
        folder = self._folder(stem)
        return {name: root / folder / f"{name}.py" for name in self.given_modules((folder,))}

    def exercises(self, modules=None) -> list[str]:
        """Every exercise id of this kit's learner files, in course order (read from its solutions)."""
        ids: list[str] = []
        for learner_file in self.files(modules):
            path = self.solution_path(learner_file.stem)
            if path.exists():
                ids.extend(exercises_in(path))
        return ids

    def functions_by_stem(self, modules=None) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {f.stem: [] for f in self.files(modules)}
        for exercise_id in self.exercises(modules):
            stem, function = exercise_id.split(".", 1)
            found[stem].append(function)
        return found

    # -- modules loaded in the grading process ---------------------------------
    def reference_module(self, stem: str) -> ModuleType:
        """The reference solution of ``stem``, loaded once under a private name (with the solutions' given modules)."""
        return self._load(("reference", stem), self.solution_path(stem), f"_rl4llm_reference_{stem}",
                          self.solutions_dir)

    def starter_module(self, stem: str) -> ModuleType:
        """The public starter of a learner file or a given module, loaded in the grader (a harness's given code)."""
        return self._load(("starter", stem), self.starter_path(stem), f"_rl4llm_grader_starter_{stem}",
                          self.starter_dir)

    def keep_given_state(self, name: str, payload: dict, arrays: dict) -> None:
        """What an earlier batch's runs of given module ``name`` kept (its warm-ups): filled into the grader's
        copy when it is loaded (:meth:`starter_module`), so a warm batch that never runs the given code here
        never imports what it imports (torch for ``grpo_toy``)."""
        with self._lock():
            self._cache[("kept", name)] = (payload, arrays)
            self._fill_kept(name)

    def _fill_kept(self, name: str) -> None:
        """Fill the grader's loaded copy of given module ``name`` with its kept state, where both are here."""
        module, kept = self._cache.get(("starter", name)), self._cache.get(("kept", name))
        if module is not None and kept is not None:
            from graders.engine.values import bundles  # NumPy: only where a kept state is filled

            bundles.fill_kept_state(module, *kept)

    def loaded_given_modules(self) -> dict[str, ModuleType]:
        """The given modules this kit has loaded as a harness's given code (:meth:`starter_module`), by name."""
        given = self.given_modules()
        return {key[1]: module for key, module in list(self._cache.items())
                if isinstance(key, tuple) and key[0] == "starter" and key[1] in given}

    def _load(self, key, path: Path, name: str, root: Path) -> ModuleType:
        """Load once; the given modules next to it (under ``root``) are looked up on the first load only."""
        with self._lock():
            if key not in self._cache:
                self._cache[key] = load_module(path, name, given=self._given_files(root, key[1]))
                if key[0] == "starter":
                    self._fill_kept(key[1])
            return self._cache[key]

    def _lock(self) -> threading.RLock:
        return self._cache.setdefault("lock", threading.RLock())


@dataclass(frozen=True)
class OneFileKit(Kit):
    """The kit cut down to one learner file: only its exercises are graded (and its starter given); ``only``, when
    given, cuts it to those exercises of the file (the catalogue's tests, ``rl4llm check-exercise``)."""

    stem: str = ""
    only: frozenset[str] | None = None

    def files(self, modules=None):
        return [f for f in super().files(modules) if f.stem == self.stem]

    def exercises(self, modules=None):
        return [e for e in super().exercises(modules) if self.only is None or e in self.only]


DEFAULT_KIT = Kit()
