"""The learner-facing texts that are not tables, in every language of the course.

- the misconception hints: each catalogue entry's docstring holds its hint in
  every language (:func:`graders.engine.judging.misconceptions.hint_texts`), with the
  same identifiers, formulas and code; the shipped ``_hints.json`` tables carry
  them all, under the catalogue's names; the learner's pytest and the grader
  show the one the setting chooses, and English exactly as before;
- the stub messages: a stub raises the English message, which every surface
  shows in the learner's language (the conftest and the grader from the same
  forms), and "not implemented" is decided from the code, never from the text;
- the module pages: ``README.md`` and ``README.ru.md`` side by side, linked to
  each other, with the same sections, tables and formula blocks.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from graders import course
from graders.build import notebooks
from graders.build.hints import starter_conftest
from graders.build.stubs import stub_message
from graders.engine.values import texts
from graders.engine.outputs.feedback import hint_in
from graders.text import Text
from graders.engine.routes.inline import grade_exercise
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import all_catalogue_files, hint_text, load_misconceptions, read_entries
from graders.fences import find_fences
from graders.paths import STARTER_DIR
from graders.text import table_in

CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
# what must read the same in every language: identifiers (eps_low, L_max), quoted literals ('parse_error'),
# \boxed, and every run of characters holding an operator (ddof=1, 1/(2, |o_i|, pi_k^2 ...)
CODE = re.compile(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_{}]*|(?<![A-Za-z])'[^']+'(?![A-Za-z])|\\+boxed|\S*[=^/*|<>]\S*")
ENTRIES = [entry for path in all_catalogue_files() for entry in read_entries(path)]
GRA = "module_9_reference.group_relative_advantages"


def _code(text: str) -> list[str]:
    return [token for token in (t.strip("();,:.") for t in CODE.findall(text)) if token]


# ---------------------------------------------------------------------------
# The catalogue's hints
# ---------------------------------------------------------------------------
def test_the_catalogue_is_read_whole():
    assert len(ENTRIES) >= 150 and len({(e.exercise, e.name) for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e.exercise.split('.', 1)[1]}.{e.name}" for e in ENTRIES])
def test_every_entry_has_its_hint_in_every_language_with_the_same_code(entry):
    assert isinstance(entry.hint, Text) and list(entry.hint.translations) == list(course.LANGUAGES)
    english = entry.hint.in_("en")
    assert entry.hint == english and english.strip() and "\n" not in english
    for language in course.LANGUAGES[1:]:
        text = entry.hint.in_(language)
        assert text.strip() and "\n" not in text and text != english, (language, text)
        assert CYRILLIC.search(text), f"{entry.path}:{entry.line}: the {language} hint is not translated"
        missing = [token for token in _code(english) if token not in text]
        assert not missing, f"{entry.path}:{entry.line}: the {language} hint lacks {missing}"


def test_the_docstring_format():
    hint = hint_text("looks like x;\n    y = 1\n\n    ru: похоже на x;\n    y = 1\n    ")
    assert isinstance(hint, Text) and (hint.in_("en"), hint.in_("ru")) == ("looks like x; y = 1", "похоже на x; y = 1")
    for wrong, problem in (("only English", "no ru hint"), ("ru: только русский", "must open with the English"),
                           ("x\n\nru: а\n\nru: б", "two ru: hints"), ("x\n\nde: y", "de: the course speaks"),
                           ("x\n\nru:", "a language code"), ("x\n\nсвободный текст", "a language code")):
        with pytest.raises(ValueError, match=problem):
            hint_text(wrong)


def test_the_grader_loads_every_language():
    for entry in load_misconceptions(GRA):
        assert repr(entry.hint) == repr(next(e.hint for e in ENTRIES if e.exercise == GRA and e.name == entry.name))
        assert entry.hint_in("ru") == entry.hint.in_("ru") and entry.hint_in("xx") == entry.hint
    assert hint_in(Text("e", "р"), "ru") == "р" and hint_in(Text("e", "р"), "en") == "e"
    assert hint_in("as written", "ru") == "as written"


def test_the_hint_tables_carry_every_language_under_the_catalogues_names():
    by_name = {(e.exercise, e.name): {language: e.hint.in_(language) for language in course.LANGUAGES}
               for e in ENTRIES}
    conftest = starter_conftest()
    shipped = 0
    for folder in course.FOLDERS:
        table = json.loads((STARTER_DIR / folder / "_hints.json").read_text(encoding="utf-8"))
        for function, by_key in table.items():
            for entries in by_key.values():
                for entry in entries:
                    if entry["name"] == conftest.REFERENCE:
                        continue
                    assert entry["hint"] == by_name[(function, entry["name"])], (function, entry["name"])
                    shipped += 1
    assert shipped > 100


def _observation(result, expected, entries):
    conftest = starter_conftest()
    norm = conftest.kit_compare.normalise
    return (norm(result), norm(expected), {name: conftest.tagged(value) for name, value in entries.items()})


def test_the_learner_sees_the_hint_in_the_setting(monkeypatch):
    conftest = starter_conftest()
    f = "module_x.f"
    hints = {"en": "looks like a", "ru": "похоже на a"}
    table = {f: {"0" * 16: [{"name": conftest.REFERENCE, "hint": "", "value": None},
                            {"name": "a", "hint": hints, "value": None}]}}
    observed = {f: [_observation([2.0], [1.0], {"a": [2.0]})]}
    assert conftest.diagnosis(observed, table, lang="en") == ["likely mistake in f: a -- looks like a"]
    assert conftest.diagnosis(observed, table, lang="ru") == ["вероятная ошибка в f: a -- похоже на a"]
    monkeypatch.setenv("RL4LLM_LANG", "ru")
    assert conftest.diagnosis(observed, table) == ["вероятная ошибка в f: a -- похоже на a"]
    assert conftest.hint_text("one text", "ru") == "one text" and conftest.hint_text({"en": "e"}, "ru") == "e"
    assert conftest.hint_text(hints, "ru") == "похоже на a" and conftest.hint_text(hints, "xx") == "looks like a"


def test_the_grader_names_the_mistake_with_the_hint_in_the_setting(monkeypatch):
    (entry,) = [e for e in load_misconceptions(GRA) if e.name == "sample_std"]
    for language in course.LANGUAGES:
        monkeypatch.setenv("RL4LLM_LANG", language)
        report = grade_exercise(GRA, entry.function, namespace=entry.module)
        assert report["misconceptions"] == ["sample_std"]
        line = texts.feedback_text(language, "misconception_on_check", name="sample_std", hint=entry.hint.in_(language))
        assert line in report["feedback"], report["feedback"]


# ---------------------------------------------------------------------------
# The stub messages
# ---------------------------------------------------------------------------
def _a_fence():
    path = DEFAULT_KIT.solution_path("module_9_reference")
    return next(f for f in find_fences(path.read_text(encoding="utf-8"), str(path)) if f.function == "k3_kl")


def test_a_stub_message_reads_the_same_everywhere_in_every_language():
    conftest = starter_conftest()
    fence = _a_fence()
    english = stub_message("module_9_reference", fence)
    assert english == f"module_9_reference.k3_kl is not implemented yet -- {fence.pointer}"  # what the stub raises
    assert table_in(conftest.MESSAGES, "en")["not_implemented_stub"] == \
        table_in(conftest.MESSAGES, "en")["not_implemented"].format(message=table_in(texts.DETAILS, "en")["stub"])
    for language in course.LANGUAGES:
        assert texts.translated(texts.stub_particular(english), language) == stub_message("module_9_reference", fence, language)
        line = conftest.not_implemented(NotImplementedError(english), language)
        assert line == conftest.message("not_implemented_stub", language, function="module_9_reference.k3_kl",
                                        pointer=fence.pointer)
        assert conftest.not_implemented(NotImplementedError("mine"), language) == \
            conftest.message("not_implemented", language, message="mine")
    assert conftest.not_implemented(NotImplementedError(english), "en") == f"NOT IMPLEMENTED: {english}"
    assert conftest.not_implemented(NotImplementedError(english), "ru").startswith(
        "НЕ РЕАЛИЗОВАНО: module_9_reference.k3_kl — ")
    bare = dataclasses.replace(fence, pointer="")  # a function without a docstring
    assert stub_message("m", bare) == "m.k3_kl is not implemented yet -- see the docstring"
    assert texts.translated(texts.stub_particular(stub_message("m", bare)), "ru") == stub_message("m", bare, "ru") == \
        "m.k3_kl: ещё не реализовано — см. docstring"


def test_the_starter_says_what_to_do_in_every_language():
    text = (STARTER_DIR / "module_09" / "module_9_reference.py").read_text(encoding="utf-8")
    head = "".join(text.splitlines(keepends=True)[:3])
    assert "Implement every function" in head and CYRILLIC.search(head)


# slow: nbgrader's import and a notebook's grading (about 4 s); the release's not-implemented cells are checked fast
# in test_notebook_checks.py
@pytest.mark.slow
def test_not_implemented_is_read_from_the_code_in_every_language():
    nbformat = pytest.importorskip("nbformat")
    clear_solutions = pytest.importorskip("nbgrader.preprocessors").ClearSolutions
    from graders.engine.nbgrader import scoring as nbgrader_scoring

    stem = "module_9_reference"
    exercises = {exercise.split(".", 1)[1] for exercise in DEFAULT_KIT.exercises() if exercise.startswith(stem)}
    releases = {}
    for language in course.LANGUAGES:  # what nbgrader's generate_assignment releases
        source = nbformat.read(str(notebooks.notebook_path("module_09", stem, language)), as_version=4)
        releases[language], _ = clear_solutions().preprocess(source, {})
        assert exercises <= nbgrader_scoring.untouched_stubs(nbformat.writes(releases[language])), language
    notebook = releases["ru"]
    notebook.cells.append(nbformat.v4.new_code_cell("def k3_kl(logprobs, ref_logprobs):\n"
                                                    "    raise RuntimeError('todo')\n"))
    started = nbformat.writes(notebook)
    assert "k3_kl" not in nbgrader_scoring.untouched_stubs(started)
    entries = nbgrader_scoring.grade_notebook(started, stem, hide_hidden_inputs=False, language="ru")
    stub, written = entries[f"{stem}.categorical_entropy"], entries[f"{stem}.k3_kl"]
    assert stub["not_implemented"] and stub["status"] == "error" and CYRILLIC.search(stub["feedback"])
    assert not written["not_implemented"] and (written["status"], written["points"]) == ("error", 0)
    assert CYRILLIC.search(written["feedback"])
    status = table_in(nbgrader_scoring.TEXT, "ru")["status"]["not_implemented"]
    _, outputs = nbgrader_scoring.verdict_outputs(stub, stub["id"], 1.0, "ru", hide=False)
    assert status in outputs[0]["evalue"]
    assert not any(table_in(texts.DETAILS, "ru")["note_notebook"].split("{")[0] in line for line in outputs[0]["traceback"])
    _, outputs = nbgrader_scoring.verdict_outputs(written, written["id"], 1.0, "ru", hide=False)
    assert status not in outputs[0]["evalue"]


# ---------------------------------------------------------------------------
# The module pages
# ---------------------------------------------------------------------------
def _page(folder: str, language: str) -> str:
    name = "README.md" if language == "en" else f"README.{language}.md"
    return (STARTER_DIR / folder / name).read_text(encoding="utf-8")


def _spans(text: str) -> list[str]:
    """The inline code of a page (a span may wrap over lines), fenced blocks aside."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", text)]


