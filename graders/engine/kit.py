"""The kit as the grader sees it: modules, learner files, exercises, reference modules.

Exercises are read from the reference solution files with
:func:`graders.build.exercises_in` (public fenced functions), in the order
module 8 then module 9, file by file, function by function.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from graders.build import exercises_in
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR

GRADERS_DIR = Path(__file__).resolve().parent.parent
CHECKS_DIR = GRADERS_DIR / "checks"
MISCONCEPTIONS_DIR = GRADERS_DIR / "misconceptions"
EXAMPLES_DIR = GRADERS_DIR / "examples"

# module number -> (folder, learner file stems in order)
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "8": ("module_08", ("module_8_reference", "module_8_training")),
    "9": ("module_09", ("module_9_reference", "module_9_training")),
}


@dataclass(frozen=True)
class LearnerFile:
    module: str  # "8" or "9"
    folder: str  # "module_08"
    stem: str  # "module_8_reference"


@dataclass(frozen=True)
class Kit:
    """Where the reference, the starter and the catalogue live (overridable for tests and bundles)."""

    solutions_dir: Path = SOLUTIONS_DIR
    starter_dir: Path = STARTER_DIR
    misconceptions_dir: Path = MISCONCEPTIONS_DIR
    root: Path = REPO_ROOT
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def files(self, modules=("8", "9")) -> list[LearnerFile]:
        return [LearnerFile(m, MODULES[m][0], stem) for m in sorted(modules) for stem in MODULES[m][1]]

    def solution_path(self, stem: str) -> Path:
        return self.solutions_dir / self._folder(stem) / f"{stem}.py"

    def starter_path(self, stem: str) -> Path:
        return self.starter_dir / self._folder(stem) / f"{stem}.py"

    @staticmethod
    def _folder(stem: str) -> str:
        for folder, stems in MODULES.values():
            if stem in stems:
                return folder
        raise ValueError(f"unknown learner file stem {stem!r}")

    def exercises(self, modules=("8", "9")) -> list[str]:
        """Every exercise id of the selected modules, in canonical order."""
        ids: list[str] = []
        for learner_file in self.files(modules):
            path = self.solution_path(learner_file.stem)
            if path.exists():
                ids.extend(exercises_in(path))
        return ids

    def functions_by_stem(self, modules=("8", "9")) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {f.stem: [] for f in self.files(modules)}
        for exercise_id in self.exercises(modules):
            stem, function = exercise_id.split(".", 1)
            found[stem].append(function)
        return found

    # -- modules loaded in the grading process ---------------------------------
    def reference_module(self, stem: str) -> ModuleType:
        """The reference solution of ``stem``, loaded once under a private name."""
        return self._load(("reference", stem), self.solution_path(stem), f"_rl4llm_reference_{stem}")

    def starter_module(self, stem: str) -> ModuleType:
        """The public starter of ``stem`` loaded in the grader (harness given code)."""
        return self._load(("starter", stem), self.starter_path(stem), f"_rl4llm_grader_starter_{stem}")

    def _load(self, key, path: Path, name: str) -> ModuleType:
        lock = self._cache.setdefault("lock", threading.RLock())
        with lock:
            if key not in self._cache:
                self._cache[key] = load_module(path, name)
            return self._cache[key]


DEFAULT_KIT = Kit()
