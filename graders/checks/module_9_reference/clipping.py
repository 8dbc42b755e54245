"""Hidden checks of clipping: the clipped surrogate, clip activity and GSPO's sequence ratios.
"""

from __future__ import annotations

import numpy as np

from graders.checks.edges import NO_EXTREMES, NO_PADDING, NO_TEXT, NO_TIES, SCALAR_FLOATS, declare
from graders.checks import Case, exercise, hypothesis_cases, st
from graders.text import Text
from graders.checks.module_9_reference.harnesses import M

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
    for ratio, advantage, eps_low, eps_high, edge in (
            ([0.5, 1.5, 0.5, 1.5], [1.0, 1.0, -1.0, -1.0], 0.2, 0.2, ()),
            ([0.75, 1.25, 1.25, 0.75], [-1.0, 1.0, -1.0, 1.0], 0.25, 0.25, "boundaries"),
            ([1.25, 0.75], [1.0, -1.0], 0.2, 0.28, ()),
            ([0.3, 1.0, 2.5], [0.0, 0.0, 0.0], 0.2, 0.2, "zeros_and_empties"),
            ([0.5, 1.4, 0.5, 1.4], [2.0, 2.0, -2.0, -2.0], 0.2, 0.2, ()),
            ([0.5, 1.0, 1.5], [2.0, 2.0, 2.0], 0.2, 0.2, ())):
        yield Case(args=(np.array(ratio), np.array(advantage), eps_low, eps_high), edge=edge,
                   label=Text("public test row: CLIP_ROWS", "строка открытого теста: CLIP_ROWS"), hidden=False)
    yield Case(args=(SEED_RATIOS, np.array([1.0, 1.0, -1.0, -1.0])), kwargs={"eps_low": 0.2, "eps_high": 0.28},
               label=Text("clip-higher: eps_high = 0.28 (DAPO)", "асимметричный клиппинг (clip-higher): eps_high = 0.28 (DAPO)"))
    yield Case(args=(np.array([0.6, 0.9, 1.15, 1.3, 1.5]), np.array([-1.0, -1.0, 1.0, 1.0, 1.0]), 0.3, 0.1),
               label=Text("eps_low > eps_high", "eps_low > eps_high"))
    yield Case(args=(np.array([0.5, 0.9, 1.4, 3.0]), -2.0), kwargs={"eps_low": 0.2, "eps_high": 0.28},
               label=Text("a scalar negative advantage broadcasts", "бродкастинг скалярного отрицательного преимущества"))
    yield Case(args=(np.array([0.5, 0.9, 1.4, 3.0]), 0.5), label=Text("a scalar positive advantage broadcasts", "бродкастинг скалярного положительного преимущества"))
    yield Case(args=(np.array([[0.5, 1.5], [1.1, 0.9]]), np.array([[1.0], [-1.0]]), 0.25, 0.25), edge="shapes",
               label=Text("(N, T) ratios with (N, 1) advantages", "отношения (N, T) и преимущества (N, 1)"))
    yield from _structure_cases()
    yield Case(args=(np.array([0.3, 1.0, 2.5]), np.zeros(3)), edge="zeros_and_empties", label=Text("zero advantages", "нулевые преимущества"))
    yield Case(args=(BOUNDARY_RATIOS, np.ones(6), 0.25, 0.5), edge="boundaries", label=Text("ratios on the clip boundaries, A > 0", "отношения на границах клиппинга, A > 0"))
    yield Case(args=(BOUNDARY_RATIOS, -np.ones(6), 0.25, 0.5), edge="boundaries", label=Text("ratios on the clip boundaries, A < 0", "отношения на границах клиппинга, A < 0"))
    yield Case(args=(BOUNDARY_RATIOS, -np.ones(6), 0.5, 0.25), label=Text("boundaries with eps_low = 0.5, A < 0", "границы при eps_low = 0.5, A < 0"))
    yield Case(args=(np.array([-0.1, 1.0]), np.ones(2)), raises=ValueError, label=Text("negative ratios are refused", "отрицательные отношения отклоняются"), hidden=False)
    yield Case(args=(np.ones(3), np.ones(2)), raises=ValueError, label=Text("shapes that do not broadcast are refused", "формы, несовместимые при бродкастинге, отклоняются"), hidden=False)
    yield Case(args=(np.ones(2), np.ones(2), -0.1, 0.2), raises=ValueError, label=Text("negative eps_low is refused", "отрицательный eps_low отклоняется"), hidden=False)
    yield Case(args=(np.ones(2), np.ones(2), 0.2, float("nan")), raises=ValueError, label=Text("NaN eps_high is refused", "eps_high = NaN отклоняется"), hidden=False)
    yield from hypothesis_cases(clip_inputs, count=20, seed=9_307, to_case=_clip_case)


