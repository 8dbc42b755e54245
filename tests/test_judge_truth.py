"""The grader's feedback is never wrong: a mistake is named only when it explains every check, a wrong
type fails its check, and refusing bad input earns points only in a function that works.

Fast tests of the decisions (:mod:`graders.engine.judging.judge`, :func:`graders.engine.values.compare.type_problem`,
:func:`graders.engine.values.compare.float_trap`) on made-up outcomes; the slow ones grade hostile learner files
beside the reference (which keeps full marks) and read the reports in both languages.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

from graders import checks
from graders.engine.judging import judge
from graders.engine.values import codec
from graders.engine.routes.batch import grade_sources
from graders.engine.values.compare import float_trap, mismatch, type_problem
from graders.engine.routes.grading import GradeOptions
from graders.engine.values.protocol import CaseOutcome, CaseResult
from graders.engine.judging.references import Outcome
from graders.paths import SOLUTIONS_DIR
from graders.text import Text
from learner_variants import TYPE_VARIANTS, variant_source


# ---------------------------------------------------------------------------
# A name only when it explains everything
# ---------------------------------------------------------------------------
def _close(expected, got, case):
    return mismatch(expected, got, rtol=1e-6, atol=1e-9)


def _diagnose(entries: dict[str, list], reference: list, learner: list):
    """``judge._diagnose`` on made-up checks: each entry's values, the reference's, the learner's."""
    cases = [checks.Case(label=Text(f"check {i}", f"проверка {i}")) for i in range(len(reference))]
    expected = [Outcome(value=float(v)) for v in reference]
    listed = [types.SimpleNamespace(name=name, hint=Text(f"{name} hint", f"{name} подсказка"))
              for name in entries]

    def wrong_outcome(exercise, entry, index):
        value = entries[entry.name][index]
        return Outcome(raised=["ValueError"]) if value is None else Outcome(value=float(value))

    book = types.SimpleNamespace(misconceptions=lambda exercise: listed, wrong_outcome=wrong_outcome)
    ctx = types.SimpleNamespace(book=book, options=types.SimpleNamespace(detect_misconceptions=True))
    exercise = types.SimpleNamespace(spec=types.SimpleNamespace(detect_misconceptions=True))
    answers = {i: float(v) for i, v in enumerate(learner) if v is not None}
    evidence = [CaseOutcome(i, cases[i], CaseResult.WRONG, expected=float(reference[i]), got=float(v))
                for i, v in enumerate(learner) if v is not None and v != reference[i]]
    return judge._diagnose(exercise, cases, expected, answers, evidence, _close, ctx)


def test_an_entry_that_fits_the_wrong_answers_but_not_a_right_one_is_not_named():
    # "zero" reproduces the wrong answer on check 1 but would also be wrong on check 0, which the learner
    # gets right: the learner's code does not contain that mistake (the 0/1 verifier checks)
    claimed, candidates = _diagnose({"zero": [0, 0, 5], "double": [2, 4, 10]}, [1, 2, 5], [1, 0, 5])
    assert claimed == {} and candidates == ()


def test_one_entry_that_explains_every_check_is_claimed_on_the_first_wrong_answer():
    claimed, candidates = _diagnose({"zero": [0, 0, 5], "double": [2, 4, 10]}, [1, 2, 5], [2, 4, 10])
    assert list(claimed) == ["double"] and candidates == ()
    hints, labels = claimed["double"]
    assert repr(hints) == repr(Text("double hint", "double подсказка")) and repr(labels) == repr(Text("check 0", "проверка 0"))


def test_several_entries_that_explain_every_check_are_candidates_and_none_is_claimed():
    claimed, candidates = _diagnose({"b": [0, 0, 5], "a": [0, 0, 5]}, [1, 2, 5], [0, 0, 5])
    assert claimed == {} and candidates == ("a", "b")


def test_an_entry_that_raises_where_the_learner_is_wrong_does_not_explain_it():
    claimed, _ = _diagnose({"zero": [0, None, 5]}, [1, 2, 5], [0, 0, 5])
    assert claimed == {}
    claimed, _ = _diagnose({"zero": [0, 0, None]}, [1, 2, 5], [0, 0, 5])  # raises where the learner is right
    assert list(claimed) == ["zero"]


def test_no_wrong_answer_means_no_name():
    assert _diagnose({"same": [1, 2, 5]}, [1, 2, 5], [1, 2, 5]) == ({}, ())


