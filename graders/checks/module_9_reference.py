"""Hidden checks of module_9_reference (see graders/checks/__init__.py for the API).

One spec per exercise: the seed notebook's cases and the rows of the public
learner tests (``hidden=False``: the learner has seen them), hidden fixed cases
aimed at the edge cases and at every catalogued misconception
(``graders/misconceptions/module_9_reference/``), ValueError cases, and
Hypothesis cases drawn with a fixed seed.

Exercises that build on another exercise (the three token-weight reductions on
``group_relative_advantages``, ``expected_draws_for_informative_groups`` on
``informative_group_probability``) run under the :func:`with_trusted_dependencies`
harness, and ``verify_numeric_answer`` (which may be ``verify_detailed(...).accuracy``)
under :func:`with_trusted_verifier`, so a mistake is graded (and named) once, on its
own exercise.
"""

from __future__ import annotations

import math

import numpy as np

from graders.checks import Case, Harness, exercise, hypothesis_cases, reference_definitions, st
from graders.text import Text

M = "module_9_reference"


# ---------------------------------------------------------------------------
# The harness of dependent exercises
# ---------------------------------------------------------------------------
def with_trusted_dependencies(fn, learner, starter, *args, **kwargs):
    """Call ``fn`` while the learner module's group_relative_advantages and
    informative_group_probability are replaced by trusted copies of the formulas
    their docstrings state (restored afterwards)."""
    import math
    import numbers

    import numpy as np

    def real(value, name, low=0.0, high=math.inf):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
        if not low <= value <= high:
            raise ValueError(f"{name} must lie in [{low}, {high}], got {value!r}")
        return float(value)

    def integer(value, name, minimum):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        return int(value)

    def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
        try:
            r = np.array(rewards, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError("rewards must be numeric") from error
        if r.ndim not in (1, 2) or r.shape[-1] == 0 or not np.all(np.isfinite(r)):
            raise ValueError(f"rewards must be finite, (G,) or (num_groups, G) with G >= 1, got {r.shape}")
        eps, ddof = real(eps, "eps"), integer(ddof, "ddof", 0)
        if scale and ddof >= r.shape[-1]:
            raise ValueError(f"ddof must be smaller than the group size {r.shape[-1]}")
        all_equal = r.max(axis=-1, keepdims=True) == r.min(axis=-1, keepdims=True)
        centred = np.where(all_equal, 0.0, r - r.mean(axis=-1, keepdims=True))
        if not scale:
            return centred
        std = r.std(axis=-1, ddof=ddof, keepdims=True)
        return np.divide(centred, std + eps, out=np.zeros_like(centred), where=~all_equal)

    def informative_group_probability(p, group_size):
        p, group_size = real(p, "p", 0.0, 1.0), integer(group_size, "group_size", 1)
        if group_size == 1:
            return 0.0
        small = min(p, 1.0 - p)
        return max(0.0, -math.expm1(group_size * math.log1p(-small)) - small ** group_size)

    trusted = {"group_relative_advantages": group_relative_advantages,
               "informative_group_probability": informative_group_probability}
    saved = {name: vars(learner)[name] for name in trusted if name in vars(learner)}
    for name, function in trusted.items():
        setattr(learner, name, function)
    try:
        return fn(*args, **kwargs)
    finally:
        for name in trusted:
            if name in saved:
                setattr(learner, name, saved[name])
            elif hasattr(learner, name):
                delattr(learner, name)


TRUSTED = Harness(with_trusted_dependencies, torch=False)


def with_trusted_verifier(fn, learner, starter, *args, **kwargs):
    """Call ``fn`` while the learner module's verify_detailed is the reference's, run from this harness's
    prelude (restored afterwards): verify_numeric_answer, which may be verify_detailed(...).accuracy, is
    graded on its own, and a mistake in verify_detailed costs points on verify_detailed only."""
    saved = vars(learner).get("verify_detailed")
    learner.verify_detailed = verify_detailed  # noqa: F821 - defined by the prelude
    try:
        return fn(*args, **kwargs)
    finally:
        if saved is not None:
            learner.verify_detailed = saved
        else:
            del learner.verify_detailed


TRUSTED_VERIFIER = Harness(with_trusted_verifier, torch=False, prelude=reference_definitions(
    "module_09/module_9_reference.py", ("_real", "_last_box", "_number_regex", "_parse_number", "verify_detailed"),
    """
import math
import numbers
import re
from fractions import Fraction


class VerifierResult:  # the trusted copy's result (a plain class: a harness's source has no module to hold a dataclass)
    def __init__(self, reward, accuracy, status, extracted):
        self.reward, self.accuracy, self.status, self.extracted = reward, accuracy, status, extracted
"""))


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
# Property texts: space-separated segments (a bare number, a word, or a box holding ONE token, maybe
# unclosed), so every case is decided by the documented rules, not by how numbers run into each other.
NUMBER_TOKENS = ["12", "-3", "3/4", "0.75", "1,234", "1e3", "0", "1000.0004", "7/0"]
WORDS = ["x", "so", "=", "nan", "$", "answer:", "."]
BOX_CONTENTS = ["12", " 12 ", "$-3$", "3/4", "0.75", "1,234", "1e3", "nan", "", "x", "{7}", "-3", "1/0"]
boxes = st.tuples(st.sampled_from([r"\boxed{", r"\\boxed{"]), st.sampled_from(BOX_CONTENTS),
                  st.sampled_from(["}", "}", ""])).map("".join)
texts = st.lists(st.one_of(st.sampled_from(NUMBER_TOKENS), st.sampled_from(WORDS), boxes), max_size=8).map(" ".join)
references = st.sampled_from(["12", "-3", "0.75", "3/4", "1234", "1000", 0, 12, 1e3])


def _verifier_cases():
    for text, reference, label, russian in SEED_VERIFIER:
        yield Case(args=(text, reference), label=Text(label, russian), hidden=False)
    for text, reference in PUBLIC_VERIFIER:
        yield Case(args=(text, reference), label=Text("public test row", "строка открытого теста"), hidden=False)
    for text, reference, label, russian in HIDDEN_VERIFIER:
        yield Case(args=(text, reference), label=Text(label, russian))
    yield Case(args=("0.000002", 0), kwargs={"abs_tol": 1e-5}, label=Text("abs_tol is passed through", "abs_tol передаётся дальше"))
    yield Case(args=("3.14", "3.14159"), kwargs={"rel_tol": 1e-3}, label=Text("rel_tol is passed through", "rel_tol передаётся дальше"))
    yield Case(args=("12", 12.5), kwargs={"rel_tol": 0.0, "abs_tol": 0.5}, label=Text("tolerance boundary is inclusive", "граница допуска включается"))
    yield Case(args=("12", "twelve"), raises=ValueError, label=Text("a reference without a number is refused", "эталонный ответ без числа отклоняется"))
    yield Case(args=("12", "1/0"), raises=ValueError, label=Text("a reference with a zero denominator is refused", "эталонный ответ с нулевым знаменателем отклоняется"))
    yield Case(args=("12", float("nan")), raises=ValueError, label=Text("a NaN reference is refused", "эталонный ответ NaN отклоняется"))
    yield Case(args=("12", 12), kwargs={"rel_tol": -1e-6}, raises=ValueError, label=Text("a negative rel_tol is refused", "отрицательный rel_tol отклоняется"))
    yield from hypothesis_cases(st.tuples(texts, references), count=30, seed=9_300,
                                to_case=lambda tr: Case(args=tr))
    answers = st.integers(min_value=-10_000, max_value=10_000)
    pairs = st.one_of(answers.map(lambda a: (a, a)), st.tuples(answers, answers))  # right and wrong answers
    yield from hypothesis_cases(pairs, count=12, seed=9_301,
                                to_case=lambda ab: Case(args=(f"we get \\\\boxed{{{ab[0]}}}", str(ab[1]))))


@exercise(f"{M}.verify_detailed", points=2)
def _verify_detailed():
    # The catalogued mistakes of this exercise are in its fields (status, extracted) and in the decision
    # (first box, first number, exact equality); verify_numeric_answer is graded with the reference's
    # verify_detailed, so a decision mistake made here costs points here only.
    yield from _verifier_cases()


@exercise(f"{M}.verify_numeric_answer", points=3, call=TRUSTED_VERIFIER)
def _verify_numeric_answer():
    yield from _verifier_cases()


# ---------------------------------------------------------------------------
# Informative groups
# ---------------------------------------------------------------------------
SEED_P = (0.01, 0.10, 0.50, 0.90, 0.99)
probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)


