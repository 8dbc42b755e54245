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

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from graders.checks.cases import Case
from graders.checks.drawn import hypothesis_cases, st
from graders.text import Text

ZERO_TOL = {"rel_tol": 0.0, "abs_tol": 0.0}
HIDDEN_SEED = 9_302  # the verifier's hidden checks (graders/checks/module_9_reference/verifier.py)
MUTATION_SEED = 9_303  # the mutation tool's draws (graders/mutation/draws.py): other inputs of the same grammar


@dataclass(frozen=True)
class Construct:
    """One construct of the grammar: its learner-facing label (never its spelling), the spec words that decide it."""

    label: Text
    basis: str
    spec_decides: bool = True
    edges: tuple[str, ...] = ("number_formats",)


@dataclass(frozen=True)
class Answer:
    """A response text and what the spec reads in it."""

    text: str
    status: str  # "ok" (a finite number: value), "parse_error", "zero_division", "non_finite", "no_answer"
    value: Fraction | None = None
    extracted: str | None = None
    misreadings: tuple[Fraction, ...] = ()  # what a plausible wrong reading of the text gives


@dataclass(frozen=True)
class Draw:
    """One drawn call of the verifier with the answer the spec gives."""

    construct: str
    text: str
    reference: object
    kwargs: dict = field(default_factory=dict)
    status: str = "wrong"  # "correct", "wrong", "no_answer", "parse_error", "zero_division", "non_finite"
    extracted: str | None = None

    @property
    def accuracy(self) -> int:
        return int(self.status == "correct")


# ---------------------------------------------------------------------------
# Spelling numbers
# ---------------------------------------------------------------------------
def _decimal_text(value: Fraction) -> str | None:
    """``value`` as an exact decimal without exponent ("-12.5"), or None when it has no finite one."""
    q = value.denominator
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    if q != 1:
        return None
    places = max(twos, fives)
    scaled = abs(value.numerator) * 10 ** places // value.denominator
    whole, fraction = divmod(scaled, 10 ** places) if places else (scaled, 0)
    sign = "-" if value < 0 else ""
    return f"{sign}{whole}" + (f".{fraction:0{places}d}".rstrip("0") if places else "")


def _spelled(value: Fraction, separators: bool = False) -> str:
    """A plain spelling of ``value`` by the grammar: an integer (with thousands groups if asked), a decimal,
    else ``p/q``."""
    if value.denominator == 1:
        return f"{value.numerator:,}" if separators else str(value.numerator)
    decimal = _decimal_text(value)
    return decimal if decimal is not None else f"{value.numerator}/{value.denominator}"


def _float_value(number: float) -> Fraction:
    """Rule 5: a float reference is read by the same rules as its spelling (``repr``: 0.1 is 1/10)."""
    return Fraction(repr(float(number)))


def _verdict(value: Fraction, reference: Fraction, rel_tol: float, abs_tol: float) -> str:
    """Rule 4, exact: ``|x - ref| <= max(abs_tol, rel_tol * |ref|)`` with the tolerances' exact values."""
    tolerance = max(Fraction(abs_tol), Fraction(rel_tol) * abs(reference))
    return "correct" if abs(value - reference) <= tolerance else "wrong"


magnitudes = st.integers(min_value=1, max_value=99_999)
small = st.integers(min_value=2, max_value=999)
BEFORE = ("", "so the answer is ", "we get ", "x = ", "Total: ")
EARLIER = ("", "I first thought 17, then ", "after 3 steps ")
AFTER = ("", ".", " apples", " in all.")
BOX_AFTER = ("", ".", " Check: 12 - 2 = 10", " (not 41)")


@st.composite
def _in_text(draw, token: str, after: tuple[str, ...] = AFTER) -> str:
    """``token`` as the last number of a sentence (the words around it hold no later number)."""
    return draw(st.sampled_from(EARLIER)) + draw(st.sampled_from(BEFORE)) + token + draw(st.sampled_from(after))