def _structure_cases():
    """Shapes and Python types: a square batch both ways (per row and per column), a batch of one, an empty
    batch, (N, T) with (N,) (refused: NumPy broadcasting aligns the last axis), int lists, NumPy scalars,
    float32 ratios (away from the clip edges)."""
    square = np.array([[0.5, 1.1, 1.6], [0.7, 1.3, 0.9], [1.5, 0.95, 0.6]])
    yield Case(args=(square, np.array([[1.0], [-1.0], [2.0]]), 0.2, 0.2), edge="shapes", hidden=False,
               label=Text("public: a square batch (N = T), one advantage per row (N, 1)",
                          "открытый тест: квадратный батч (N = T), одно преимущество на строку (N, 1)"))
    yield Case(args=(square, np.array([1.0, -1.0, 2.0]), 0.2, 0.2), edge="shapes", hidden=False,
               label=Text("public: a square batch (N = T) with (T,) advantages: one per column",
                          "открытый тест: квадратный батч (N = T) и преимущества (T,): по одному на столбец"))
    yield Case(args=(np.array([[0.5, 1.5, 1.1, 0.7]]), np.array([[-1.0]]), 0.2, 0.28), edge="shapes",
               label=Text("a batch of one (1, T)", "батч из одного ответа (1, T)"))
    yield Case(args=(np.zeros((0, 3)), np.zeros((0, 1))), edge="shapes",
               label=Text("an empty batch (0, T)", "пустой батч (0, T)"))
    yield Case(args=(np.ones((2, 3)), np.ones(2)), raises=ValueError, edge="shapes",
               label=Text("(N, T) ratios with (N,) advantages do not broadcast: refused",
                          "отношения (N, T) и преимущества (N,) несовместимы при бродкастинге: отклоняется"))
    yield Case(args=([1, 2, 0, 1], [1, -1, 2, -2]), edge="python_types", hidden=False,
               label=Text("public: int lists", "открытый тест: списки целых"))
    yield Case(args=(np.array([0.5, 0.9, 1.4, 3.0]), np.float32(-2.0), np.float32(0.25), 0),
               edge="python_types", label=Text("NumPy float32 scalars and an int eps", "скаляры NumPy float32 и целое eps"))
    yield Case(args=(np.array([0.5, 1.1, 1.3, 2.0, 0.7], dtype=np.float32), np.array([1.0, 1.0, 1.0, -1.0, -1.0])),
               edge="dtypes", hidden=False, label=Text("public: float32 ratios, away from the clip edges",
                                                      "открытый тест: отношения float32 вдали от границ клиппинга"))