@exercise(f"{M}.informative_group_probability", points=2)
def _informative_group_probability():
    for p in SEED_P:
        yield Case(args=(p, 8), label=Text(f"seed table p={p}, G=8", f"таблица из ноутбука: p={p}, G=8"), hidden=False)
    for p, group_size in ((0.5, 2), (0.5, 8), (0.1, 2), (0.0, 4), (1.0, 4), (0.3, 1)):
        yield Case(args=(p, group_size), label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(0.5, 1), label=Text("a group of one is never informative", "группа из одного ответа никогда не информативна"))
    yield Case(args=(0.2, 3), label=Text("G=3: 1 - 0.2^3 - 0.8^3", "G=3: 1 - 0.2^3 - 0.8^3"))
    yield Case(args=(0.7, 5), label=Text("p above 1/2", "p больше 1/2"))
    yield Case(args=(1e-9, 16), label=Text("tiny p", "очень малое p"))
    for p, group_size, label, russian in ((1.5, 4, "p above 1", "p больше 1 отклоняется"),
                                           (-0.1, 4, "negative p", "отрицательное p отклоняется"),
                                           (float("nan"), 4, "NaN p", "p = NaN отклоняется"),
                                           (0.5, 0, "group_size 0", "group_size 0 отклоняется"),
                                           (0.5, -2, "negative group_size", "отрицательный group_size отклоняется")):
        yield Case(args=(p, group_size), raises=ValueError, label=Text(f"{label} is refused", russian))
    yield from hypothesis_cases(st.tuples(probabilities, st.integers(min_value=1, max_value=64)), count=20,
                                seed=9_302, to_case=lambda pg: Case(args=pg))


@exercise(f"{M}.expected_draws_for_informative_groups", points=1, call=TRUSTED)
def _expected_draws_for_informative_groups():
    for p in SEED_P:
        yield Case(args=(100, p, 8), label=Text(f"seed table: 100 informative prompts, p={p}, G=8", f"таблица из ноутбука: 100 информативных промптов, p={p}, G=8"), hidden=False)
    for wanted, p, group_size in ((100, 0.5, 2), (100, 0.5, 8), (5, 0.0, 8)):
        yield Case(args=(wanted, p, group_size), label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(1, 0.5, 2), label=Text("one informative group at P_info = 1/2", "одна информативная группа при P_info = 1/2"))
    yield Case(args=(3, 0.25, 4), label=Text("B=3, p=0.25, G=4", "B=3, p=0.25, G=4"))
    for wanted, p, group_size in ((0, 0.5, 8), (0, 1.0, 8)):
        yield Case(args=(wanted, p, group_size), label=Text("public test row: B = 0 needs no draws", "строка открытого теста: B = 0, сэмплировать группы не нужно"), hidden=False)
    yield Case(args=(0, 0.0, 8), label=Text("B = 0 needs no draws even when P_info = 0 (p = 0)", "B = 0: сэмплировать группы не нужно даже при P_info = 0 (p = 0)"))
    yield Case(args=(0, 0.3, 1), label=Text("B = 0 needs no draws even with a group of one", "B = 0: сэмплировать группы не нужно даже при группе из одного ответа"))
    yield Case(args=(7, 0.3, 1), label=Text("a group of one never helps: inf", "группа из одного ответа никогда не поможет: inf"))
    yield Case(args=(-1, 0.5, 8), raises=ValueError, label=Text("negative num_informative is refused", "отрицательный num_informative отклоняется"))
    yield Case(args=(10, 1.2, 8), raises=ValueError, label=Text("p above 1 is refused", "p больше 1 отклоняется"))
    yield Case(args=(10, 0.5, 0), raises=ValueError, label=Text("group_size 0 is refused", "group_size 0 отклоняется"))
    not_tiny = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(1e-3, 1.0 - 1e-3))  # no 1e97 draws
    yield from hypothesis_cases(st.tuples(st.integers(0, 1000), not_tiny, st.integers(1, 32)), count=15,
                                seed=9_304, to_case=lambda bpg: Case(args=bpg))


# ---------------------------------------------------------------------------
# Advantages
# ---------------------------------------------------------------------------
SEED_REWARDS = np.array([1.0, 1.0, 0.0, 0.0])


def _rectangle(groups):
    width = min(len(g) for g in groups)
    return np.array([g[:width] for g in groups])


