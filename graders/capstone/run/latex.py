r"""DeepMath's LaTeX answers read as the field reads them, and the capstone's reward built on them.

Given code: the capstone student need not change it.

DeepMath-103K's references (its ``solution`` column) are LaTeX: ``\frac{1}{2}``,
``2\sqrt{3}``, ``(0, 1)``, ``\ln 2``, ``50\%``, ``30^\circ``, ``\text{Yes}``,
``x^2+1``. A reference and the completion's final answer are parsed with
``math-verify`` (the parser of TRL's ``accuracy_reward`` and of the field's GRPO
recipes; imported only when an answer is read), after a few rewrites it lacks
(Unicode minus, √, π, ∞, °, ``\$``, bare unit words):

* **the final answer** is the content of the LAST ``\boxed{...}`` (Module 9's
  rule; an unclosed last box is no answer); with no box, the last math span
  (``$...$``, ``\(...\)``, ``\[...\]``) when no number follows it, so an unboxed
  ``$\frac{1}{2}$`` is 1/2, not 2; otherwise the text goes to the learner's
  verifier as it is (its last number: "The answer is 5.").
* **numbers** (a real, finite value: integers, fractions, decimals, √2, π, e,
  ln 2, percentages, degrees, ``x=3``'s right side, a number with a unit) are
  compared by the LEARNER's ``verify_numeric_answer``: it gets
  ``\boxed{<value>}`` and the reference's value, each written exactly ("p/q")
  when rational, else with :data:`DIGITS` significant digits, far below its
  documented tolerance. An exact reference (an integer or a fraction: DeepMath's
  answers are exact) is compared exactly (``rel_tol=abs_tol=0``: 123456900 is
  not 123456789); an irrational one at the verifier's default tolerance. A percentage matches its
  number or its fraction (``50\%`` = 50 = 0.5).
* **everything else** (intervals, sets, tuples, expressions, text, ∞) is
  compared by ``math_verify.verify``, the parser's own equivalence.

A reference the parser cannot read gives no reward (None, which TRL skips); the
data preparation drops such rows and records the kept fraction and the share of
kept rows whose reference is a number (decided by the learner's verifier).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

DIGITS = 30  # significant digits of an irrational value given to the verifier (its tolerance is 1e-6)
MAX_ANSWER_CHARS = 2000  # a longer final answer is not parsed (the verifier reads it as it is)
MAX_EXPONENT = 1000  # |log10| of a value beyond which it is no number the verifier can read (its 10^+-1000)
MAX_SPAN_SEARCH = 4000  # the unboxed math span is looked for in the completion's last characters only
_UNICODE = {"\u2212": "-", "\u2013": "-", "\u221e": "\\infty ", "\u03c0": "\\pi ", "\u00b0": "^\\circ",
            "\u00d7": "\\times ", "\u00b7": "\\cdot ", "\u2264": "\\le ", "\u2265": "\\ge ", "\u00a0": " "}
# bare unit words after a number ("5 cm"; never one letter: "3h" may be an expression)
_UNIT_WORDS = ("cm", "mm", "km", "kg", "mg", "sec", "seconds", "min", "minutes", "hr", "hours", "days", "weeks",
               "years", "units", "dollars", "cents", "degrees", "meters", "metres", "inches", "feet", "ft", "miles",
               "liters", "litres", "ml", "mL", "km/h", "m/s", "mph", "square", "cubic", "sq")
_UNIT = "(?:" + "|".join(re.escape(unit) for unit in sorted(_UNIT_WORDS, key=len, reverse=True)) + r")(?:\^\{?[23]\}?)?"
_UNIT_TAIL = re.compile(rf"^(.*?\d)(?:\s|\\[,;:! ])*{_UNIT}(?:\s+{_UNIT})*\.?$")
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_DECIMAL = re.compile(r"[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


@dataclass(frozen=True)
class Answer:
    """One parsed answer.

    parsed: what ``math_verify.parse`` returned (for ``math_verify.verify``).
    number: the verifier's form of its value ("1/2", "-3", "1.41421356237309504880168872421"),
        None when it is not one real finite number.
    exact: the value is rational (an integer or a fraction), compared exactly.
    percent: written as a percentage (number = the fraction).
    """

    parsed: tuple
    number: str | None
    exact: bool = False
    percent: bool = False


def normalize(text: str) -> str:
    r"""``text`` with the forms math-verify misreads rewritten: Unicode minus, √, π, ∞, °, ×; ``\$``; ``$``
    delimiters; ``\dfrac``/``\tfrac``; a trailing bare unit word after a number (``5 cm`` -> ``5``)."""
    for char, latex in _UNICODE.items():
        text = text.replace(char, latex)
    text = re.sub(r"\u221a\s*(\d+(?:\.\d+)?|[A-Za-z])", r"\\sqrt{\1}", text).replace("\u221a", "\\sqrt")
    text = text.replace("\\$", "").replace("$", "")
    text = re.sub(r"\\[dt]frac", r"\\frac", text).strip()
    text = re.sub(r"(?<=\d)(?:\\[,;: !]|\{,\}|\\ )(?=\d{3}(?!\d))", "", text)  # 1\,000 and 1{,}000: one number
    # \text{7}, \text{1 hour}: the number (a word after it is its unit)
    text = re.sub(r"\\(?:text|textbf|mathrm|mbox|textrm)\{\s*([+-]?\d[\d.,/]*)\s*[A-Za-z ]*\}", r"\1", text)
    text = re.sub(r"^([+-]?\d+(?:\.\d+)?)[eE]([+-]?\d+)$", r"\1\\times10^{\2}", text)  # 1e3 is 1000, not 3e
    unit = _UNIT_TAIL.match(text)
    return unit.group(1) if unit else text


def _main_thread_timeout(seconds: int) -> int | None:
    """math-verify's timeouts use signal.alarm, which only the main thread may set: elsewhere none."""
    return seconds if threading.current_thread() is threading.main_thread() else None