@st.composite
def _in_box(draw, content: str) -> str:
    r"""``content`` in the last ``\boxed{}`` (one to three backslashes), maybe after an earlier box, before
    later numbers, inside ``$...$``."""
    box = draw(st.sampled_from(["\\", "\\\\", "\\\\\\"])) + "boxed{" + content + "}"
    if draw(st.booleans()):
        box = f"${box}$"
    earlier = draw(st.sampled_from(["", r"\boxed{17} no, wait: ", "I first thought 17, then "]))
    return earlier + draw(st.sampled_from(("", "The answer is ", "Final: "))) + box + draw(st.sampled_from(BOX_AFTER))


@st.composite
def _placed(draw, where: str, token: str, value: Fraction | None, status: str = "ok", misreadings=()) -> Answer:
    """``token`` in a box (``where == "box"``; extracted: the box's raw content) or as a sentence's last number
    (the token)."""
    text = draw(_in_box(token)) if where == "box" else draw(_in_text(token))
    return Answer(text, status, value, token, tuple(misreadings))


def _around(draw, where: str, token: str) -> str:
    return draw(_in_box(token)) if where == "box" else draw(_in_text(token))


# ---------------------------------------------------------------------------
# The constructs: each a strategy of Answers
# ---------------------------------------------------------------------------
@st.composite
def _unsigned(draw) -> tuple[str, Fraction]:
    """An unsigned integer or decimal with its value."""
    whole = draw(magnitudes)
    if draw(st.booleans()):
        return str(whole), Fraction(whole)
    digits = draw(st.integers(min_value=1, max_value=4))
    fraction = draw(st.integers(min_value=1, max_value=10 ** digits - 1))
    return f"{whole}.{fraction:0{digits}d}", whole + Fraction(fraction, 10 ** digits)


@st.composite
def plus_sign(draw, where: str) -> Answer:
    spelling, value = draw(_unsigned())
    if draw(st.booleans()):  # a signed fraction
        denominator = draw(small)
        spelling, value = f"{spelling}/{denominator}", value / denominator
    return draw(_placed(where, "+" + spelling, value, misreadings=(-value, value + 1)))


@st.composite
def leading_dot(draw, where: str) -> Answer:
    digits = draw(st.integers(min_value=1, max_value=4))
    fraction = draw(st.integers(min_value=1, max_value=10 ** digits - 1))
    spelled = f"{fraction:0{digits}d}"
    value = Fraction(fraction, 10 ** digits)
    sign = draw(st.sampled_from(["", "-", "+"]))
    if sign == "-":
        value = -value
    digits_alone = Fraction(int(spelled))  # the digits read without their point
    return draw(_placed(where, f"{sign}.{spelled}", value, misreadings=(digits_alone, -digits_alone)))


@st.composite
def negative_exponent(draw, where: str) -> Answer:
    spelling, mantissa = draw(_unsigned())
    power = draw(st.integers(min_value=1, max_value=12))
    letter = draw(st.sampled_from(["e", "E"]))
    sign = draw(st.sampled_from(["", "-"]))
    value = mantissa / 10 ** power * (-1 if sign else 1)
    return draw(_placed(where, f"{sign}{spelling}{letter}-{power}", value,
                        misreadings=(mantissa, Fraction(power), Fraction(-power), mantissa * 10 ** power)))


@st.composite
def exponent_forms(draw, where: str) -> Answer:
    spelling, mantissa = draw(_unsigned())
    power = draw(st.integers(min_value=0, max_value=9))
    letter = draw(st.sampled_from(["e", "E"]))
    plus = draw(st.sampled_from(["", "+"]))
    return draw(_placed(where, f"{spelling}{letter}{plus}{power}", mantissa * 10 ** power,
                        misreadings=(mantissa, Fraction(power), mantissa + 1)))


@st.composite
def decimal_fraction(draw, where: str) -> Answer:
    numerator, top = draw(_unsigned())
    denominator, bottom = draw(_unsigned())
    if "." not in numerator + denominator:
        numerator, top = numerator + ".5", top + Fraction(1, 2)
    sign = draw(st.sampled_from(["", "-"]))
    value = top / bottom * (-1 if sign else 1)
    return draw(_placed(where, f"{sign}{numerator}/{denominator}", value, misreadings=(top, bottom, top * bottom)))