@exercise(f"{M}.group_relative_advantages", points=3, rtol=1e-5, atol=1e-8, float_trap=True)
def _group_relative_advantages():
    yield Case(args=(SEED_REWARDS,), kwargs={"scale": True}, label=Text("seed table, standardised", "таблица из ноутбука, стандартизация"), hidden=False)
    yield Case(args=(SEED_REWARDS,), kwargs={"scale": False}, label=Text("seed table, centred", "таблица из ноутбука, только центрирование"), hidden=False)
    for group_size in (2, 3, 4, 8, 16):
        yield Case(args=(np.eye(1, group_size)[0],), label=Text(f"public: one success in G={group_size}", f"открытый тест: один успех при G={group_size}"), hidden=False)
    yield Case(args=(np.array([[0.7, 0.7, 0.7], [1.0, 0.0, 0.0]]),), kwargs={"eps": 0.0},
               label=Text("public: an all-equal group gives zeros, eps = 0", "открытый тест: группа равных наград даёт нули, eps = 0"), hidden=False)
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5]]),), label=Text("two groups, one all-equal", "две группы, в одной все награды равны"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]]),), label=Text("two groups of 4", "две группы по 4"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]]),), kwargs={"scale": False},
               label=Text("two groups of 4, centred", "две группы по 4, только центрирование"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0]]),),
               label=Text("three groups of 3 (square)", "три группы по 3 (квадратная матрица)"))
    yield Case(args=([0.2, 0.9, 0.4],), kwargs={"ddof": 1}, label=Text("ddof=1 on request (a list input)", "ddof=1 по запросу (вход — список)"))
    yield Case(args=(np.array([3.0, 1.0]),), kwargs={"eps": 0.0}, label=Text("eps = 0", "eps = 0"))
    yield Case(args=(np.array([3.0, 1.0]),), kwargs={"eps": 0.5}, label=Text("a large eps", "большое eps"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]),), kwargs={"eps": 0.5}, label=Text("public: eps = 0.5 is added to the std", "открытый тест: eps = 0.5 прибавляется к std"), hidden=False)
    yield Case(args=(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]]),),
               label=Text("public: two groups, each standardised by its own std", "открытый тест: две группы, каждая стандартизуется своим std"), hidden=False)
    yield Case(args=(np.array([2.0, 2.0, 2.0]),), label=Text("an all-equal group gives zeros", "группа равных наград даёт нули"))
    yield Case(args=(np.zeros((2, 0)),), raises=ValueError, label=Text("an empty group is refused", "пустая группа отклоняется"))
    yield Case(args=(np.zeros((2, 2, 2)),), raises=ValueError, label=Text("3-D rewards are refused", "3-мерные награды отклоняются"))
    yield Case(args=(np.array([1.0, np.nan]),), raises=ValueError, label=Text("NaN rewards are refused", "награды NaN отклоняются"))
    yield Case(args=(np.array([1.0, 0.0]),), kwargs={"ddof": 2}, raises=ValueError, label=Text("ddof >= G is refused", "ddof >= G отклоняется"))
    yield Case(args=(np.array([1.0, 0.0]),), kwargs={"eps": -1.0}, raises=ValueError,
               label=Text("negative eps is refused", "отрицательное eps отклоняется"))
    groups = st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=8)
    yield from hypothesis_cases(st.lists(groups, min_size=1, max_size=3), count=20,
                                seed=9_303, to_case=lambda g: Case(args=(_rectangle(g),)))
    real_groups = st.lists(st.floats(-5.0, 5.0, allow_subnormal=False), min_size=2, max_size=6)
    yield from hypothesis_cases(st.tuples(real_groups, st.booleans()), count=10, seed=9_305,
                                to_case=lambda gs: Case(args=(np.array(gs[0]),), kwargs={"scale": gs[1]}))


@exercise(f"{M}.leave_one_out_baseline", points=2, rtol=1e-6, atol=1e-9)
def _leave_one_out_baseline():
    yield Case(args=([1.0, 2.0, 3.0, 4.0],), label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(np.array([[1.0, 2.0], [3.0, 5.0]]),), label=Text("public: two groups of 2", "открытый тест: две группы по 2"), hidden=False)
    yield Case(args=(SEED_REWARDS,), label=Text("the seed group [1, 1, 0, 0]", "группа из ноутбука [1, 1, 0, 0]"))
    yield Case(args=(np.array([1.0, 0.0]),), label=Text("G = 2: the other reward", "G = 2: награда другого ответа"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 6.0]]),), label=Text("two groups", "две группы"))
    yield Case(args=(np.array([[1.0, 1.0], [0.0, 1.0], [5.0, -5.0]]),), label=Text("three groups of 2", "три группы по 2"))
    yield Case(args=([1.0],), raises=ValueError, label=Text("G = 1 has no other answers", "при G = 1 других ответов нет"))
    yield Case(args=(np.zeros((2, 2, 2)),), raises=ValueError, label=Text("3-D rewards are refused", "3-мерные награды отклоняются"))
    yield Case(args=(np.array([1.0, np.inf]),), raises=ValueError, label=Text("infinite rewards are refused", "бесконечные награды отклоняются"))
    rows = st.lists(st.floats(-10.0, 10.0, allow_subnormal=False), min_size=2, max_size=6)
    yield from hypothesis_cases(st.lists(rows, min_size=1, max_size=3), count=15, seed=9_306,
                                to_case=lambda g: Case(args=(_rectangle(g),)))


# ---------------------------------------------------------------------------
# Clipping
# ---------------------------------------------------------------------------
SEED_RATIOS = np.array([1.35, 0.85, 1.10, 0.70])
SEED_ADVANTAGES = np.array([1.0, 1.0, -1.0, -1.0]) * (0.5 / (0.5 + 1e-6))
BOUNDARY_RATIOS = np.array([0.5, 0.75, 1.0, 1.25, 1.5, 2.0])  # exact in binary: 1 +- 0.25, 1 +- 0.5
ratios = st.integers(0, 299).map(lambda i: i / 100 + 0.005)  # never on a clip boundary: float32 keeps the side
signed = st.integers(-20, 20).map(lambda i: i / 10)
eps_values = st.sampled_from([0.0, 0.1, 0.2, 0.28, 0.5])
clip_inputs = st.tuples(st.lists(st.tuples(ratios, signed), min_size=1, max_size=8), eps_values, eps_values)


def _clip_case(drawn):
    pairs, eps_low, eps_high = drawn
    rho, advantage = np.array(pairs).T
    return Case(args=(rho, advantage, eps_low, eps_high))


