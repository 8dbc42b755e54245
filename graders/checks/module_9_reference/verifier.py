"""Hidden checks of the numeric verifier (verify_detailed, verify_numeric_answer).

The fixed cases below (the seed notebook's, the public rows, hand-picked hidden ones), then draws of the
answer grammar (:mod:`graders.checks.grammar`: every construct the spec admits or refuses, in a box and in a
text, against its own value and a misreading, with references of every legal type and the tolerance's edges),
tagged ``number_formats``; the mutation tool draws the same grammar with another seed
(:data:`graders.checks.grammar.MUTATION_SEED`).
"""

from __future__ import annotations

import numpy as np

from graders.checks.edges import NO_EXTREMES, NO_PADDING, NO_TEXT, NO_TIES, SCALAR_FLOATS, declare
from graders.checks import Case, exercise, hypothesis_cases, st
from graders.checks.grammar import HIDDEN_SEED, grammar_cases
from graders.text import Text
from graders.checks.module_9_reference.harnesses import M, VERIFIER

# ---------------------------------------------------------------------------
# The verifier
# ---------------------------------------------------------------------------
SEED_VERIFIER = [  # the seed notebook's table (a DOUBLE backslash before boxed)
    (r"Final: \\boxed{3/7}", "0.428571", "seed: fraction in a box vs a decimal reference",
     "из ноутбука: дробь в \\boxed{} против десятичного эталонного ответа"),
    ("The reference number 42 is mentioned, but the answer is 41", "42", "seed: the LAST number counts",
     "из ноутбука: считается ПОСЛЕДНЕЕ число"),
    (r"First \\boxed{2}, then corrected: \\boxed{3}", "3", "seed: the LAST box counts",
     "из ноутбука: считается ПОСЛЕДНИЙ \\boxed{}"),
    ("No numerical answer", "5", "seed: no number at all", "из ноутбука: чисел нет вовсе"),
    ("1/0", "0", "seed: zero denominator", "из ноутбука: нулевой знаменатель"),
]
PUBLIC_VERIFIER = [  # rows of the public learner tests
    (r"\boxed{5} no wait \boxed{6}", 6), (r"\boxed{5} so the answer is 6", 5),
    ("I first thought 42, then 40 + 1 = 41", 42), ("Total: 1,234,567 apples", 1234567), ("the pair 1,2", 2),
    (r"$\boxed{ -2/4 }$", "-0.5"), ("about 1.5e3 metres", 1500), (r"\boxed{\boxed{7}}", 7), (r"\boxed{7", 7),
    (r"\boxed{seven}", 7), (r"\boxed{3/0}", 0), (r"\boxed{nan}", 0), ("1e999999", 0), ("", 0),
    (r"\\boxed{12}, check: 12 - 2 = 10", 12), ("so x = 5 - 8 = -3", -3), (r"\boxed{$12$}", 12),
]
PUBLIC_EDGES = {"1e999999": "extremes", "": "zeros_and_empties", "Total: 1,234,567 apples": "number_formats",
                "about 1.5e3 metres": "number_formats", r"$\boxed{ -2/4 }$": "number_formats"}