@st.composite
def signed_fraction(draw, where: str) -> Answer:
    top, bottom = draw(magnitudes), draw(small)
    sign = draw(st.sampled_from(["-", "+"]))
    value = Fraction(top, bottom) * (-1 if sign == "-" else 1)
    return draw(_placed(where, f"{sign}{top}/{bottom}", value, misreadings=(-value, Fraction(bottom), Fraction(top))))


@st.composite
def thousands_groups(draw, where: str) -> Answer:
    whole = draw(st.integers(min_value=1_000, max_value=10 ** 13))
    spelling, value = f"{whole:,}", Fraction(whole)
    if draw(st.booleans()):
        spelling, value = spelling + ".25", value + Fraction(1, 4)
    sign = draw(st.sampled_from(["", "-", "+"]))
    value = -value if sign == "-" else value
    last_group = Fraction(int(spelling.split(",")[-1].split(".")[0]))
    return draw(_placed(where, sign + spelling, value, misreadings=(last_group, Fraction(int(spelling.split(",")[0])))))


@st.composite
def thousands_run_on(draw, form: str) -> Answer:
    """Digits after a comma that are not a group of three (shorter, or longer: a group of three and more
    digits run on): no thousands separator, so two numbers in a text and no single number in a box."""
    groups = [str(draw(st.integers(min_value=1, max_value=999)))]
    groups += [f"{g:03d}" for g in draw(st.lists(st.integers(min_value=0, max_value=999), max_size=2))]
    width = draw(st.sampled_from([1, 2] if form == "text_short" else [4, 5, 6]))
    tail = f"{draw(st.integers(min_value=10 ** (width - 1), max_value=10 ** width - 1))}"
    spelling = ",".join([*groups, tail])
    every_digit = Fraction(int(spelling.replace(",", "")))
    if form == "box":
        grouped = Fraction(int("".join(groups) + tail[:3]))  # a group of three taken from the run
        return Answer(draw(_in_box(spelling)), "parse_error", None, spelling, (every_digit, grouped))
    misreadings = [every_digit, Fraction(int(groups[-1]))]
    if width > 3:
        misreadings.append(Fraction(int(tail[3:])))  # the run's digits after a group of three
    return Answer(draw(_in_text(spelling)), "ok", Fraction(int(tail)), tail, tuple(misreadings))


@st.composite
def box_whitespace(draw, form: str) -> Answer:
    """Whitespace anywhere inside a box: removed (rule 2)."""
    spelling, value = draw(_unsigned())
    space = st.sampled_from([" ", "  ", "\t", "\n"])
    if form == "sign":
        token, value = f"-{draw(space)}{spelling}", -value
    elif form == "slash":
        bottom = draw(small)
        token, value = f"{spelling}{draw(space)}/{draw(space)}{bottom}", value / bottom
    else:
        token = f"{draw(space)}{spelling}{draw(space)}"
    return Answer(draw(_in_box(token)), "ok", value, token, (abs(value), -value))


@st.composite
def box_dollars(draw, form: str) -> Answer:
    spelling, value = draw(_unsigned())
    token = draw(st.sampled_from(["${}$", "$-{}$", "-${}$"])).format(spelling)
    value = -value if "-" in token else value
    return Answer(draw(_in_box(token)), "ok", value, token, (-value,))


@st.composite
def box_precedence(draw, form: str) -> Answer:
    """The last box wins over earlier boxes and over any later number; ``boxed{`` without a backslash is no box."""
    last, other = draw(magnitudes), draw(magnitudes)
    if other == last:
        other += 1
    if form == "earlier_box":
        text = rf"\boxed{{{other}}} no, \\boxed{{{last}}}"
        return Answer(text, "ok", Fraction(last), str(last), (Fraction(other),))
    if form == "later_number":
        text = rf"\boxed{{{last}}}, and {other} is what I tried first"
        return Answer(text, "ok", Fraction(last), str(last), (Fraction(other),))
    text = f"boxed{{{other}}} is only a word; the answer is {last}"
    return Answer(text, "ok", Fraction(last), str(last), (Fraction(other),))


@st.composite
def unclosed_last_box(draw, form: str) -> Answer:
    earlier, last = draw(magnitudes), draw(magnitudes)
    text = rf"\boxed{{{earlier}}} and then \boxed{{{last}"
    return Answer(text, "parse_error", None, None, (Fraction(earlier), Fraction(last)))