def _clip_cases():
    yield Case(args=(SEED_RATIOS, SEED_ADVANTAGES, 0.2, 0.2), label=Text("seed table", "таблица из ноутбука"), hidden=False)
    yield Case(args=(SEED_RATIOS, np.array([1.0, 1.0, -1.0, -1.0]), 0.2, 0.2), label=Text("public test row", "строка открытого теста"), hidden=False)
    for ratio, advantage, eps_low, eps_high in (
            ([0.5, 1.5, 0.5, 1.5], [1.0, 1.0, -1.0, -1.0], 0.2, 0.2),
            ([0.75, 1.25, 1.25, 0.75], [-1.0, 1.0, -1.0, 1.0], 0.25, 0.25),
            ([1.25, 0.75], [1.0, -1.0], 0.2, 0.28)):
        yield Case(args=(np.array(ratio), np.array(advantage), eps_low, eps_high), label=Text("public test row: CLIP_ROWS", "строка открытого теста: CLIP_ROWS"), hidden=False)
    yield Case(args=(SEED_RATIOS, np.array([1.0, 1.0, -1.0, -1.0])), kwargs={"eps_low": 0.2, "eps_high": 0.28},
               label=Text("clip-higher: eps_high = 0.28 (DAPO)", "асимметричный клиппинг (clip-higher): eps_high = 0.28 (DAPO)"))
    yield Case(args=(np.array([0.6, 0.9, 1.15, 1.3, 1.5]), np.array([-1.0, -1.0, 1.0, 1.0, 1.0]), 0.3, 0.1),
               label=Text("eps_low > eps_high", "eps_low > eps_high"))
    yield Case(args=(np.array([0.5, 0.9, 1.4, 3.0]), -2.0), kwargs={"eps_low": 0.2, "eps_high": 0.28},
               label=Text("a scalar negative advantage broadcasts", "бродкастинг скалярного отрицательного преимущества"))
    yield Case(args=(np.array([0.5, 0.9, 1.4, 3.0]), 0.5), label=Text("a scalar positive advantage broadcasts", "бродкастинг скалярного положительного преимущества"))
    yield Case(args=(np.array([[0.5, 1.5], [1.1, 0.9]]), np.array([[1.0], [-1.0]]), 0.25, 0.25),
               label=Text("(N, T) ratios with (N, 1) advantages", "отношения (N, T) и преимущества (N, 1)"))
    yield Case(args=(np.array([0.3, 1.0, 2.5]), np.zeros(3)), label=Text("zero advantages", "нулевые преимущества"))
    yield Case(args=(BOUNDARY_RATIOS, np.ones(6), 0.25, 0.5), label=Text("ratios on the clip boundaries, A > 0", "отношения на границах клиппинга, A > 0"))
    yield Case(args=(BOUNDARY_RATIOS, -np.ones(6), 0.25, 0.5), label=Text("ratios on the clip boundaries, A < 0", "отношения на границах клиппинга, A < 0"))
    yield Case(args=(BOUNDARY_RATIOS, -np.ones(6), 0.5, 0.25), label=Text("boundaries with eps_low = 0.5, A < 0", "границы при eps_low = 0.5, A < 0"))
    yield Case(args=(np.array([-0.1, 1.0]), np.ones(2)), raises=ValueError, label=Text("negative ratios are refused", "отрицательные отношения отклоняются"))
    yield Case(args=(np.ones(3), np.ones(2)), raises=ValueError, label=Text("shapes that do not broadcast are refused", "формы, несовместимые при бродкастинге, отклоняются"))
    yield Case(args=(np.ones(2), np.ones(2), -0.1, 0.2), raises=ValueError, label=Text("negative eps_low is refused", "отрицательный eps_low отклоняется"))
    yield Case(args=(np.ones(2), np.ones(2), 0.2, float("nan")), raises=ValueError, label=Text("NaN eps_high is refused", "eps_high = NaN отклоняется"))
    yield from hypothesis_cases(clip_inputs, count=20, seed=9_307, to_case=_clip_case)


@exercise(f"{M}.clipped_surrogate_terms", points=3)
def _clipped_surrogate_terms():
    yield from _clip_cases()


@exercise(f"{M}.clip_activity", points=2)
def _clip_activity():
    yield from _clip_cases()


@exercise(f"{M}.gspo_sequence_ratios", points=2, rtol=1e-6, atol=1e-9)
def _gspo_sequence_ratios():
    new = np.array([[-1.0, -2.0, -9.0], [-0.5, -0.5, -0.5]])
    old = np.array([[-1.5, -2.5, -1.0], [-0.5, -0.5, -0.5]])
    yield Case(args=(new, old, np.array([[1, 1, 0], [1, 1, 1]])), label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(np.array([[-1.0, -3.0]]), np.array([[-2.0, -1.0]]), np.array([[1, 1]])),
               label=Text("public: log-ratios +1 and -2", "открытый тест: логарифмы отношений +1 и -2"), hidden=False)
    yield Case(args=(np.array([[-1.0, -3.0, -2.0, -0.5]]), np.array([[-2.0, -1.0, -2.5, -0.5]]), np.ones((1, 4))),
               label=Text("geometric, not arithmetic, mean of token ratios", "геометрическое, а не арифметическое среднее отношений по токенам"))
    yield Case(args=(np.array([[-0.2, -1.0, -np.inf], [-0.4, -np.inf, -np.inf]]),
                     np.array([[-0.5, -0.7, -np.inf], [-0.1, -np.inf, -np.inf]]),
                     np.array([[True, True, False], [True, False, False]])),
               label=Text("-inf padding under a boolean mask", "паддинг -inf под булевой маской"))
    yield Case(args=(np.array([[-1.0, -1.0], [-2.0, -1.0]]), np.array([[-1.5, -1.5], [-1.0, -3.0]]),
                     np.array([[0.0, 0.0], [1.0, 1.0]])), label=Text("a response with no active token has ratio 1", "у ответа без активных токенов отношение равно 1"))
    yield Case(args=(np.array([[-0.3, -0.2, -0.9, -0.4]]), np.array([[-0.6, -0.1, -0.2, -2.0]]),
                     np.array([[1.0, 1.0, 1.0, 0.0]])), label=Text("the padding holds a finite log-prob", "в паддинге конечный логарифм вероятности"))
    yield Case(args=(np.zeros((2, 3)), np.zeros((2, 2)), np.ones((2, 3))), raises=ValueError,
               label=Text("mismatched shapes are refused", "несовпадающие формы отклоняются"))
    yield Case(args=(np.zeros(3), np.zeros(3), np.ones(3)), raises=ValueError, label=Text("1-D inputs are refused", "1-мерные входы отклоняются"))
    yield Case(args=(np.zeros((1, 2)), np.zeros((1, 2)), np.array([[1.0, 2.0]])), raises=ValueError,
               label=Text("a mask entry of 2 is refused", "значение маски 2 отклоняется"))
    yield Case(args=(np.array([[-np.inf, 0.0]]), np.zeros((1, 2)), np.ones((1, 2))), raises=ValueError,
               label=Text("-inf on an active token is refused", "-inf на активном токене отклоняется"))

    def to_case(drawn):
        rows, width = drawn
        rng = np.random.default_rng(len(rows) * 31 + width)
        new = rng.normal(-1.0, 0.5, (len(rows), width))
        old = new + rng.normal(0.0, 0.3, (len(rows), width))
        mask = (np.arange(width)[None, :] < np.array(rows)[:, None]).astype(float)
        return Case(args=(new, old, mask))
    yield from hypothesis_cases(st.tuples(st.lists(st.integers(0, 6), min_size=1, max_size=4), st.integers(1, 6)),
                                count=15, seed=9_308, to_case=to_case)


