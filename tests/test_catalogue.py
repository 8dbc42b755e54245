"""The misconception catalogue, entry by entry: well formed, caught, named, and nowhere else.

Every entry of every file ``graders/misconceptions/<stem>/<function>.py`` (all
modules) becomes a mutant submission: the reference ``<stem>.py`` with the entry
applied after it (:func:`graders.engine.judging.misconceptions.mutant_source`), graded by
:func:`graders.engine.routes.batch.grade_sources` (workers in parallel). Each mutant must lose
points on its own exercise and be named in that exercise's ``misconceptions``,
while every other exercise it is graded on keeps full marks. The unmodified
reference, graded on its whole file, is the baseline.

Which exercises a mutant is graded on:

- **the README's suite**: its own exercise and every exercise of its file whose
  definition reaches the mutated function by name, directly or through other
  definitions of the file, or whose checks declare it a dependency
  (:func:`reach`). An entry only redefines that one function (and adds private
  helpers), so no other exercise of the file can see it; the mutants with the
  same reach are graded together, one batch per reach.
- **the exhaustive tier** (:func:`test_no_mutant_costs_an_exercise_it_cannot_reach`):
  every exercise of its file, all mutants of a file in one batch, which checks
  that claim as well (about 100 s of CPU more on 2 cores).

Coverage: every exercise of every learner file has at least 3 entries. A learner
file with no catalogue at all is an expected failure (its catalogue is still to
be written); as soon as it has one entry, the rule is strict.

Workers: ``RL4LLM_TEST_JOBS`` (default: the number of CPUs, at least 2).
"""

from __future__ import annotations

import ast
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
from graders.engine.judging.kit import DEFAULT_KIT, OneFileKit
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


def reach(stem: str) -> dict[str, frozenset[str]]:
    """For each exercise of learner file ``stem``: itself, the exercises whose definitions reach it by name, and
    those whose checks declare it a dependency (its answers stand in for it: ``call.describe()["names"]``)."""
    path = DEFAULT_KIT.solution_path(stem)
    found = reach_in(path.read_text(encoding="utf-8"), exercises_in(path))
    for exercise in found:
        for name in spec_for(exercise).call.describe().get("names", ()):
            dependency = f"{stem}.{name}"
            found[dependency] = found.get(dependency, frozenset({dependency})) | {exercise}
    return found


