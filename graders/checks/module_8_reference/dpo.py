"""Hidden checks of DPO and its relatives: the loss from the margin, its gradient weight, cDPO, IPO, SimPO, ORPO and likelihood displacement.
"""

from __future__ import annotations

import numpy as np

from graders.checks.edges import NO_PADDING, NO_TEXT, NO_TIES, SCALAR_FLOATS, declare
from graders.checks import Case, hypothesis_cases, st
from graders.text import Text
from graders.checks.module_8_reference.common import EXTREME, M, _floats, exercise

# ---------------------------------------------------------------------------
# DPO and its relatives
# ---------------------------------------------------------------------------
_margin_and_beta = st.tuples(_floats(-50.0, 50.0), _floats(0.01, 5.0))


def _broadcast_margins():
    return np.array([[-2.0], [0.0], [0.5]]), np.array([0.1, 1.0])


@exercise(f"{M}.dpo_loss_from_margin", 
          edges=declare("shapes", "python_types", "extremes", "zeros_and_empties", ties_and_near_ties=NO_TIES, boundaries="beta > 0 is open (beta = 0 is a refusal row); the margin h is unbounded", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _dpo_loss_from_margin():
    yield Case(args=(0.8,), kwargs={"beta": 0.2}, label=Text("seed: h = 0.8, beta = 0.2", "из ноутбука: h = 0.8, beta = 0.2"), hidden=False)
    yield Case(args=(0.0, 0.7), edge="zeros_and_empties", label=Text("h = 0: log 2", "h = 0: log 2"))
    yield Case(args=(EXTREME, 1.0), edge="extremes", label=Text("extreme margins +-1e4 (no overflow)", "экстремальные отступы +-1e4 (без переполнения)"))
    yield Case(args=(0.0,), kwargs={"beta": 0.2}, edge="zeros_and_empties",
               label=Text("public: h = 0, beta = 0.2: log 2", "открытый пример: h = 0, beta = 0.2: log 2"), hidden=False)
    yield Case(args=(np.array([-5e3, 5e3]), np.array([2.0, 2.0])), label=Text("beta h = +-1e4 with array beta", "beta h = +-1e4, beta — массив"))
    yield Case(args=(np.array([-3.0, -0.5, 0.0, 0.5, 3.0]), 1.5), label=Text("an array of margins", "массив отступов"))
    yield Case(args=_broadcast_margins(), label=Text("broadcasting (3, 1) with (2,)", "бродкастинг (3, 1) и (2,)"))
    yield Case(args=([0.3, -0.3], 0.5), label=Text("a list of margins", "список отступов"))
    yield Case(args=(0.8, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"), hidden=False)
    yield Case(args=(0.8, -0.2), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
    yield Case(args=(np.nan, 0.2), raises=ValueError, label=Text("a NaN margin is refused", "отступ NaN отклоняется"), hidden=False)
    yield Case(args=(np.zeros(0), 1.0), edge="shapes",
               label=Text("an empty array of margins", "пустой массив отступов"))
    yield Case(args=(np.array([0.5]), 2.0), edge="shapes", hidden=False,
               label=Text("public: an array of one margin", "открытый пример: массив из одного отступа"))
    yield Case(args=(np.array([[-1.0], [1.0]]), np.array([0.5, 2.0])), edge="shapes",
               label=Text("broadcasting (2, 1) with (2,): a square table", "бродкастинг (2, 1) и (2,): квадратная таблица"))
    yield Case(args=([1, -2, 0], 1), edge="python_types", hidden=False,
               label=Text("public: an int list and an int beta give floats", "открытый пример: список целых и целое beta дают числа float"))
    yield Case(args=(0.8, np.float32(0.25)), edge="python_types", hidden=False,
               label=Text("public: a NumPy float32 beta (a Python float back)", "открытый пример: beta — NumPy float32 (возвращается число float)"))
    yield from hypothesis_cases(_margin_and_beta, count=15, seed=8_107, to_case=lambda p: Case(args=p))


@exercise(f"{M}.dpo_gradient_weight", 
          edges=declare("shapes", "python_types", "extremes", "zeros_and_empties", ties_and_near_ties=NO_TIES, boundaries="beta > 0 is open (beta = 0 is a refusal row); the margin h is unbounded", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _dpo_gradient_weight():
    margins = np.linspace(-5.0, 5.0, 401)
    for beta in (0.5, 1.0, 2.0):
        yield Case(args=(margins, beta), label=Text(f"seed: the weight curve, beta = {beta}", f"из ноутбука: кривая веса, beta = {beta}"), hidden=False)
    yield Case(args=(1.0,), kwargs={"beta": 2.0}, label=Text("public: h = 1, beta = 2: 2 sigma(-2)", "открытый пример: h = 1, beta = 2: 2 sigma(-2)"), hidden=False)
    yield Case(args=(0.0, 2.0), edge="zeros_and_empties", label=Text("h = 0: beta / 2", "h = 0: beta / 2"))
    yield Case(args=(EXTREME, 1.0), edge="extremes", label=Text("extreme margins +-1e4 (no overflow, no NaN)", "экстремальные отступы +-1e4 (без переполнения и NaN)"))
    yield Case(args=(np.array([-5e3, 5e3]), np.array([2.0, 0.5])), label=Text("large beta h with array beta", "большое beta h, beta — массив"))
    yield Case(args=_broadcast_margins(), label=Text("broadcasting (3, 1) with (2,)", "бродкастинг (3, 1) и (2,)"))
    yield Case(args=(0.8, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"), hidden=False)
    yield Case(args=(np.inf, 1.0), raises=ValueError, label=Text("an infinite margin is refused", "бесконечный отступ отклоняется"), hidden=False)
    yield Case(args=(np.zeros(0), 1.0), edge="shapes",
               label=Text("an empty array of margins", "пустой массив отступов"))
    yield Case(args=(np.array([0.5]), 2.0), edge="shapes", hidden=False,
               label=Text("public: an array of one margin", "открытый пример: массив из одного отступа"))
    yield Case(args=(np.array([[-1.0], [1.0]]), np.array([0.5, 2.0])), edge="shapes",
               label=Text("broadcasting (2, 1) with (2,): a square table", "бродкастинг (2, 1) и (2,): квадратная таблица"))
    yield Case(args=([1, -2, 0], 1), edge="python_types", hidden=False,
               label=Text("public: an int list and an int beta give floats", "открытый пример: список целых и целое beta дают числа float"))
    yield Case(args=(0.8, np.float32(0.25)), edge="python_types",
               label=Text("a NumPy float32 beta (a Python float back)", "beta — NumPy float32 (возвращается число float)"))
    yield from hypothesis_cases(_margin_and_beta, count=15, seed=8_108, to_case=lambda p: Case(args=p))


@exercise(f"{M}.conservative_dpo_loss", 
          edges=declare("shapes", "python_types", "extremes", "boundaries", ties_and_near_ties=NO_TIES, zeros_and_empties="eps = 0 is the boundary of [0, 0.5) (boundaries); h = 0 is no edge of its own", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _conservative_dpo_loss():
    yield Case(args=(0.8,), kwargs={"beta": 0.2, "label_smoothing": 0.1}, label=Text("seed: cDPO eps = 0.1", "из ноутбука: cDPO eps = 0.1"),
               hidden=False)
    yield Case(args=(0.8, 0.2, 0.0), edge="boundaries", label=Text("eps = 0 is plain DPO", "eps = 0 — обычный DPO"))
    yield Case(args=(-1.5, 1.0, 0.3), label=Text("a wrong pair, eps = 0.3", "пара в неверном порядке, eps = 0.3"))
    yield Case(args=(EXTREME, 1.0, 0.1), label=Text("extreme margins +-1e4 (no overflow)", "экстремальные отступы +-1e4 (без переполнения)"))
    yield Case(args=(EXTREME,), kwargs={"beta": 0.5, "label_smoothing": 0.2},
               edge="extremes", label=Text("public: extreme margins +-1e4, beta = 0.5, eps = 0.2 (no overflow)", "открытый пример: экстремальные отступы +-1e4, beta = 0.5, eps = 0.2 (без переполнения)"),
               hidden=False)
    yield Case(args=(0.8, 0.2, 0.0), edge="boundaries",
               label=Text("public: eps = 0 is plain DPO at h = 0.8, beta = 0.2", "открытый пример: при eps = 0 это обычный DPO, h = 0.8, beta = 0.2"),
               hidden=False)
    yield Case(args=(np.array([-5e3, 5e3]), 2.0, np.array([0.25, 0.0])), label=Text("beta h = +-1e4 with array eps", "beta h = +-1e4, eps — массив"))
    yield Case(args=(np.array([[-1.0], [2.0]]), 0.5, np.array([0.0, 0.2, 0.45])),
               label=Text("broadcasting h (2, 1) with eps (3,)", "бродкастинг h (2, 1) и eps (3,)"))
    yield Case(args=(np.array([0.5, -0.5, 4.0]), np.array([1.0, 2.0, 0.1]), 0.25), label=Text("array beta", "beta — массив"))
    yield Case(args=(0.8, 0.2, 0.5), raises=ValueError, label=Text("eps = 0.5 is refused", "eps = 0.5 отклоняется"), hidden=False)
    yield Case(args=(0.8, 0.2, -0.1), raises=ValueError, hidden=False, label=Text("eps < 0 is refused", "eps < 0 отклоняется"))
    yield Case(args=(np.array([1.0, -1.0]), 1.0, np.array([0.1, 0.6])), raises=ValueError, hidden=False,
               label=Text("public: one eps >= 0.5 in an array is refused", "открытый пример: одно eps >= 0.5 в массиве отклоняется"))
    yield Case(args=(0.8, 0.2, np.array([0.1, -0.1])), raises=ValueError, hidden=False,
               label=Text("public: one eps < 0 in an array is refused", "открытый тест: одно eps < 0 в массиве отклоняется"))
    yield Case(args=(0.8, -1.0, 0.1), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"), hidden=False)
    problems = st.tuples(_floats(-30.0, 30.0), _floats(0.01, 5.0), _floats(0.0, 0.49))
    yield Case(args=(np.zeros(0), 1.0, 0.1), edge="shapes",
               label=Text("an empty array of margins", "пустой массив отступов"))
    yield Case(args=(np.array([0.5]), 2.0, 0.25), edge="shapes", hidden=False,
               label=Text("public: an array of one margin", "открытый пример: массив из одного отступа"))
    yield Case(args=(np.array([[-1.0], [2.0]]), 1.0, np.array([0.0, 0.25])), edge="shapes",
               label=Text("broadcasting h (2, 1) with eps (2,): a square table", "бродкастинг h (2, 1) и eps (2,): квадратная таблица"))
    yield Case(args=([1, -1], 1, 0), edge="python_types", hidden=False,
               label=Text("public: an int list, int beta and eps give floats", "открытый пример: список целых, целые beta и eps дают числа float"))
    yield Case(args=(0.8, np.float32(0.5), np.float32(0.125)), edge="python_types",
               label=Text("NumPy float32 beta and eps (a Python float back)", "beta и eps — NumPy float32 (возвращается число float)"))
    yield from hypothesis_cases(problems, count=15, seed=8_109, to_case=lambda p: Case(args=p))


@exercise(f"{M}.ipo_loss", 
          edges=declare("shapes", "python_types", "extremes", "zeros_and_empties", ties_and_near_ties=NO_TIES, boundaries="tau > 0 is open (tau = 0 is a refusal row)", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _ipo_loss():
    yield Case(args=(0.8,), kwargs={"tau": 0.5}, label=Text("seed: IPO tau = 0.5", "из ноутбука: IPO tau = 0.5"), hidden=False)
    yield Case(args=(0.0, 0.1), edge="zeros_and_empties", label=Text("tau = 0.1: target 5", "tau = 0.1: целевой отступ 5"))
    yield Case(args=(np.array([-1.0, 0.0, 0.25, 3.0]), 2.0), label=Text("an array of margins, tau = 2", "массив отступов, tau = 2"))
    yield Case(args=(np.array([[0.0], [1.0]]), np.array([0.25, 1.0, 4.0])), label=Text("broadcasting (2, 1) with (3,)", "бродкастинг (2, 1) и (3,)"))
    yield Case(args=(EXTREME, 0.5), edge="extremes", label=Text("extreme margins +-1e4", "экстремальные отступы +-1e4"))
    yield Case(args=(0.8, 0.0), raises=ValueError, label=Text("tau = 0 is refused", "tau = 0 отклоняется"), hidden=False)
    yield Case(args=(0.8, -0.5), raises=ValueError, label=Text("tau < 0 is refused", "tau < 0 отклоняется"))
    problems = st.tuples(_floats(-10.0, 10.0), _floats(0.05, 10.0))
    yield Case(args=(np.zeros(0), 0.5), edge="shapes",
               label=Text("an empty array of margins", "пустой массив отступов"))
    yield Case(args=(np.array([0.25]), 2.0), edge="shapes", hidden=False,
               label=Text("public: an array of one margin", "открытый пример: массив из одного отступа"))
    yield Case(args=(np.array([[0.0], [1.0]]), np.array([0.5, 2.0])), edge="shapes",
               label=Text("broadcasting (2, 1) with (2,): a square table", "бродкастинг (2, 1) и (2,): квадратная таблица"))
    yield Case(args=([1, 0, 3], 1), edge="python_types", hidden=False,
               label=Text("public: an int list and an int tau give floats", "открытый пример: список целых и целое tau дают числа float"))
    yield Case(args=(0.75, np.float32(0.5)), edge="python_types",
               label=Text("a NumPy float32 tau (a Python float back)", "tau — NumPy float32 (возвращается число float)"))
    yield from hypothesis_cases(problems, count=15, seed=8_110, to_case=lambda p: Case(args=p))


@exercise(f"{M}.simpo_loss", 
          edges=declare("shapes", "python_types", "extremes", "zeros_and_empties", ties_and_near_ties=NO_TIES, boundaries="lengths >= 1 and beta > 0: 0 is a refusal row", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _simpo_loss():
    yield Case(args=(-4.0, 4, -5.4, 6), kwargs={"beta": 2.0, "target_margin": 0.3},
               label=Text("seed: SimPO(-4, 4, -5.4, 6, beta=2, gamma=0.3)", "из ноутбука: SimPO(-4, 4, -5.4, 6, beta=2, gamma=0.3)"), hidden=False)
    yield Case(args=(-12.0, 10, -3.0, 2, 2.5, 0.0), edge="zeros_and_empties", label=Text("gamma = 0, unequal lengths", "gamma = 0, разные длины"))
    yield Case(args=(-2.0, 4, -30.0, 12, 0.5, 1.2), label=Text("beta = 0.5, gamma = 1.2", "beta = 0.5, gamma = 1.2"))
    yield Case(args=(np.array([-400.0, -1.0]), 2, np.array([-1.0, -400.0]), 2, 1.0, 0.0),
               edge="extremes", label=Text("large margins +-200", "большие отступы +-200"))
    yield Case(args=(np.array([-3.0, -8.0, -1.5]), np.array([3, 4, 1]), np.array([-6.0, -2.0, -9.0]),
                     np.array([2, 5, 3]), 2.0, 0.5), label=Text("arrays of sums and lengths", "массивы сумм и длин"))
    yield Case(args=(np.array([[-3.0], [-6.0]]), 3, np.array([-4.0, -5.0, -9.0]), 5, 1.5, 0.2),
               label=Text("broadcasting (2, 1) with (3,)", "бродкастинг (2, 1) и (3,)"))
    yield Case(args=(-4.0, 0, -5.4, 6, 2.0, 0.3), raises=ValueError, label=Text("a zero length is refused", "нулевая длина отклоняется"), hidden=False)
    yield Case(args=(-4.0, 4, -5.4, -6, 2.0, 0.3), raises=ValueError, label=Text("a negative length is refused", "отрицательная длина отклоняется"))
    yield Case(args=(-4.0, 4, -5.4, 6, 0.0, 0.3), raises=ValueError, hidden=False,
               label=Text("beta = 0 is refused", "beta = 0 отклоняется"))
    problems = st.tuples(_floats(-40.0, -0.1), st.integers(1, 20), _floats(-40.0, -0.1), st.integers(1, 20),
                         _floats(0.1, 5.0), _floats(0.0, 2.0))
    yield Case(args=(np.zeros(0), 2, np.zeros(0), 3, 1.0, 0.0), edge="shapes",
               label=Text("empty arrays of sums", "пустые массивы сумм"))
    yield Case(args=(np.array([-4.0]), np.array([4]), np.array([-6.0]), np.array([3]), 2.0, 0.5), edge="shapes", hidden=False,
               label=Text("public: arrays of one pair", "открытый пример: массивы из одной пары"))
    yield Case(args=(np.array([[-3.0], [-6.0]]), 3, np.array([-4.0, -5.0]), np.array([5, 2]), 1.5, 0.25), edge="shapes",
               label=Text("broadcasting (2, 1) with (2,): a square table", "бродкастинг (2, 1) и (2,): квадратная таблица"))
    yield Case(args=(-4, 4, [-6, -3], [3, 2], 2, 0), edge="python_types", hidden=False,
               label=Text("public: ints and int lists give floats", "открытый пример: целые числа и списки целых дают числа float"))
    yield Case(args=(np.float32(-4.0), np.int64(4), np.float32(-6.0), np.int64(3), np.float32(2.0), np.float32(0.5)), edge="python_types",
               label=Text("NumPy scalars (a Python float back)", "скаляры NumPy (возвращается число float)"))
    yield from hypothesis_cases(problems, count=15, seed=8_111, to_case=lambda p: Case(args=p))


@exercise(f"{M}.orpo_total_loss", 
          edges=declare("shapes", "python_types", "extremes", "zeros_and_empties", ties_and_near_ties=NO_TIES, boundaries="mean log-probabilities < 0 is open (0 is a refusal row); the near-0 side is extremes", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _orpo_total_loss():
    yield Case(args=(0.8, -0.7, -1.5), kwargs={"lam": 0.2}, label=Text("seed: ORPO(0.8, -0.7, -1.5, lam=0.2)", "из ноутбука: ORPO(0.8, -0.7, -1.5, lam=0.2)"),
               hidden=False)
    yield Case(args=(1.3, -0.2, -0.05, 1.0), hidden=False,
               label=Text("public: chosen less likely than rejected, lam = 1", "открытый тест: выбранный ответ менее вероятен, чем отвергнутый, lam = 1"))
    yield Case(args=(0.5, -2.0, -1.0, 0.0), edge="zeros_and_empties", label=Text("lam = 0: the NLL alone", "lam = 0: только NLL"))
    yield Case(args=(0.2, -1e-3, -4.0, 0.5), label=Text("a mean log-probability near 0", "средний логарифм вероятности около 0"))
    yield Case(args=(0.1, -1e-300, -3e-300), kwargs={"lam": 0.5},
               edge="extremes", label=Text("public: m = -1e-300 and -3e-300, log-odds finite (L = 0.1 + 0.5 log(4/3))", "открытый пример: m = -1e-300 и -3e-300, логарифм шансов конечен (L = 0.1 + 0.5 log(4/3))"),
               hidden=False)
    yield Case(args=(0.1, -1.5e-15, -4.5e-15), kwargs={"lam": 0.5},
               label=Text("public: m = -1.5e-15 and -4.5e-15, log(1 - e^m) to full precision (L = 0.1 + 0.5 log(4/3))", "открытый пример: m = -1.5e-15 и -4.5e-15, log(1 - e^m) с полной точностью "
                        "(L = 0.1 + 0.5 log(4/3))"), hidden=False)
    yield Case(args=(0.4, np.array([-2e-300, -1e-14, -7e-13]), np.array([-1e-300, -6e-14, -2e-12]), 1.5),
               edge="extremes", label=Text("mean log-probabilities close to 0- (arrays, lam = 1.5)", "средние логарифмы вероятностей около 0- (массивы, lam = 1.5)"))
    yield Case(args=(2.0, -30.0, -0.3, 0.1), label=Text("a very unlikely chosen response", "очень маловероятный выбранный ответ"))
    yield Case(args=(np.array([0.8, 1.2, 0.1]), np.array([-0.7, -2.5, -0.05]), np.array([-1.5, -0.4, -3.0]),
                     0.2), label=Text("arrays", "массивы"))
    yield Case(args=(0.6, np.array([[-0.3], [-1.2]]), np.array([-0.1, -0.9, -2.0]), np.array([0.1, 0.5, 1.0])),
               label=Text("broadcasting (2, 1) with (3,)", "бродкастинг (2, 1) и (3,)"))
    yield Case(args=(0.8, 0.0, -1.5, 0.2), raises=ValueError, label=Text("chosen_mean_logp = 0 is refused", "chosen_mean_logp = 0 отклоняется"))
    yield Case(args=(0.8, -0.7, 0.3, 0.2), raises=ValueError, label=Text("rejected_mean_logp > 0 is refused", "rejected_mean_logp > 0 отклоняется"))
    yield Case(args=(0.8, np.array([-0.7, 0.1]), np.array([-1.5, -0.4]), 0.2), raises=ValueError, hidden=False,
               label=Text("public: one mean log-probability >= 0 in an array is refused",
                          "открытый пример: один средний логарифм вероятности >= 0 в массиве отклоняется"))
    yield Case(args=(0.8, -0.7, -1.5, -0.2), raises=ValueError, label=Text("lam < 0 is refused", "lam < 0 отклоняется"), hidden=False)
    yield Case(args=(-0.8, -0.7, -1.5, 0.2), raises=ValueError, label=Text("a negative NLL is refused", "отрицательный NLL отклоняется"))
    problems = st.tuples(_floats(0.0, 5.0), _floats(-8.0, -0.02), _floats(-8.0, -0.02), _floats(0.0, 2.0))
    yield Case(args=(np.zeros(0), np.zeros(0) - 1.0, np.zeros(0) - 1.0, 0.5), edge="shapes",
               label=Text("empty arrays", "пустые массивы"))
    yield Case(args=(np.array([0.5]), np.array([-0.5]), np.array([-1.5]), 0.25), edge="shapes", hidden=False,
               label=Text("public: arrays of one pair", "открытый пример: массивы из одной пары"))
    yield Case(args=(0.5, np.array([[-0.25], [-1.0]]), np.array([-0.5, -2.0]), 1.0), edge="shapes",
               label=Text("broadcasting (2, 1) with (2,): a square table", "бродкастинг (2, 1) и (2,): квадратная таблица"))
    yield Case(args=(1, [-1, -2], [-2, -1], 1), edge="python_types", hidden=False,
               label=Text("public: ints and int lists give floats", "открытый пример: целые числа и списки целых дают числа float"))
    yield Case(args=(np.float32(0.5), np.float32(-0.5), np.float32(-1.5), np.float32(0.25)), edge="python_types",
               label=Text("NumPy float32 scalars (a Python float back)", "скаляры NumPy float32 (возвращается число float)"))
    yield from hypothesis_cases(problems, count=15, seed=8_112, to_case=lambda p: Case(args=p))


@exercise(f"{M}.likelihood_displacement_curve", 
          edges=declare("shapes", "python_types", "extremes", "zeros_and_empties", ties_and_near_ties=NO_TIES, boundaries="t is unbounded: no domain edge", large_padding=NO_PADDING, number_formats=NO_TEXT, dtypes=SCALAR_FLOATS),
          points=2)
def _likelihood_displacement_curve():
    yield Case(args=(np.linspace(0.0, 1.0, 301),), edge="zeros_and_empties", label=Text("seed: the displacement curve on [0, 1]", "из ноутбука: кривая смещения правдоподобия на [0, 1]"), hidden=False)
    yield Case(args=(0.5,), label=Text("a scalar t (floats back)", "скалярное t (возвращаются float)"))
    yield Case(args=(np.array([-1.0, -0.25, 0.0]),), edge="zeros_and_empties", label=Text("negative t", "отрицательные t"))
    yield Case(args=(np.array([5.0, 10.0]),), edge="extremes", label=Text("larger t: a tiny rejected probability", "большие t: очень малая вероятность отвергнутого ответа"))
    yield Case(args=(np.array([[0.1, 0.2], [0.3, 0.4]]),), label=Text("a (2, 2) array of t", "массив t формы (2, 2)"))
    yield Case(args=(np.nan,), raises=ValueError, label=Text("a NaN t is refused", "t = NaN отклоняется"), hidden=False)
    yield Case(args=(np.zeros(0),), edge="shapes",
               label=Text("an empty array of t", "пустой массив t"))
    yield Case(args=(np.array([0.5]),), edge="shapes", hidden=False,
               label=Text("public: an array of one t", "открытый пример: массив из одного t"))
    yield Case(args=(np.array([[0.0, -0.5], [0.25, 1.0]]),), edge="shapes",
               label=Text("a square (2, 2) array of t", "квадратный массив t формы (2, 2)"))
    yield Case(args=([0, 1, -1],), edge="python_types", hidden=False,
               label=Text("public: an int list of t gives floats", "открытый пример: список целых t даёт числа float"))
    yield Case(args=(np.float32(0.5),), edge="python_types",
               label=Text("a NumPy float32 t (Python floats back)", "t — NumPy float32 (возвращаются числа float)"))
    yield from hypothesis_cases(_floats(-3.0, 3.0), count=10, seed=8_113, to_case=lambda t: Case(args=(t,)))