# ---------------------------------------------------------------------------
# Loss reductions
# ---------------------------------------------------------------------------
SEED_GROUP, SEED_LENGTHS = np.array([1.0, 0.0, 1.0]), [2, 5, 8]
reduction_inputs = st.lists(st.tuples(st.sampled_from([0.0, 0.25, 1.0]), st.integers(1, 12)), min_size=2, max_size=6)


def _reduction_case(drawn, *extra):
    rewards, lengths = zip(*drawn)
    return Case(args=(np.array(rewards), list(lengths), *extra))


def _reduction_errors(*extra):
    yield Case(args=(SEED_GROUP, [3, 0, 2], *extra), raises=ValueError, label=Text("a zero length is refused", "нулевая длина отклоняется"))
    yield Case(args=(SEED_GROUP, [3, -1, 2], *extra), raises=ValueError, label=Text("a negative length is refused", "отрицательная длина отклоняется"))
    yield Case(args=(SEED_GROUP, [3, 2], *extra), raises=ValueError, label=Text("fewer lengths than rewards are refused", "длин меньше, чем наград: отклоняется"))
    yield Case(args=(np.array([[1.0, 0.0], [0.0, 1.0]]), [2, 3], *extra), raises=ValueError,
               label=Text("2-D rewards are refused (one group)", "2-мерные награды отклоняются (группа одна)"))


def _standardised_reduction_cases(seed):
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), label=Text("seed table: rewards [1, 0, 1], lengths [2, 5, 8]", "таблица из ноутбука: награды [1, 0, 1], длины [2, 5, 8]"),
               hidden=False)
    yield Case(args=(np.array([1.0, 0.0, 0.0, 0.0]), [3, 3, 3, 3]), label=Text("equal lengths", "равные длины"))
    yield Case(args=(np.array([1.0, 0.0, 0.0, 1.0]), [1, 10, 4, 7]), label=Text("lengths 1 to 10", "длины от 1 до 10"))
    yield Case(args=(np.array([0.5, 0.5, 0.5]), [2, 4, 6]), label=Text("an all-equal group gets zero weights", "группа равных наград получает нулевые веса"))
    yield Case(args=(np.array([1.0, 0.0]), [200, 50]), label=Text("long responses: small weights", "длинные ответы: малые веса"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]), [4, 2, 9]), kwargs={"eps": 0.5}, label=Text("a large eps", "большое eps"))
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), kwargs={"eps": 0.5}, label=Text("public: the seed group with eps = 0.5", "открытый тест: группа из ноутбука при eps = 0.5"), hidden=False)
    yield from _reduction_errors()
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), kwargs={"eps": -1.0}, raises=ValueError,
               label=Text("negative eps is refused", "отрицательное eps отклоняется"))
    yield from hypothesis_cases(reduction_inputs, count=15, seed=seed, to_case=_reduction_case)


@exercise(f"{M}.original_grpo_token_weights", points=2, call=TRUSTED, atol=1e-10)
def _original_grpo_token_weights():
    yield from _standardised_reduction_cases(9_309)


@exercise(f"{M}.dapo_token_weights", points=2, call=TRUSTED, atol=1e-10)
def _dapo_token_weights():
    yield from _standardised_reduction_cases(9_310)


@exercise(f"{M}.dr_grpo_token_weights", points=2, call=TRUSTED, atol=1e-10)
def _dr_grpo_token_weights():
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 8), label=Text("seed table: fixed_length = 8", "таблица из ноутбука: fixed_length = 8"), hidden=False)
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 16), label=Text("a budget above the longest response", "бюджет больше самого длинного ответа"))
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), kwargs={"fixed_length": 12},
               label=Text("public: fixed_length 12 above the longest response", "открытый тест: fixed_length 12 больше самого длинного ответа"), hidden=False)
    yield Case(args=(np.array([1.0, 0.0, 0.0, 0.0]), [3, 3, 3, 3], 3), label=Text("equal lengths, budget = length", "равные длины, бюджет = длина"))
    yield Case(args=(np.array([1.0, 0.0, 0.0, 1.0]), [1, 10, 4, 7], 12), label=Text("lengths 1 to 10, budget 12", "длины от 1 до 10, бюджет 12"))
    yield Case(args=(np.array([0.2, 0.9]), [5, 2], 5), label=Text("non-binary rewards", "небинарные награды"))
    yield Case(args=(np.array([0.5, 0.5, 0.5]), [2, 4, 6], 6), label=Text("an all-equal group gets zero weights", "группа равных наград получает нулевые веса"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]), [4, 2, 9], 9), kwargs={"eps": 0.5}, label=Text("eps is unused", "eps не используется"))
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 7), raises=ValueError,
               label=Text("public: fixed_length below the longest response is refused", "открытый тест: fixed_length меньше самого длинного ответа отклоняется"), hidden=False)
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 0), raises=ValueError, label=Text("fixed_length 0 is refused", "fixed_length 0 отклоняется"))
    yield from _reduction_errors(8)
    yield from hypothesis_cases(st.tuples(reduction_inputs, st.integers(0, 5)), count=15, seed=9_311,
                                to_case=lambda d: _reduction_case(d[0], max(n for _, n in d[0]) + d[1]))


def _weights(values_and_lengths):
    return [np.full(length, value) for value, length in values_and_lengths]


A = math.sqrt(2) / 2  # the seed group's standardised advantages are [A, -2A, A] (up to eps)
SEED_WEIGHTS = {  # each name in every language (as it reads in a label)
    Text("original GRPO", "исходного GRPO"): _weights([(A / 6, 2), (-2 * A / 15, 5), (A / 24, 8)]),
    Text("Dr. GRPO", "Dr. GRPO"): _weights([(1 / 72, 2), (-2 / 72, 5), (1 / 72, 8)]),
    Text("DAPO", "DAPO"): _weights([(A / 15, 2), (-2 * A / 15, 5), (A / 15, 8)]),
}
HIDDEN_WEIGHTS = {  # each name (the case's label) in every language
    Text("one-token responses", "ответы из одного токена"): [np.array([0.5]), np.array([-0.25]), np.array([-0.25])],
    Text("unequal entries in one response", "разные веса внутри одного ответа"): [np.array([0.1, -0.3, 0.2]), np.array([0.05, 0.05])],
    Text("lists instead of arrays", "списки вместо массивов"): [[0.2, 0.2, 0.2, 0.2], [-0.4, -0.4]],
    Text("an empty response", "пустой ответ"): [np.array([0.3, 0.3]), np.zeros(0), np.array([-0.1])],
    Text("equal lengths", "равные длины"): [np.array([0.25, 0.25]), np.array([-0.25, -0.25])],
}
weight_lists = st.lists(st.lists(st.floats(-1.0, 1.0, allow_subnormal=False), min_size=1, max_size=6),
                        min_size=1, max_size=5)