def reach_in(source: str, exercises: list[str]) -> dict[str, frozenset[str]]:
    """For each of ``exercises`` (``stem.function``) of module ``source``: itself and those that reach it.

    A top-level definition or assignment reaches the names it mentions and, transitively, whatever their
    definitions mention; so ``g`` is in ``f``'s reach when ``g``'s body calls ``f`` or a helper that does.
    Conservative: a mere mention counts."""
    mentions: dict[str, set[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = {node.name}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        else:
            continue
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for name in bound:
            mentions.setdefault(name, set()).update(used - {name})
    found = {}
    for exercise in exercises:
        reached = {exercise.split(".", 1)[1]}
        while grown := {name for name, used in mentions.items() if name not in reached and used & reached}:
            reached |= grown
        found[exercise] = frozenset(e for e in exercises if e.split(".", 1)[1] in reached)
    return found


class Batches:
    """The graded reports of every mutant of a learner file, computed on first use.

    ``everywhere=False`` (the README's suite): the reference on its whole file, then one batch per reach
    (:func:`reach`), each mutant graded on its own exercise's reach. ``everywhere=True`` (the exhaustive tier):
    the reference and every mutant of the file in one batch, each graded on every exercise of the file."""

    def __init__(self, everywhere: bool = False) -> None:
        self.everywhere = everywhere
        self.reports: dict[str, dict[str, dict]] = {}
        self.seconds: dict[str, float] = {}

    def __call__(self, stem: str) -> dict[str, dict]:
        if stem not in self.reports:
            file_name = f"{stem}.py"
            reference = {file_name: DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")}
            mutants = {entry: {file_name: mutant_source(entry.exercise, entry.name)} for entry in ENTRIES
                       if entry.stem == stem and entry.exercise.split(".", 1)[0] == stem}
            options = GradeOptions(modules=(_module_of(stem),))
            started = time.perf_counter()
            if self.everywhere:
                batches = [({REFERENCE: reference} | {e.id: files for e, files in mutants.items()}, None)]
            else:
                reaches = reach(stem)
                groups: dict[frozenset[str], dict[str, dict[str, str]]] = {}
                for entry, files in mutants.items():
                    groups.setdefault(reaches[entry.exercise], {})[entry.id] = files
                batches = [({REFERENCE: reference}, None), *((group, only) for only, group in groups.items())]
            self.reports[stem] = {}
            for submissions, only in batches:
                self.reports[stem] |= grade_sources(submissions, options, jobs=JOBS,
                                                    kit=OneFileKit(stem=stem, only=only))
            self.seconds[stem] = time.perf_counter() - started
        return self.reports[stem]


def _graded(everywhere: bool):
    batches = Batches(everywhere)
    yield batches
    for stem, seconds in batches.seconds.items():
        count = len(batches.reports[stem]) - 1
        where = "every exercise of the file" if everywhere else "their reaches"
        print(f"\n[test_catalogue] {stem}: {count} mutants ({where}) + reference graded in {seconds:.1f} s "
              f"({JOBS} workers)")


@pytest.fixture(scope="session")
def graded():
    yield from _graded(everywhere=False)


@pytest.fixture(scope="session")
def graded_everywhere():
    yield from _graded(everywhere=True)


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


# ---------------------------------------------------------------------------- the reach, checked
def test_the_reach_follows_calls_through_helpers_and_assignments():
    source = ("import numpy as np\n\n"
              "def f(x):\n    return x\n\n"
              "def _helper(x):\n    return f(x) + 1\n\n"
              "def g(x):\n    return _helper(x)\n\n"
              "TABLE = {'f': f}\n\n"
              "def h(x):\n    return TABLE['f'](x)\n\n"
              "def alone(x):\n    return np.sum(x)\n")
    reaches = reach_in(source, ["m.f", "m.g", "m.h", "m.alone"])
    assert reaches == {"m.f": {"m.f", "m.g", "m.h"}, "m.g": {"m.g"}, "m.h": {"m.h"}, "m.alone": {"m.alone"}}
    # in the kit: every declared dependent is in the reach of what it depends on (the token weights of the
    # advantages they weigh, among them)
    for stem in LEARNER_STEMS:
        reaches = reach(stem)
        for exercise in reaches:
            for name in spec_for(exercise).call.describe().get("names", ()):
                assert exercise in reaches[f"{stem}.{name}"], (exercise, name)
    assert {"module_9_reference.dr_grpo_token_weights", "module_9_reference.dapo_token_weights"} <= \
        reach("module_9_reference")["module_9_reference.group_relative_advantages"]


@pytest.mark.slow
@pytest.mark.exhaustive  # about 100 s of CPU on 2 cores; the suite grades each mutant on its reach (above)
@pytest.mark.parametrize("stem", sorted({e.stem for e in ENTRIES} & set(LEARNER_STEMS)))
def test_no_mutant_costs_an_exercise_it_cannot_reach(graded_everywhere, stem: str):
    reports = graded_everywhere(stem)
    for entry in (e for e in ENTRIES if e.stem == stem):
        exercises = _exercises(reports[entry.id], stem)
        assert entry.name in exercises[entry.exercise]["misconceptions"], _show(exercises[entry.exercise])
        hit = [_show(e) for exercise_id, e in exercises.items()
               if exercise_id != entry.exercise and (e["status"] != "passed" or e["points"] != e["max_points"])]
        assert not hit, f"{entry.id}: other exercises lose points:\n" + "\n".join(hit)