# ---------------------------------------------------------------------------
# The float trap
# ---------------------------------------------------------------------------
def test_the_float_trap_is_recognised_only_on_an_all_equal_group():
    rewards = np.array([[0.1, 0.1, 0.1], [1.0, 0.0, 0.0]])
    expected = np.array([[0.0, 0.0, 0.0], [1.41421, -0.707105, -0.707105]])
    trapped = expected.copy()
    trapped[0] = [1.0, -0.5, -0.5]
    assert float_trap(expected, trapped, [rewards], rtol=1e-5, atol=1e-6) == 1.0
    other = trapped.copy()
    other[1, 0] = 2.0  # a second wrong value elsewhere: a mistake, not the trap
    assert float_trap(expected, other, [rewards], rtol=1e-5, atol=1e-6) is None
    assert float_trap(expected, trapped, [np.array([[0.1, 0.2, 0.1], [1.0, 0.0, 0.0]])], rtol=1e-5, atol=1e-6) is None
    # a group whose mean is exact cannot fall into the trap (clip_activity with every advantage -1)
    assert float_trap(np.zeros(3), np.array([1.0, 0.0, 0.0]), [np.full(3, -1.0)], rtol=1e-5, atol=1e-6) is None
    assert float_trap(np.zeros(3), np.array([1.0, 0.0, 0.0]), [np.full(3, 0.7)], rtol=1e-5, atol=1e-6) == 1.0


