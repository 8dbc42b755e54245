"""The capstone's reward on DeepMath-format references (no download), and the run's bookkeeping that must
never crash: a fixture of reference strings in the forms DeepMath-103K's ``solution`` column has, each read
exactly (or dropped, with the kept fraction reported); all-None reward steps; the texts in both languages."""

from __future__ import annotations

import re
import string

import pytest

from graders.loader import load_module
from graders.paths import SOLUTIONS_DIR
from graders.capstone_run.data import BOX_INSTRUCTION, prepare_math_rows, with_box_instruction
from graders.capstone_run.latex import canonical_completion, canonical_number
from graders.capstone_run.models import verifier_reward_function
from graders.capstone_run.passport import reward_curve, step_series
from graders.capstone_run.texts import TEXT
from graders.text import Text, table_in

# Reference strings in the forms of DeepMath-103K's final answers (typed here from the data set's
# conventions; no download): the canonical number the verifier gets, or None = dropped (not one rational).
REAL_FORMAT_REFERENCES = [
    ("2", "2"), ("0", "0"), ("-1", "-1"), ("1000", "1000"), ("1{,}000", "1000"), ("1,000,000", "1000000"),
    ("0.5", "1/2"), ("-0.25", "-1/4"), ("\\frac{1}{2}", "1/2"), ("\\dfrac{3}{4}", "3/4"), ("\\tfrac12", "1/2"),
    ("-\\frac{1}{3}", "-1/3"), ("\\frac{-5}{2}", "-5/2"), ("\\frac{2}{4}", "1/2"), ("3/2", "3/2"),
    ("10^{6}", "1000000"), ("2^{10}", "1024"), ("10^{-3}", "1/1000"), ("\\boxed{7}", "7"), ("$12$", "12"),
    ("\\left(3\\right)", "3"), ("1\\,000", "1000"),
    ("2\\sqrt{3}", None), ("\\sqrt{2}", None), ("\\ln 2", None), ("(0, 1)", None), ("[0,1]", None),
    ("\\pi", None), ("\\frac{\\pi}{4}", None), ("e^{-1}", None), ("\\infty", None), ("x^2 + 1", None),
    ("\\text{Yes}", None), ("12\\%", None), ("\\{1, 2\\}", None), ("\\frac{1}{0}", None), ("10^{100}", None),
]
KEPT = [(latex, token) for latex, token in REAL_FORMAT_REFERENCES if token is not None]


@pytest.fixture(scope="module")
def kit_reward():
    module = load_module(SOLUTIONS_DIR / "module_09" / "module_9_reference.py", "_capstone_test_kit_verifier")
    return verifier_reward_function(module)


@pytest.mark.parametrize("latex, token", REAL_FORMAT_REFERENCES, ids=[row[0] for row in REAL_FORMAT_REFERENCES])
def test_canonical_number_reads_each_real_format(latex, token):
    assert canonical_number(latex) == token


@pytest.mark.parametrize("latex, token", KEPT, ids=[row[0] for row in KEPT])
def test_a_kept_reference_rewards_its_own_latex_and_only_it(kit_reward, latex, token):
    """The model may box the answer as the reference writes it or as a plain number: both are right;
    one more than the answer is wrong. (Without canonicalisation \\frac{1}{2} scored 0 and an unboxed
    reference \\frac{1}{2} was read as 2.)"""
    completions = [f"We compute. \\boxed{{{latex}}}", f"so \\boxed{{{token}}}", f"so \\boxed{{{token}+1}}",
                   "no box at all"]
    wrong_value = f"\\boxed{{{token}1}}"  # another number: "1/21" for "1/2", "10" for "1"
    rewards = kit_reward(prompts=[""] * 5, completions=completions + [wrong_value], solution=[token] * 5)
    assert rewards == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_the_issue_misreads_are_gone(kit_reward):
    """Each misread of issue 12: the raw LaTeX reference was read by its last number."""
    rows = [{"prompt": [{"role": "user", "content": "q"}], "solution": latex}
            for latex in ("\\frac{1}{2}", "10^{6}", "2\\sqrt{3}", "(0, 1)", "\\ln 2")]
    kept, report = prepare_math_rows(rows)
    assert [row["solution"] for row in kept] == ["1/2", "1000000"]
    assert report["kept"] == 2 and report["rows"] == 5 and report["kept_fraction"] == pytest.approx(0.4)
    assert report["dropped_examples"] == ["2\\sqrt{3}", "(0, 1)", "\\ln 2"]
    assert kit_reward(prompts=["", ""], completions=["\\boxed{2}", "\\boxed{0.5}"], solution=["1/2", "1/2"]) == [0.0, 1.0]


def test_kept_fraction_of_the_fixture_is_reported():
    rows = [{"prompt": "q", "solution": latex} for latex, _ in REAL_FORMAT_REFERENCES]
    kept, report = prepare_math_rows(rows)
    assert report["kept"] == len(KEPT) == len(kept)
    assert report["kept_fraction"] == pytest.approx(len(KEPT) / len(REAL_FORMAT_REFERENCES))
    assert [row["solution"] for row in kept] == [token for _, token in KEPT]


def test_prompts_ask_for_a_box_once():
    prompt = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is 1+1?"}]
    asked = with_box_instruction(prompt)
    assert asked[0] == prompt[0] and asked[1]["content"].endswith(BOX_INSTRUCTION)
    assert with_box_instruction(asked) == asked
    assert with_box_instruction("Put it in \\boxed{}") == "Put it in \\boxed{}"


@pytest.mark.parametrize("text, expected", [
    ("a \\boxed{1} then \\boxed{\\frac{3}{6}}", "a \\boxed{1} then \\boxed{1/2}"),  # only the last box
    ("\\boxed{2\\sqrt{3}}", "\\boxed{2\\sqrt{3}}"),  # not rational: left for the verifier (parse error)
    ("\\boxed{\\frac{1}{2}", "\\boxed{\\frac{1}{2}"),  # unclosed: unchanged
    ("the answer is 5", "the answer is 5"),
])
def test_canonical_completion_rewrites_only_a_rational_last_box(text, expected):
    assert canonical_completion(text) == expected


def test_unreadable_references_give_none_and_none_steps_never_crash(kit_reward):
    rewards = kit_reward(prompts=["", ""], completions=["\\boxed{1}", "1"], solution=["\\ln 2", "(0, 1)"])
    assert rewards == [None, None]
    history = [{"step": 1, "reward": None, "loss": 0.0}, {"step": 2, "reward": float("nan")},
               {"step": 3, "reward": 0.5, "entropy": 1.0}, {"step": 3, "train_runtime": 1.0}]
    assert reward_curve(history, "grpo") == {"metric": "reward", "steps": [3], "values": [0.5]}
    assert step_series(history, "kl") == {"steps": [], "values": []}
    assert reward_curve([{"step": 1, "reward": None}], "grpo")["values"] == []


def test_all_none_history_plots_without_error(tmp_path):
    from graders.capstone_run.passport import plot_training_curves

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
