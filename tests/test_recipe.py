"""The recipe of an exercise holds for every exercise (fast): the four hand-written pieces, no skeleton left.

``graders/build/recipe.py`` says what each exercise lacks (its reference, its public tests, its hidden
checks, its catalogue), each line naming the exercise, the piece and the file to edit; and the files
``rl4llm build`` writes from the registry that the public tests and pages read (``_refused.json``, the
Markdown blocks) are current. The full ``rl4llm build --check`` is ``tests/test_build.py``'s.
"""

from __future__ import annotations

import pytest

from graders import course
from graders.build import docs, recipe, refused
from graders.checks import spec_for
from graders.paths import REPO_ROOT

EXERCISES = course.exercises()


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_exercise_has_its_four_pieces(exercise):
    problems = recipe.exercise_problems(exercise)
    assert not problems, "\n".join(problems)


def test_no_piece_names_a_function_without_a_reference():
    problems = recipe.orphan_problems()
    assert not problems, "\n".join(problems)


def test_the_refusal_rows_are_current():
    stale = [path.relative_to(REPO_ROOT).as_posix() for path, text in refused.build_outputs().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"stale: {stale}; run `rl4llm build`"


def test_the_generated_markdown_blocks_are_current():
    stale = {path.relative_to(REPO_ROOT).as_posix(): docs.stale_blocks(path) for path in docs.markdown_files()}
    stale = {path: blocks for path, blocks in stale.items() if blocks}
    assert not stale, f"stale generated blocks (file: blocks): {stale}; run `rl4llm build`"


def test_the_module_pages_and_the_docs_hold_their_blocks():
    for module in course.MODULES:
        for language in course.LANGUAGES:
            name = "README.md" if language == "en" else f"README.{language}.md"
            page = (REPO_ROOT / "starter" / module.folder / name).read_text(encoding="utf-8")
            assert f"{module.folder}-exercises" in docs.blocks_in(page), f"starter/{module.folder}/{name}"
    assert any("course-totals" in docs.blocks_in(path.read_text(encoding="utf-8")) for path in docs.markdown_files())


def test_a_block_marker_without_its_pair_or_an_unknown_block_is_refused():
    with pytest.raises(docs.BlockError):
        docs.blocks_in("<!-- generated:course-totals:begin -->\ntext\n")
    with pytest.raises(docs.BlockError, match="unknown generated block"):
        docs.rendered("<!-- generated:no-such:begin -->\n<!-- generated:no-such:end -->\n", "en", "X.md")
    text = "a\n<!-- generated:course-totals:begin -->\nold\n<!-- generated:course-totals:end -->\nb\n"
    assert docs.rendered(text, "ru").startswith("a\n<!-- generated:course-totals:begin -->\nУпражнения:")


def test_russian_counts():
    assert [docs.exercises_text(n, "ru") for n in (1, 2, 5, 11, 101, 26)] == [
        "1 упражнение", "2 упражнения", "5 упражнений", "11 упражнений", "101 упражнение", "26 упражнений"]
    assert [docs.points_text(n, "ru") for n in (1, 3, 7, 75)] == ["1 балл", "3 балла", "7 баллов", "75 баллов"]


def test_a_stale_block_is_named_with_its_file(tmp_path):
    page = tmp_path / "README.ru.md"
    fresh = docs.rendered("x\n<!-- generated:course-totals:begin -->\n<!-- generated:course-totals:end -->\n", "ru")
    page.write_text(fresh, encoding="utf-8")
    assert docs.language_of(page) == "ru" and docs.stale_blocks(page) == []
    page.write_text(fresh.replace("Упражнения:", "Exercises:"), encoding="utf-8")
    assert docs.stale_blocks(page) == ["course-totals"]


def test_the_refusal_rows_rebuild_the_checks_inputs():
    import json

    import numpy as np

    from graders.build.hints import starter_conftest
    from graders.engine.judging.references import fresh_inputs

    conftest = starter_conftest()
    for folder, table in refused.refused_tables().items():
        for exercise, rows in table.items():
            cases = refused.shipped_cases(exercise, spec_for(exercise))
            assert [row["label"] for row in rows] == [case.label for case in cases]
            for row, case in zip(rows, cases):
                again = json.loads(json.dumps(row, allow_nan=False))
                args, kwargs = fresh_inputs(case)
                rebuilt = conftest.untagged(again["args"]), conftest.untagged(again["kwargs"])
                np.testing.assert_equal(rebuilt, (tuple(args), kwargs), err_msg=f"{exercise}: {case.label}")


def test_a_checks_problem_names_the_generator_s_own_file_and_line(monkeypatch):
    # a checks package's generators live in topic modules (groups.py, ...): a problem with one names that file
    # and the generator's line, not the package's __init__.py; the LATEX table's problems name the checks module
    import dataclasses
    import inspect

    import graders.checks as checks
    from graders.engine.judging import refcache

    exercise = "module_9_reference.group_relative_advantages"
    real = spec_for(exercise)
    _, line = inspect.getsourcelines(real.make_cases)
    assert inspect.getsourcefile(real.make_cases).endswith("graders/checks/module_9_reference/groups.py")
    public_only = dataclasses.replace(real, make_cases=lambda: [c for c in real.make_cases() if not c.hidden])
    object.__setattr__(public_only, "_cases", None)  # drawn afresh from its own generator, not the store's
    monkeypatch.setattr(refcache, "kept_cases", lambda store, spec: None)
    monkeypatch.setattr(checks, "spec_for", lambda exercise_id: public_only if exercise_id == exercise else None)
    problems, _ = recipe.checks_problems(exercise)
    here = f"tests/test_recipe.py:{inspect.getsourcelines(public_only.make_cases)[1]}"
    assert problems == [f"group_relative_advantages: no hidden case in its checks in {here}"], problems
    # the real generator: no problem, and where it is (the file and line such a problem would name)
    monkeypatch.setattr(checks, "spec_for", lambda exercise_id: real)
    assert recipe.checks_problems(exercise)[0] == []
    assert line > 1 and "def _" in "".join(inspect.getsourcelines(real.make_cases)[0])
