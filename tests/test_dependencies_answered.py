"""Dependent exercises: nothing of the reference reaches the learner's process, no points for code the learner
did not write, each mistake charged once (issue 31 point 2, issue 32 point 3; graders/engine/judging/answers.py).

One batch grades, beside the correct file at full marks: a file whose ``verify_numeric_answer`` only
delegates to a stub ``verify_detailed``; files with one dependency wrong (``categorical_entropy``,
``group_relative_advantages``, ``informative_group_probability``); and a placebo file whose
``verify_numeric_answer`` searches its process for the reference verifier (the lookup's closure, every
dict's strings, every code object's constants) and raises what it found. Each attack has its control:
the same submission with the guard off (the gate switched off, the answers not sent, the old harness
that shipped the reference's ``verify_detailed`` put back), where the attack works.
"""

from __future__ import annotations

import json
import re

import pytest

from graders.checks import Harness, reference_definitions, spec_for
from graders.engine.judging import answers
from graders.engine.routes.batch import grade_sources
from graders.engine.routes.grading import GradeOptions
from graders.engine.judging.kit import DEFAULT_KIT
from hostile_code import placebo

pytestmark = pytest.mark.slow

STEM = "module_9_reference"
M = f"{STEM}."
OPTIONS = GradeOptions(modules=("9",), timeout=20.0, memory_mb=768, load_timeout=30.0)
SOLUTION = DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")
VERIFIER_PARTS = ("_real", "_last_box", "_number_regex", "_parse_number", "verify_detailed")
VERIFIER_TEXT = reference_definitions("module_09/module_9_reference.py", VERIFIER_PARTS, "import re")
# the reference verifier's own lines (long enough to be its own, not a learner's `return x`)
SECRET_LINES = [line.strip() for line in VERIFIER_TEXT.splitlines()
                if len(line.strip()) >= 30 and not line.strip().startswith(("#", '"""', "Args", "Returns"))]

STUB = '''

def verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=0.0):
    raise NotImplementedError("module_9_reference.verify_detailed is not implemented yet")
'''
WRONG_ENTROPY = '''

def categorical_entropy(probabilities):  # log base 2: bits, not nats
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim == 0 or p.shape[-1] == 0:
        raise ValueError("probabilities needs a non-empty last axis")
    terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    entropy = 0.0 - terms.sum(axis=-1)
    return float(entropy) if p.ndim == 1 else entropy
'''
WRONG_ADVANTAGES = '''

_right_advantages = group_relative_advantages


def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):  # the sample std, always
    return _right_advantages(rewards, scale, eps=eps, ddof=1 if scale else ddof)
'''
WRONG_INFORMATIVE = '''

def informative_group_probability(p, group_size):  # forgets the all-wrong groups
    if not 0.0 <= p <= 1.0 or group_size < 1:
        raise ValueError("bad arguments")
    return 1.0 - p ** group_size
'''
SEARCH = '''

def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=0.0):
    import gc
    found = []
    dependency = globals().get("verify_detailed")
    for cell in getattr(dependency, "__closure__", None) or ():
        found.append(repr(cell.cell_contents)[:300])
    code = getattr(dependency, "__code__", None)
    codes = [code] if code is not None else []
    while codes:
        one = codes.pop()
        for const in one.co_consts:
            if isinstance(const, str):
                found.append(const)
            elif hasattr(const, "co_consts"):
                codes.append(const)
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            for value in list(obj.values()):
                if isinstance(value, str) and ("def verify_detailed" in value or "def _parse_number" in value):
                    found.append(value[value.find("def _parse_number"):])
    raise RuntimeError("FOUND:" + "\\n".join(found)[-1900:])
'''


def with_trusted_verifier(fn, learner, starter, *args, **kwargs):
    """The old design's harness (the control): the reference's verify_detailed, from the prelude, in the worker."""
    saved = vars(learner).get("verify_detailed")
    learner.verify_detailed = verify_detailed  # noqa: F821 - defined by the prelude
    try:
        return fn(*args, **kwargs)
    finally:
        if saved is not None:
            learner.verify_detailed = saved
        else:
            del learner.verify_detailed


OLD_VERIFIER = Harness(with_trusted_verifier, torch=False, prelude=reference_definitions(
    "module_09/module_9_reference.py", VERIFIER_PARTS, """
import math
import numbers
import re
from fractions import Fraction


class VerifierResult:
    def __init__(self, reward, accuracy, status, extracted):
        self.reward, self.accuracy, self.status, self.extracted = reward, accuracy, status, extracted
"""))

SUBMISSIONS = {
    "correct": SOLUTION,
    "stub_delegation": SOLUTION + STUB,
    "pass_delegation": SOLUTION + "\n\ndef verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=0.0):\n    pass\n",
    "wrong_entropy": SOLUTION + WRONG_ENTROPY,
    "wrong_advantages": SOLUTION + WRONG_ADVANTAGES,
    "wrong_informative": SOLUTION + WRONG_INFORMATIVE,
    "search": placebo(STEM) + SEARCH,
}


