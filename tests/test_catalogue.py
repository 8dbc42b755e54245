"""The misconception catalogue, entry by entry: well formed, caught, named, and nowhere else.

Every entry of every file ``graders/misconceptions/<stem>/<function>.py`` (all
modules) becomes a mutant submission: the reference ``<stem>.py`` with the entry
applied after it (:func:`graders.engine.judging.misconceptions.mutant_source`). The mutants of one
learner file are graded together in one batch (:func:`graders.engine.routes.batch.grade_sources`,
workers in parallel), restricted to that learner file. Each mutant must lose
points on its own exercise and be named in that exercise's ``misconceptions``,
while every other exercise of the file keeps full marks. The unmodified
reference is graded in the same batch as the baseline.

Coverage: every exercise of every learner file has at least 3 entries. A learner
file with no catalogue at all is an expected failure (its catalogue is still to
be written); as soon as it has one entry, the rule is strict.

Workers: ``RL4LLM_TEST_JOBS`` (default: the number of CPUs, at least 2).
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from graders.build import exercises_in
from graders.checks import spec_for
from graders.engine.routes.batch import grade_sources
from graders.engine.routes.grading import GradeOptions
from graders import course, settings
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.engine.judging.misconceptions import all_catalogue_files, load_misconceptions, mutant_source, read_entries

pytestmark = pytest.mark.slow  # every misconception graded as a submission: about 2 minutes

MIN_ENTRIES = 3
REFERENCE = "reference-solution"  # the baseline submission (a hyphen: never an entry id)
JOBS = settings.get("RL4LLM_TEST_JOBS") or max(2, os.cpu_count() or 1)


@dataclass(frozen=True)
class Entry:
    stem: str  # the catalogue folder = the learner file's stem
    path: Path  # the exercise's catalogue file
    exercise: str
    name: str
    hint: str

    @property
    def id(self) -> str:
        return f"{self.exercise}.{self.name}"  # also the entry's submission name in its batch


def _entries() -> list[Entry]:
    return [Entry(path.parent.name, path, entry.exercise, entry.name, entry.hint)
            for path in all_catalogue_files() for entry in read_entries(path)]


ENTRIES = _entries()
LEARNER_STEMS = [f.stem for f in DEFAULT_KIT.files() if DEFAULT_KIT.solution_path(f.stem).exists()]


def _module_of(stem: str) -> str:
    return course.module_of(stem).number


@dataclass(frozen=True)
class OneFileKit(Kit):
    """The kit restricted to one learner file: only its exercises are graded (and its starter given)."""

    stem: str = ""

    def files(self, modules=None):
        return [f for f in super().files(modules) if f.stem == self.stem]


class Batches:
    """The graded reports of every mutant, one batch per learner file, computed on first use."""

    def __init__(self) -> None:
        self.reports: dict[str, dict[str, dict]] = {}
        self.seconds: dict[str, float] = {}

    def __call__(self, stem: str) -> dict[str, dict]:
        if stem not in self.reports:
            kit = OneFileKit(stem=stem)
            file_name = f"{stem}.py"
            submissions = {REFERENCE: {file_name: kit.solution_path(stem).read_text(encoding="utf-8")}}
            for entry in ENTRIES:
                if entry.stem == stem and entry.exercise.split(".", 1)[0] == stem:
                    submissions[entry.id] = {file_name: mutant_source(entry.exercise, entry.name)}
            started = time.perf_counter()
            self.reports[stem] = grade_sources(submissions, GradeOptions(modules=(_module_of(stem),)),
                                               jobs=JOBS, kit=kit)
            self.seconds[stem] = time.perf_counter() - started
        return self.reports[stem]


@pytest.fixture(scope="session")
def graded():
    batches = Batches()
    yield batches
    for stem, seconds in batches.seconds.items():
        count = len(batches.reports[stem]) - 1
        print(f"\n[test_catalogue] {stem}: {count} mutants + reference graded in {seconds:.1f} s "
              f"({JOBS} workers)")


def _exercises(report: dict, stem: str) -> dict[str, dict]:
    return {e["id"]: e for e in report["exercises"] if e["id"].split(".", 1)[0] == stem}


def _show(entry: dict) -> str:
    return f"{entry['id']}: {entry['status']} {entry['points']}/{entry['max_points']}\n{entry['feedback']}"


# ---------------------------------------------------------------------------- well formed
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_entry_is_well_formed(entry: Entry):
    stem, _, function = entry.exercise.partition(".")
    assert stem in LEARNER_STEMS, f"{entry.path}: no learner file {stem}.py"
    assert entry.exercise in exercises_in(DEFAULT_KIT.solution_path(stem)), f"{entry.path}: no exercise {function}"
    assert re.fullmatch(r"[a-z][a-z0-9_]*", entry.name), f"{entry.path}: NAME must be snake_case, got {entry.name!r}"
    assert entry.hint.strip() and "\n" not in entry.hint, f"{entry.path}: HINT must be one non-empty line"
    assert spec_for(entry.exercise) is not None, f"{entry.exercise} has no checks (graders/checks/{stem}.py)"
    names = [m.name for m in load_misconceptions(entry.exercise)]  # runs the entry; refuses duplicate names
    assert entry.name in names


# ---------------------------------------------------------------------------- coverage
@pytest.mark.parametrize("stem", LEARNER_STEMS)
def test_every_exercise_has_enough_misconceptions(stem: str):
    counts = Counter(e.exercise for e in ENTRIES if e.stem == stem)
    short = {exercise: counts.get(exercise, 0) for exercise in exercises_in(DEFAULT_KIT.solution_path(stem))
             if counts.get(exercise, 0) < MIN_ENTRIES}
    assert not short, f"exercises with fewer than {MIN_ENTRIES} catalogued misconceptions: {short}"


# ---------------------------------------------------------------------------- graded mutants
@pytest.mark.parametrize("stem", sorted({e.stem for e in ENTRIES} & set(LEARNER_STEMS)))
def test_the_reference_keeps_full_marks(graded, stem: str):
    for entry in _exercises(graded(stem)[REFERENCE], stem).values():
        assert entry["status"] == "passed" and entry["points"] == entry["max_points"] > 0, _show(entry)
        assert not entry["misconceptions"], _show(entry)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_mutant_loses_points_on_its_exercise_only_and_is_named(graded, entry: Entry):
    if entry.stem not in LEARNER_STEMS or entry.exercise not in exercises_in(DEFAULT_KIT.solution_path(entry.stem)):
        pytest.fail(f"{entry.path} is misplaced (see test_entry_is_well_formed)")
    exercises = _exercises(graded(entry.stem)[entry.id], entry.stem)
    target = exercises[entry.exercise]
    assert target["points"] < target["max_points"], f"the mutant keeps full marks:\n{_show(target)}"
    assert entry.name in target["misconceptions"], f"{entry.name!r} is not named:\n{_show(target)}"
    hit_elsewhere = [_show(e) for exercise_id, e in exercises.items()
                     if exercise_id != entry.exercise and (e["status"] != "passed" or e["points"] != e["max_points"])]
    assert not hit_elsewhere, "other exercises lose points:\n" + "\n".join(hit_elsewhere)
