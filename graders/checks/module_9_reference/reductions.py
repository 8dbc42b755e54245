"""Hidden checks of the loss reductions (original GRPO, DAPO, Dr. GRPO token weights, response contributions, flattening), the overlong penalty and the k3 KL estimator.
"""

from __future__ import annotations

import math

import numpy as np

from graders.checks.edges import NO_EXTREMES, NO_PADDING, NO_TEXT, NO_TIES, SCALAR_FLOATS, SCALARS_ONLY, declare
from graders.checks import Case, exercise, hypothesis_cases, st
from graders.text import Text
from graders.checks.module_9_reference.harnesses import ADVANTAGES, M

# ---------------------------------------------------------------------------
# Loss reductions
# ---------------------------------------------------------------------------
SEED_GROUP, SEED_LENGTHS = np.array([1.0, 0.0, 1.0]), [2, 5, 8]
reduction_inputs = st.lists(st.tuples(st.sampled_from([0.0, 0.25, 1.0]), st.integers(1, 12)), min_size=2, max_size=6)


def _reduction_case(drawn, *extra):
    rewards, lengths = zip(*drawn)
    return Case(args=(np.array(rewards), list(lengths), *extra))


def _reduction_errors(*extra):
    yield Case(args=(SEED_GROUP, [3, 0, 2], *extra), raises=ValueError, label=Text("a zero length is refused", "нулевая длина отклоняется"), hidden=False)
    yield Case(args=(SEED_GROUP, [3, -1, 2], *extra), raises=ValueError, label=Text("a negative length is refused", "отрицательная длина отклоняется"))
    yield Case(args=(SEED_GROUP, [3, 2], *extra), raises=ValueError, label=Text("fewer lengths than rewards are refused", "длин меньше, чем наград: отклоняется"), hidden=False)
    yield Case(args=(np.array([[1.0, 0.0], [0.0, 1.0]]), [2, 3], *extra), raises=ValueError,
               label=Text("2-D rewards are refused (one group)", "2-мерные награды отклоняются (группа одна)"), hidden=False)


def _reduction_structures(*extra):
    """Shapes (a group of one; G equal to every length, where rows and tokens could be confused) and Python
    types (int rewards, lengths as an int ndarray or a tuple, rewards as an ndarray left unchanged)."""
    yield Case(args=(np.array([1.0]), [3], *extra), edge="shapes", hidden=False,
               label=Text("public: a group of one: zero weights", "открытый тест: группа из одного ответа: нулевые веса"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]), [3, 3, 3], *extra), edge="shapes",
               label=Text("G = 3 responses of 3 tokens each", "G = 3 ответа по 3 токена"))
    yield Case(args=(np.array([0.0, 1.0, 0.25]), [1, 3, 2], *extra), edge="shapes",
               label=Text("G = 3 with the longest response of length G", "G = 3, самый длинный ответ длины G"))
    yield Case(args=([1, 0, 1], np.array([2, 5, 8]), *extra), edge="python_types", hidden=False,
               label=Text("public: int rewards, lengths as an int ndarray", "открытый тест: целые награды, длины — целочисленный ndarray"))
    yield Case(args=(np.array([0.0, 1.0, 1.0, 0.0]), (4, 1, 2, 6), *extra), edge="python_types",
               label=Text("lengths as a tuple", "длины — кортеж"))