@exercise(f"{M}.clipped_surrogate_terms", 
          edges=declare("boundaries", "zeros_and_empties", "shapes", "python_types", "dtypes", ties_and_near_ties="a ratio on a clip edge is boundaries", extremes="ratios and advantages enter a product and a clip: no exp to overflow", large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=3)
def _clipped_surrogate_terms():
    yield from _clip_cases()


@exercise(f"{M}.clip_activity", 
          edges=declare("boundaries", "zeros_and_empties", "shapes", "python_types", "dtypes", ties_and_near_ties="a ratio on a clip edge is boundaries", extremes="ratios and advantages enter a product and a clip: no exp to overflow", large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=2)
def _clip_activity():
    yield from _clip_cases()


@exercise(f"{M}.gspo_sequence_ratios", 
          edges=declare("large_padding", "zeros_and_empties", "shapes", "python_types", ties_and_near_ties=NO_TIES, extremes="active log-probabilities are finite and <= 0; the ratio is exp of their mean difference, as specified", boundaries="the mask holds only 0 and 1 (a 2 is a refusal row); no other domain edge", dtypes="a bool mask and a 0/1 float mask are both in the public rows", number_formats=NO_TEXT),
          points=2, rtol=1e-6, atol=1e-9)
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
               edge="large_padding", label=Text("-inf padding under a boolean mask", "паддинг -inf под булевой маской"))
    yield Case(args=(np.array([[-1.0, -1.0], [-2.0, -1.0]]), np.array([[-1.5, -1.5], [-1.0, -3.0]]),
                     np.array([[0.0, 0.0], [1.0, 1.0]])), edge="zeros_and_empties", label=Text("a response with no active token has ratio 1", "у ответа без активных токенов отношение равно 1"))
    yield Case(args=(np.array([[-0.3, -0.2, -0.9, -0.4]]), np.array([[-0.6, -0.1, -0.2, -2.0]]),
                     np.array([[1.0, 1.0, 1.0, 0.0]])), edge="large_padding", label=Text("the padding holds a finite log-prob", "в паддинге конечный логарифм вероятности"))
    yield Case(args=(np.array([[-1.0, -0.5, -2.0]]), np.array([[-1.5, -0.5, -1.0]]), np.array([[1.0, 1.0, 0.0]])),
               edge="shapes", hidden=False, label=Text("public: a batch of one (1, T)", "открытый тест: батч из одного ответа (1, T)"))
    yield Case(args=(np.array([[-1.0, -0.5, -2.0], [-0.2, -0.4, -0.8], [-3.0, -1.0, -0.1]]),
                     np.array([[-1.5, -0.5, -1.0], [-0.2, -0.1, -0.3], [-2.0, -2.0, -0.6]]),
                     np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
               edge="shapes", label=Text("a square batch (N = T): the mean runs along each row",
                                         "квадратный батч (N = T): среднее берётся по каждой строке"))
    yield Case(args=(np.zeros((0, 4)), np.zeros((0, 4)), np.zeros((0, 4))), edge="shapes",
               label=Text("an empty batch (0, T)", "пустой батч (0, T)"))
    yield Case(args=([[-1.0, -2.0], [-0.5, -0.25]], [[-1.5, -1.0], [-0.5, -0.75]], [[1, 1], [1, 0]]),
               edge="python_types", hidden=False, label=Text("public: nested lists, an int 0/1 mask",
                                                             "открытый тест: вложенные списки, целочисленная маска 0/1"))
    yield Case(args=(np.array([[-1.0, -2.0, -0.5]], dtype=np.float32), np.array([[-1.5, -1.0, -0.5]], dtype=np.float32),
                     np.array([[1, 1, 1]])), edge="python_types",
               label=Text("float32 log-probabilities, an int mask", "логарифмы вероятностей float32, целочисленная маска"))
    yield Case(args=(np.zeros((2, 3)), np.zeros((2, 2)), np.ones((2, 3))), raises=ValueError,
               label=Text("mismatched shapes are refused", "несовпадающие формы отклоняются"), hidden=False)
    yield Case(args=(np.zeros(3), np.zeros(3), np.ones(3)), raises=ValueError, label=Text("1-D inputs are refused", "1-мерные входы отклоняются"), hidden=False)
    yield Case(args=(np.zeros((1, 2)), np.zeros((1, 2)), np.array([[1.0, 2.0]])), raises=ValueError,
               label=Text("a mask entry of 2 is refused", "значение маски 2 отклоняется"), hidden=False)
    yield Case(args=(np.zeros((1, 2)), np.array([[-np.inf, 0.0]]), np.ones((1, 2))), raises=ValueError, hidden=False,
               label=Text("public: -inf in old_logprobs on an active token is refused",
                          "открытый тест: -inf в old_logprobs на активном токене отклоняется"))
    yield Case(args=(np.array([[-np.inf, 0.0]]), np.zeros((1, 2)), np.ones((1, 2))), raises=ValueError, hidden=False,
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