def _undefined(expr) -> bool:
    """True for sympy's undefined values: nan and the complex infinity of 1/0."""
    import sympy

    return expr is sympy.nan or expr is sympy.zoo


def _value_text(expr) -> tuple[str | None, bool]:
    """(the verifier's form of ``expr``'s value, is rational); (None, False) when not one real number."""
    import sympy

    if isinstance(expr, sympy.Eq) and isinstance(expr.lhs, sympy.Symbol):  # "x=3": its right side
        expr = expr.rhs
    if not isinstance(expr, sympy.Expr) or not expr.is_number:
        return None, False
    floats = expr.atoms(sympy.Float)  # a typed decimal ("-0.25") is the exact number it writes: -1/4
    if floats:
        expr = expr.xreplace({value: sympy.Rational(str(value)) for value in floats})
    for power in expr.atoms(sympy.Pow):  # never build 10^(10^10) exactly
        exponent = power.exp.evalf(15)
        if not exponent.is_real or abs(exponent) > 4 * MAX_EXPONENT:
            return None, False
    expr = expr.doit()  # 12*UnevaluatedExpr(1/100) (a percentage) -> 3/25
    approx = sympy.N(expr, DIGITS + 10)
    if not approx.is_real or not approx.is_finite or approx.is_infinite:
        return None, False
    if approx != 0 and abs(sympy.log(abs(approx), 10)) > MAX_EXPONENT:
        return None, False
    if expr.is_rational:
        value = sympy.Rational(sympy.nsimplify(expr.doit(), rational=True))
        return (str(value.p) if value.q == 1 else f"{value.p}/{value.q}"), True
    nearest = sympy.Integer(round(approx))
    if abs(nearest) < 10 ** (DIGITS - 10) and abs(approx - nearest) < sympy.Float(10) ** -(DIGITS - 2):
        return str(nearest), True  # log_2 8, sqrt(9) left unevaluated: an integer
    text = str(sympy.Float(approx, DIGITS)).replace("E", "e")
    return (text, False) if _DECIMAL.fullmatch(text) else (None, False)