def _standardised_reduction_cases(seed):
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), label=Text("seed table: rewards [1, 0, 1], lengths [2, 5, 8]", "таблица из ноутбука: награды [1, 0, 1], длины [2, 5, 8]"),
               hidden=False)
    yield Case(args=(np.array([1.0, 0.0, 0.0, 0.0]), [3, 3, 3, 3]), label=Text("equal lengths", "равные длины"))
    yield Case(args=(np.array([1.0, 0.0, 0.0, 1.0]), [1, 10, 4, 7]), label=Text("lengths 1 to 10", "длины от 1 до 10"))
    yield Case(args=(np.array([0.5, 0.5, 0.5]), [2, 4, 6]), edge="ties_and_near_ties", hidden=False,
               label=Text("public: an all-equal group gets zero weights", "открытый тест: группа равных наград получает нулевые веса"))
    yield Case(args=(np.array([1.0, 0.0]), [200, 50]), label=Text("long responses: small weights", "длинные ответы: малые веса"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]), [4, 2, 9]), kwargs={"eps": 0.5}, label=Text("a large eps", "большое eps"))
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), kwargs={"eps": 0.5}, label=Text("public: the seed group with eps = 0.5", "открытый тест: группа из ноутбука при eps = 0.5"), hidden=False)
    yield from _reduction_structures()
    yield from _reduction_errors()
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), kwargs={"eps": -1.0}, raises=ValueError,
               label=Text("negative eps is refused", "отрицательное eps отклоняется"), hidden=False)
    yield from hypothesis_cases(reduction_inputs, count=15, seed=seed, to_case=_reduction_case)


@exercise(f"{M}.original_grpo_token_weights", 
          edges=declare("ties_and_near_ties", "shapes", "python_types", zeros_and_empties="lengths >= 1 (a zero length is a refusal row); an empty group is refused", extremes="weights are advantages over lengths: no exp; long responses are an ordinary row", large_padding="token weights have no padding: one array per response, of its own length", dtypes="lengths are ints, rewards any array-like read as float64 (one path)", number_formats=NO_TEXT, boundaries="eps >= 0 and its edges belong to group_relative_advantages"),
          points=2, call=ADVANTAGES, atol=1e-10)
def _original_grpo_token_weights():
    yield from _standardised_reduction_cases(9_309)


@exercise(f"{M}.dapo_token_weights", 
          edges=declare("ties_and_near_ties", "shapes", "python_types", zeros_and_empties="lengths >= 1 (a zero length is a refusal row); an empty group is refused", extremes="weights are advantages over lengths: no exp; long responses are an ordinary row", large_padding="token weights have no padding: one array per response, of its own length", dtypes="lengths are ints, rewards any array-like read as float64 (one path)", number_formats=NO_TEXT, boundaries="eps >= 0 and its edges belong to group_relative_advantages"),
          points=2, call=ADVANTAGES, atol=1e-10)
def _dapo_token_weights():
    yield from _standardised_reduction_cases(9_310)


@exercise(f"{M}.dr_grpo_token_weights", 
          edges=declare("boundaries", "ties_and_near_ties", "shapes", "python_types", zeros_and_empties="lengths >= 1 (a zero length is a refusal row); an empty group is refused", extremes="weights are advantages over lengths: no exp; long responses are an ordinary row", large_padding="token weights have no padding: one array per response, of its own length", dtypes="lengths are ints, rewards any array-like read as float64 (one path)", number_formats=NO_TEXT),
          points=2, call=ADVANTAGES, atol=1e-10)