def _token_weight_cases(seed):
    for name, weights in SEED_WEIGHTS.items():
        yield Case(args=(weights,), label=Text(f"seed table: {name} weights", f"таблица из ноутбука: веса {name.in_('ru')}"), hidden=False)
    for name, weights in HIDDEN_WEIGHTS.items():
        yield Case(args=(weights,), label=name)
    yield Case(args=([np.ones((2, 2))],), raises=ValueError, label=Text("a 2-D weight array is refused", "2-мерный массив весов отклоняется"))
    yield Case(args=([np.array([0.1, np.nan])],), raises=ValueError, label=Text("NaN weights are refused", "веса NaN отклоняются"))
    yield from hypothesis_cases(weight_lists, count=12, seed=seed,
                                to_case=lambda ws: Case(args=([np.array(w) for w in ws],)))


@exercise(f"{M}.response_contributions", points=1, atol=1e-8)  # a float32 sum of +-0.1 weights is off by 1e-8
def _response_contributions():
    yield from _token_weight_cases(9_312)


@exercise(f"{M}.flatten_token_weights", points=1, atol=1e-10)
def _flatten_token_weights():
    yield from _token_weight_cases(9_313)
    yield Case(args=([],), label=Text("no responses: an empty array", "нет ответов: пустой массив"))
    yield Case(args=([np.array([0.5, 0.5]), np.array([-0.25]), np.array([0.1, -0.3, 0.2])],),
               label=Text("public: order and sign kept", "открытый тест: порядок и знаки сохраняются"), hidden=False)


@exercise(f"{M}.overlong_penalty", points=2)
def _overlong_penalty():
    for length in (0, 15, 16, 18, 20, 21):
        yield Case(args=(length, 20, 5), label=Text("public test row: L_max = 20, L_cache = 5", "строка открытого теста: L_max = 20, L_cache = 5"), hidden=False)
    for length in (0, 3, 4, 6, 9, 10, 11, 25):
        yield Case(args=(length, 10, 10), label=Text("L_cache = L_max: the soft zone starts at 0", "L_cache = L_max: мягкая зона начинается с 0"))
    for length in (99, 100, 101, 102, 130):
        yield Case(args=(length, 100, 1), label=Text("L_cache = 1: a hard cut at L_max", "L_cache = 1: жёсткая отсечка на L_max"))
    yield Case(args=(3000, 4096, 1024), label=Text("DAPO-like sizes, below the soft zone", "размеры как в DAPO, до мягкой зоны"))
    yield Case(args=(3584, 4096, 1024), label=Text("DAPO-like sizes, half-way through the soft zone", "размеры как в DAPO, середина мягкой зоны"))
    yield Case(args=(5000, 4096, 1024), label=Text("DAPO-like sizes, beyond L_max", "размеры как в DAPO, за пределами L_max"))
    for args, label, russian in (
            ((-1, 20, 5), "public: a negative length", "открытый тест: отрицательная длина отклоняется"),
            ((5, 0, 0), "max_length 0", "max_length 0 отклоняется"),
            ((5, 20, 0), "cache_length 0", "cache_length 0 отклоняется"),
            ((5, 20, 21), "cache_length > max_length", "cache_length > max_length отклоняется")):
        yield Case(args=args, raises=ValueError, label=Text(f"{label} is refused", russian),
                   hidden=not label.startswith("public"))

    def to_case(drawn):
        cache, room, length = drawn
        return Case(args=(length, cache + room, cache))
    yield from hypothesis_cases(st.tuples(st.integers(1, 20), st.integers(0, 20), st.integers(0, 60)), count=20,
                                seed=9_314, to_case=to_case)


@exercise(f"{M}.k3_kl", points=2)
def _k3_kl():
    yield Case(args=(np.array([-1.0, -2.0, -1.0]), np.array([-1.0, -1.0, -2.0])), label=Text("public test row", "строка открытого теста"),
               hidden=False)
    yield Case(args=(np.array([[-0.5, -3.0], [-2.0, -0.1]]), np.array([[-1.5, -1.0], [-0.2, -0.1]])),
               label=Text("(N, T) log-probs, both signs of the difference", "логарифмы вероятностей (N, T), разность обоих знаков"))
    yield Case(args=(np.array([-2.0, -0.7]), np.array([-2.0, -0.7])), label=Text("equal policies: exactly 0", "одинаковые политики: ровно 0"))
    yield Case(args=(np.array([-1.0, -1.0]), np.array([-1.0 + 1e-7, -1.0 - 1e-7])), label=Text("tiny differences", "очень малые разности"))
    yield Case(args=(-0.5, -2.5), label=Text("0-d inputs", "0-мерные входы"))
    yield Case(args=(np.zeros(2), np.zeros(3)), raises=ValueError, label=Text("public: mismatched shapes are refused", "открытый тест: несовпадающие формы отклоняются"),
               hidden=False)
    yield Case(args=(np.array([np.nan]), np.zeros(1)), raises=ValueError, label=Text("NaN log-probs are refused", "логарифмы вероятностей NaN отклоняются"))
    logprobs = st.lists(st.tuples(st.floats(-6.0, 0.0), st.floats(-6.0, 0.0)), min_size=1, max_size=8)
    yield from hypothesis_cases(logprobs, count=15, seed=9_315,
                                to_case=lambda pairs: Case(args=tuple(np.array(pairs).T)))


# ---------------------------------------------------------------------------
# Entropy, pass@k and exact mode training
# ---------------------------------------------------------------------------
# The seed's finite-training table at steps 0, 9, 19, 39, 60 (rounded to 4 places)
SEED_MODE_PROBABILITIES = {0: [0.4088, 0.4088, 0.0912, 0.0912], 9: [0.4809, 0.364, 0.0775, 0.0775],
                           19: [0.5651, 0.3066, 0.0641, 0.0641], 39: [0.7119, 0.2019, 0.0431, 0.0431],
                           60: [0.8098, 0.1314, 0.0294, 0.0294]}
SEED_SUCCESSFUL_MASS = {0: 0.8176, 9: 0.8449, 19: 0.8718, 39: 0.9138, 60: 0.9413}


