r"""LaTeX answers as the Module 9 verifier reads them: one exact rational number, or nothing.

Given code: the capstone student need not change it.

DeepMath-103K's references (its ``solution`` column) are LaTeX: ``\frac{1}{2}``,
``-\dfrac{3}{4}``, ``10^{6}``, ``2\sqrt{3}``, ``(0, 1)``, ``\ln 2``. The
Module 9 verifier is deliberately strict: a reference or a box must hold ONE
number ("3/7", "0.5", "-12"), and an unboxed text is read by its last number,
so ``\frac{1}{2}`` would be read as 2. This module translates:

    canonical_number(latex) = "p/q", "p" or a decimal when ``latex`` denotes one
                              rational number exactly (integers, decimals,
                              \frac/\dfrac/\tfrac of integers, a/b, integer
                              powers of integers), else None.

Data preparation keeps only the rows whose reference has a canonical number
and stores that number as the reference (:func:`graders.capstone_run.data.prepare_math_rows`
reports the kept fraction); the reward rewrites the model's last
``\boxed{...}`` the same way before the learner's verifier reads it
(:func:`canonical_completion`), so ``\boxed{\frac{1}{2}}`` and ``\boxed{0.5}``
both match the reference "1/2". Irrational or non-numeric answers
(``2\sqrt{3}``, ``\ln 2``, ``\pi``, intervals, sets, words) are not rewritten:
the verifier cannot grade them exactly, so such rows are filtered out.
"""

from __future__ import annotations

import re
from fractions import Fraction

MAX_POWER_DIGITS = 40  # a^b with more digits than this is not written out (10^{100} stays unreadable)
_INTEGER = r"[+-]?\d+"
_DECIMAL = r"[+-]?(?:\d+\.\d*|\.\d+|\d+)"
_WRAPPERS = (r"^\\boxed\{(.*)\}$", r"^\$+(.*?)\$+$", r"^\\\((.*)\\\)$", r"^\\\[(.*)\\\]$",
             r"^\\displaystyle(.*)$", r"^\{(.*)\}$", r"^\((.*)\)$")
# spacing and thousands separators LaTeX writes inside a number: "1{,}000", "1\,000", "1\ 000", "\!"
_SPACING = re.compile(r"\\[,;:! ]|~|\{,\}")


def _strip_wrappers(text: str) -> str:
    r"""``text`` without surrounding \boxed{}, $...$, \(...\), \[...\], \displaystyle, {...} and (...)."""
    previous = None
    while previous != text:
        previous = text
        for pattern in _WRAPPERS:
            match = re.fullmatch(pattern, text, re.DOTALL)
            if match and _balanced(match.group(1)):
                text = match.group(1).strip()
    return text


def _balanced(text: str) -> bool:
    """True when every brace and parenthesis of ``text`` closes in order."""
    depth = {"{": 0, "(": 0}
    for char in text:
        if char in "{(":
            depth[char] += 1
        elif char in "})":
            opener = "{" if char == "}" else "("
            depth[opener] -= 1
            if depth[opener] < 0:
                return False
    return all(value == 0 for value in depth.values())


def _exact_value(text: str) -> Fraction | None:
    r"""The exact value of a cleaned answer: integer, decimal, a/b, \frac{a}{b}, a^{b}; None otherwise."""
    sign = 1
    if text[:1] in "+-" and not re.fullmatch(_DECIMAL, text):
        sign, text = (-1 if text[0] == "-" else 1), text[1:].strip()
    if re.fullmatch(_DECIMAL, text):
        return sign * Fraction(text)
    fraction = re.fullmatch(r"\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}", text) or re.fullmatch(
        r"\\[dt]?frac(\d)(\d)", text) or re.fullmatch(r"([^/]+)/([^/]+)", text)
    if fraction:
        numerator, denominator = (_exact_value(_strip_wrappers(part.strip())) for part in fraction.groups())
        if numerator is None or denominator is None or denominator == 0:
            return None
        return sign * numerator / denominator
    power = re.fullmatch(rf"({_INTEGER}|\{{{_INTEGER}\}})\^\{{?({_INTEGER})\}}?", text)
    if power:
        base, exponent = int(power.group(1).strip("{}")), int(power.group(2))
        if base == 0 and exponent < 0:
            return None
        if abs(exponent) * max(len(str(abs(base))), 1) > MAX_POWER_DIGITS:
            return None
        return sign * Fraction(base) ** exponent
    return None


def _token(value: Fraction) -> str:
    """The verifier's canonical token of ``value``: "p" for an integer, else "p/q" (exact)."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def canonical_number(latex: str) -> str | None:
    r"""One rational number written by ``latex`` as "p" or "p/q", else None.

    ``\frac{1}{2}`` -> "1/2", ``-\dfrac{3}{4}`` -> "-3/4", ``10^{6}`` -> "1000000",
    ``1{,}000`` -> "1000", ``0.25`` -> "1/4", ``$\boxed{7}$`` -> "7";
    ``2\sqrt{3}``, ``\ln 2``, ``(0, 1)``, ``\pi``, ``x+1``, ``\text{Yes}`` -> None.
    """
    if not isinstance(latex, str):
        return None
    text = _strip_wrappers(_SPACING.sub("", latex.strip()).replace("\\left", "").replace("\\right", ""))
    text = re.sub(r"\s+", "", text)
    if re.fullmatch(r"[+-]?\d{1,3}(?:,\d{3})+", text):  # "1,000": a thousands separator, not a pair
        text = text.replace(",", "")
    if not text:
        return None
    value = _exact_value(text)
    return None if value is None else _token(value)


def _last_box_span(text: str) -> tuple[int, int] | None:
    r"""(start, end) of the content of the LAST closed ``\boxed{...}`` in ``text``; None when there is none."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    open_at, depth = start + len("\\boxed{"), 1
    for index in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return open_at, index
    return None


def canonical_completion(text: str) -> str:
    r"""``text`` with its last ``\boxed{...}`` rewritten to its canonical number when it has one.

    ``"so \boxed{\frac{1}{2}}"`` -> ``"so \boxed{1/2}"``; a box that is not one
    rational number, an unclosed box, or no box leaves ``text`` unchanged (the
    learner's verifier then decides as it always does).
    """
    span = _last_box_span(text)
    if span is None:
        return text
    token = canonical_number(text[span[0]:span[1]])
    return text if token is None else text[:span[0]] + token + text[span[1]:]
