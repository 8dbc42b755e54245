"""Do the grader and the learner's pytest name the same catalogued mistake? Every entry and mutant of an exercise.

Both sides name an entry by one rule (:mod:`graders.engine.judging.naming`): the
grader over the exercise's hidden checks, pytest over the public inputs of the
function its run saw. This sweep puts, through both, every catalogue entry of
an exercise (the reference with that one entry applied:
:func:`graders.engine.judging.misconceptions.entry_source`) and every point-losing
mutant of :mod:`graders.mutation` (its campaign records the names each side
gave: ``grader_names``, ``public.pytest_names``), and lists where they differ.

- grader: :func:`graders.engine.routes.inline.grade_exercise`, in process, its
  ``misconceptions``;
- pytest: ``pytest -k <function>`` on the public tests (:func:`graders.mutation.public.public_batch`),
  its "likely mistake in <function>: <name>" lines.

Two sides AGREE on a submission when they name the same entries (one name
each, or none on both). ``rl4llm mutate`` reports the mutants' disagreements
(docs/mutation.md, "Names"); :func:`sweep` adds the catalogue's entries.
"""

from __future__ import annotations

from graders.engine.judging.misconceptions import entry_source, load_misconceptions
from graders.mutation.campaign import campaign
from graders.mutation.public import public_batch

ENTRY = "entry:"  # the id prefix of a catalogue entry among the sweep's rows


def entry_rows(exercise: str) -> list[dict]:
    """One row per catalogue entry of ``exercise``: ``{"id", "grader": [...], "pytest": [...], "failed", "hints",
    "points", "max_points"}``,
    the entry graded in process and run through the public tests."""
    from graders.engine.routes.inline import grade_exercise

    entries = load_misconceptions(exercise)
    if not entries:
        return []
    public = public_batch(exercise, [(ENTRY + entry.name, entry_source(exercise, entry.name)) for entry in entries])
    rows = []
    for entry in entries:
        graded = grade_exercise(exercise, entry.function, vars(entry.module), hide_hidden_inputs=False)
        verdict = public[ENTRY + entry.name]
        rows.append({"id": ENTRY + entry.name, "grader": sorted(graded.get("misconceptions", [])),
                     "pytest": sorted(verdict["pytest_names"]), "failed": verdict["failed"],
                     "hints": verdict["hints"][:3], "points": graded["points"], "max_points": graded["max_points"]})
    return rows


def mutant_rows(exercise: str, jobs: int = 1) -> list[dict]:
    """One row per point-losing mutant of ``exercise`` whose public tests ran: ``{"id", "diff", "grader",
    "pytest", "failed"}`` (the mutation campaign's own records)."""
    result = campaign([exercise], jobs=jobs, public=True, progress=lambda line: None)
    return [{"id": row["id"], "diff": row["diff"], "grader": sorted(row.get("grader_names", [])),
             "pytest": sorted(row["public"]["pytest_names"]), "failed": row["public"]["failed"]}
            for row in result["mutants"][exercise]
            if row["status"] == "killed" and row.get("public", {}).get("failed") is not None]


def disagreements(rows: list[dict]) -> list[dict]:
    """The rows whose two sides name different entries (a name on one side only included)."""
    return [row for row in rows if row["grader"] != row["pytest"]]


def sweep(exercises: list[str], jobs: int = 1, mutants: bool = True) -> dict[str, list[dict]]:
    """``{exercise: rows}``: every catalogue entry's row, then (``mutants``) every point-losing mutant's."""
    return {exercise: entry_rows(exercise) + (mutant_rows(exercise, jobs) if mutants else [])
            for exercise in exercises}
