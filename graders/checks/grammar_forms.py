r"""The verifier's answer grammar, its pieces: how numbers are spelled, and one seeded Hypothesis strategy per
construct of the spec's grammar that draws an :class:`Answer` (the text, the status the spec gives it, its exact
value, what the verifier reads, plausible misreadings).

The catalogue that names each construct and the spec words that decide it, the references of every legal type
and the drawing of cases are :mod:`graders.checks.grammar`, which the checks and the mutation tool import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from graders.checks.drawn import st
from graders.text import Text

ZERO_TOL = {"rel_tol": 0.0, "abs_tol": 0.0}


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
