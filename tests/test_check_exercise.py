"""``rl4llm check-exercise ID``: one exercise's whole loop, and what it says when a piece is wrong.

A kit exercise passes every step but the mutation one (that is ``rl4llm mutate``'s, tested in
``tests/test_mutation*.py``); a catalogue whose new entry the checks and the public tests cannot tell from the
reference (a copy of the catalogue with one entry added, the kit's own files untouched) is named with its file and
line by the grading step and by the public-test step; an unknown id is one line and exit 2.
"""

from __future__ import annotations

import shutil
import textwrap

import pytest

from graders.cli import main as rl4llm
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.mutation import check_exercise

EXERCISE = "module_9_reference.pass_at_k_unbiased"


@pytest.fixture(scope="module")
def lenient_catalogue(tmp_path_factory):
    """The kit with a catalogue copy whose pass_at_k_unbiased gains ``same_as_right``, the reference itself."""
    folder = tmp_path_factory.mktemp("catalogue") / "misconceptions"
    shutil.copytree(DEFAULT_KIT.misconceptions_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "module_9_reference" / "pass_at_k_unbiased.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + textwrap.dedent('''

        def same_as_right(n, c, k):
            """looks like nothing: this entry is the reference

            ru: похоже ни на что: эта запись и есть эталон
            """
            return _right(n, c, k)
        '''), encoding="utf-8")
    line = len(text.splitlines()) + 3
    return Kit(misconceptions_dir=folder), path, line


def test_a_kit_exercise_passes_every_step_but_mutation(capsys):
    assert rl4llm(["check-exercise", EXERCISE, "--no-mutation"]) == 0
    out = capsys.readouterr().out
    for step in ("recipe", "build", "graded", "public tests"):
        assert f"  {step:<13} ok (" in out, out
    assert "  mutation      skipped (--no-mutation)" in out
    assert f"{EXERCISE}: every step passed" in out


def test_an_entry_the_checks_cannot_tell_from_the_reference_is_named_with_its_line(lenient_catalogue):
    kit, path, line = lenient_catalogue
    problems = check_exercise.graded_step(EXERCISE, jobs=2, kit=kit)
    assert problems == [f"catalogue entry 'same_as_right' keeps full marks ({path}:{line}): the checks need a case "
                        "that shows it"], problems
    problems = check_exercise.public_step(EXERCISE, kit=kit)
    assert len(problems) == 1 and problems[0].startswith(
        "catalogue entry 'same_as_right' passes every public test of pass_at_k_unbiased "
        "(starter/module_09/test_module_9_reference.py)") and problems[0].endswith(f"({path}:{line})"), problems


def test_an_unknown_exercise_is_one_line_with_the_near_names(capsys):
    assert rl4llm(["check-exercise", "module_9_reference.pass_at_k"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no exercise 'module_9_reference.pass_at_k'; did you mean ") and EXERCISE in err
    assert rl4llm(["check-exercise", "nothing_like_it"]) == 2
    assert "rl4llm mutate --list names them" in capsys.readouterr().err


def test_a_count_that_makes_no_sense_is_refused(capsys):
    for command in (["check-exercise", EXERCISE, "--jobs", "0"], ["mutate", "--jobs", "-3"]):
        with pytest.raises(SystemExit) as stopped:
            rl4llm(command)
        assert stopped.value.code == 2
        assert "is not a positive whole number" in capsys.readouterr().err
