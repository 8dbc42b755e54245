r"""The verifier's answer grammar as seeded Hypothesis strategies: every construct the spec admits or refuses,
each paired with the answer the SPEC gives, and references of every legal type.

The spec is ``shared/spec/module_09.md`` ("Verifier", rules 1-6). Each :class:`Construct` names the spec
words that decide its answer (``basis``); where the spec is silent the construct says so
(``spec_decides=False``) and its answer is the reference's documented convention (the starter's
README and the ``_number_regex`` docstring), which ``tests/test_verifier_grammar.py`` reports.

A construct's strategy draws an :class:`Answer`: the response text, the status the spec gives it, the
exact value it holds (a :class:`fractions.Fraction`, for status ``"ok"``), the text the verifier reads
(``extracted``) and the values a plausible misreading would give (``misreadings``). :func:`_draw` then
picks a reference (the value itself, or a misreading) of a legal type -- a string spelled by the same
grammar, a Python ``int`` (negative, beyond 2^53), a ``float`` with up to 17 significant digits, a NumPy
``int64`` or ``float64`` -- and tolerances, and derives the verdict by rule 4
(``|x - ref| <= max(abs_tol, rel_tol * |ref|)``, exact) from the values, never by calling a verifier.

:func:`grammar_draws` gives the same draws in every process (:func:`graders.checks.drawn.hypothesis_cases`'s
seeding); :func:`grammar_cases` turns them into hidden :class:`~graders.checks.Case` s tagged with the
``number_formats`` edge class (tolerance constructs with ``boundaries`` too, a NumPy scalar reference with
``python_types``), labelled by construct without spelling the input. The hidden checks of the verifier and
the mutation tool's draws
(:mod:`graders.mutation.draws`) both read them, with different seeds.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from graders.checks.cases import Case
from graders.checks.drawn import hypothesis_cases, st
from graders.checks.grammar_forms import (  # noqa: F401 - the pieces, re-exported
    Answer, Construct, Draw, ZERO_TOL, _around, _float_value, _spelled, _verdict, box_dollars, box_not_a_number,
    box_precedence, box_whitespace, decimal_fraction, exponent_forms, latex_spacing, leading_dot,
    negative_exponent, no_number, non_finite, operator_minus, percent, plus_sign, signed_fraction,
    thousands_groups, thousands_run_on, unclosed_last_box, units, zero_denominator)
from graders.text import Text

HIDDEN_SEED = 9_302  # the verifier's hidden checks (graders/checks/module_9_reference/verifier.py)
MUTATION_SEED = 9_303  # the mutation tool's draws (graders/mutation/draws.py): other inputs of the same grammar


# ---------------------------------------------------------------------------
# References of every legal type, and the tolerance edges
# ---------------------------------------------------------------------------
def _float_with_digits(digits: int, mantissa: int, power: int) -> float:
    """A float whose shortest spelling has ``digits`` significant digits (when the float keeps them)."""
    return float(Fraction(mantissa) * Fraction(10) ** (power - digits + 1))


@st.composite
def float_reference(draw, form: str) -> Draw:
    """A float reference (or NumPy float64) with 7 to 17 significant digits, spelled back exactly, re-spelled,
    or rounded to six significant digits; default or zero tolerance."""
    digits = draw(st.integers(min_value=7, max_value=17))
    mantissa = draw(st.integers(min_value=10 ** (digits - 1) + 1, max_value=10 ** digits - 1))
    number = _float_with_digits(digits, mantissa, draw(st.integers(min_value=-4, max_value=12)))
    exact = _float_value(number)
    if form == "repr":
        token = repr(number)
    elif form == "separators":
        token = f"{number:,}"
    elif form == "rounded":
        token = f"{number:g}"
    else:
        token = _spelled(exact * (1 + Fraction(3, 1_000_000)))
    value = Fraction(token.replace(",", ""))  # rule 2: separators stripped, parsed exactly
    kwargs = draw(st.sampled_from([{}, {}, ZERO_TOL]))
    reference = draw(st.sampled_from([number, np.float64(number)]))
    text = _around(draw, draw(st.sampled_from(["box", "text"])), token)
    tolerances = {"rel_tol": 1e-6, "abs_tol": 1e-6, **kwargs}
    return Draw("float_reference", text, reference, kwargs, _verdict(value, exact, **tolerances), token)


@st.composite
def integer_reference(draw, form: str) -> Draw:
    """An integer reference: negative, beyond 2^53, a NumPy int64; the answer that integer or one off; zero
    or default tolerance."""
    size = form if form != "default_tolerance" else draw(st.sampled_from(["negative", "beyond_2_53", "huge"]))
    if size == "negative":
        number = -draw(st.integers(min_value=1, max_value=2 ** 62))
    elif size == "beyond_2_53":
        number = draw(st.integers(min_value=2 ** 53 + 1, max_value=2 ** 62)) * draw(st.sampled_from([1, -1]))
    else:
        number = draw(st.integers(min_value=2 ** 64, max_value=2 ** 200))
    reference = number if size == "huge" or draw(st.booleans()) else np.int64(number)
    value = Fraction(number + draw(st.sampled_from([0, 0, 1, -1, 2])))
    token = _spelled(value, separators=draw(st.booleans()))
    kwargs = {} if form == "default_tolerance" else ZERO_TOL
    text = _around(draw, draw(st.sampled_from(["box", "text"])), token)
    tolerances = {"rel_tol": 1e-6, "abs_tol": 1e-6, **kwargs}
    return Draw("integer_reference", text, reference, kwargs, _verdict(value, Fraction(number), **tolerances), token)


def _tolerance_reference(draw, reference: Fraction):
    """``reference`` as a str, an int or a float (each exact here: dyadic or integral)."""
    kinds = [_spelled(reference)]
    if reference.denominator == 1:
        kinds.append(int(reference))
    if _float_value(float(reference)) == reference:
        kinds.append(float(reference))
    return draw(st.sampled_from(kinds))


@st.composite
def tolerance_sides(draw, form: str) -> Draw:
    """``|x - ref|`` between ``rel_tol * |ref|`` and ``rel_tol * |x|`` (either order), or between
    ``max(abs_tol, rel_tol * |ref|)`` and ``abs_tol + rel_tol * |ref|``; dyadic tolerances, so that every
    arithmetic reads the same bounds."""
    power = draw(st.integers(min_value=2, max_value=6))
    rel, exact_rel = 2.0 ** -power, Fraction(1, 2 ** power)
    base = draw(st.integers(min_value=1, max_value=2 ** 12)) * 2 ** power  # rel * base is an integer
    sign = draw(st.sampled_from([1, -1]))
    reference = Fraction(base)
    side = form
    if side == "answer_above":  # rel*|ref| < |x - ref| <= rel*|x|: wrong by the spec
        low, high = exact_rel * reference, exact_rel * reference / (1 - exact_rel)
        value, abs_tol = reference + (low + high) / 2, 0.0
    elif side == "answer_below":  # rel*|x| < |x - ref| <= rel*|ref|: correct by the spec
        low, high = exact_rel * reference / (1 + exact_rel), exact_rel * reference
        value, abs_tol = reference - (low + high) / 2, 0.0
    else:  # max(abs, rel*|ref|) < |x - ref| <= abs + rel*|ref|: wrong by the spec
        abs_tol = float(exact_rel * reference)
        value = reference + Fraction(3, 2) * Fraction(abs_tol)
    value, reference = value * sign, reference * sign
    kwargs = {"rel_tol": rel, "abs_tol": abs_tol}
    token = _spelled(value)
    text = _around(draw, draw(st.sampled_from(["box", "text"])), token)
    return Draw("tolerance_sides", text, _tolerance_reference(draw, reference), kwargs,
                _verdict(value, reference, rel, abs_tol), token)


@st.composite
def tolerance_boundary(draw, form: str) -> Draw:
    """``|x - ref|`` exactly the tolerance (correct: rule 4 is ``<=``) or one step past it, the tolerance
    from ``abs_tol`` or from ``rel_tol``; dyadic values, exact in any arithmetic."""
    power = draw(st.integers(min_value=1, max_value=6))
    tol = 2.0 ** -power
    reference = Fraction(draw(st.integers(min_value=-4096, max_value=4096)))
    which = form
    if which == "abs":
        kwargs, width = {"rel_tol": 0.0, "abs_tol": tol}, Fraction(tol)
    else:
        reference = reference or Fraction(64)
        kwargs, width = {"rel_tol": tol, "abs_tol": 0.0}, Fraction(tol) * abs(reference)
    step = draw(st.sampled_from([0, 0, Fraction(1, 2 ** 10)]))
    value = reference + draw(st.sampled_from([1, -1])) * (width + step)
    token = _spelled(value)
    text = _around(draw, draw(st.sampled_from(["box", "text"])), token)
    return Draw("tolerance_boundary", text, _tolerance_reference(draw, reference), kwargs,
                _verdict(value, reference, **kwargs), token)


# ---------------------------------------------------------------------------
# The catalogue: each construct's label and the spec words that decide it
# ---------------------------------------------------------------------------
SPEC = "shared/spec/module_09.md, Verifier"
CONSTRUCTS: dict[str, Construct] = {
    "plus_sign": Construct(Text("a number with a plus sign", "число со знаком плюс"),
                           f"{SPEC} rule 1: 'an optionally signed integer, decimal, or fraction'"),
    "leading_dot": Construct(Text("a decimal without its leading digit", "десятичная дробь без цифры перед точкой"),
                             f"{SPEC} rule 1 'decimal' and rule 2 'parse with fractions.Fraction exactly (decimals "
                             "too)': Fraction reads a decimal without its leading digit"),
    "negative_exponent": Construct(Text("scientific notation with a negative exponent",
                                        "экспоненциальная запись с отрицательным показателем"),
                                   f"{SPEC} rule 1: 'optional scientific notation (1.5e3)'"),
    "exponent_forms": Construct(Text("scientific notation with a capital E, a plus sign or an integer mantissa",
                                     "экспоненциальная запись с заглавной E, знаком плюс или целой мантиссой"),
                                f"{SPEC} rule 1: 'optional scientific notation (1.5e3)'"),
    "decimal_fraction": Construct(Text("a fraction of decimals", "дробь из десятичных чисел"),
                                  f"{SPEC} rule 1 says 'fraction a/b' without saying what a and b may be (silent); "
                                  "the starter's _number_regex docstring: '[sign] unsigned [/ unsigned]', unsigned "
                                  "a decimal too", spec_decides=False),
    "signed_fraction": Construct(Text("a fraction with a sign", "дробь со знаком"),
                                 f"{SPEC} rule 1: 'an optionally signed ... fraction a/b'"),
    "thousands_groups": Construct(Text("thousands separators with a sign or a decimal part",
                                       "разделители тысяч со знаком или дробной частью"),
                                  f"{SPEC} rule 1: 'optional thousands separators (1,234,567)', rule 2: stripped"),
    "thousands_run_on": Construct(Text("a comma followed by digits that are not a group of three",
                                       "запятая, за которой идут цифры, не образующие группу из трёх"),
                                  f"{SPEC} rule 1: thousands separators as in 1,234,567 (groups of three): a comma "
                                  "before another run of digits separates two numbers (README: '1,2 is two "
                                  "numbers'), and a box holding it is not one number"),
    "box_whitespace": Construct(Text("whitespace inside the box, around the sign or the fraction bar",
                                     "пробелы внутри \\boxed{} вокруг знака или дробной черты"),
                                f"{SPEC} rule 2: 'strip whitespace, $, and thousands separators' (removed wherever "
                                "they are: separators sit inside a number)"),
    "box_dollars": Construct(Text("dollar signs inside the box", "знаки доллара внутри \\boxed{}"),
                             f"{SPEC} rule 2: 'strip whitespace, $, ...'"),
    "box_precedence": Construct(Text("the last box against earlier boxes, later numbers and a box word without "
                                     "its backslash", "последний \\boxed{} против более ранних, более поздних "
                                     "чисел и слова boxed без обратной косой черты"),
                                f"{SPEC} rule 1: 'the content of the LAST \\boxed{{...}} (one or more backslashes "
                                "before boxed) when any exists; otherwise the LAST number'"),
    "unclosed_last_box": Construct(Text("the last box never closes", "последний \\boxed{} не закрыт"),
                                   f"{SPEC}: silent on a box that never closes; the reference (README rule 5): "
                                   "'parse_error'", spec_decides=False),
    "box_not_a_number": Construct(Text("a box that holds no single number", "\\boxed{}, в котором нет одного числа"),
                                  f"{SPEC} rule 3: 'an unparseable box ... gives 0'"),
    "latex_spacing": Construct(Text("LaTeX spacing between digit groups", "пробелы LaTeX между группами цифр"),
                               f"{SPEC}: silent on LaTeX spacing (rule 2 strips only whitespace, $ and thousands "
                               "separators, shown as commas); the reference: no separator, so a box holding it is "
                               "a parse_error and in a text the digits after it are the last number",
                               spec_decides=False),
    "percent": Construct(Text("a percent sign after the number", "знак процента после числа"),
                         f"{SPEC} rule 2 strips only whitespace, $ and separators, so a box with a percent sign is "
                         "unparseable (rule 3); in a text the number before it is the last number (rule 1)"),
    "units": Construct(Text("units after the number", "единицы измерения после числа"),
                       f"{SPEC} rules 2-3 (a box with a unit is unparseable: 0) and rule 1 (in a text the last "
                       "number)"),
    "operator_minus": Construct(Text("a minus right after a number, a letter or a bracket",
                                     "минус сразу после числа, буквы или скобки"),
                                f"{SPEC}: silent on a minus right after a digit, letter or ')'; the reference "
                                "(README rule 2, the _number_regex docstring): an operator, '5-3' holds 5 and 3",
                                spec_decides=False),
    "zero_denominator": Construct(Text("a zero denominator in other spellings", "нулевой знаменатель в других формах"),
                                  f"{SPEC} rule 3: 'a zero denominator ... gives 0' (status zero_division)"),
    "non_finite": Construct(Text("infinity or NaN spelled in the box", "бесконечность или NaN в \\boxed{}"),
                            f"{SPEC} rule 3: 'NaN, infinity ... gives 0' (status non_finite)"),
    "no_number": Construct(Text("a response without any number", "ответ без единого числа"),
                           f"{SPEC} rule 3: 'no number at all gives 0' (status no_answer)"),
    "float_reference": Construct(Text("a float reference with many significant digits",
                                      "эталонный ответ типа float с многими значащими цифрами"),
                                 f"{SPEC} rule 5: 'the reference is parsed by the same rules': a float by its "
                                 "spelling (repr), rule 4 exact"),
    "integer_reference": Construct(Text("an integer reference: negative, beyond 2^53 or a NumPy integer",
                                        "целый эталонный ответ: отрицательный, больше 2^53 или целое NumPy"),
                                   f"{SPEC} rules 2 and 4: exact Fractions, so integers beyond 2^53 stay exact "
                                   "(a NumPy integer is an int by value: the spec's types say int)"),
    "tolerance_sides": Construct(Text("a difference that only a wrong tolerance formula accepts or refuses",
                                      "разность, которую принимает или отвергает только неверная формула допуска"),
                                 f"{SPEC} rule 4: 'abs(x - ref) <= max(abs_tol, rel_tol * abs(ref))'",
                                 edges=("number_formats", "boundaries")),
    "tolerance_boundary": Construct(Text("the difference exactly at the tolerance, or just past it",
                                         "разность ровно на границе допуска или чуть за ней"),
                                    f"{SPEC} rule 4: '<=' (the boundary is inclusive)",
                                    edges=("number_formats", "boundaries")),
}

ANSWERS = {  # the constructs that draw an Answer (the reference is drawn for them by _draw)
    "plus_sign": plus_sign, "leading_dot": leading_dot, "negative_exponent": negative_exponent,
    "exponent_forms": exponent_forms, "decimal_fraction": decimal_fraction, "signed_fraction": signed_fraction,
    "thousands_groups": thousands_groups, "thousands_run_on": thousands_run_on, "box_whitespace": box_whitespace,
    "box_dollars": box_dollars, "box_precedence": box_precedence, "unclosed_last_box": unclosed_last_box,
    "box_not_a_number": box_not_a_number, "latex_spacing": latex_spacing, "percent": percent, "units": units,
    "operator_minus": operator_minus, "zero_denominator": zero_denominator, "non_finite": non_finite,
    "no_number": no_number,
}
DRAWS = {"float_reference": float_reference, "integer_reference": integer_reference,
         "tolerance_sides": tolerance_sides, "tolerance_boundary": tolerance_boundary}
BOX_OR_TEXT = ("box", "text")
FORMS = {  # every form of every construct is drawn (a box and a text, each variant), none left to chance
    **{name: BOX_OR_TEXT for name in ANSWERS},
    "thousands_run_on": ("box", "text_short", "text_long"),
    "box_whitespace": ("sign", "slash", "padding"), "box_dollars": ("box",),
    "box_precedence": ("earlier_box", "later_number", "no_backslash"), "unclosed_last_box": ("box",),
    "box_not_a_number": ("box",), "operator_minus": ("text",), "non_finite": ("box",), "no_number": ("text",),
    "float_reference": ("repr", "separators", "rounded", "scaled"),
    "integer_reference": ("negative", "beyond_2_53", "huge", "default_tolerance"),
    "tolerance_sides": ("answer_above", "answer_below", "sum"), "tolerance_boundary": ("abs", "rel"),
}
TARGETS = ("value", "misreading")  # the reference an Answer construct is drawn against
assert set(ANSWERS) | set(DRAWS) == set(CONSTRUCTS) == set(FORMS)


def combinations() -> list[tuple[str, str, str]]:
    """Every (construct, form, target) drawn: an Answer construct against its own value and a misreading."""
    return [(name, form, target) for name in CONSTRUCTS for form in FORMS[name]
            for target in (TARGETS if name in ANSWERS else ("drawn",))]


@st.composite
def _reference_for(draw, value: Fraction):
    """``value`` as a reference of a type the spec allows: a string of the grammar, an int (or NumPy int64),
    a float (or NumPy float64) when a float spells it exactly."""
    kinds = [_spelled(value), _spelled(value, separators=True)]
    if value.denominator == 1:
        kinds.append(int(value))
        if abs(value) < 2 ** 63:
            kinds.append(np.int64(int(value)))
    if abs(value) < 2 ** 1000 and _float_value(float(value)) == value:
        kinds += [float(value), np.float64(float(value))]
    return draw(st.sampled_from(kinds))


def _reference_value(reference) -> Fraction:
    if isinstance(reference, str):  # the grammar's plain spellings: an int (maybe grouped), a decimal, p/q
        top, _, bottom = reference.replace(",", "").partition("/")
        return Fraction(top) / Fraction(bottom or "1")
    if isinstance(reference, (float, np.floating)):
        return _float_value(reference)
    return Fraction(int(reference))


@st.composite
def _draw(draw, name: str, form: str, target: str) -> Draw:
    """One draw of construct ``name`` in ``form``: its answer, a reference (its value when ``target`` is
    "value" and the answer holds one, else a misreading), and the verdict by rule 4."""
    if name in DRAWS:
        return draw(DRAWS[name](form))
    answer = draw(ANSWERS[name](form))
    misreadings = [m for m in answer.misreadings if m != answer.value] or [(answer.value or 0) + 1]
    wanted = answer.value if target == "value" and answer.value is not None else draw(st.sampled_from(misreadings))
    reference = draw(_reference_for(wanted))
    if answer.status != "ok":
        return Draw(name, answer.text, reference, {}, answer.status, answer.extracted)
    verdict = _verdict(answer.value, _reference_value(reference), 1e-6, 1e-6)
    return Draw(name, answer.text, reference, {}, verdict, answer.extracted)


def grammar_draws(*, per_form: int, seed: int) -> list[Draw]:
    """``per_form`` draws of every (construct, form, target) of :func:`combinations`, the same in every process."""
    every = st.tuples(*[_draw(*combination) for combination in combinations()])
    rows = hypothesis_cases(every, count=per_form, seed=seed, to_case=lambda row: Case(args=row))
    return [d for case in rows for d in case.args]


def as_case(item: Draw, number: int) -> Case:
    """A drawn call as a hidden case, labelled by its construct (never by its spelling), tagged with its classes
    (and ``python_types`` when the reference is a NumPy scalar)."""
    construct = CONSTRUCTS[item.construct]
    edges = (*construct.edges, "python_types") if isinstance(item.reference, np.generic) else construct.edges
    label = Text(f"{construct.label.in_('en')} (drawn case {number})",
                 f"{construct.label.in_('ru')} (случайная проверка {number})")
    return Case(args=(item.text, item.reference), kwargs=dict(item.kwargs), label=label, edge=edges)


def grammar_cases(*, per_form: int, seed: int) -> list[Case]:
    """The draws of :func:`grammar_draws` as hidden cases, numbered within their construct."""
    counts: dict[str, int] = {}
    cases = []
    for item in grammar_draws(per_form=per_form, seed=seed):
        counts[item.construct] = counts.get(item.construct, 0) + 1
        cases.append(as_case(item, counts[item.construct]))
    return cases


__all__ = ["Answer", "CONSTRUCTS", "Construct", "Draw", "FORMS", "as_case", "combinations", "grammar_cases",
           "grammar_draws"]