def _shape(text: str) -> dict:
    lines = text.splitlines()
    return {"headings": [line.split(" ", 1)[0] for line in lines if line.startswith("#")],
            "table rows": [line.count("|") for line in lines if line.startswith("|")],
            "formula blocks": [line for line in lines if line.startswith("    ")
                               and not line.lstrip().startswith(("-", "`"))]}


@pytest.mark.parametrize("folder", course.FOLDERS)
def test_every_module_page_exists_in_every_language_and_says_the_same(folder):
    english = _page(folder, "en")
    english_shape = _shape(english)
    assert english_shape["formula blocks"] and english_shape["table rows"]
    for language in course.LANGUAGES[1:]:
        other = _page(folder, language)
        assert f"(README.{language}.md)" in english and "(README.md)" in other, "the pages link to each other"
        assert CYRILLIC.search(other)
        other_shape = _shape(other)
        for part, value in english_shape.items():
            if part == "formula blocks":  # the formulas verbatim; a page may add lines around them
                assert not [line for line in value if line not in other_shape[part]]
            else:
                assert other_shape[part] == value, part
        spans = set(_spans(other))
        learner_lines = ("NOT IMPLEMENTED", "likely mistake")  # the conftest's lines, in the page's language
        missing = [s for s in _spans(english) if s not in spans and not s.startswith(learner_lines)]
        assert not missing, f"README.{language}.md lacks the code {missing}"
