"""The capstone's reward on DeepMath-format references (no download), and the run's bookkeeping that must
never crash: reference strings in the forms DeepMath-103K's ``solution`` column has, each parsed (numbers
in the verifier's form, other answers kept for math-verify) or dropped, with the kept fraction and the
share the learner's verifier decides reported; all-None reward steps; the texts in both languages.
The reward's agreement with a human on answer pairs is tests/test_capstone_deepmath.py's."""

from __future__ import annotations

import re
import string

import pytest

from graders.loader import load_module
from graders.paths import SOLUTIONS_DIR
from graders.capstone.run.data import BOX_INSTRUCTION, prepare_math_rows, with_box_instruction
from graders.capstone.run.latex import final_answer, normalize, parse_answer, reward
from graders.capstone.run.models import verifier_reward_function
from graders.capstone.run.passport import reward_curve, step_series
from graders.capstone.run.texts import TEXT
from graders.text import Text, table_in

# slow: the capstone's tooling (its verifier, data and reward curves; about 4 s a worker with the first imports of
# its parser and matplotlib). Not a risk of everyday changes (exercises, checks, hints, texts, docs).
pytestmark = pytest.mark.slow

OTHER = "other"  # parsed, not one real number: math-verify's equivalence decides
# Reference strings in the forms of DeepMath-103K's final answers (typed here from the data set's
# conventions; no download): the number the verifier gets, OTHER, or None = dropped (the parser reads nothing).
REAL_FORMAT_REFERENCES = [
    ("2", "2"), ("0", "0"), ("-1", "-1"), ("1000", "1000"), ("1{,}000", "1000"), ("1,000,000", "1000000"),
    ("0.5", "1/2"), ("-0.25", "-1/4"), ("\\frac{1}{2}", "1/2"), ("\\dfrac{3}{4}", "3/4"), ("\\tfrac12", "1/2"),
    ("-\\frac{1}{3}", "-1/3"), ("\\frac{-5}{2}", "-5/2"), ("\\frac{2}{4}", "1/2"), ("3/2", "3/2"),
    ("10^{6}", "1000000"), ("2^{10}", "1024"), ("10^{-3}", "1/1000"), ("\\boxed{7}", "7"), ("$12$", "12"),
    ("\\left(3\\right)", "3"), ("1\\,000", "1000"), ("10^{100}", "1" + "0" * 100), ("1\\frac{1}{2}", "3/2"),
    ("12\\%", "3/25"), ("30^\\circ", "30"), ("\\text{7}", "7"), ("x=3", "3"), ("5 \\text{ cm}", "5"), ("\u22123", "-3"),
    ("\\sqrt{2}", "1.41421356237309504880168872421"), ("2\\sqrt{3}", "3.46410161513775458705489268301"),
    ("\\pi", "3.14159265358979323846264338328"), ("\\ln 2", "0.693147180559945309417232121458"),
    ("e^{-1}", "0.367879441171442321595523770161"), ("\\frac{\\pi}{4}", "0.785398163397448309615660845820"),
    ("(0, 1)", OTHER), ("[0,1]", OTHER), ("\\infty", OTHER), ("x^2 + 1", OTHER), ("\\text{Yes}", OTHER),
    ("\\{1, 2\\}", OTHER), ("(1, 2, 3)", OTHER),
    ("", None), ("???", None), ("\\frac{1}{0}", None),
]
KEPT = [(latex, number) for latex, number in REAL_FORMAT_REFERENCES if number is not None]
RATIONAL = [(latex, number) for latex, number in KEPT if re.fullmatch(r"-?\d+(/\d+)?", number)]