EXACT = {"rel_tol": 0.0, "abs_tol": 0.0}
WIDE, WIDE_SUM = {"rel_tol": 0.1, "abs_tol": 0.0}, {"rel_tol": 0.1, "abs_tol": 5.0}
PUBLIC_FORMATS = [  # rows of the public VERIFIER_NUMBER_FORMATS table: text, reference, tolerances (one per format)
    (r"\boxed{+7}", 7, {}), ("so x = +2.5", "2.5", {}), (r"\boxed{.75}", "3/4", {}), ("so p = -.5", -0.5, {}),
    (r"\boxed{2.5e-3}", "0.0025", {}), ("the rate is 4E-2", 0.04, {}), ("about 3E+2 metres", 300, {}),
    (r"\boxed{1.5/3}", "1/2", {}), ("the ratio is 0.5/0.25", 2, {}), (r"\boxed{+3/4}", 0.75, {}),
    ("balance: -1,234.5", -1234.5, {}), ("the code is 1,2345", 2345, {}), (r"\boxed{1,2345}", 12345, {}),
    (r"\boxed{- 3}", -3, {}), ("\\boxed{ 3 /\t4 }", 0.75, {}), ("boxed{3} is not a box, 4 is", 4, {}),
    (r"\boxed{\frac{1}{2}}", "1/2", {}), (r"\boxed{1\,234}", 1234, {}), (r"about 1\,234 people", 234, {}),
    (r"\boxed{25\%}", 25, {}), ("a 25% rise", 25, {}), (r"\boxed{5 cm}", 5, {}), ("it is 5 cm long", 5, {}),
    ("the value n-4", 4, {}), ("the ratio 2/0.0", 0, {}), (r"\boxed{-\infty}", 0, {}),
    ("the constant is 1234567.8", 1234567.8, {}), ("we get 0.1", 0.1, EXACT),
    ("total 9007199254740993", 9007199254740993, EXACT), ("total 9007199254740992", 9007199254740993, EXACT),
    (r"\boxed{-12}", np.int64(-12), EXACT), ("so the answer is 42", np.int64(42), {}), ("we get 0.25", np.float64(0.25), {}),
    ("x = 111", 100, WIDE), ("x = 90.5", 100, WIDE), ("x = -90.5", -100, WIDE), ("x = 112", 100, WIDE_SUM),
    ("x = 12.5", 12, {"rel_tol": 0.0, "abs_tol": 0.5}), ("x = 12.5", 12, {"rel_tol": 0.0, "abs_tol": 0.25}),
]
HIDDEN_VERIFIER = [  # (text, reference, label, its Russian)
    (r"so \boxed{3} is wrong; the answer is \boxed{5}", "5", "single backslash boxes, the last wins",
     "\\boxed{} с одной обратной косой чертой: побеждает последний"),
    (r"The answer is \boxed{12}. Check: 12 - 2 = 10", "12", "a single-backslash box beats later numbers",
     "\\boxed{} с одной обратной косой чертой важнее чисел после него"),
    (r"The answer is \\boxed{12}. Check: 12 - 2 = 10", "12", "a double-backslash box beats later numbers",
     "\\boxed{} с двумя обратными косыми чертами важнее чисел после него"),
    (r"\boxed{\frac{1}{2}} or \boxed{{7}}", "7", "nested braces in the last box",
     "вложенные фигурные скобки в последнем \\boxed{}"),
    ("the total is 1,234,567 apples", 1234567, "thousands separators", "разделители тысяч"),
    ("0.1 + 0.2 = 0.30000000000000004", "0.3", "float within tolerance", "float в пределах допуска"),
    ("the answer is 0.3001", "0.3", "outside tolerance", "вне допуска"),
    ("x = 1.5e3", 1500, "scientific notation", "экспоненциальная запись"),
    (r"\boxed{$-3/4$}", "-0.75", "dollar signs inside the box", "знаки доллара внутри \\boxed{}"),
    (r"\boxed{nan}", "1", "NaN is never correct", "NaN никогда не бывает верным ответом"),
    (r"\boxed{\infty}", "1", "infinity in a box", "бесконечность в \\boxed{}"),
    (r"\boxed{1/0}", "0", "a zero denominator in a box", "нулевой знаменатель в \\boxed{}"),
    (r"\boxed{}", "1", "an empty box", "пустой \\boxed{}"),
    (r"\boxed{ 12 } and \boxed{7", "7", "the last box never closes", "последний \\boxed{} не закрыт"),
    (r"\boxed{1,234}", 1234, "thousands separators in a box", "разделители тысяч в \\boxed{}"),
    ("0.428571", "3/7", "a fraction as the reference", "дробь в качестве эталонного ответа"),
    ("we get 0.1", 0.1, "a float reference", "эталонный ответ типа float"),
    ("5-3 leaves 3", 3, "a minus between numbers is an operator", "минус между числами — это оператор"),
    ("1000.0005", 1000, "relative tolerance: 5e-4 <= 1e-6 * 1000", "относительный допуск: 5e-4 <= 1e-6 * 1000"),
    ("0.000002", 0, "absolute tolerance: 2e-6 > 1e-6", "абсолютный допуск: 2e-6 > 1e-6"),
    ("7 " * 50_000 + "8", "8", "a long response (linear time)", "длинный ответ (линейное время)"),
    ("we get -12", "-12", "a negative last number", "отрицательное последнее число"),
    ("we get -12", "12", "a negative last number is not its absolute value",
     "отрицательное последнее число не равно своему модулю"),
    (r"\boxed{$7/2$} so", "3.5", "a dollar-wrapped fraction in a box", "дробь в знаках доллара внутри \\boxed{}"),
    ("0.1003", "0.1", "3e-4 off is outside the default tolerance", "отклонение 3e-4 вне допуска по умолчанию"),
]
HIDDEN_EDGES = {"thousands separators": "number_formats", "scientific notation": "number_formats",
                "a fraction as the reference": "number_formats", "a float reference": "number_formats",
                "an empty box": "zeros_and_empties", "infinity in a box": "extremes",
                "relative tolerance: 5e-4 <= 1e-6 * 1000": "boundaries", "absolute tolerance: 2e-6 > 1e-6": "boundaries"}
# Property texts: space-separated segments (a bare number, a word, or a box holding ONE token, maybe
# unclosed), so every case is decided by the documented rules, not by how numbers run into each other.
NUMBER_TOKENS = ["12", "-3", "3/4", "0.75", "1,234", "1e3", "0", "1000.0004", "7/0"]
WORDS = ["x", "so", "=", "nan", "$", "answer:", "."]
BOX_CONTENTS = ["12", " 12 ", "$-3$", "3/4", "0.75", "1,234", "1e3", "nan", "", "x", "{7}", "-3", "1/0"]
boxes = st.tuples(st.sampled_from([r"\boxed{", r"\\boxed{"]), st.sampled_from(BOX_CONTENTS),
                  st.sampled_from(["}", "}", ""])).map("".join)
