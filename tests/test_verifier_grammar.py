"""The verifier's answer grammar (graders/checks/grammar.py): its draws, the answers the spec gives them, the
hidden checks and mutation draws built from it, and the wrong verifiers it catches.

- The reference gives every draw the spec's answer (status and extracted text), on the hidden checks' draws,
  the mutation tool's draws and (slow) a wide sweep of other seeds: a disagreement is a finding, reported
  with the construct and the spec words that decide it (``Construct.basis``).
- Every (construct, form, target) is among the hidden cases, tagged ``number_formats``; labels name the
  construct in English and Russian and never spell the input; the draws are the same in another process.
- Eleven hand-written wrong verifiers (source edits of the reference, each a mistake of a kind a reviewer's
  batch held: a plus sign, a decimal without its leading digit, a negative exponent, a fraction of decimals,
  a digit run after a thousands group, whitespace inside a box, LaTeX spacing, a percent sign, a float
  reference of 7+ significant digits, integer references beyond 2^53 and NumPy integers at zero tolerance,
  a tolerance relative to the answer) agree with the reference on every fixed check (the control: the checks
  before the grammar let each keep full marks) and lose points now; the reference keeps full marks.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from graders.checks import spec_for
from graders.checks import grammar
from graders.checks.grammar import CONSTRUCTS, HIDDEN_SEED, MUTATION_SEED, combinations, grammar_draws
from graders.engine.routes.inline import grade_exercise
from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR

SOLUTION = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
m9 = load_module(SOLUTION, "_kit_tests_verifier_grammar")
DETAILED, NUMERIC = "module_9_reference.verify_detailed", "module_9_reference.verify_numeric_answer"
GRAMMAR_LABEL = " (drawn case "


def _spec_answer_problems(draws) -> list[str]:
    """Each draw where the reference's (status, extracted, accuracy) is not the spec's, with the rule."""
    found = []
    for item in draws:
        result = m9.verify_detailed(item.text, item.reference, **item.kwargs)
        if (result.status, result.extracted, result.accuracy) != (item.status, item.extracted, item.accuracy):
            found.append(f"{item.construct}: {item.text!r} vs {item.reference!r} {item.kwargs}: the spec gives "
                         f"{item.status!r} / {item.extracted!r}, the reference {result.status!r} / "
                         f"{result.extracted!r} ({CONSTRUCTS[item.construct].basis})")
    return found


@pytest.mark.parametrize("seed, per_form", [(HIDDEN_SEED, 2), (MUTATION_SEED, 4)])
def test_the_reference_gives_every_draw_the_spec_s_answer(seed, per_form):
    draws = grammar_draws(per_form=per_form, seed=seed)
    assert len(draws) == per_form * len(combinations())
    assert _spec_answer_problems(draws) == []


@pytest.mark.slow  # about 30 s: 40 draws of every form under four more seeds
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_reference_gives_the_spec_s_answer_on_a_wide_sweep(seed):
    assert _spec_answer_problems(grammar_draws(per_form=40, seed=seed)) == []


def test_every_form_of_every_construct_draws_both_verdicts_or_its_status():
    draws = grammar_draws(per_form=4, seed=MUTATION_SEED)
    for name in CONSTRUCTS:
        verdicts = {d.status for d in draws if d.construct == name}
        assert verdicts, name
        if name not in ("unclosed_last_box", "box_not_a_number", "zero_denominator", "non_finite", "no_number"):
            assert "correct" in verdicts and "wrong" in verdicts or name == "latex_spacing", (name, verdicts)


def test_the_answers_come_from_the_spec_rules_not_from_a_verifier():
    import ast
    import inspect

    from graders.checks import grammar_forms

    for module in (grammar, grammar_forms):  # the catalogue and its pieces
        tree = ast.parse(inspect.getsource(module))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert imported <= {"__future__", "dataclasses", "fractions", "numpy", "graders.checks.cases",
                            "graders.checks.drawn", "graders.checks.grammar_forms", "graders.text"}, imported
        called = {node.func.id for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert not {name for name in called if "verif" in name or name.startswith("_parse")}, called


@pytest.mark.parametrize("exercise_id", [DETAILED, NUMERIC])
def test_the_hidden_checks_hold_every_construct_form_and_target(exercise_id):
    cases = [c for c in spec_for(exercise_id).cases() if GRAMMAR_LABEL in c.label]
    assert len(cases) == 2 * len(combinations())
    expected = grammar_draws(per_form=2, seed=HIDDEN_SEED)
    assert [(c.args, c.kwargs) for c in cases] == [((d.text, d.reference), d.kwargs) for d in expected]
    for case, item in zip(cases, expected):
        assert case.hidden and "number_formats" in case.edge
        assert case.label.startswith(CONSTRUCTS[item.construct].label.in_("en"))


@pytest.mark.parametrize("exercise_id", [DETAILED, NUMERIC])
def test_grammar_labels_are_bilingual_and_never_spell_the_input(exercise_id):
    for case in spec_for(exercise_id).cases():
        if GRAMMAR_LABEL not in case.label:
            continue
        english, russian = case.label.in_("en"), case.label.in_("ru")
        assert english != russian and any("\u0400" <= ch <= "\u04ff" for ch in russian), english
        construct = english.split(GRAMMAR_LABEL)[0]
        text, reference = case.args
        pieces = [text.strip(), str(reference)] + [word for word in text.split() if any(ch.isdigit() for ch in word)]
        assert not [piece for piece in pieces if len(piece) > 1 and piece in construct], (english, text)


def test_the_draws_are_the_same_in_another_process():
    here = [(d.construct, d.text, repr(d.reference), d.kwargs) for d in grammar_draws(per_form=2, seed=HIDDEN_SEED)]
    code = ("import json; from graders.checks.grammar import grammar_draws, HIDDEN_SEED; "
            "print(json.dumps([(d.construct, d.text, repr(d.reference), d.kwargs) "
            "for d in grammar_draws(per_form=2, seed=HIDDEN_SEED)]))")
    there = json.loads(subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                                      check=True).stdout)
    assert [tuple(row) for row in there] == here


def test_the_public_rows_are_not_the_hidden_draws():
    spec = spec_for(DETAILED)
    public = {(c.args[0], repr(c.args[1])) for c in spec.cases() if not c.hidden}
    hidden = {(c.args[0], repr(c.args[1])) for c in spec.cases() if GRAMMAR_LABEL in c.label}
    assert public and hidden and not public & hidden


def test_the_mutation_tool_draws_the_same_grammar_for_the_verifier_only():
    from graders.mutation.draws import GRAMMAR_PER_FORM
    from graders.mutation.draws import grammar_draws as mutation_grammar

    drawn = mutation_grammar(spec_for(DETAILED).cases())
    expected = grammar_draws(per_form=GRAMMAR_PER_FORM, seed=MUTATION_SEED)
    assert [(c.args, c.kwargs) for c in drawn] == [((d.text, d.reference), d.kwargs) for d in expected]
    assert all(str(c.label).endswith("[grammar]") and c.raises is None for c in drawn)
    assert mutation_grammar(spec_for("module_9_reference.pass_at_k_unbiased").cases()) == []
    hidden = {(c.args[0], repr(c.args[1])) for c in spec_for(DETAILED).cases()}
    inputs = {(c.args[0], repr(c.args[1])) for c in drawn}
    # other inputs than the hidden checks' (Hypothesis's first example, the simplest of every form, is shared)
    assert len(inputs - hidden) > 0.7 * len(inputs)


# ---------------------------------------------------------------------------
# Hand-written wrong verifiers: each an edit of the reference's source (old text -> new text)
# ---------------------------------------------------------------------------
WRONG_VERIFIERS = {
    # the number regex: no "+" sign (a boxed "+7" is a parse_error)
    "no_plus_sign": [(r'''[+-])?{unsigned}(?:/{unsigned})?"''', r'''-)?{unsigned}(?:/{unsigned})?"''')],
    # a decimal needs its leading digit (".5" is 5 in a text, a parse_error in a box)
    "leading_digit_required": [(r'''|\d*\.\d+|''', r'''|\d+\.\d+|''')],
    # an exponent may not be negative ("2.5e-3" reads as 3 in a text)
    "positive_exponent_only": [(r'''(?:[eE][+-]?\d+)?"''', r'''(?:[eE]\+?\d+)?"''')],
    # a fraction's parts must be integers, as fractions.Fraction("1.5/3") demands
    "integer_fractions_only": [(r'''[+-])?{unsigned}(?:/{unsigned})?"''', r'''[+-])?(?:\d+/\d+|{unsigned})"''')],
    # thousands groups without the look-ahead: "1,2345" reads as "1,234" and "5"
    "thousands_without_lookahead": [(r'''(?:,\d{3})+(?!\d)''', r'''(?:,\d{3})+''')],
    # whitespace only trimmed at the box's ends: "- 3" is a parse_error
    "box_whitespace_trimmed": [(r'''"".join(content.replace("\\$", "").replace("$", "").split())''',
                                r'''content.replace("\\$", "").replace("$", "").strip()''')],
    # LaTeX thin spaces removed in a box: "1\,234" reads as 1234
    "latex_spacing_removed": [(r'''content.replace("\\$", "")''',
                               r'''content.replace("\\,", "").replace("\\$", "")''')],
    # a percent sign stripped from a box: "25\%" reads as 25
    "percent_stripped": [(r'''.replace("$", "").split())''',
                          r'''.replace("$", "").split()).removesuffix("\\%").removesuffix("%")''')],
    # a float reference read through "%g": six significant digits
    "float_reference_six_digits": [(r'''Fraction(repr(float(reference)))''', r'''Fraction(f"{float(reference):g}")''')],
    # an integer reference read through float: beyond 2^53 it is rounded (Python ints and NumPy int64 alike)
    "reference_through_float": [(r'''Fraction(int(reference))''', r'''Fraction(repr(float(reference)))''')],
    # the relative tolerance taken of the answer, not of the reference
    "tolerance_relative_to_answer": [(r'''Fraction(rel_tol) * abs(ref))''', r'''Fraction(rel_tol) * abs(value))''')],
}


@pytest.fixture(scope="module")
def wrong_modules(tmp_path_factory):
    source = SOLUTION.read_text(encoding="utf-8")
    modules = {}
    for name, edits in WRONG_VERIFIERS.items():
        text = source
        for old, new in edits:
            assert text.count(old) == 1, f"{name}: the reference no longer holds {old!r} once"
            text = text.replace(old, new)
        path = tmp_path_factory.mktemp(name) / "module_9_reference.py"
        path.write_text(text, encoding="utf-8")
        modules[name] = load_module(path, f"_wrong_verifier_{name}")
    return modules


def _outcome(module, case):
    try:
        result = module.verify_detailed(*case.args, **case.kwargs)
    except Exception as error:  # noqa: BLE001 - an exception is the outcome
        return type(error).__name__
    return result.status, result.extracted, result.accuracy, result.reward


def test_the_wrong_verifiers_are_exactly_the_reviewer_s_kinds():
    assert len(WRONG_VERIFIERS) == 11


def _format_row(case) -> bool:
    """A case of the public answer-format rows (VERIFIER_NUMBER_FORMATS, the checks' PUBLIC_FORMATS)."""
    from graders.checks.module_9_reference.verifier import PUBLIC_FORMATS

    return any(case.args == (text, reference) and type(case.args[1]) is type(reference) and case.kwargs == kwargs
               for text, reference, kwargs in PUBLIC_FORMATS)


@pytest.mark.parametrize("name", sorted(WRONG_VERIFIERS))
def test_each_wrong_verifier_passes_every_check_the_verifier_had_before_the_grammar(name, wrong_modules):
    """The control: on every case but the grammar's draws and the answer-format rows, it answers as the reference."""
    module = wrong_modules[name]
    before = [c for c in spec_for(DETAILED).cases()
              if GRAMMAR_LABEL not in c.label and not _format_row(c) and c.raises is None]
    assert len(before) > 60
    assert [_outcome(module, c) for c in before] == [_outcome(m9, c) for c in before]


@pytest.mark.parametrize("name", sorted(WRONG_VERIFIERS))
def test_each_wrong_verifier_fails_a_public_answer_format_row(name, wrong_modules):
    """What the grader now catches, the learner's public tests catch too (their rows are the checks' public ones)."""
    module = wrong_modules[name]
    rows = [c for c in spec_for(DETAILED).cases() if _format_row(c) and not c.hidden]
    assert len(rows) == 39
    assert [c for c in rows if _outcome(module, c) != _outcome(m9, c)]


@pytest.mark.parametrize("name", sorted(WRONG_VERIFIERS))
def test_each_wrong_verifier_loses_points_on_the_grammar_draws(name, wrong_modules):
    module = wrong_modules[name]
    entry = grade_exercise(DETAILED, module.verify_detailed, namespace=module, hide_hidden_inputs=False)
    assert entry["points"] < entry["max_points"] - 1e-9, entry["feedback"]
    drawn = [c for c in spec_for(DETAILED).cases() if GRAMMAR_LABEL in c.label]
    assert sum(_outcome(module, c) != _outcome(m9, c) for c in drawn) >= 2  # more than one draw shows it


@pytest.mark.parametrize("exercise_id", [DETAILED, NUMERIC])
def test_the_reference_keeps_full_marks(exercise_id):
    function = getattr(m9, exercise_id.split(".")[1])
    entry = grade_exercise(exercise_id, function, namespace=m9, hide_hidden_inputs=False)
    assert entry["points"] == entry["max_points"] and entry["status"] == "passed", entry["feedback"]


def test_numpy_scalar_references_reach_the_checks():
    references = [c.args[1] for c in spec_for(DETAILED).cases() if GRAMMAR_LABEL in c.label]
    assert any(isinstance(r, np.integer) for r in references) and any(isinstance(r, np.floating) for r in references)
    assert any(isinstance(r, int) and abs(r) > 2 ** 63 for r in references)
    assert any(isinstance(r, int) and not isinstance(r, bool) and r < 0 for r in references)
