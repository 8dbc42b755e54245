"""The public tests' own failure messages speak the learner's language, as the conftest's lines do.

A public test (``starter/module_0X/test_*.py``) writes each message of its own in every language of
the course: ``assert ok, say(f"english ...", f"русский ...")`` with ``say`` from
``starter/_kit_say.py``, which reads ``RL4LLM_LANG`` (else the locale) when the message is made.

- the rule, read from the test files' AST (instant): every assert message and every
  ``pytest.fail``/``skip``/``xfail``/``exit`` text is a ``say(en, ru)`` call of two different texts with
  the same ``{placeholders}`` and numbers, never a plain string;
- ``_kit_say`` itself: the conftest's language setting, read at each call;
- with teeth (one pytest run per language, a few seconds): a wrong function fails a public test
  with the Russian text under ``RL4LLM_LANG=ru`` and the English one under ``RL4LLM_LANG=en``.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from graders import course
from graders.build.hints import starter_conftest
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR, STARTER_DIR
from learner_runs import Job, run_many

PUBLIC_TEST_FILES = sorted(STARTER_DIR.glob("module_0*/test_*.py"))
PYTEST_TEXTS = ("fail", "skip", "xfail", "exit", "importorskip")  # pytest.<name>(text): a learner reads it
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")

kit_say = load_module(STARTER_DIR / "_kit_say.py", "_rl4llm_kit_say", given={"_kit_text": STARTER_DIR / "_kit_text.py"})


# ----------------------------------------------------------------------------- the rule
def _learner_texts(tree: ast.AST) -> list[tuple[int, ast.expr]]:
    """(line, text expression) of every message a failing public test shows: assert messages and the
    texts given to pytest.fail / skip / xfail / exit / importorskip (``reason=``, ``msg=`` too)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            found.append((node.lineno, node.msg))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PYTEST_TEXTS
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest"):
            texts = [k.value for k in node.keywords if k.arg in ("reason", "msg")]
            if node.func.attr != "importorskip" and node.args:
                texts.insert(0, node.args[0])
            found += [(node.lineno, text) for text in texts]
    return found


def _parts(text: ast.expr) -> tuple[str, Counter]:
    """A literal text's words (the f-string's fixed parts) and its placeholders' source."""
    if isinstance(text, ast.Constant) and isinstance(text.value, str):
        return text.value, Counter()
    assert isinstance(text, ast.JoinedStr), ast.unparse(text)
    words = "".join(v.value for v in text.values if isinstance(v, ast.Constant))
    return words, Counter(ast.unparse(v) for v in text.values if isinstance(v, ast.FormattedValue))


def _problem(text: ast.expr) -> str | None:
    """Why a learner-facing text is not a proper ``say(en, ru)``; None when it is."""
    if not (isinstance(text, ast.Call) and isinstance(text.func, ast.Name) and text.func.id == "say"):
        return f"{ast.unparse(text)[:80]!r} is not say(en, ru)"
    if len(text.args) != len(course.LANGUAGES) or text.keywords:
        return f"say takes one text per language, positional, {course.LANGUAGES}: {ast.unparse(text)[:80]!r}"
    if not all(isinstance(a, ast.JoinedStr) or (isinstance(a, ast.Constant) and isinstance(a.value, str))
               for a in text.args):
        return f"say's texts are string literals or f-strings: {ast.unparse(text)[:80]!r}"
    (en_words, en_fields), *others = [_parts(a) for a in text.args]
    for language, (words, fields) in zip(course.LANGUAGES[1:], others):
        if words.strip() == en_words.strip():
            return f"the {language} text is the English one: {en_words[:80]!r}"
        if fields != en_fields:
            return f"the {language} text has other placeholders: {sorted(fields)} vs {sorted(en_fields)}"
        if Counter(NUMBER.findall(words)) != Counter(NUMBER.findall(en_words)):
            return f"the {language} text has other numbers: {words[:80]!r} vs {en_words[:80]!r}"
    return None


def _imports_say(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ImportFrom) and node.module == "_kit_say"
               and any(alias.name == "say" and alias.asname is None for alias in node.names) for node in tree.body)


def test_there_are_public_test_files():
    assert PUBLIC_TEST_FILES and {p.parent.name for p in PUBLIC_TEST_FILES} == set(course.FOLDERS)


@pytest.mark.parametrize("test_file", PUBLIC_TEST_FILES, ids=lambda p: p.stem)
def test_every_public_test_message_is_said_in_every_language(test_file):
    tree = ast.parse(test_file.read_text(encoding="utf-8"))
    texts = _learner_texts(tree)
    problems = [f"line {line}: {problem}" for line, text in texts if (problem := _problem(text))]
    assert not problems, (
        f"{test_file.relative_to(REPO_ROOT)}: write each message as say(f\"english ...\", f\"русский ...\") "
        f"(`from _kit_say import say`; same placeholders, numbers and names in both):\n" + "\n".join(problems))
    if texts:
        assert _imports_say(tree), f"{test_file.name}: `from _kit_say import say` (conftest.py loads it)"