def _dr_grpo_token_weights():
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 8), label=Text("seed table: fixed_length = 8", "таблица из ноутбука: fixed_length = 8"), hidden=False)
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 16), label=Text("a budget above the longest response", "бюджет больше самого длинного ответа"))
    yield Case(args=(SEED_GROUP, SEED_LENGTHS), kwargs={"fixed_length": 12},
               label=Text("public: fixed_length 12 above the longest response", "открытый тест: fixed_length 12 больше самого длинного ответа"), hidden=False)
    yield Case(args=(np.array([1.0, 0.0, 0.0, 0.0]), [3, 3, 3, 3], 3), edge="boundaries", label=Text("equal lengths, budget = length", "равные длины, бюджет = длина"))
    yield Case(args=(np.array([1.0, 0.0]), [1, 1], 1), edge="boundaries", hidden=False,
               label=Text("public: one-token responses, fixed_length = 1", "открытый тест: ответы из одного токена, fixed_length = 1"))
    yield Case(args=(np.array([1.0, 0.0, 0.0, 1.0]), [1, 10, 4, 7], 12), label=Text("lengths 1 to 10, budget 12", "длины от 1 до 10, бюджет 12"))
    yield Case(args=(np.array([0.2, 0.9]), [5, 2], 5), label=Text("non-binary rewards", "небинарные награды"))
    yield Case(args=(np.array([0.5, 0.5, 0.5]), [2, 4, 6], 6), edge="ties_and_near_ties", hidden=False,
               label=Text("public: an all-equal group gets zero weights", "открытый тест: группа равных наград получает нулевые веса"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]), [4, 2, 9], 9), kwargs={"eps": 0.5}, hidden=False,
               label=Text("public: eps is unused", "открытый тест: eps не используется"))
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 7), raises=ValueError,
               label=Text("public: fixed_length below the longest response is refused", "открытый тест: fixed_length меньше самого длинного ответа отклоняется"), hidden=False)
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 0), raises=ValueError, label=Text("fixed_length 0 is refused", "fixed_length 0 отклоняется"), hidden=False)
    yield Case(args=(SEED_GROUP, SEED_LENGTHS, 9), kwargs={"eps": -0.5}, raises=ValueError, hidden=False,
               label=Text("public: a negative eps is refused", "открытый пример: отрицательное eps отклоняется"))
    yield from _reduction_structures(8)
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
WEIGHT_EDGES = {"lists instead of arrays": ("dtypes", "python_types"), "an empty response": "zeros_and_empties"}
weight_lists = st.lists(st.lists(st.floats(-1.0, 1.0, allow_subnormal=False), min_size=1, max_size=6),
                        min_size=1, max_size=5)


def _token_weight_cases(seed):
    for name, weights in SEED_WEIGHTS.items():
        yield Case(args=(weights,), label=Text(f"seed table: {name} weights", f"таблица из ноутбука: веса {name.in_('ru')}"), hidden=False)
    for name, weights in HIDDEN_WEIGHTS.items():
        yield Case(args=(weights,), label=name, edge=WEIGHT_EDGES.get(name.in_("en"), ()))
    yield Case(args=([np.array([0.25, 0.25, 0.25])],), edge="shapes", hidden=False,
               label=Text("public: one response", "открытый тест: один ответ"))
    yield Case(args=([np.array([0.5]), np.array([-0.5])],), edge="shapes",
               label=Text("responses of one token", "ответы из одного токена"))
    yield Case(args=([np.array([0.1, 0.2]), np.array([0.3, -0.4])],), edge="shapes",
               label=Text("two responses of two tokens (square)", "два ответа по два токена (квадрат)"))
    yield Case(args=([np.array([1, 2]), np.array([-3])],), edge=("dtypes", "python_types"), hidden=False,
               label=Text("public: int weights give floats", "открытый тест: целые веса дают числа float"))
    yield Case(args=([np.array([0.25, 0.5], dtype=np.float32), np.array([-0.125], dtype=np.float32)],),
               edge="dtypes", label=Text("float32 weights give float64", "веса float32 дают float64"))
    yield Case(args=(([0.5, 0.25], [0.125]),), edge="python_types",
               label=Text("a tuple of lists", "кортеж списков"))
    yield Case(args=([np.ones((2, 2))],), raises=ValueError, label=Text("a 2-D weight array is refused", "2-мерный массив весов отклоняется"), hidden=False)
    yield Case(args=([np.array([0.1, np.nan])],), raises=ValueError, label=Text("NaN weights are refused", "веса NaN отклоняются"), hidden=False)
    yield from hypothesis_cases(weight_lists, count=12, seed=seed,
                                to_case=lambda ws: Case(args=([np.array(w) for w in ws],)))


@exercise(f"{M}.response_contributions", 
          edges=declare("zeros_and_empties", "dtypes", "shapes", "python_types", ties_and_near_ties=NO_TIES, extremes="sums and concatenation of weights: no exp", boundaries="no domain parameter: an empty response or list is zeros_and_empties", large_padding="one array per response, of its own length: nothing is padded", number_formats=NO_TEXT),
          points=1, atol=1e-8)  # a float32 sum of +-0.1 weights is off by 1e-8