@exercise(f"{M}.categorical_entropy", points=2)
def _categorical_entropy():
    for step, probabilities in SEED_MODE_PROBABILITIES.items():
        p = np.array(probabilities)
        yield Case(args=(p / p.sum(),), label=Text(f"seed table: entropy at step {step}", f"таблица из ноутбука: энтропия на шаге {step}"), hidden=False)
    yield Case(args=([0.25, 0.25, 0.25, 0.25],), label=Text("public: uniform over 4", "открытый тест: равномерное распределение на 4 исхода"), hidden=False)
    yield Case(args=([1.0, 0.0],), label=Text("public: 0 log 0 = 0", "открытый тест: 0 log 0 = 0"), hidden=False)
    yield Case(args=([[0.5, 0.5], [1.0, 0.0]],), label=Text("public: a batch of two", "открытый тест: батч из двух распределений"), hidden=False)
    yield Case(args=(np.array([0.7, 0.2, 0.1]),), label=Text("three modes", "три моды"))
    yield Case(args=(np.array([0.5, 0.0, 0.5, 0.0]),), label=Text("zeros inside a distribution", "нули внутри распределения"))
    yield Case(args=(np.array([[0.9, 0.1, 0.0], [0.2, 0.3, 0.5], [1 / 3, 1 / 3, 1 / 3]]),), label=Text("a batch of three", "батч из трёх распределений"))
    yield Case(args=(np.full((2, 2, 2), 0.5),), label=Text("a (2, 2, 2) batch", "батч формы (2, 2, 2)"))
    yield Case(args=([1.0],), label=Text("one mode", "одна мода"))
    yield Case(args=([0.5, 0.6],), raises=ValueError, label=Text("a row that does not sum to 1 is refused", "строка с суммой, отличной от 1, отклоняется"))
    yield Case(args=([1.5, -0.5],), raises=ValueError, label=Text("negative probabilities are refused", "отрицательные вероятности отклоняются"))
    yield Case(args=(np.zeros(0),), raises=ValueError, label=Text("an empty distribution is refused", "пустое распределение отклоняется"))

    def to_case(weights):
        p = np.array(weights)
        return Case(args=(p / p.sum(),))
    weights = st.lists(st.sampled_from([0.0, 0.0, 0.1, 1.0, 2.0, 5.0]), min_size=1, max_size=6).filter(any)
    yield from hypothesis_cases(weights, count=15, seed=9_316, to_case=to_case)


@exercise(f"{M}.pass_at_k_independent", points=1)
def _pass_at_k_independent():
    for step, mass in SEED_SUCCESSFUL_MASS.items():
        yield Case(args=(mass, 4), label=Text(f"seed table: pass@4 at step {step}", f"таблица из ноутбука: pass@4 на шаге {step}"), hidden=False)
    yield Case(args=(0.5, 4), label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(0.1, 1), label=Text("k = 1 is p", "k = 1 даёт p"))
    yield Case(args=(0.2, 3), label=Text("p = 0.2, k = 3", "p = 0.2, k = 3"))
    yield Case(args=(0.0, 5), label=Text("p = 0", "p = 0"))
    yield Case(args=(1.0, 5), label=Text("p = 1", "p = 1"))
    yield Case(args=(0.3, 100), label=Text("many attempts", "много попыток"))
    for args, label, russian in (((1.2, 2), "p above 1", "p больше 1 отклоняется"),
                                  ((-0.2, 2), "negative p", "отрицательное p отклоняется"),
                                  ((0.5, 0), "k = 0", "k = 0 отклоняется")):
        yield Case(args=args, raises=ValueError, label=Text(f"{label} is refused", russian))
    yield from hypothesis_cases(st.tuples(probabilities, st.integers(1, 50)), count=15, seed=9_317,
                                to_case=lambda pk: Case(args=pk))


@exercise(f"{M}.pass_at_k_unbiased", points=2)
def _pass_at_k_unbiased():
    for args in ((10, 3, 4), (5, 3, 3), (5, 0, 3)):
        yield Case(args=args, label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(10, 3, 1), label=Text("k = 1 is c / n", "k = 1 даёт c / n"))
    yield Case(args=(20, 5, 10), label=Text("n = 20, c = 5, k = 10", "n = 20, c = 5, k = 10"))
    yield Case(args=(8, 8, 4), label=Text("every sample correct", "все сэмплы верны"))
    yield Case(args=(4, 1, 4), label=Text("k = n", "k = n"))
    yield Case(args=(200, 7, 50), label=Text("large n (no overflow)", "большое n (без переполнения)"))
    yield Case(args=(3000, 2, 5), label=Text("very large n: no huge binomials", "очень большое n: без огромных биномиальных коэффициентов"))
    yield Case(args=(2000, 10, 1000), label=Text("public: C(2000, 1000) > 1e308 (no float binomials)", "открытый тест: C(2000, 1000) > 1e308 (без биномиальных коэффициентов во float)"), hidden=False)
    yield Case(args=(100000, 10, 2000), label=Text("n = 100000: huge binomials", "n = 100000: огромные биномиальные коэффициенты"))
    yield Case(args=(100000, 1, 2000), label=Text("n = 100000, c = 1: k / n", "n = 100000, c = 1: k / n"))
    yield Case(args=(1200, 0, 600), label=Text("n = 1200, no correct sample: 0", "n = 1200, верных сэмплов нет: 0"))
    yield Case(args=(5000, 3, 2500), label=Text("n = 5000, k = n / 2", "n = 5000, k = n / 2"))
    for args, label, russian in (((5, 6, 2), "c > n", "c > n отклоняется"), ((5, 2, 6), "k > n", "k > n отклоняется"),
                                  ((0, 0, 1), "n = 0", "n = 0 отклоняется"), ((5, 2, 0), "k = 0", "k = 0 отклоняется"),
                                  ((5, -1, 2), "negative c", "отрицательное c отклоняется")):
        yield Case(args=args, raises=ValueError, label=Text(f"{label} is refused", russian))

    def to_case(drawn):
        n, c_share, k_share = drawn
        return Case(args=(n, round(c_share * n), max(1, round(k_share * n))))
    shares = st.floats(0.0, 1.0, allow_nan=False)
    yield from hypothesis_cases(st.tuples(st.integers(1, 60), shares, shares), count=15, seed=9_318, to_case=to_case)


