"""Every check label exists in English and in Russian, and feedback shows the one of its language.

A case's ``label`` is a :class:`graders.text.Text`: its English value is its identity
(``report.json``, the reference cache and the tests know it by it); Russian feedback
shows ``label.in_("ru")`` instead. Numbers, formulas and identifiers read the same in both.
A plain-string label (no Russian) is refused.
"""

from __future__ import annotations

import dataclasses
import re
import types
from functools import cache

import pytest

from graders import checks
from graders.engine.judging import judge, refcache
from graders.engine.outputs import feedback
from graders.engine.routes.grading import GradeOptions
from graders.engine.routes.inline import grade_exercise
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.judging.misconceptions import load_misconceptions
from graders.engine.values.protocol import CaseOutcome, CaseResult, Judgement, Status
from graders.text import Text

CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
IDENTIFIER = re.compile(r"\b[A-Za-z]\w*_\w+\b")  # loss_type, max_length, eps_high: code, never translated
# words of a label that is only a formula: it reads the same in Russian
FORMULA_WORDS = {"log", "beta", "gamma", "eps", "tau", "lam", "inf", "nan", "NaN"}


def _ru(case) -> str:
    return case.label.in_("ru")


def _labelled_cases():
    for exercise_id in DEFAULT_KIT.exercises():
        for index, case in enumerate(checks.spec_for(exercise_id).cases()):
            if case.label:
                yield exercise_id, index, case


def _only_formula(label: str) -> bool:
    """No English word in it: symbols, numbers, identifiers and one-letter or formula names only."""
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", label)
    return all(len(w) <= 2 or "_" in w or w in FORMULA_WORDS for w in words)


@cache
def _all_labelled() -> list:
    return list(_labelled_cases())


def test_every_labelled_case_has_a_russian_label():
    cases = _all_labelled()
    assert len(cases) > 300
    missing = [(e, i, c.label) for e, i, c in cases if not isinstance(c.label, Text) or not _ru(c).strip()]
    assert not missing, missing[:10]
    for exercise_id, index, case in cases:
        where = (exercise_id, index, case.label, _ru(case))
        if _ru(case) == case.label:
            assert _only_formula(case.label), where  # an untranslated label
        else:
            assert CYRILLIC.search(_ru(case)), where
        assert _ru(case) == " ".join(_ru(case).split()), where


def test_russian_labels_keep_the_numbers_and_identifiers():
    for exercise_id, index, case in _all_labelled():
        where = (exercise_id, index, case.label, _ru(case))
        assert sorted(NUMBER.findall(_ru(case))) == sorted(NUMBER.findall(case.label)), where
        assert set(IDENTIFIER.findall(_ru(case))) == set(IDENTIFIER.findall(case.label)), where


def test_generated_labels_come_in_both_languages():
    drawn = checks.hypothesis_cases(checks.st.integers(0, 9), count=3, seed=1,
                                    to_case=lambda x: checks.Case(args=(x,)))
    assert [(c.label, _ru(c)) for c in drawn] == [
        (f"property case #{i}", f"случайная проверка #{i}") for i in (1, 2, 3)]
    named = checks.hypothesis_cases(checks.st.integers(0, 9), count=1, seed=1,
                                    to_case=lambda x: checks.Case(args=(x,), label=Text("mine", "моя")))
    assert (named[0].label, _ru(named[0])) == ("mine", "моя")


def test_label_in_picks_the_language():
    case = checks.Case(label=Text("two groups", "две группы"))
    assert case.label_in("en") == "two groups" and case.label_in("ru") == "две группы"
    assert case.label == "two groups" and checks.Case().label_in("ru") == ""


def test_a_label_without_russian_is_refused():
    with pytest.raises(TypeError, match="the check labelled 'two groups' has no Russian label"):
        checks.Case(label="two groups")
    with pytest.raises(TypeError, match="has no Russian"):
        checks.band(lambda expected, got: True, "too small")


def test_kept_cases_keep_the_russian_label(tmp_path):
    store = refcache.ReferenceStore(tmp_path / "store")
    spec = checks.spec_for("module_9_reference.group_relative_advantages")
    refcache.kept_cases(store, dataclasses.replace(spec, _cases=None))  # generated, and kept
    kept = dataclasses.replace(spec, _cases=None)
    refcache.kept_cases(store, kept)  # read back from the store
    assert [(c.label, _ru(c)) for c in kept.cases()] == [(c.label, _ru(c)) for c in spec.cases()]
    assert all(isinstance(c.label, Text) for c in kept.cases())