def _response_contributions():
    yield from _token_weight_cases(9_312)


@exercise(f"{M}.flatten_token_weights", 
          edges=declare("zeros_and_empties", "dtypes", "shapes", "python_types", ties_and_near_ties=NO_TIES, extremes="sums and concatenation of weights: no exp", boundaries="no domain parameter: an empty response or list is zeros_and_empties", large_padding="one array per response, of its own length: nothing is padded", number_formats=NO_TEXT),
          points=1, atol=1e-10)
def _flatten_token_weights():
    yield from _token_weight_cases(9_313)
    yield Case(args=([],), edge="zeros_and_empties", hidden=False,
               label=Text("public: no responses, an empty array", "открытый тест: нет ответов, пустой массив"))
    yield Case(args=([np.array([0.5, 0.5]), np.array([-0.25]), np.array([0.1, -0.3, 0.2])],),
               label=Text("public: order and sign kept", "открытый тест: порядок и знаки сохраняются"), hidden=False)


@exercise(f"{M}.overlong_penalty", 
          edges=declare("boundaries", "zeros_and_empties", "python_types", ties_and_near_ties=NO_TIES, extremes=NO_EXTREMES, large_padding=NO_PADDING, dtypes="integers only (lengths)", number_formats=NO_TEXT, shapes=SCALARS_ONLY),
          points=2)
def _overlong_penalty():
    for length in (0, 15, 16, 18, 20, 21):
        yield Case(args=(length, 20, 5), edge="boundaries" if length else "zeros_and_empties", label=Text("public test row: L_max = 20, L_cache = 5", "строка открытого теста: L_max = 20, L_cache = 5"), hidden=False)
    for length in (0, 3, 4, 6, 9, 10, 11, 25):
        yield Case(args=(length, 10, 10), edge="boundaries", label=Text("L_cache = L_max: the soft zone starts at 0", "L_cache = L_max: мягкая зона начинается с 0"))
    for length in (99, 100, 101, 102, 130):
        yield Case(args=(length, 100, 1), edge="boundaries", label=Text("L_cache = 1: a hard cut at L_max", "L_cache = 1: жёсткая отсечка на L_max"))
    for args in ((0, 1, 1), (1, 1, 1), (4, 10, 10), (99, 100, 1), (100, 100, 1)):
        yield Case(args=args, edge="boundaries", hidden=False,
                   label=Text("public: the edges of the soft zone", "открытый тест: края мягкой зоны"))
    yield Case(args=(np.int64(18), 20, 5), edge="python_types", hidden=False,
               label=Text("public: a length read from an int array (a NumPy int)", "открытый тест: длина из целочисленного массива (целое NumPy)"))
    yield Case(args=(np.int64(3584), np.int64(4096), np.int64(1024)), edge="python_types",
               label=Text("NumPy ints, half-way through the soft zone", "целые NumPy, середина мягкой зоны"))
    yield Case(args=(3000, 4096, 1024), label=Text("DAPO-like sizes, below the soft zone", "размеры как в DAPO, до мягкой зоны"))
    yield Case(args=(3584, 4096, 1024), label=Text("DAPO-like sizes, half-way through the soft zone", "размеры как в DAPO, середина мягкой зоны"))
    yield Case(args=(5000, 4096, 1024), label=Text("DAPO-like sizes, beyond L_max", "размеры как в DAPO, за пределами L_max"))
    for args, label, russian in (
            ((-1, 20, 5), "public: a negative length", "открытый тест: отрицательная длина отклоняется"),
            ((5, 0, 0), "max_length 0", "max_length 0 отклоняется"),
            ((5, 20, 0), "cache_length 0", "cache_length 0 отклоняется"),
            ((5, 20, 21), "cache_length > max_length", "cache_length > max_length отклоняется")):
        yield Case(args=args, raises=ValueError, label=Text(f"{label} is refused", russian), hidden=False)

    def to_case(drawn):
        cache, room, length = drawn
        return Case(args=(length, cache + room, cache))
    yield from hypothesis_cases(st.tuples(st.integers(1, 20), st.integers(0, 20), st.integers(0, 60)), count=20,
                                seed=9_314, to_case=to_case)