@exercise(f"{M}.synthetic_mode_training", points=3)
def _synthetic_mode_training():
    for steps in (0, 9, 19, 39, 60):
        yield Case(kwargs={"beta_entropy": 0.0, "learning_rate": 0.18, "steps": steps},
                   label=Text(f"seed table: step {steps}", f"таблица из ноутбука: шаг {steps}"), hidden=False)
    yield Case(kwargs={"beta_entropy": 0.5, "learning_rate": 0.18, "steps": 60}, label=Text("public: entropy bonus 0.5", "открытый тест: энтропийный бонус 0.5"),
               hidden=False)
    yield Case(kwargs={"beta_entropy": 0.2, "learning_rate": 0.5, "steps": 25}, label=Text("a small entropy bonus", "малый энтропийный бонус"))
    yield Case(kwargs={"beta_entropy": 2.0, "steps": 40}, label=Text("a bonus that beats the reward", "бонус, перевешивающий награду"))
    yield Case(kwargs={"learning_rate": 0.0, "steps": 10}, label=Text("lr = 0 keeps the initial state", "lr = 0 сохраняет начальное состояние"))
    yield Case(kwargs={"steps": 30, "rewards": [0.0, 1.0, 0.5], "initial_logits": [2.0, 0.0, 1.0]},
               label=Text("three modes: the best starts least likely", "три моды: лучшая в начале наименее вероятна"))
    yield Case(kwargs={"beta_entropy": 0.3, "steps": 30, "rewards": [0.2, 0.2], "initial_logits": [0.0, 3.0]},
               label=Text("equal rewards: only the bonus moves the policy", "равные награды: политику сдвигает только бонус"))
    yield Case(kwargs={"steps": 5, "rewards": [1.0, 0.0, 0.0], "initial_logits": [500.0, 0.0, 0.0]},
               label=Text("huge logits (a stable softmax)", "огромные логиты (устойчивый softmax)"))
    for kwargs, label, russian in (
            ({"learning_rate": -0.1}, "negative learning_rate", "отрицательный learning_rate отклоняется"),
            ({"steps": -1}, "negative steps", "отрицательное значение steps отклоняется"),
            ({"beta_entropy": -0.5}, "negative beta_entropy", "отрицательный beta_entropy отклоняется"),
            ({"rewards": [1.0, 0.0], "initial_logits": [0.0, 0.0, 0.0]}, "mismatched shapes",
             "несовпадающие формы отклоняются")):
        yield Case(kwargs=kwargs, raises=ValueError, label=Text(f"{label} is refused", russian))

    def to_case(drawn):
        modes, beta, steps = drawn
        rewards, logits = zip(*modes)
        return Case(kwargs={"beta_entropy": beta, "learning_rate": 0.3, "steps": steps,
                            "rewards": list(rewards), "initial_logits": list(logits)})
    modes = st.lists(st.tuples(st.sampled_from([0.0, 0.3, 1.0]), st.floats(-2.0, 2.0)), min_size=2, max_size=5)
    yield from hypothesis_cases(st.tuples(modes, st.sampled_from([0.0, 0.1, 0.5]), st.integers(1, 40)), count=10,
                                seed=9_319, to_case=to_case)


# Each exercise's formula typeset for the notebooks' Markdown (`rl4llm build`); the first line of its
# docstring holds the same formula in plain text.
LATEX = {
    "verify_detailed": (
        r"\text{correct} \iff |x - x_{\mathrm{ref}}| \le \max(\mathrm{abs\_tol},\ "
        r"\mathrm{rel\_tol}\cdot|x_{\mathrm{ref}}|),\quad x = \text{last } \texttt{\textbackslash boxed\{\}} "
        r"\text{, else the last number}"
    ),
    "verify_numeric_answer": (
        r"\mathbb{1}\left[\,|x - x_{\mathrm{ref}}| \le \max(\mathrm{abs\_tol},\ "
        r"\mathrm{rel\_tol}\cdot|x_{\mathrm{ref}}|)\,\right]"
    ),
    "informative_group_probability": r"P_{\mathrm{info}} = 1 - p^G - (1-p)^G",
    "expected_draws_for_informative_groups": r"\mathbb{E}[\text{draws}] = \frac{B}{P_{\mathrm{info}}}",
    "group_relative_advantages": (
        r"A_i = \frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}\quad(\text{without "
        r"scale: } A_i = r_i - \operatorname{mean}(r))"
    ),
    "leave_one_out_baseline": r"b_i = \frac{\sum_j r_j - r_i}{G - 1}",
    "clipped_surrogate_terms": (
        r"\min\!\left(\rho A,\ \operatorname{clip}(\rho,\, 1-\varepsilon_{\mathrm{low}},\, "
        r"1+\varepsilon_{\mathrm{high}})\, A\right)"
    ),
    "clip_activity": (
        r"\text{active} = (A > 0 \wedge \rho > 1+\varepsilon_{\mathrm{high}}) \vee (A < 0 \wedge \rho < "
        r"1-\varepsilon_{\mathrm{low}})"
    ),
    "gspo_sequence_ratios": (
        r"s_i = \exp\!\left(\frac{1}{|o_i|} \sum_{t \in o_i} \left(\log \pi_\theta(o_{i,t}) - \log "
        r"\pi_{\mathrm{old}}(o_{i,t})\right)\right)"
    ),
    "original_grpo_token_weights": r"w_{it} = \frac{A_i}{G\, |o_i|}",
    "dr_grpo_token_weights": r"w_{it} = \frac{r_i - \operatorname{mean}(r)}{G\, L},\quad L = \text{fixed\_length}",
    "dapo_token_weights": r"w_{it} = \frac{A_i}{\sum_j |o_j|}",
    "response_contributions": r"c_i = \sum_t w_{it}",
    "flatten_token_weights": r"[w_{1,1}, \dots, w_{1,|o_1|},\ w_{2,1}, \dots]",
    "overlong_penalty": (
        r"R(|y|) = \begin{cases} 0 & |y| \le L_{\max} - L_{\mathrm{cache}} \\ \frac{L_{\max} - "
        r"L_{\mathrm{cache}} - |y|}{L_{\mathrm{cache}}} & |y| \le L_{\max} \\ -1 & \text{otherwise} "
        r"\end{cases}"
    ),
    "k3_kl": r"k_3 = e^{\log\pi_{\mathrm{ref}} - \log\pi} - (\log\pi_{\mathrm{ref}} - \log\pi) - 1",
    "categorical_entropy": r"H(p) = -\sum_k p_k \log p_k,\quad 0 \log 0 = 0",
    "pass_at_k_independent": r"\text{pass@}k = 1 - (1-p)^k",
    "pass_at_k_unbiased": r"\text{pass@}k = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}",
    "synthetic_mode_training": (
        r"z \leftarrow z + \eta\, \frac{\partial J}{\partial z},\quad \frac{\partial J}{\partial z_k} = \pi_k "
        r"\left(r_k - \sum_j \pi_j r_j\right) - \beta\, \pi_k \left(\log \pi_k + H(\pi)\right),\quad J = "
        r"\sum_k \pi_k r_k + \beta H(\pi)"
    ),
}
