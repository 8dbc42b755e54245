"""Edge classes (graders/checks/edges.py): every exercise declares them, and each declared class has a
fixed hidden case and a public test row tagged with it.

A public row is tagged by ``pytest.mark.edge("<class>")``: on a test function (``@pytest.mark.edge(...)``)
or on a ``pytest.param`` row (``marks=edge_mark("<class>")``, ``edge("<class>", *row)``), found by reading
the starter's test files (no test runs). A row belongs to the exercise ``<function>`` when its test's name
holds ``<function>``: the tests ``pytest -k <function>`` selects.
"""

from __future__ import annotations

import ast
from functools import cache

import pytest

from graders import course
from graders.checks import Case, spec_for
from graders.checks.edges import CLASSES, Edges, declare
from graders.paths import STARTER_DIR

EXERCISES = course.exercises()


def _edge_names(node: ast.AST) -> set[str]:
    """The classes named by every ``edge("<class>", ...)`` / ``....edge("<class>")`` call inside ``node``."""
    found = set()
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
        first = call.args[0]
        if name in ("edge", "edge_mark") and isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.add(first.value)
    return found


@cache
def public_edges(stem: str) -> dict[str, set[str]]:
    """test function name -> the edge classes of its rows, in ``test_<stem>.py`` (its decorators, and the
    module-level tables its decorators name)."""
    folder = next(f.folder for f in course.learner_files() if f.stem == stem)
    tree = ast.parse((STARTER_DIR / folder / f"test_{stem}.py").read_text(encoding="utf-8"))
    tables = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
              for target in node.targets if isinstance(target, ast.Name)}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            names = set()
            for decorator in node.decorator_list:
                names |= _edge_names(decorator)
                names |= {tag for used in ast.walk(decorator) if isinstance(used, ast.Name) and used.id in tables
                          for tag in _edge_names(tables[used.id])}
            found[node.name] = names
    return found


def public_classes(exercise_id: str) -> set[str]:
    stem, function = exercise_id.split(".", 1)
    return {tag for test, tags in public_edges(stem).items() if function in test for tag in tags}


@cache  # two tests read each exercise's: its cases are made once (about 40 ms an exercise)
def hidden_classes(exercise_id: str) -> frozenset[str]:
    spec = spec_for(exercise_id)
    return frozenset(tag for case in spec.make_cases() if isinstance(case, Case) for tag in case.edge)


def test_there_are_exercises_to_check():
    assert len(EXERCISES) > 30


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_every_exercise_declares_its_edge_classes(exercise_id):
    edges = spec_for(exercise_id).edges
    assert isinstance(edges, Edges), f"{exercise_id}: no edges=declare(...) on its @exercise"
    assert edges.problems() == [], f"{exercise_id}: {edges.problems()}"


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_every_declared_class_has_a_hidden_case_and_a_public_row(exercise_id):
    declared = set(spec_for(exercise_id).edges.applies)
    assert declared - hidden_classes(exercise_id) == set(), f"{exercise_id}: no hidden case tagged"
    assert declared - public_classes(exercise_id) == set(), f"{exercise_id}: no public row tagged"


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_no_case_or_row_is_tagged_with_an_undeclared_class(exercise_id):
    declared = set(spec_for(exercise_id).edges.applies)
    assert hidden_classes(exercise_id) - declared == set(), f"{exercise_id}: hidden case of an undeclared class"
    assert public_classes(exercise_id) - declared == set(), f"{exercise_id}: public row of an undeclared class"


def test_a_declaration_that_omits_or_leaves_a_class_unexplained_is_caught():
    full = {name: "why not" for name in CLASSES if name != "extremes"}
    assert declare("extremes", **full).problems() == []
    assert declare(**{**full, "extremes": " "}).problems() == ["extremes: the reason is blank"]
    del full["dtypes"]
    assert declare("extremes", **full).problems() == ["dtypes: neither declared nor given a reason"]
    with pytest.raises(ValueError):
        declare("overflowish")
    with pytest.raises(ValueError):
        Case(edge="overflowish")


def test_the_public_scan_reads_marks_on_tests_and_on_rows(tmp_path):
    source = ('T = [edge("boundaries", 1, 2), pytest.param(3, marks=pytest.mark.edge("dtypes"))]\n'
              '@pytest.mark.edge("extremes")\n@pytest.mark.parametrize("a", T)\ndef test_f_rows(a): pass\n'
              'def test_g(): pass\n')
    tree = ast.parse(source)
    rows = _edge_names(tree.body[0].value)
    assert rows == {"boundaries", "dtypes"}
    assert _edge_names(tree.body[1].decorator_list[0]) == {"extremes"}
    assert _edge_names(tree.body[2]) == set()


def test_mutation_draws_vary_the_edge_cases_first_and_keep_all_their_draws():
    import numpy as np

    from graders.mutation.draws import VARIANTS, extra_cases, structure_draws
    from graders.text import Text

    plain = [Case(args=(np.array([1.0, 2.0]),), label=Text(f"plain {i}", f"plain {i}")) for i in range(20)]
    edged = Case(args=(np.array([1000.0, -1000.0]),), label=Text("edge", "edge"), edge="extremes")
    draws = extra_cases(plain + [edged], harness=False, limit=30)
    from_edge = [d for d in draws if str(d.label).startswith("edge")]
    every = len(VARIANTS) + len(structure_draws(edged, "edge"))  # every float and structure variant of the edge case
    assert len(from_edge) == every and draws[:every] == from_edge  # first
    assert len(draws) == 30
    # control: untagged, the same case's draws are thinned with the rest
    untagged = extra_cases(plain + [Case(args=edged.args, label=edged.label)], harness=False, limit=30)
    assert len([d for d in untagged if str(d.label).startswith("edge")]) < every