# ---------------------------------------------------------------------------
# Feedback: a wrong answer graded in both languages
# ---------------------------------------------------------------------------
GRA = "module_9_reference.group_relative_advantages"


def _sample_std(rewards, scale=True, *, eps=1e-6, ddof=0):
    """group_relative_advantages with the sample std (ddof=1): the catalogue's sample_std."""
    entry = next(e for e in load_misconceptions(GRA) if e.name == "sample_std")
    return entry.function(rewards, scale, eps=eps, ddof=ddof)


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    with pytest.MonkeyPatch.context() as patch:
        graded = {}
        for language in ("en", "ru"):
            patch.setenv("RL4LLM_LANG", language)
            graded[language] = grade_exercise(GRA, _sample_std, namespace={})
    return graded


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_wrong_answer_shows_the_label_of_its_language(reports):
    spec = checks.spec_for(GRA)
    first = next(c for c in spec.cases() if c.label == "seed table, standardised")
    english, russian = reports["en"]["feedback"], reports["ru"]["feedback"]
    assert reports["en"]["status"] == reports["ru"]["status"] == "failed"
    assert f"\n- '{first.label}' (public): input rewards=" in english
    assert f"\n- '{_ru(first)}' (открытая), входные данные: rewards=" in russian
    assert first.label not in russian and _ru(first) not in english
    labels = {str(c.label) for c in spec.cases()}
    russian_labels = {_ru(c) for c in spec.cases()} - labels  # the formula-only ones read the same
    shown_en = set(re.findall(r"^- '(.*)' \(", english, re.MULTILINE))
    shown_ru = set(re.findall(r"^- '(.*)' \(", russian, re.MULTILINE))
    assert shown_en and shown_en <= labels
    assert shown_ru and shown_ru <= russian_labels | labels
    assert not shown_ru & (labels - {_ru(c) for c in spec.cases()})  # no English label left in Russian


def test_the_misconception_summary_names_the_check_in_its_language():
    case = checks.Case(label=Text("two groups", "две группы"))
    entry = types.SimpleNamespace(name="sample_std", hint=Text("hint", "подсказка"))
    outcome = CaseOutcome(4, case, CaseResult.WRONG)
    named = {"sample_std": judge._claim(outcome, entry)}
    assert [repr(part) for part in named["sample_std"]] == ["Text('hint', 'подсказка')", "Text('two groups', 'две группы')"]
    unlabelled = judge._claim(CaseOutcome(4, checks.Case(), CaseResult.WRONG), entry)
    assert unlabelled[1] == "#5"
    judgement = Judgement(Status.FAILED, checks=3, misconceptions=named)
    exercise = types.SimpleNamespace(id=GRA, stem="module_9_reference", function="group_relative_advantages")
    for language, line in (("en", "- misconception 'sample_std' (on check 'two groups'): hint"),
                           ("ru", "- типичная ошибка 'sample_std' (на проверке 'две группы'): подсказка")):
        ctx = types.SimpleNamespace(kit=DEFAULT_KIT, options=GradeOptions(lang=language))
        assert feedback.render(judgement, exercise, ctx).split("\n")[-1] == line


def test_kept_cases_keep_every_field_of_a_case(tmp_path):
    """A case read back from the reference store is the case drawn: its edge classes too (they were dropped, and
    the verifier's grammar draws, tagged number_formats, vanished from every later use in that process)."""
    store = refcache.ReferenceStore(tmp_path / "store")
    for exercise_id in ("module_9_reference.verify_detailed", "module_9_reference.group_relative_advantages"):
        spec = checks.spec_for(exercise_id)
        refcache.kept_cases(store, dataclasses.replace(spec, _cases=None))
        kept = dataclasses.replace(spec, _cases=None)
        refcache.kept_cases(store, kept)
        fields = [f.name for f in dataclasses.fields(type(spec.cases()[0])) if f.name not in ("args", "kwargs")]
        assert [[getattr(c, f) for f in fields] for c in kept.cases()] == [[getattr(c, f) for f in fields]
                                                                            for c in spec.cases()]
        assert any(c.edge for c in kept.cases())