def _grade(names) -> dict[str, dict[str, dict]]:
    reports = grade_sources({name: {f"{STEM}.py": SUBMISSIONS[name]} for name in names}, OPTIONS)
    return {name: {e["id"]: e for e in report["exercises"]} for name, report in reports.items()}


def _points(entries: dict, exercise: str) -> float:
    return entries[M + exercise]["points"]


def _leaked(entries: dict) -> list[str]:
    text = json.dumps(entries)
    return [line for line in SECRET_LINES if line in text or json.dumps(line)[1:-1] in text]


@pytest.fixture(scope="module")
def graded():
    return _grade(list(SUBMISSIONS))


def test_the_correct_file_keeps_full_marks(graded):
    for exercise_id, entry in graded["correct"].items():
        if exercise_id.startswith(M):
            assert entry["points"] == entry["max_points"], (exercise_id, entry["feedback"])


@pytest.mark.parametrize("name", ["stub_delegation", "pass_delegation"])
def test_delegation_to_a_stub_earns_nothing(graded, name):
    entries = graded[name]
    assert _points(entries, "verify_detailed") == 0
    assert _points(entries, "verify_numeric_answer") == 0
    assert "verify_detailed" in entries[M + "verify_numeric_answer"]["feedback"]
    assert _points(entries, "categorical_entropy") == entries[M + "categorical_entropy"]["max_points"]


def test_delegation_earns_points_with_the_gate_off(monkeypatch):
    """Control: without the gate, the stub's dependent earns the verifier's 3 points (as on the old design)."""
    monkeypatch.setattr(answers, "gate", lambda reports, exercises, runs, language="en": reports)
    entries = _grade(["stub_delegation"])["stub_delegation"]
    assert _points(entries, "verify_detailed") == 0
    assert _points(entries, "verify_numeric_answer") == 3


@pytest.mark.parametrize("name, dependency, dependents", [
    ("wrong_entropy", "categorical_entropy", ["synthetic_mode_training"]),
    ("wrong_advantages", "group_relative_advantages",
     ["original_grpo_token_weights", "dapo_token_weights", "dr_grpo_token_weights"]),
    ("wrong_informative", "informative_group_probability", ["expected_draws_for_informative_groups"]),
])
def test_a_dependency_mistake_is_charged_once(graded, name, dependency, dependents):
    entries = graded[name]
    assert 0 < _points(entries, dependency) < entries[M + dependency]["max_points"]
    for dependent in dependents:
        assert _points(entries, dependent) == entries[M + dependent]["max_points"], entries[M + dependent]
    lost = sum(e["max_points"] - e["points"] for i, e in entries.items() if i.startswith(M))
    assert lost == pytest.approx(entries[M + dependency]["max_points"] - _points(entries, dependency))


def test_the_entropy_mistake_costs_twice_without_the_answers(monkeypatch):
    """Control: with no answers sent (the learner's own categorical_entropy used), synthetic_mode_training
    loses points for the entropy's mistake too."""
    monkeypatch.setattr(answers, "attach", lambda *args, **kwargs: None)
    entries = _grade(["wrong_entropy"])["wrong_entropy"]
    assert _points(entries, "synthetic_mode_training") < entries[M + "synthetic_mode_training"]["max_points"]


def test_no_reference_verifier_text_reaches_any_report(graded):
    entries = graded["search"]
    feedback = entries[M + "verify_numeric_answer"]["feedback"]
    assert "FOUND:" in feedback  # the attack ran and its message is shown
    assert _leaked(entries) == []
    assert _points(entries, "verify_numeric_answer") == 0


def test_the_old_harness_leaks_the_reference_verifier(monkeypatch):
    """Control: the old design (the reference's verify_detailed shipped as the harness's prelude) lets the
    same search return the reference's lines in the feedback."""
    spec = spec_for(M + "verify_numeric_answer")
    monkeypatch.setattr(spec, "call", OLD_VERIFIER)
    entries = _grade(["search"])["search"]
    assert len(_leaked(entries)) >= 3, entries[M + "verify_numeric_answer"]["feedback"][:3000]


def test_the_answer_tables_hold_no_reference_text_and_open_only_with_the_case_inputs():
    """What travels for a dependent: digests and sealed bytes; a table's entry opens only with its call."""
    from graders.engine.judging.references import fresh_inputs

    spec = spec_for(M + "verify_numeric_answer")
    cases = spec.cases()
    encoded = [{} for _ in cases]
    answers.attach(DEFAULT_KIT, spec, cases, encoded)
    text = json.dumps(encoded)
    assert not [line for line in SECRET_LINES if line in text]
    assert not re.search(r"correct|wrong|no_answer|parse_error", text)
    args, kwargs = fresh_inputs(cases[0])
    table = encoded[0]["answers"]["table"]
    signature = answers._signature(encoded[0]["answers"]["signatures"]["verify_detailed"])
    call = answers.call_text("verify_detailed", signature, args, kwargs)
    assert list(table) == [answers._find(call)]
    opened = json.loads(answers.unseal(call, table[answers._find(call)]))
    assert opened["ok"]["name"] == "VerifierResult"
    other = answers.call_text("verify_detailed", signature, ("\\boxed{7}", 7), {})
    with pytest.raises(ValueError):
        json.loads(answers.unseal(other, table[answers._find(call)]))
