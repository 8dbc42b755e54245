"""The notebooks' visible checks tell the truth (graders/build/notebooks/helper.py, checks.py, diagnosis.py).

A test cell fails whenever its own exercise is a stub or wrong on a visible
case; an advisory check (an exercise the autograder checks with trusted
copies of others) prints a note instead only where the function it calls
fails that function's own public case, and never when the exercise itself
raises ``NotImplementedError``. A failing check names the likely mistake by
the learner's pytest's rule (the conftest's code, copied), in the notebook's
language. The cells run here in-process, in the assignment's folder (its
``_hints.json``), as Jupyter runs them; ``tests/test_nbgrader.py`` runs
``nbgrader validate`` on the release.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import re

import pytest

from graders.build.hints import starter_conftest
from graders.build.notebooks import SOURCE_DIR, assignment_name
from graders.build.notebooks.diagnosis import PARTS, diagnosis_program
from graders.build.notebooks.helper import helper_source
from graders.engine.judging.misconceptions import entry_source
from graders.paths import STARTER_DIR

STEM = "module_9_reference"
STUB = r"\1# YOUR CODE HERE\n\1raise NotImplementedError()"
NOT_IMPLEMENTED = {"en": "NOT IMPLEMENTED", "ru": "НЕ РЕАЛИЗОВАНО"}
LIKELY = {"en": "likely mistake in", "ru": "вероятная ошибка в"}
SEVERAL = {"en": "several known mistakes in", "ru": "этим входам"}
UNDECIDED = {"en": "are not decided", "ru": "не дают вердикта"}


def _notebook(language: str, folder: str = "module_09", stem: str = STEM) -> dict:
    return json.loads((SOURCE_DIR / assignment_name(folder, language) / f"{stem}.ipynb").read_text(encoding="utf-8"))


def _stub(source: str) -> str:
    """A solution cell as ``nbgrader generate_assignment`` releases it."""
    return re.sub(r"( *)### BEGIN SOLUTION.*?### END SOLUTION", STUB, source, flags=re.S)


def _run(notebook: dict, monkeypatch, changes: dict | None = None, release: bool = False, folder: str = "module_09",
         language: str = "en", patch=None, until: str | None = None) -> tuple[dict, dict, dict]:
    """Every code cell in order in one namespace (hidden parts left out, as released), in the assignment's
    folder: (cell id -> the error it raised, cell id -> what it printed, the namespace). ``changes``: cell id ->
    "stub" or a catalogue entry's name; ``release``: every solution cell a stub; ``patch(namespace)`` runs
    right after the helper cell; ``until``: the last cell to run."""
    monkeypatch.chdir(SOURCE_DIR / assignment_name(folder, language))
    monkeypatch.syspath_prepend(str(SOURCE_DIR / assignment_name(folder, language)))
    stem = next(c for c in notebook["cells"] if c["id"].startswith("test-"))["source"]
    exercise_stem = re.search(r"visible_checks\('([^.]+)\.", "".join(stem)).group(1)
    namespace: dict = {"__name__": "__main__"}
    errors, printed = {}, {}
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        head, _, rest = source.partition("### BEGIN HIDDEN TESTS")
        source = head + rest.partition("### END HIDDEN TESTS")[2]
        change = (changes or {}).get(cell["id"])
        if change == "stub" or (release and cell["metadata"].get("nbgrader", {}).get("solution")):
            source = _stub(source)
        elif change:
            source = entry_source(f"{exercise_stem}.{cell['id']}", change)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(source, cell["id"], "exec"), namespace)  # noqa: S102 - the kit's notebook
        except Exception as error:  # noqa: BLE001 - what the cell shows
            errors[cell["id"]] = f"{type(error).__name__}: {error}"
        if out.getvalue().strip():
            printed[cell["id"]] = out.getvalue()
        if cell["id"] == "helpers" and patch is not None:
            patch(namespace)
        if cell["id"] == until:
            break
    return errors, printed, namespace


# ---------------------------------------------------------------------------- one rule, copied
def test_the_helper_holds_the_conftests_rule_verbatim():
    program = diagnosis_program()
    conftest = starter_conftest()
    for path, names in PARTS:
        if path != STARTER_DIR / "conftest.py":
            continue
        for name in names:
            member = getattr(conftest, name.split(",")[0])
            if inspect.isfunction(member) or inspect.isclass(member):
                assert inspect.getsource(member).strip() in program, name
    for language in ("en", "ru"):
        assert f"_LANGUAGE = {language!r}" in helper_source(language)
        assert "graders" not in helper_source(language)  # the release names no part of the kit


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_comparators_line_and_a_missing_exception_read_in_the_notebooks_language(language):
    helpers: dict = {}
    exec(helper_source(language), helpers)  # noqa: S102
    with pytest.raises(AssertionError) as error:
        helpers["check_close"]([1.0, 2.0], [1.0, 3.0])
    assert str(error.value).startswith({"en": "1 of 2 entries differ", "ru": "не совпадают элементы: 1 из 2"}[language])
    with pytest.raises(AssertionError, match={"en": "expected ValueError", "ru": "ожидалось исключение ValueError"}[language]):
        with helpers["check_raises"](ValueError):
            pass


# ---------------------------------------------------------------------------- the verdicts
@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_release_fails_every_test_cell_as_not_implemented(language, monkeypatch):
    notebook = _notebook(language)
    errors, _, _ = _run(notebook, monkeypatch, release=True, language=language)
    tests = [c["id"] for c in notebook["cells"] if c["id"].startswith("test-")]
    assert sorted(errors) == sorted(tests)
    assert all(NOT_IMPLEMENTED[language] in errors[cell] for cell in tests), errors


def test_the_reports_three_stubs_fail_their_three_cells_and_nothing_else(monkeypatch):
    stubs = ["verify_numeric_answer", "expected_draws_for_informative_groups", "dapo_token_weights"]
    errors, printed, _ = _run(_notebook("en"), monkeypatch, changes=dict.fromkeys(stubs, "stub"))
    assert sorted(errors) == sorted(f"test-{name}" for name in stubs), errors
    assert not printed, printed
    errors, _, _ = _run(_notebook("en", "module_08", "module_8_reference"), monkeypatch, folder="module_08",
                        changes={"reward_kl_frontier": "stub"})
    assert list(errors) == ["test-reward_kl_frontier"] and NOT_IMPLEMENTED["en"] in errors["test-reward_kl_frontier"]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_wrong_dependency_is_blamed_only_where_its_own_case_fails(language, monkeypatch):
    notebook = _notebook(language)
    # the dependency wrong: its own cell fails with the likely mistake; its callers' cells print a note
    # (the visible checks stop at the first failure, before the all-equal group that tells sample_std from
    # sample_std_guarded: by the grader's rule both fit what ran, so both are listed and none is named)
    errors, printed, _ = _run(notebook, monkeypatch, changes={"group_relative_advantages": "sample_std"},
                              language=language)
    assert list(errors) == ["test-group_relative_advantages"], errors
    assert f"{SEVERAL[language]} group_relative_advantages" in errors["test-group_relative_advantages"]
    assert "sample_std, sample_std_guarded" in errors["test-group_relative_advantages"]
    assert "test-dapo_token_weights" in printed and UNDECIDED[language] in printed["test-dapo_token_weights"]
    # the dependency right, the exercise wrong: its cell fails, naming its own mistake
    errors, printed, _ = _run(notebook, monkeypatch, changes={"dapo_token_weights": "extra_group_factor"},
                              language=language)
    assert list(errors) == ["test-dapo_token_weights"] and not printed, (errors, printed)
    assert f"{LIKELY[language]} dapo_token_weights: extra_group_factor" in errors["test-dapo_token_weights"]
    # both stubs: the note never hides the exercise's own NotImplementedError
    errors, _, _ = _run(notebook, monkeypatch, language=language,
                        changes={"group_relative_advantages": "stub", "dapo_token_weights": "stub"})
    assert NOT_IMPLEMENTED[language] in errors.get("test-dapo_token_weights", ""), errors


def test_control_without_the_own_stub_guard_the_note_hides_a_stub(monkeypatch):
    """The guard off (every NotImplementedError taken as the dependency's): the stub's cell passes."""
    def guard_off(namespace):
        namespace["_raised_in"] = lambda error, name: False

    errors, printed, _ = _run(_notebook("en"), monkeypatch, patch=guard_off,
                              changes={"group_relative_advantages": "stub", "dapo_token_weights": "stub"})
    assert "test-dapo_token_weights" not in errors and "test-dapo_token_weights" in printed


def test_the_notebook_names_what_the_conftest_names_on_the_same_calls(monkeypatch):
    conftest = starter_conftest()
    table = json.loads((SOURCE_DIR / "module_09" / "_hints.json").read_text(encoding="utf-8"))
    for function, entry in [("group_relative_advantages", "sample_std"), ("dapo_token_weights", "extra_group_factor"),
                            ("verify_numeric_answer", "first_number")]:
        cell = f"test-{function}"
        errors, _, namespace = _run(_notebook("ru"), monkeypatch, changes={function: entry}, language="ru",
                                    until=cell)
        calls = namespace["_kit"].RECORDER.calls  # the calls of that test cell
        lines = conftest.diagnosis(conftest._observations(calls, table), table, False, "ru")
        assert lines and all(line in errors[cell] for line in lines), (errors[cell], lines)
        assert function in lines[0] and entry in lines[0]  # named, or listed (sample_std beside its guarded form)
