"""The benchmark script's plumbing (no timing: the numbers themselves are python -m devtools.benchmark's)."""

from __future__ import annotations

import json

import pytest

from devtools.benchmark import cli as benchmark, learner as benchmark_learner, nbgrader as benchmark_nbgrader


def test_unknown_names_are_refused(capsys):
    with pytest.raises(SystemExit) as raised:
        benchmark.main(["grade-one", "no-such-measurement"])
    assert raised.value.code == 2
    assert "unknown measurement(s) ['no-such-measurement']" in capsys.readouterr().err


def test_the_paired_group_and_the_default_order():
    parser = benchmark.build_parser()
    assert benchmark.resolve(parser, ["paired"]) == ["learner-tests", "grade-one", "grade-one-warm", "grade-50",
                                                     "nbgrader-paired"]
    assert benchmark.resolve(parser, ["grade-one", "paired"])[:2] == ["grade-one", "learner-tests"]  # each once
    assert benchmark.resolve(parser, []) == list(benchmark.MEASUREMENTS)
    assert set(benchmark.GROUPS["paired"]) <= set(benchmark.MEASUREMENTS)
    names = list(benchmark.MEASUREMENTS)
    assert names.index("grade-one") + 1 == names.index("grade-one-warm")  # warm right after cold


def test_the_summary_table_has_both_sides_and_the_ratio():
    results = {"grade-one": 7.9, "nbgrader-paired": {
        "seconds": 30.0, "notebooks": 3, "nbgrader_autograde_s": 30.0, "rl4llm_grade_s": 10.0,
        "nbgrader_per_notebook_s": 10.0, "rl4llm_per_notebook_s": 3.33, "ratio": 3.0}}
    table = benchmark.summary(results, {"grade-one": "grade one", "nbgrader-paired": "paired"})
    assert "| grade one (`grade-one`) | 7.90 s |" in table
    assert "| `nbgrader autograde`, 3 notebooks (`nbgrader-paired`) | 30.00 s (10.00 s per notebook) |" in table
    assert "| `rl4llm grade`, the same 3 notebooks (`nbgrader-paired`) | 10.00 s (3.33 s per notebook) |" in table
    assert "| ratio nbgrader / rl4llm (`nbgrader-paired`) | 3.00 x |" in table


@pytest.mark.slow  # two `nbgrader generate_assignment` runs
def test_the_paired_course_holds_the_notebooks_both_sides_grade(tmp_path):
    pytest.importorskip("nbgrader")
    paired = benchmark_nbgrader.build_paired_course(tmp_path)
    course = paired.course
    assert paired.assignments == ("module_08", "module_09")
    assert (course / "gradebook.db").is_file() and (course / "nbgrader_config.py").is_file()
    assert [path.relative_to(course).as_posix() for _, path in paired.notebooks] == [
        "submitted/alice/module_08/module_8_reference.ipynb",
        "submitted/alice/module_09/module_9_reference.ipynb",
        "submitted/bob/module_09/module_9_reference.ipynb"]
    for (student, assignment, stem, kind), path in paired.notebooks:
        text = path.read_text(encoding="utf-8")
        json.loads(text)
        if kind == benchmark_nbgrader.COMPLETE:
            assert text == (course / "source" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8")
            assert "### BEGIN SOLUTION" in text
        else:
            assert text == (course / "release" / assignment / f"{stem}.ipynb").read_text(encoding="utf-8")
            assert "BEGIN SOLUTION" not in text and "raise NotImplementedError()" in text
    assert paired.env["JUPYTER_PATH"] == str(tmp_path / "jupyter")


@pytest.mark.parametrize("folder", ["module_08", "module_09"])
def test_the_half_done_implementation_has_every_other_exercise_back_to_its_stub(tmp_path, folder):
    from graders import course
    from graders.build.stubs import stub_message
    from graders.fences import find_fences

    first = benchmark_learner.half_done_implementation(tmp_path / "a", folder)
    second = benchmark_learner.half_done_implementation(tmp_path / "b", folder)
    exercises = course.exercises([folder])
    stubbed = []
    for stem in course.module(folder).files:
        text = (first / folder / f"{stem}.py").read_text(encoding="utf-8")
        assert text == (second / folder / f"{stem}.py").read_text(encoding="utf-8")  # deterministic
        compile(text, stem, "exec")
        solution = (benchmark.SOLUTIONS_DIR / folder / f"{stem}.py").read_text(encoding="utf-8")
        for fence in find_fences(solution):
            if repr(stub_message(stem, fence)) in text:
                stubbed.append(f"{stem}.{fence.function}")
    assert stubbed == exercises[1::2]  # the 2nd, 4th, ... in course order: about half
    assert sorted(path.name for path in (first / folder).glob("*.py")) == sorted(
        path.name for path in (benchmark.SOLUTIONS_DIR / folder).glob("*.py"))  # the given modules too


def test_the_learner_lines_name_the_three_states(monkeypatch):
    seconds = {None: 2.1, "complete": 1.6}

    def fake_run(folder, impl_root, pycache=None):
        if impl_root is None:
            return seconds[None]
        return seconds["complete"] if impl_root == benchmark.SOLUTIONS_DIR else 2.4

    monkeypatch.setattr(benchmark_learner, "_learner_run", fake_run)
    monkeypatch.setattr(benchmark_learner, "_timed", lambda command, env=None, cwd=None: 1.1)
    result = benchmark_learner.bench_learner("module_09", rounds=2)
    assert result.line.startswith("learner pytest module_09: untouched 2.1 s, half-done 2.4 s, complete 1.6 s")
    assert result.data["min_s"] == {"untouched": 2.1, "half-done": 2.4, "complete": 1.6}
    assert result.line.endswith("(min of 2; median 2.1, 2.4, 1.6 s; a fresh `import numpy, torch` here: 1.1 s)")
    table = benchmark.summary({"learner-m9": result.data}, {"learner-m9": "learner"})
    assert "| `pytest starter/module_09` (`learner-m9`), min of 2 | untouched 2.10 s, half-done 2.40 s, " \
           "complete 1.60 s |" in table
    assert benchmark.resolve(benchmark.build_parser(), ["learner"]) == ["learner-m8", "learner-m9"]
