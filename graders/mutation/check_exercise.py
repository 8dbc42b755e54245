"""``rl4llm check-exercise ID``: the whole loop of one exercise, in the order a contributor needs it.

Each step prints one line (``ok`` or ``FAILED`` and what to fix, naming the file
and line where there is one) and its seconds; the command exits 1 when a step
failed. The steps, each on this exercise only:

1. **recipe**: its four hand-written pieces (:func:`graders.build.recipe.exercise_problems`);
2. **build**: the generated files are current (``rl4llm build --check``'s list);
3. **graded**: the engine gives the reference full marks, the untouched stub 0, and every
   catalogue entry loses points and is named (one batch, the kit cut down to this exercise);
4. **public tests**: ``pytest -k <function>`` on the starter's tests passes on the
   reference, fails on the stub, and fails and names every catalogue entry (one pytest
   process, :func:`graders.mutation.public.public_batch`);
5. **mutation**: every mutant of the reference judged, the point-losing ones through the
   public tests, the score against its floor (``graders/mutation/floors.json``;
   ``rl4llm mutate --exercise ID`` is the same run with its report files).

``--no-mutation`` stops after step 4 (a contributor's inner loop). A step that
cannot run because an earlier one failed says so instead of a traceback.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

from graders.cli_checks import positive_int

REFERENCE = "reference-solution"  # submission names: a hyphen, never a catalogue entry's name
STUB = "untouched-stub"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check-exercise", help="the whole loop of one exercise: recipe, build, grades, public tests, mutation",
        description=__doc__.split("\n", 1)[0])
    parser.add_argument("exercise", metavar="ID", help="the exercise, e.g. module_9_reference.pass_at_k_unbiased "
                                                       "(rl4llm mutate --list names them)")
    parser.add_argument("--no-mutation", action="store_true", help="skip the mutation step (the fast loop)")
    parser.add_argument("--jobs", type=positive_int, default=2, help="processes for grading and mutants (default 2)")
    parser.set_defaults(func=main)


def _where(path: Path, line: int | None = None) -> str:
    from graders.build.recipe import repo_relative

    return f"{repo_relative(path)}:{line}" if line else repo_relative(path)


def stub_definition(exercise_id: str) -> str:
    """The untouched starter's definition of the exercise's function (its source, as the starter has it)."""
    from graders.engine.judging.kit import DEFAULT_KIT

    stem, function = exercise_id.split(".", 1)
    text = DEFAULT_KIT.starter_path(stem).read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return ast.get_source_segment(text, node)
    raise LookupError(f"{_where(DEFAULT_KIT.starter_path(stem))} has no def {function} (run rl4llm build)")


def recipe_step(exercise_id: str) -> list[str]:
    from graders.build.recipe import exercise_problems

    return exercise_problems(exercise_id)


def build_step() -> list[str]:
    from graders.build import stale_outputs

    return [f"{_where(path)} is stale: run rl4llm build" for path in stale_outputs()]


def _entries(exercise_id: str, kit) -> dict:
    from graders.engine.judging.misconceptions import catalogue_file, read_entries

    return {entry.name: entry for entry in read_entries(catalogue_file(exercise_id, kit))}


def graded_step(exercise_id: str, jobs: int, kit=None) -> list[str]:
    """The reference at full marks, the stub at 0, every catalogue entry below full marks and named (``kit``:
    where the catalogue is read from, the kit's own by default)."""
    from graders import course
    from graders.engine.judging.kit import DEFAULT_KIT, OneFileKit
    from graders.engine.judging.misconceptions import mutant_source
    from graders.engine.routes.batch import grade_sources
    from graders.engine.routes.grading import GradeOptions

    kit = kit or DEFAULT_KIT
    stem = exercise_id.split(".", 1)[0]
    name = f"{stem}.py"
    entries = _entries(exercise_id, kit)
    submissions = {REFERENCE: {name: kit.solution_path(stem).read_text(encoding="utf-8")},
                   STUB: {name: kit.starter_path(stem).read_text(encoding="utf-8")}}
    submissions |= {entry: {name: mutant_source(exercise_id, entry, kit)} for entry in entries}
    options = GradeOptions(modules=(course.module_of(stem).number,))
    only = OneFileKit(solutions_dir=kit.solutions_dir, starter_dir=kit.starter_dir,
                      misconceptions_dir=kit.misconceptions_dir, root=kit.root, stem=stem,
                      only=frozenset({exercise_id}))
    reports = grade_sources(submissions, options, jobs=jobs, kit=only)
    problems = []
    for submission, report in reports.items():
        (found,) = [e for e in report["exercises"] if e["id"] == exercise_id]
        score = f"{found['points']:g}/{found['max_points']:g}"
        if submission == REFERENCE:
            if not (found["status"] == "passed" and found["points"] == found["max_points"] > 0):
                problems.append(f"the reference scores {score} ({_where(kit.solution_path(stem))}):\n"
                                f"{found['feedback']}")
        elif submission == STUB:
            if found["points"] != 0:
                problems.append(f"the untouched stub scores {score}, not 0 ({_where(kit.starter_path(stem))})")
        else:
            entry = entries[submission]
            where = _where(entry.path, entry.line)
            if found["points"] >= found["max_points"]:
                problems.append(f"catalogue entry {submission!r} keeps full marks ({where}): the checks need a case "
                                "that shows it")
            elif submission not in found["misconceptions"]:
                problems.append(f"catalogue entry {submission!r} loses points but is not named ({where}); the "
                                f"grader named {found['misconceptions'] or 'nothing'}")
    return problems


def public_step(exercise_id: str, kit=None) -> list[str]:
    """The public tests: the reference passes, the stub fails, every catalogue entry fails and is named (``kit``:
    where the catalogue is read from; the tests and the reference are the kit's own)."""
    from graders import course
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.engine.judging.misconceptions import entry_source
    from graders.mutation.public import public_batch

    kit = kit or DEFAULT_KIT
    entries = _entries(exercise_id, kit)
    stem, function = exercise_id.split(".", 1)
    tests = f"starter/{course.module_of(stem).folder}/test_{stem}.py"
    runs = [(STUB, stub_definition(exercise_id))] + [(name, entry_source(exercise_id, name, kit)) for name in entries]
    verdicts = public_batch(exercise_id, runs)
    problems = []
    for submission, verdict in verdicts.items():
        if verdict["failed"] is None:
            return [f"the public tests ({tests} -k {function}) did not run: {verdict.get('error', '')}"]
        if submission == STUB:
            if not verdict["failed"]:
                problems.append(f"the untouched stub passes every public test of {function} ({tests})")
            continue
        where = _where(entries[submission].path, entries[submission].line)
        if not verdict["failed"]:
            problems.append(f"catalogue entry {submission!r} passes every public test of {function} ({tests}); "
                            f"a public test should fail on it ({where})")
        elif submission not in verdict["pytest_names"]:
            problems.append(f"catalogue entry {submission!r} fails the public tests, but pytest names "
                            f"{verdict['pytest_names'] or 'nothing'} ({where}; the hints: rl4llm build)")
    return problems


def mutation_step(exercise_id: str, jobs: int) -> tuple[list[str], str]:
    """Every mutant judged and the point-losing ones through the public tests; the score against its floor."""
    from graders.mutation.campaign import campaign
    from graders.mutation.report import below_floor

    result = campaign([exercise_id], jobs=jobs, progress=lambda line: None)
    (row,) = result["exercises"]
    problems = below_floor(result)
    for mutant in row["survivors"]:
        witness = mutant.get("witness") or {}
        problems.append(f"mutant {mutant['id']} keeps full marks but differs from the reference "
                        f"({witness.get('label', 'no witness')}): {mutant['diff']}")
    for mutant in row["public_green"]:
        problems.append(f"mutant {mutant['id']} loses points but passes the public tests: {mutant['diff']}")
    for mutant in row["names_differ"]:
        problems.append(f"mutant {mutant['id']}: the grader names {mutant['grader'] or 'nothing'}, pytest "
                        f"{mutant['pytest'] or 'nothing'}: {mutant['diff']}")
    summary = (f"{row['mutants']} mutants, {row['equivalent']} equivalent, {row['killed']} killed, "
               f"{row['survived']} survived")
    return problems, summary


# each step: its name, and what it does with the command's arguments -> (problems, a summary line or "")
STEPS = (
    ("recipe", lambda args: (recipe_step(args.exercise), "")),
    ("build", lambda args: (build_step(), "")),
    ("graded", lambda args: (graded_step(args.exercise, args.jobs), "")),
    ("public tests", lambda args: (public_step(args.exercise), "")),
    ("mutation", lambda args: mutation_step(args.exercise, args.jobs)),
)
NEEDS_A_GREEN_START = ("graded", "public tests", "mutation")  # not run once the recipe or the build failed


def main(args: argparse.Namespace) -> int:
    from graders.engine.judging.kit import DEFAULT_KIT

    exercise_id = args.exercise
    if exercise_id not in DEFAULT_KIT.exercises():
        near = [e for e in DEFAULT_KIT.exercises() if exercise_id.split(".")[-1] in e]
        print(f"error: no exercise {exercise_id!r}" + (f"; did you mean {', '.join(near)}?" if near else
                                                      " (rl4llm mutate --list names them)"), file=sys.stderr)
        return 2
    started = time.perf_counter()
    failed = []
    for step, run in STEPS:
        if step == "mutation" and args.no_mutation:
            print(f"  {step:<13} skipped (--no-mutation)")
            continue
        if failed and step in NEEDS_A_GREEN_START:
            print(f"  {step:<13} not run: {', '.join(failed)} failed first")
            continue
        began = time.perf_counter()
        problems, summary = run(args)
        seconds = time.perf_counter() - began
        verdict = "ok" if not problems else "FAILED"
        print(f"  {step:<13} {verdict}{': ' + summary if summary else ''} ({seconds:.1f} s)", flush=True)
        for line in problems:
            print("    - " + line.replace("\n", "\n      "), flush=True)
        if problems:
            failed.append(step)
    total = time.perf_counter() - started
    print(f"{exercise_id}: {'every step passed' if not failed else 'failed: ' + ', '.join(failed)} ({total:.0f} s)")
    return 1 if failed else 0