def test_the_rule_has_teeth():
    def problems(source: str) -> list[str | None]:
        return [_problem(text) for _, text in _learner_texts(ast.parse(source))]

    assert problems('assert ok, say(f"got {x}", f"получено {x}")\npytest.fail(say("a 1", "б 1"))') == [None, None]
    assert problems('assert ok\nwith pytest.raises(ValueError, match="beta"): f()') == []  # a pattern, not a text
    assert all(problems('assert ok, "plain"\nassert ok, f"got {x}"\npytest.fail("no")\n'
                        'pytest.skip(reason="later")\nassert ok, ("a", "b")'))
    assert problems('assert ok, say(f"got {x}", f"получено {y}")')[0].startswith("the ru text has other placeholders")
    assert problems('assert ok, say("expected 0.13", "ожидалось 0.12")')[0].startswith("the ru text has other numbers")
    assert problems('assert ok, say("same", "same")')[0].startswith("the ru text is the English one")
    assert problems('assert ok, say("en")')[0].startswith("say takes one text per language")
    assert problems('assert ok, say(en="a", ru="б")')[0].startswith("say takes one text per language")
    assert problems('assert ok, say(MESSAGE, "б")')[0].startswith("say's texts are string literals")


# ----------------------------------------------------------------------------- _kit_say
def test_kit_say_has_the_courses_languages_and_is_the_conftests_setting():
    assert kit_say.LANGUAGES == course.LANGUAGES
    conftest = starter_conftest()
    assert conftest.language is conftest.kit_say.language
    assert all(list(text.translations) == list(kit_say.LANGUAGES) for text in conftest.MESSAGES.values())
    assert kit_say.say("a {x}", "б {x}") in ("a {x}", "б {x}")  # Text(en, ru).in_(the setting), as written


def test_say_reads_the_setting_when_it_is_called(monkeypatch):
    for variable in ("RL4LLM_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    assert kit_say.say("loss", "функция потерь") == "loss"
    monkeypatch.setenv("LANG", "ru_RU.UTF-8")
    assert kit_say.say("loss", "функция потерь") == "функция потерь"
    monkeypatch.setenv("RL4LLM_LANG", "en")
    assert kit_say.say("loss", "функция потерь") == "loss"
    monkeypatch.setenv("RL4LLM_LANG", "RU")
    assert kit_say.say("loss", "функция потерь") == "функция потерь"
    assert kit_say.language({"LANG": "de_DE.UTF-8"}) == "en" and kit_say.language({}) == "en"


# ----------------------------------------------------------------------------- with teeth
WRONG_DAPO = '''

# --- tests/test_public_test_languages.py: dapo_token_weights gives the tokens of one response unequal
# weights (each response's sum unchanged), so only "every token of one response has the same weight" fails
_right_dapo_token_weights = dapo_token_weights


def dapo_token_weights(rewards, lengths, *, eps=1e-6):
    return [w * np.linspace(0.5, 1.5, len(w)) for w in _right_dapo_token_weights(rewards, lengths, eps=eps)]
'''
ENGLISH = "every token of one response has the same weight"
RUSSIAN = "все токены одного ответа получают одинаковый вес"


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_failing_public_test_speaks_the_learners_language(tmp_path):
    root = tmp_path / "impl"
    shutil.copytree(SOLUTIONS_DIR / "module_09", root / "module_09", ignore=shutil.ignore_patterns("__pycache__"))
    learner_file = root / "module_09" / "module_9_reference.py"
    learner_file.write_text(learner_file.read_text(encoding="utf-8") + WRONG_DAPO, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RL4LLM_")}
    env.update(RL4LLM_IMPL_ROOT=str(root), MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    args = ["starter/module_09/test_module_9_reference.py", "-k", "test_dapo_token_weights_seed_table",
            "-q", "-p", "no:cacheprovider"]
    english, russian = run_many([Job(args=args, env={**env, "RL4LLM_LANG": language}, cwd=str(REPO_ROOT))
                                 for language in ("en", "ru")], workers=2)
    for run, said, unsaid in ((english, ENGLISH, RUSSIAN), (russian, RUSSIAN, ENGLISH)):
        assert run.returncode == 1 and re.search(r"\b1 failed\b", run.stdout), run.stdout[-3000:]
        # the traceback quotes the assert's source (both texts); the error itself is in one language
        errors = "\n".join(line for line in run.stdout.splitlines() if "AssertionError" in line)
        assert said in errors and unsaid not in errors, run.stdout[-3000:]