# ---------------------------------------------------------------------------
# Types are part of the answer
# ---------------------------------------------------------------------------
T = torch.zeros(3, dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize("reference, learner, fails", [
    (1.0, np.float64(1.0), False), (1.0, 1, False), (1.0, np.float32(1.0), True), (1.0, np.array(1.0), True),
    (1.0, np.array([1.0]), True), (np.array(1.0), 1.0, False), (np.array(1.0), np.float32(1.0), True),
    (1.0, True, True), (1, 1, False), (1, True, True), (1, np.int64(1), True),
    (np.zeros(2), np.zeros(2, np.float32), True), (np.zeros(2), [0.0, 0.0], True), (np.zeros(2), np.zeros(2), False),
    (np.zeros(2, bool), np.zeros(2), True), (np.zeros(2, bool), np.zeros(2, bool), False),
    ([np.zeros(2)], [np.zeros(2)], False), ([np.zeros(2)], (np.zeros(2),), False), ([np.zeros(2)], [[0.0, 0.0]], True),
    ({"a": 1.0, "b": np.zeros(1)}, {"a": 1.0, "b": np.zeros(1), "extra": "x"}, False),
    ({"a": 1.0}, {"a": np.array([1.0])}, True),
    (T.sum(), T.sum(), False), (T.sum(), T.sum().detach(), True), (T.sum(), T.sum().float(), True),
    ((T.sum(), T.detach()), (T.sum(), T * 2), True), ((T.sum(), T.detach()), (T.sum(), T.detach().numpy()), True),
    ((T.sum(), T.detach()), (T.sum(), (T * 2).detach()), False),
    (None, 3.0, False), ("text", 3.0, False),
])
def test_a_result_has_the_type_the_reference_has(reference, learner, fails):
    problem = type_problem(codec.type_of(reference), codec.type_of(learner))
    assert (problem is not None) == fails, problem
    if fails:
        assert problem.startswith("wrong type") and problem.in_("ru").startswith("неверный тип")


def test_type_of_never_raises_and_a_malformed_description_is_a_wrong_type():
    class Hostile:
        @property
        def __dict__(self):
            raise RuntimeError("no")

    assert codec.type_of(Hostile()) == {"object": "Hostile"}
    for forged in (None, 5, "float32", {"array": ["x"] * 10_000}, {"tensor": {}, "grad": "yes"}, {"list": 3}):
        problem = type_problem(codec.type_of(np.zeros(2)), forged)
        assert problem is not None and len(problem) < 300


# ---------------------------------------------------------------------------
# Validation points only with a working function
# ---------------------------------------------------------------------------
def _tally(total, passed):
    tally = judge._Tally()
    tally.total, tally.passed = total, passed
    return tally


def test_refusals_are_worth_points_in_proportion_to_the_value_checks_passed():
    assert judge.earned_share(_tally(10, 0), _tally(4, 4)) == 0.0  # raises on every input
    assert judge.earned_share(_tally(10, 10), _tally(4, 4)) == 1.0
    assert judge.earned_share(_tally(10, 5), _tally(4, 4)) == pytest.approx((5 + 2) / 14)
    assert judge.earned_share(_tally(0, 0), _tally(4, 2)) == 0.5  # an exercise of refusals only


# ---------------------------------------------------------------------------
# Graded: hostile files beside the reference
# ---------------------------------------------------------------------------
ALWAYS_RAISES = '''
def pass_at_k_unbiased(n, c, k):
    raise ValueError("n, c and k are refused")
'''
NO_ALL_EQUAL_TEST = '''
def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = _float_array(rewards, "rewards")
    if r.ndim not in (1, 2) or r.shape[-1] == 0 or not np.all(np.isfinite(r)):
        raise ValueError(f"rewards must be finite, (G,) or (num_groups, G) with G >= 1, got {r.shape}")
    if eps < 0 or ddof < 0 or (scale and ddof >= r.shape[-1]):
        raise ValueError("eps, ddof")
    centred = r - r.mean(axis=-1, keepdims=True)
    if not scale:
        return centred
    std = r.std(axis=-1, ddof=ddof, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(std + eps > 0, centred / (std + eps), 0.0)
'''


@pytest.fixture(scope="module")
def graded():
    reference = (SOLUTIONS_DIR / "module_09" / "module_9_reference.py").read_text(encoding="utf-8")
    files = {"reference": reference, "always-raises": reference + ALWAYS_RAISES,
             "float-trap": reference + NO_ALL_EQUAL_TEST}
    files.update({variant.name: variant_source(variant) for variant in TYPE_VARIANTS
                  if variant.stem == "module_9_reference"})
    reports = {}
    for language in ("en", "ru"):
        reports[language] = grade_sources({name: {"module_9_reference.py": text} for name, text in files.items()},
                                          GradeOptions(modules=("9",), lang=language), jobs=2)
    return reports


@pytest.fixture(scope="module")
def graded_module_8():
    """Module 8's type variants, each learner file with the other file of the module the reference's."""
    files = {}
    for variant in TYPE_VARIANTS:
        if variant.stem.startswith("module_8"):
            other = "module_8_training" if variant.stem == "module_8_reference" else "module_8_reference"
            files[variant.name] = {f"{variant.stem}.py": variant_source(variant),
                                   f"{other}.py": (SOLUTIONS_DIR / "module_08" / f"{other}.py").read_text("utf-8")}
    return grade_sources(files, GradeOptions(modules=("8",)), jobs=2)


def _lost(report, stem: str = "module_9_reference") -> dict[str, dict]:
    """The exercises of ``stem`` that lost points (the batch grades one learner file of Module 9)."""
    return {e["id"]: e for e in report["exercises"] if e["id"].startswith(stem + ".") and e["points"] < e["max_points"]}


@pytest.mark.slow
def test_the_reference_keeps_full_marks_and_no_name(graded):
    for language in ("en", "ru"):
        report = graded[language]["reference"]
        assert not _lost(report)
        assert not any(e["misconceptions"] or e.get("candidates") for e in report["exercises"])


@pytest.mark.slow
@pytest.mark.parametrize("variant", [v for v in TYPE_VARIANTS if v.stem == "module_9_reference"],
                         ids=lambda v: v.name)
def test_a_wrong_type_loses_points_on_its_exercise_only_and_says_so(graded, variant):
    for language, words in (("en", "wrong type"), ("ru", "неверный тип")):
        lost = _lost(graded[language][variant.name])
        assert list(lost) == [variant.exercise], lost
        assert words in lost[variant.exercise]["feedback"]
        assert not lost[variant.exercise]["misconceptions"]


@pytest.mark.slow
def test_a_function_that_raises_on_every_input_earns_nothing_for_its_refusals(graded):
    lost = _lost(graded["en"]["always-raises"])
    assert list(lost) == ["module_9_reference.pass_at_k_unbiased"]
    assert lost["module_9_reference.pass_at_k_unbiased"]["points"] == 0


@pytest.mark.slow
def test_the_float_trap_is_explained_and_no_mistake_is_named(graded):
    for language, words in (("en", "floating point, not the formula"), ("ru", "дело в плавающей точке")):
        lost = _lost(graded[language]["float-trap"])
        assert list(lost) == ["module_9_reference.group_relative_advantages"], lost
        entry = lost["module_9_reference.group_relative_advantages"]
        assert words in entry["feedback"], entry["feedback"]
        assert not entry["misconceptions"] and not entry.get("candidates"), entry["feedback"]


@pytest.mark.slow
@pytest.mark.parametrize("variant", [v for v in TYPE_VARIANTS if v.stem.startswith("module_8")],
                         ids=lambda v: v.name)
def test_a_wrong_type_in_module_8_loses_points_on_its_exercise_only(graded_module_8, variant):
    report = graded_module_8[variant.name]
    lost = {e["id"]: e for e in report["exercises"] if e["points"] < e["max_points"]}
    assert list(lost) == [variant.exercise], {k: v["feedback"] for k, v in lost.items()}
    assert "wrong type" in lost[variant.exercise]["feedback"]


def test_the_class_report_counts_only_claimed_names(tmp_path):
    from graders.classreport import misconception_table, read_reports
    import json

    exercise = "module_9_reference.group_relative_advantages"
    for name, claimed, candidates in (("a", ["sample_std"], []), ("b", [], ["no_eps", "sample_std"])):
        (tmp_path / name).mkdir()
        entry = {"id": exercise, "status": "failed", "points": 1.0, "max_points": 3.0, "feedback": "",
                 "misconceptions": claimed, **({"candidates": candidates} if candidates else {})}
        (tmp_path / name / "report.json").write_text(json.dumps(
            {"submission": name, "score": 1.0, "max_score": 3.0, "exercises": [entry]}), encoding="utf-8")
    table = misconception_table(read_reports(tmp_path), "en")
    assert table[["misconception", "learners"]].values.tolist() == [["sample_std", 1]]


@pytest.fixture(scope="module")
def graded_outside():
    from learner_variants import OUTSIDE_MISTAKES, outside_source

    reports = {}
    for module in ("8", "9"):
        mistakes = [m for m in OUTSIDE_MISTAKES if m.stem.startswith(f"module_{module}")]
        batch = grade_sources({m.name: {f"{m.stem}.py": outside_source(m)} for m in mistakes},
                              GradeOptions(modules=(module,)), jobs=2)
        reports.update({m.name: (m, batch[m.name]) for m in mistakes})
    return reports


@pytest.mark.slow
def test_a_mistake_outside_the_catalogue_loses_points_and_gets_no_false_name(graded_outside):
    # the findings: a batch std was told "sample std", boxes ignored first_box, np.minimum for
    # np.maximum "no clamp" (a fixed 1e-3 tolerance, told exact_equality, is catalogued now: fixed_tolerance)
    for mistake, report in graded_outside.values():
        lost = _lost(report, mistake.stem)
        assert list(lost) == [mistake.exercise], (mistake.name, lost)
        assert lost[mistake.exercise]["misconceptions"] == ([mistake.named] if mistake.named else []), (
            mistake.name, lost[mistake.exercise]["feedback"])


@pytest.mark.parametrize("language, line", [
    ("en", "- several catalogued mistakes fit every check equally well, so none is named: no_eps, sample_std"),
    ("ru", "- всем проверкам одинаково соответствуют несколько известных ошибок, поэтому ни одна не названа: "
           "no_eps, sample_std")])
def test_candidates_are_listed_in_the_feedback_and_none_is_claimed(language, line):
    from graders.engine.outputs import feedback
    from graders.engine.routes.grading import GradeOptions as Options
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.engine.values.protocol import Judgement, Status

    judgement = Judgement(Status.FAILED, checks=3, candidates=("no_eps", "sample_std"))
    exercise = types.SimpleNamespace(id="module_9_reference.group_relative_advantages", stem="module_9_reference",
                                     function="group_relative_advantages")
    ctx = types.SimpleNamespace(kit=DEFAULT_KIT, options=Options(lang=language))
    text = feedback.render(judgement, exercise, ctx)
    assert text.split("\n")[-1] == line
    assert feedback_text_misconception(language) not in text


def feedback_text_misconception(language: str) -> str:
    from graders.engine.values.texts import feedback_text

    return feedback_text(language, "misconception", name="")[:-1]


def test_a_right_value_of_a_wrong_type_earns_the_stated_share():
    """A verifier returning True where 1 is expected: the right value, the wrong type -- half of each check."""
    from types import SimpleNamespace

    from graders.engine.judging.judge import RIGHT_VALUE_WRONG_TYPE, judge_cases
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.engine.judging.references import ReferenceBook
    from graders.engine.routes.grading import Exercise, GradeOptions
    from graders.checks import spec_for

    exercise_id = "module_9_reference.verify_numeric_answer"
    spec = spec_for(exercise_id)
    exercise = Exercise(exercise_id, *exercise_id.split("."), spec, index=0)
    book = ReferenceBook.of(DEFAULT_KIT)
    expected = book.expected(exercise)
    ctx = SimpleNamespace(kit=DEFAULT_KIT, options=GradeOptions(detect_misconceptions=False), book=book)

    def payload(as_bool: bool) -> dict:
        cases = []
        for want in expected:
            if want.raised:
                cases.append({"outcome": "raised", "exception": {"type": want.raised[0], "mro": list(want.raised)}})
            else:
                value = codec.normalise(bool(want.value)) if as_bool else want.value  # as the worker sends it
                cases.append({"outcome": "ok", "value": value, "type": "bool" if as_bool else want.type})
        return {"cases": cases}

    right = judge_cases(exercise, payload(False), {}, ctx, [])
    assert right.points == exercise.max_points
    as_bool = judge_cases(exercise, payload(True), {}, ctx, [])
    assert as_bool.points == pytest.approx(exercise.max_points * RIGHT_VALUE_WRONG_TYPE)
    assert any(problem.result.value == "wrong type" for problem in as_bool.problems)