@exercise(f"{M}.k3_kl", 
          edges=declare("ties_and_near_ties", "shapes", "python_types", "dtypes", zeros_and_empties="equal log-probabilities (d = 0) are ties_and_near_ties", extremes="exp(d) - d - 1 is the estimator itself: a large d is as large in every correct form", boundaries="no domain parameter", large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=2)
def _k3_kl():
    yield Case(args=(np.array([-1.0, -2.0, -1.0]), np.array([-1.0, -1.0, -2.0])), edge="ties_and_near_ties", label=Text("public test row", "строка открытого теста"),
               hidden=False)
    yield Case(args=(np.array([[-0.5, -3.0], [-2.0, -0.1]]), np.array([[-1.5, -1.0], [-0.2, -0.1]])),
               label=Text("(N, T) log-probs, both signs of the difference", "логарифмы вероятностей (N, T), разность обоих знаков"))
    yield Case(args=(np.array([-2.0, -0.7]), np.array([-2.0, -0.7])), edge="ties_and_near_ties", label=Text("equal policies: exactly 0", "одинаковые политики: ровно 0"))
    yield Case(args=(np.array([-1.0, -1.0]), np.array([-1.0 + 1e-7, -1.0 - 1e-7])), edge="ties_and_near_ties", label=Text("tiny differences", "очень малые разности"))
    yield Case(args=(-0.5, -2.5), label=Text("0-d inputs", "0-мерные входы"))
    yield Case(args=(np.array([[-0.5, -3.0, -1.0]]), np.array([[-1.5, -1.0, -1.0]])), edge="shapes", hidden=False,
               label=Text("public: a batch of one (1, T)", "открытый тест: батч из одного ответа (1, T)"))
    yield Case(args=(np.zeros((0, 3)), np.zeros((0, 3))), edge="shapes", label=Text("an empty batch (0, T)", "пустой батч (0, T)"))
    yield Case(args=(np.array([[-0.5, -3.0], [-2.0, -0.1]]), np.array([[-0.1, -0.2], [-0.3, -0.4]])), edge="shapes",
               label=Text("a square batch (N = T)", "квадратный батч (N = T)"))
    yield Case(args=([-1, -2, 0], [-2, -1, 0]), edge="python_types", hidden=False,
               label=Text("public: int lists", "открытый тест: списки целых"))
    yield Case(args=(np.float32(-0.5), -2.5), edge="python_types", label=Text("a NumPy float32 scalar", "скаляр NumPy float32"))
    yield Case(args=(np.array([-0.5, -1.25, -2.0], dtype=np.float32), np.array([-1.0, -1.0, -0.25], dtype=np.float32)),
               edge="dtypes", hidden=False, label=Text("public: float32 log-probabilities give float64", "открытый тест: логарифмы вероятностей float32 дают float64"))
    yield Case(args=(np.zeros(2), np.zeros(3)), raises=ValueError, label=Text("public: mismatched shapes are refused", "открытый тест: несовпадающие формы отклоняются"),
               hidden=False)
    yield Case(args=(np.array([np.nan]), np.zeros(1)), raises=ValueError, label=Text("NaN log-probs are refused", "логарифмы вероятностей NaN отклоняются"), hidden=False)
    logprobs = st.lists(st.tuples(st.floats(-6.0, 0.0), st.floats(-6.0, 0.0)), min_size=1, max_size=8)
    yield from hypothesis_cases(logprobs, count=15, seed=9_315,
                                to_case=lambda pairs: Case(args=tuple(np.array(pairs).T)))