@pytest.fixture(scope="module")
def kit_verifier():
    return load_module(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", "_capstone_test_kit_verifier")


@pytest.fixture(scope="module")
def kit_reward(kit_verifier):
    return verifier_reward_function(kit_verifier)


@pytest.mark.parametrize("latex, number", REAL_FORMAT_REFERENCES,
                         ids=[row[0] or "empty" for row in REAL_FORMAT_REFERENCES])
def test_parse_answer_reads_each_real_format(latex, number):
    answer = parse_answer(latex)
    if number is None:
        assert answer is None
    else:
        assert answer is not None and answer.number == (None if number == OTHER else number)


@pytest.mark.parametrize("latex, number", RATIONAL, ids=[row[0] for row in RATIONAL])
def test_a_numeric_reference_rewards_its_own_latex_and_only_it(kit_reward, latex, number):
    """The model may box the answer as the reference writes it or as a plain number: both are right;
    one more than the answer is wrong. (Without parsing, \\frac{1}{2} scored 0 and an unboxed
    reference \\frac{1}{2} was read as 2.)"""
    completions = [f"We compute. \\boxed{{{latex}}}", f"so \\boxed{{{number}}}", f"so \\boxed{{{number}+1}}",
                   "no box at all", f"\\boxed{{{number}1}}"]  # another number: "1/21" for "1/2", "10" for "1"
    rewards = kit_reward(prompts=[""] * 5, completions=completions, solution=[latex] * 5)
    assert rewards == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_the_issue_misreads_are_gone(kit_reward):
    """Issue 12: the raw LaTeX reference was read by its last number; issue 23: every row but a rational one
    was dropped. Now only what the parser cannot read is dropped."""
    rows = [{"prompt": [{"role": "user", "content": "q"}], "solution": latex}
            for latex in ("\\frac{1}{2}", "10^{6}", "2\\sqrt{3}", "(0, 1)", "\\ln 2", "???")]
    kept, report = prepare_math_rows(rows)
    assert [row["solution"] for row in kept] == ["\\frac{1}{2}", "10^{6}", "2\\sqrt{3}", "(0, 1)", "\\ln 2"]
    assert report["kept"] == 5 and report["rows"] == 6 and report["kept_fraction"] == pytest.approx(5 / 6)
    assert report["dropped_examples"] == ["???"]
    assert report["verifier_decided"] == 4 and report["verifier_fraction"] == pytest.approx(4 / 5)
    assert kit_reward(prompts=[""] * 4,
                      completions=["\\boxed{2}", "\\boxed{0.5}", "$\\frac{1}{2}$", "\\boxed{\\sqrt{12}}"],
                      solution=["\\frac{1}{2}", "\\frac{1}{2}", "\\frac{1}{2}", "2\\sqrt{3}"]) == [0.0, 1.0, 1.0, 1.0]


def test_kept_fraction_of_the_fixture_is_reported():
    rows = [{"prompt": "q", "solution": latex} for latex, _ in REAL_FORMAT_REFERENCES]
    kept, report = prepare_math_rows(rows)
    assert report["kept"] == len(KEPT) == len(kept)
    assert report["kept_fraction"] == pytest.approx(len(KEPT) / len(REAL_FORMAT_REFERENCES))
    assert [row["solution"] for row in kept] == [latex for latex, _ in KEPT]
    assert report["verifier_decided"] == sum(number != OTHER for _, number in KEPT)


def test_the_learners_verifier_decides_every_number_and_only_numbers():
    """A verifier that says 0 to everything zeroes every numeric row (√, π, %, big integers: all its); the
    non-numeric rows (an interval, a set, text) are math-verify's, whatever the verifier says."""
    calls = []

    def never(text, reference, **tolerance):
        calls.append((text, reference, tolerance))
        return 0

    numeric = [("\\sqrt{2}", "\\boxed{\\sqrt{2}}"), ("50\\%", "\\boxed{50}"), ("123456789", "\\boxed{123456789}"),
               ("\\frac{1}{2}", "The answer is $\\frac{1}{2}$."), ("5", "The answer is 5.")]
    other = [("(0, 1)", "\\boxed{(0,1)}"), ("\\{1, 2\\}", "\\boxed{\\{2, 1\\}}"),
             ("\\text{Yes}", "\\boxed{\\text{Yes}}")]
    assert [reward(completion, reference, never) for reference, completion in numeric] == [0.0] * len(numeric)
    assert len(calls) >= len(numeric)
    calls.clear()
    assert [reward(completion, reference, never) for reference, completion in other] == [1.0] * len(other)
    assert calls == []


def test_exact_references_are_compared_exactly_and_irrationals_at_the_verifiers_precision(kit_verifier):
    calls = []

    def spy(text, reference, **tolerance):
        calls.append((text, reference, tolerance))
        return kit_verifier.verify_numeric_answer(text, reference, **tolerance)

    assert reward("\\boxed{123456900}", "123456789", spy) == 0.0
    assert calls[-1] == ("\\boxed{123456900}", "123456789", {"rel_tol": 0.0, "abs_tol": 0.0})
    assert kit_verifier.verify_numeric_answer("\\boxed{123456900}", "123456789") == 1  # what the tolerance said
    assert reward("\\boxed{123456.6}", "123456.5", spy) == 0.0  # a fraction is exact too
    assert calls[-1] == ("\\boxed{617283/5}", "246913/2", {"rel_tol": 0.0, "abs_tol": 0.0})
    assert reward("\\boxed{\\frac{2}{\\sqrt{2}}}", "\\sqrt{2}", spy) == 1.0
    text, reference, tolerance = calls[-1]
    assert reference == "1.41421356237309504880168872421" and tolerance == {}
    assert reward("\\boxed{1.4142}", "\\sqrt{2}", spy) == 0.0  # 1.4e-5 away: beyond the documented 1e-6


def test_a_verifier_without_the_keyword_tolerances_is_called_without_them():
    def plain(text, reference):
        return int(text.strip() == "\\boxed{7}")

    assert reward("\\boxed{7}", "7", plain) == 1.0 and reward("\\boxed{8}", "7", plain) == 0.0


@pytest.mark.parametrize("text, expected", [
    ("a \\boxed{1} then \\boxed{\\frac{3}{6}}", ("box", "\\frac{3}{6}")),  # only the last box
    ("\\boxed{\\frac{1}{2}", ("box", None)),  # unclosed: no answer
    ("the answer is 5", ("text", None)),  # the verifier reads its last number
    ("so $x = \\frac{1}{2}$.", ("math", "x = \\frac{1}{2}")),  # no number after the last math span
    ("so $x$ is 5", ("text", None)),
])
def test_final_answer_is_the_last_box_else_a_closing_math_span(text, expected):
    assert final_answer(text) == expected


@pytest.mark.parametrize("text, expected", [("\u22123", "-3"), ("20 cm", "20"), ("\\$15", "15"),
                                            ("\\dfrac12", "\\frac12"),
                                            ("3h", "3h"), ("\u221a2", "\\sqrt{2}"), ("2\\sec x", "2\\sec x")])
def test_normalize(text, expected):
    assert normalize(text) == expected


def test_prompts_ask_for_a_box_once():
    prompt = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is 1+1?"}]
    asked = with_box_instruction(prompt)
    assert asked[0] == prompt[0] and asked[1]["content"].endswith(BOX_INSTRUCTION)
    assert with_box_instruction(asked) == asked
    assert with_box_instruction("Put it in \\boxed{}") == "Put it in \\boxed{}"


def test_unreadable_references_give_none_and_none_steps_never_crash(kit_reward):
    rewards = kit_reward(prompts=["", ""], completions=["\\boxed{1}", "1"], solution=["???", "\\frac{1}{0}"])
    assert rewards == [None, None]
    history = [{"step": 1, "reward": None, "loss": 0.0}, {"step": 2, "reward": float("nan")},
               {"step": 3, "reward": 0.5, "entropy": 1.0}, {"step": 3, "train_runtime": 1.0}]
    assert reward_curve(history, "grpo") == {"metric": "reward", "steps": [3], "values": [0.5]}
    assert step_series(history, "kl") == {"steps": [], "values": []}
    assert reward_curve([{"step": 1, "reward": None}], "grpo")["values"] == []


def test_all_none_history_plots_without_error(tmp_path):
    from graders.capstone.run.passport import plot_training_curves

    history = [{"step": step, "reward": None, "completions/mean_length": 3.0} for step in (1, 2)]
    path = plot_training_curves(history, "grpo", "tiny", tmp_path / "curves.png", "ru", beta=0.0)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_texts_exist_in_both_languages_with_the_same_placeholders():
    assert all(isinstance(value, Text) for value in TEXT.values()) and set(table_in(TEXT, "en")) == set(table_in(TEXT, "ru"))
    for key, english in table_in(TEXT, "en").items():
        assert _placeholders(english) == _placeholders(table_in(TEXT, "ru")[key]), key
    cyrillic = re.compile("[а-яё]", re.IGNORECASE)
    untranslated = [key for key, value in table_in(TEXT, "ru").items()
                    if not cyrillic.search(value) and value != table_in(TEXT, "en")[key]]
    assert not untranslated


def test_passports_with_and_without_the_verifier_share_are_both_well_formed():
    """A passport written before the verifier's share was recorded (its filter has no verifier_* fields) is
    read as before; the new fields are numbers."""
    from graders.capstone.cli import kept_text
    from graders.capstone.run.passport_check import passport_problems

    old = {"rows": 10, "kept": 7, "kept_fraction": 0.7, "dropped_examples": ["(0, 1)"]}
    new = {**old, "verifier_decided": 6, "verifier_fraction": 6 / 7}
    passports = [{"data": {"dataset": "trl-lib/DeepMath-103K", "filter": {"train": report, "eval": report}}}
                 for report in (old, new)]
    assert [passport_problems(passport) for passport in passports] == [[], []]
    assert passport_problems({"data": {"filter": [old]}})  # a filter of another kind is still malformed
    assert "kept 7 of 10 training rows (70%)" in kept_text(passports[0], "en") and "the ? whose" in kept_text(
        passports[0], "en")
    assert "decides the 6 whose" in kept_text(passports[1], "en") and "решает 6 из них" in kept_text(passports[1], "ru")
    assert kept_text({"data": {"filter": None}}, "en") is None