@lru_cache(maxsize=4096)
def parse_answer(latex: str) -> Answer | None:
    r"""The answer ``latex`` writes (``\frac{1}{2}``, ``(0, 1)``, ``x=3``), or None when math-verify reads nothing."""
    if not isinstance(latex, str) or len(latex) > MAX_ANSWER_CHARS:
        return None
    text = normalize(latex)
    if not text:
        return None
    from math_verify import parse

    try:
        parsed = parse(f"${text}$", parsing_timeout=_main_thread_timeout(5))
    except Exception:  # noqa: BLE001 - a model's text: whatever the parser trips on is no answer
        return None
    if not parsed or isinstance(parsed[0], str) or _undefined(parsed[0]):
        return None  # nothing but the raw string ("???"), or 1/0: no answer to compare with
    percent = "%" in text
    try:
        number, exact = _value_text(parsed[0])
    except Exception:  # noqa: BLE001 - sympy on an odd value: no number, the parser's equivalence decides
        number, exact = None, False
    return Answer(tuple(parsed), number, exact, percent)


def last_box(text: str) -> tuple[bool, str | None]:
    r"""(found, content) of the LAST ``\boxed{...}`` (Module 9's rule); content None when it never closes."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return False, None
    open_at, depth = start + len("\\boxed{"), 1
    for index in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return True, text[open_at:index]
    return True, None


def final_answer(text: str) -> tuple[str, str | None]:
    r"""(where, content) of a completion's final answer: ("box", content of the last box; None if unclosed),
    ("math", the last math span when no number follows it) or ("text", None: the verifier reads the text)."""
    found, content = last_box(text)
    if found:
        return "box", content
    tail = text[-MAX_SPAN_SEARCH:]
    spans = list(_MATH_SPAN.finditer(tail))
    if spans and not re.search(r"\d", tail[spans[-1].end():]):
        return "math", next(group for group in spans[-1].groups() if group is not None)
    return "text", None


def _number_pairs(reference: Answer, answer: Answer) -> list[tuple[str, str]]:
    """(answer, reference) numbers to try: a percentage on one side only matches its number or its fraction."""
    def scaled(item: Answer) -> list[str]:
        import sympy

        if not item.percent:
            return [item.number]
        hundred = sympy.Rational(item.number) * 100 if "." not in item.number else sympy.Float(item.number) * 100
        return [item.number, str(hundred)]

    if reference.percent == answer.percent:
        return [(answer.number, reference.number)]
    return [(a, r) for a in scaled(answer) for r in scaled(reference)]


def _call(verify, text: str, reference: str, tolerance: dict):
    """verify(text, reference, **tolerance); a verifier without Module 9's keyword tolerances is called without."""
    if tolerance:
        try:
            return verify(text, reference, **tolerance)
        except TypeError:
            pass
    return verify(text, reference)


def reward(completion: str, reference: str, verify) -> float | None:
    r"""The reward of ``completion`` against the DeepMath reference ``reference`` (see the module docstring);
    ``verify`` is the learner's ``verify_numeric_answer``. None when the reference cannot be read, or the
    learner's verifier refuses the reference (ValueError)."""
    gold = parse_answer(str(reference))
    if gold is None:
        return None
    completion = normalize_text(str(completion))
    where, content = final_answer(completion)
    answer = parse_answer(content) if content is not None else None
    if gold.number is not None:
        tolerance = {"rel_tol": 0.0, "abs_tol": 0.0} if gold.exact else {}
        try:
            if answer is not None and answer.number is not None:
                return max(float(_call(verify, f"\\boxed{{{mine}}}", theirs, tolerance))
                           for mine, theirs in _number_pairs(gold, answer))
            if answer is None:  # no box the parser reads, or no answer: Module 9's rules on the text itself
                return float(_call(verify, completion, gold.number, tolerance))
        except ValueError:
            return None
    if answer is None and where == "text":
        answer = parse_answer(completion[-MAX_ANSWER_CHARS:])
    if answer is None:
        return 0.0
    from math_verify import verify as equivalent

    try:
        return float(bool(equivalent(list(gold.parsed), list(answer.parsed), timeout_seconds=_main_thread_timeout(5))))
    except Exception:  # noqa: BLE001 - the parser's comparison failed: not shown equal
        return 0.0


def normalize_text(text: str) -> str:
    """A whole completion with Unicode minus signs made ASCII (the verifier reads ASCII numbers only)."""
    return text.replace("\u2212", "-")
