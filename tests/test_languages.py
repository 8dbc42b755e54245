"""Every learner-facing text table exists in every language of the course, with the same keys and placeholders.

A text table is a module-level dict keyed by a language (``{"en": ..., "ru": ...}``)
or by ``(key, language)`` tuples. The tables are found, not listed, in the
modules that hold the kit's texts, so a new table is checked the day it is added.
"""

from __future__ import annotations

import ast
import string

import pytest

import importlib
import re

from graders import course
from graders.build.hints import starter_conftest
from graders.build.notebooks import texts
from graders.engine import nbgrader_scoring
from graders.engine import texts as engine_texts
from graders import figures, walkthrough
from graders.paths import REPO_ROOT

KNOWN_TEXT_MODULES = (texts, nbgrader_scoring, engine_texts, walkthrough, figures)
LANGUAGE_KEY = re.compile(r"""["'](?:%s)["']\s*[:)]""" % "|".join(course.LANGUAGES[1:]))


def _modules_with_texts() -> list:
    """Every kit module whose source has a table entry for a language other than English (``"ru": ...``),
    the known ones first, and the learner's conftest (``MESSAGES``); the misconception catalogue holds
    its texts in docstrings (tests/test_languages_catalogue.py)."""
    found = list(KNOWN_TEXT_MODULES)
    for path in sorted((REPO_ROOT / "graders").rglob("*.py")):
        relative = path.relative_to(REPO_ROOT).with_suffix("")
        if "misconceptions" in relative.parts or not LANGUAGE_KEY.search(path.read_text(encoding="utf-8")):
            continue
        module = importlib.import_module(".".join(relative.parts).removesuffix(".__init__"))
        if module not in found:
            found.append(module)
    return found + [starter_conftest()]


TEXT_MODULES = tuple(_modules_with_texts())


def _is_language_key(key) -> bool:
    return key in course.LANGUAGES or (isinstance(key, tuple) and key and key[-1] in course.LANGUAGES)


def _tables():
    found = []
    for module in TEXT_MODULES:
        for name, value in vars(module).items():
            if isinstance(value, dict) and value and all(_is_language_key(key) for key in value):
                found.append(pytest.param(value, id=f"{module.__name__.rsplit('.', 1)[-1]}.{name}"))
    return found


def _by_language(table: dict) -> dict[str, dict]:
    """``{language: {key: text}}`` for both table shapes."""
    out: dict[str, dict] = {language: {} for language in course.LANGUAGES}
    for key, text in table.items():
        if isinstance(key, tuple):
            out.setdefault(key[-1], {})[key[:-1]] = text
        else:
            out.setdefault(key, {}).update(text if isinstance(text, dict) else {(): text})
    return out


def _placeholders(text) -> set[str]:
    if not isinstance(text, str):
        return {f"<{type(text).__name__}>"}
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_text_tables_are_found():
    names = {param.id for param in _tables()}
    assert {"texts.MODULE_TEXT", "texts.FILE_TEXT", "texts.HOW_TO", "texts.TEXT", "nbgrader_scoring.TEXT"} <= names
    assert {"texts.FEEDBACK", "texts.SCOREBOARD", "texts.DETAILS", "texts.KINDS"} <= names  # the grader's
    assert "_rl4llm_starter_conftest.MESSAGES" in names  # the learner's pytest


@pytest.mark.parametrize("table", _tables())
def test_every_text_exists_in_every_language(table):
    by_language = _by_language(table)
    assert set(by_language) == set(course.LANGUAGES), "a language the course does not have, or one missing"
    keys = {language: set(entries) for language, entries in by_language.items()}
    first = course.LANGUAGES[0]
    for language in course.LANGUAGES[1:]:
        assert keys[language] == keys[first], (
            f"{language} lacks {sorted(map(str, keys[first] - keys[language]))}, "
            f"has extra {sorted(map(str, keys[language] - keys[first]))}")
    for language, entries in by_language.items():
        for key, text in entries.items():
            assert text, f"{language} {key}: empty text"
            items = text.items() if isinstance(text, dict) else [((), text)]
            for sub, value in items:
                assert value, f"{language} {key} {sub}: empty text"


@pytest.mark.parametrize("table", _tables())
def test_translations_keep_the_placeholders(table):
    by_language = _by_language(table)
    first = course.LANGUAGES[0]
    for key, text in by_language[first].items():
        for language in course.LANGUAGES[1:]:
            other = by_language[language][key]
            if isinstance(text, dict):
                for sub in text:
                    assert _placeholders(other[sub]) == _placeholders(text[sub]), (language, key, sub)
            else:
                assert _placeholders(other) == _placeholders(text), (language, key)


# ----------------------------------------------------------------------------- the capstone's texts
CAPSTONE_CODE = sorted([*(REPO_ROOT / "graders").glob("capstone*.py"),
                        *(REPO_ROOT / "graders" / "capstone_run").glob("*.py")])
# call -> the position of its text key: text(language, KEY), say(KEY), CapstoneError(KEY), PreflightLine(status, KEY)
KEY_ARGUMENT = {"text": 1, "say": 0, "CapstoneError": 0, "PreflightLine": 1}


def _capstone_keys_named() -> dict[str, str]:
    """{text key: where} for every key the capstone's code names literally: in a text call (an ``a if c else b``
    of keys too) and in the (passed, key, values) a passport check returns."""
    named = {}
    for path in CAPSTONE_CODE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = None
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name in KEY_ARGUMENT and len(node.args) > KEY_ARGUMENT[name]:
                    found = node.args[KEY_ARGUMENT[name]]
            elif (isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 3
                  and path.name == "capstone.py"):
                found = node.value.elts[1]
            for key in _literal_keys(found):
                named[key] = f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
    return named


def _literal_keys(expression) -> set[str]:
    """The keys an expression names: a string, or either branch of ``a if c else b`` (a built key, none)."""
    if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
        return {expression.value}
    if isinstance(expression, ast.IfExp):
        return _literal_keys(expression.body) | _literal_keys(expression.orelse)
    return set()


def test_every_capstone_text_is_in_both_languages_and_every_key_named_exists():
    from graders.capstone_run import texts as capstone_texts

    assert capstone_texts in TEXT_MODULES  # so the table tests above check it
    table = capstone_texts.TEXT
    assert set(table) == set(course.LANGUAGES)
    named = _capstone_keys_named()
    assert {"passport_verifier_version", "consistency_dry_run", "reeval_claim_wrong", "error_no_verifier",
            "help_verifier", "preflight_no_cuda"} <= set(named)  # the scan sees every kind of use
    for language in course.LANGUAGES:
        missing = {key: where for key, where in named.items() if key not in table[language]}
        assert not missing, f"{language}: keys named in the capstone's code but not in its TEXT: {missing}"
    for key, english in table["en"].items():  # a Russian text is Russian, unless it is only names and numbers
        russian = table["ru"][key]
        assert re.search("[а-яё]", russian, re.IGNORECASE) or russian == english, key