@st.composite
def box_not_a_number(draw, form: str) -> Answer:
    r"""A last box that holds no single number: LaTeX commands, nested braces, words."""
    top, bottom = draw(magnitudes), draw(small)
    token, read = draw(st.sampled_from([
        (rf"\frac{{{top}}}{{{bottom}}}", Fraction(top, bottom)), (f"{{{top}}}", Fraction(top)),
        (rf"\text{{{top}}}", Fraction(top)), (f"x={top}", Fraction(top)), (f"{top}/{bottom}/2", Fraction(top, bottom)),
        ("", Fraction(top)), ("seven", Fraction(7)), (f"{top}..5", Fraction(top)), (f"--{top}", Fraction(top)),
    ]))
    return Answer(draw(_in_box(token)), "parse_error", None, token, (read,))


@st.composite
def latex_spacing(draw, where: str) -> Answer:
    r"""LaTeX thin spaces between digit groups (``\,``, ``{,}``, ``\ ``): the spec strips only whitespace, ``$``
    and thousands commas, so a box holding one is not a number, and in a text the digits after it are the
    last number."""
    head, group = draw(st.integers(min_value=1, max_value=999)), draw(st.integers(min_value=0, max_value=999))
    joint = draw(st.sampled_from(["\\,", "{,}", "\\ "]))
    token = f"{head}{joint}{group:03d}"
    joined = Fraction(head * 1000 + group)
    if where == "box":
        return Answer(draw(_in_box(token)), "parse_error", None, token, (joined,))
    return Answer(draw(_in_text(token)), "ok", Fraction(group), f"{group:03d}", (joined, Fraction(head)))


@st.composite
def percent(draw, where: str) -> Answer:
    spelling, value = draw(_unsigned())
    sign = draw(st.sampled_from(["%", "\\%"]))
    if where == "box":
        return Answer(draw(_in_box(spelling + sign)), "parse_error", None, spelling + sign, (value, value / 100))
    return Answer(draw(_in_text(spelling, after=(sign, sign + " of them", sign + "."))), "ok", value, spelling,
                  (value / 100,))


@st.composite
def units(draw, where: str) -> Answer:
    spelling, value = draw(_unsigned())
    unit = draw(st.sampled_from([" cm", "m", r"\text{ kg}", r"\,\mathrm{s}", " apples"]))
    if where == "box":
        return Answer(draw(_in_box(spelling + unit)), "parse_error", None, spelling + unit, (value,))
    return Answer(draw(_in_text(spelling, after=(" cm", " m/s", " kg in all."))), "ok", value, spelling,
                  (value + 1,))


@st.composite
def operator_minus(draw, form: str) -> Answer:
    left, right = draw(magnitudes), draw(magnitudes)
    before = draw(st.sampled_from(["{}-", "x-", "({})-", "n-"])).format(left)
    text = draw(_in_text(f"{before}{right}"))
    return Answer(text, "ok", Fraction(right), str(right), (Fraction(-right), Fraction(left - right)))


@st.composite
def zero_denominator(draw, where: str) -> Answer:
    spelling, value = draw(_unsigned())
    zero = draw(st.sampled_from(["0", "0.0", "00", "0e5", ".0"]))
    numerator = draw(st.sampled_from([spelling, "-" + spelling, "0"]))
    return draw(_placed(where, f"{numerator}/{zero}", None, "zero_division", misreadings=(value, Fraction(0))))


@st.composite
def non_finite(draw, form: str) -> Answer:
    word = draw(st.sampled_from(["inf", "-inf", "+inf", "Infinity", "NaN", "nan", "\\infty", "-\\infty", "\u221e"]))
    return Answer(draw(_in_box(word)), "non_finite", None, word, (Fraction(0), Fraction(1)))


@st.composite
def no_number(draw, form: str) -> Answer:
    words = draw(st.sampled_from(["No numerical answer", "it is infinity", "nan", "the answer is x", "", "e-"]))
    return Answer(words, "no_answer", None, None, (Fraction(0), Fraction(1)))


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