texts = st.lists(st.one_of(st.sampled_from(NUMBER_TOKENS), st.sampled_from(WORDS), boxes), max_size=8).map(" ".join)
references = st.sampled_from(["12", "-3", "0.75", "3/4", "1234", "1000", 0, 12, 1e3])


VERIFIER_EDGES = declare(
    "number_formats", "zeros_and_empties", "extremes", "boundaries", "python_types",
    ties_and_near_ties="one number is compared with one reference: the tolerance edge is boundaries",
    large_padding=NO_PADDING, dtypes="str, int and float references are answer formats (number_formats)",
    shapes="one answer text and one scalar reference: no array, batch or group to shape")


def _verifier_cases():
    for text, reference, label, russian in SEED_VERIFIER:
        yield Case(args=(text, reference), label=Text(label, russian), hidden=False)
    for text, reference in PUBLIC_VERIFIER:
        yield Case(args=(text, reference), label=Text("public test row", "строка открытого теста"), hidden=False,
                   edge=PUBLIC_EDGES.get(text, ()))
    for text, reference, tolerances in PUBLIC_FORMATS:
        edges = ("number_formats", "boundaries") if tolerances and tolerances is not EXACT else ("number_formats",)
        edges += ("python_types",) if isinstance(reference, np.generic) else ()
        yield Case(args=(text, reference), kwargs=dict(tolerances), hidden=False, edge=edges,
                   label=Text("public test row", "строка открытого теста"))
    for text, reference, label, russian in HIDDEN_VERIFIER:
        yield Case(args=(text, reference), label=Text(label, russian), edge=HIDDEN_EDGES.get(label, ()))
    yield Case(args=("0.000002", 0), kwargs={"abs_tol": 1e-5}, label=Text("abs_tol is passed through", "abs_tol передаётся дальше"))
    yield Case(args=("3.14", "3.14159"), kwargs={"rel_tol": 1e-3}, label=Text("rel_tol is passed through", "rel_tol передаётся дальше"))
    yield Case(args=("12", 12.5), kwargs={"rel_tol": 0.0, "abs_tol": 0.5}, edge="boundaries", label=Text("tolerance boundary is inclusive", "граница допуска включается"))
    yield Case(args=("x = 1e309", "1e309"), edge="extremes", hidden=False,
               label=Text("public: 1e309 overflows a float but is read exactly: correct",
                          "открытый тест: 1e309 переполняет float, но читается точно: верно"))
    yield Case(args=("12", "twelve"), raises=ValueError, label=Text("a reference without a number is refused", "эталонный ответ без числа отклоняется"), hidden=False)
    yield Case(args=("12", "1/0"), raises=ValueError, label=Text("a reference with a zero denominator is refused", "эталонный ответ с нулевым знаменателем отклоняется"))
    yield Case(args=("12", float("nan")), raises=ValueError, hidden=False, label=Text("a NaN reference is refused", "эталонный ответ NaN отклоняется"))
    yield Case(args=("1", True), raises=ValueError, label=Text("a bool reference is refused", "эталонный ответ типа bool отклоняется"))
    yield Case(args=("12", None), raises=ValueError,
               label=Text("a reference that is neither text nor a number is refused", "эталонный ответ, не текст и не число, отклоняется"))
    yield Case(args=("12", 12), kwargs={"rel_tol": -1e-6}, raises=ValueError, label=Text("a negative rel_tol is refused", "отрицательный rel_tol отклоняется"), hidden=False)
    yield from hypothesis_cases(st.tuples(texts, references), count=30, seed=9_300,
                                to_case=lambda tr: Case(args=tr))
    answers = st.integers(min_value=-10_000, max_value=10_000)
    pairs = st.one_of(answers.map(lambda a: (a, a)), st.tuples(answers, answers))  # right and wrong answers
    yield from hypothesis_cases(pairs, count=12, seed=9_301,
                                to_case=lambda ab: Case(args=(f"we get \\\\boxed{{{ab[0]}}}", str(ab[1]))))
    yield from grammar_cases(per_form=2, seed=HIDDEN_SEED)  # two of every construct's forms and targets


@exercise(f"{M}.verify_detailed", 
          edges=VERIFIER_EDGES,
          points=2)
def _verify_detailed():
    # The catalogued mistakes of this exercise are in its fields (status, extracted) and in the decision
    # (first box, first number, exact equality); verify_numeric_answer is graded with the reference's
    # verify_detailed, so a decision mistake made here costs points here only.
    yield from _verifier_cases()


@exercise(f"{M}.verify_numeric_answer", 
          edges=VERIFIER_EDGES,
          points=3, call=VERIFIER)
def _verify_numeric_answer():
    yield from _verifier_cases()
