"""The tiers nest: every test of the exhaustive tier is also marked slow (docs/contributing.md, "Tests in tiers").

The fast tier is ``-m "not slow"``, so a test marked ``exhaustive`` alone would run in the everyday loop: a sweep
moved out of the README's suite landed in the fast tier that way once (2026-12-03, 55 s more per run). Read from
the test files' AST (instant): a test function whose decorators name ``exhaustive`` anywhere (a mark, or a
``pytest.param(..., marks=...)`` of its parametrization) carries ``pytest.mark.slow`` itself, or its file does
(``pytestmark``); a file marked exhaustive is marked slow too.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _names_mark(node: ast.AST, mark: str) -> bool:
    """Whether ``node`` mentions ``pytest.mark.<mark>`` (an attribute chain ending in ``mark.<mark>``)."""
    return any(isinstance(n, ast.Attribute) and n.attr == mark and isinstance(n.value, ast.Attribute)
               and n.value.attr == "mark" for n in ast.walk(node))


def exhaustive_without_slow(source: str) -> list[str]:
    """The tests of ``source`` that name the exhaustive mark but are not marked slow (``pytestmark`` for a file's
    own marks)."""
    tree = ast.parse(source)
    file_marks = [node.value for node in tree.body if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)]
    file_slow = any(_names_mark(value, "slow") for value in file_marks)
    found = ["pytestmark"] if any(_names_mark(v, "exhaustive") for v in file_marks) and not file_slow else []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            exhaustive = any(_names_mark(d, "exhaustive") for d in node.decorator_list)
            # a slow mark of the function itself, not one inside a pytest.param of its parametrization
            slow = file_slow or any(_names_mark(d, "slow") for d in node.decorator_list if isinstance(d, ast.Attribute))
            if exhaustive and not slow:
                found.append(node.name)
    return found


def test_every_exhaustive_test_is_also_slow():
    problems = {path.name: names for path in sorted(TESTS.glob("test_*.py"))
                if (names := exhaustive_without_slow(path.read_text(encoding="utf-8")))}
    assert not problems, (f"marked exhaustive but not slow, so the fast tier (-m 'not slow') runs them: {problems}; "
                          "add @pytest.mark.slow beside @pytest.mark.exhaustive")


def test_the_check_sees_a_mark_a_param_and_a_file_mark():
    alone = "import pytest\n@pytest.mark.exhaustive\ndef test_a():\n    pass\n"
    param = ("import pytest\n@pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.exhaustive)])\n"
             "def test_b(x):\n    pass\n")
    assert exhaustive_without_slow(alone) == ["test_a"]
    assert exhaustive_without_slow(param) == ["test_b"]
    both = alone.replace("@pytest.mark.exhaustive", "@pytest.mark.slow\n@pytest.mark.exhaustive")
    assert exhaustive_without_slow(both) == []
    assert exhaustive_without_slow("import pytest\npytestmark = pytest.mark.slow\n" + alone.split("\n", 1)[1]) == []
    assert exhaustive_without_slow("import pytest\n@pytest.mark.slow\ndef test_c():\n    pass\n") == []
    assert exhaustive_without_slow("import pytest\npytestmark = pytest.mark.exhaustive\ndef test_d():\n    pass\n") == [
        "pytestmark"]
    slow_param = param.replace("marks=pytest.mark.exhaustive", "marks=[pytest.mark.exhaustive, pytest.mark.slow]")
    assert exhaustive_without_slow(slow_param) == ["test_b"]  # a param's slow mark does not make the test slow
