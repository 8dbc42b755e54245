"""Hidden checks of the KL-regularised optimum, the reward-KL frontier and token-level KL shaping.
"""

from __future__ import annotations

import numpy as np

from graders.checks.edges import NO_PADDING, NO_TEXT, SCALAR_FLOATS, declare
from graders.checks import Answered, Case, hypothesis_cases, st
from graders.text import Text
from graders.checks.module_8_reference.common import M, PI_REF, REWARDS, SEED_BETAS, _floats, _policy_problem, exercise

# ---------------------------------------------------------------------------
# The KL-regularised optimum
# ---------------------------------------------------------------------------
@exercise(f"{M}.optimal_kl_policy", 
          edges=declare("extremes", "zeros_and_empties", "dtypes", "shapes", "python_types", ties_and_near_ties="tied rewards weigh alike; a tie in the max that shifts the logits gives the same policy", boundaries="beta > 0 is an open interval: beta = 0 is a refusal row, a zero reference entry is zeros_and_empties", large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=2)
def _optimal_kl_policy():
    yield Case(args=(PI_REF, REWARDS), kwargs={"beta": 1.0}, label=Text("seed: beta = 1 optimum", "из ноутбука: оптимум при beta = 1"), hidden=False)
    yield Case(args=(PI_REF, REWARDS + 100.0), kwargs={"beta": 1.0},
               label=Text("seed: rewards shifted by +100 (shift invariance)", "из ноутбука: награды сдвинуты на +100 (инвариантность к сдвигу)"), hidden=False)
    yield Case(args=(PI_REF, REWARDS), kwargs={"beta": 0.5}, label=Text("public: beta = 0.5 divides the rewards", "открытый пример: beta = 0.5 делит награды"), hidden=False)
    for beta in (4.0, 0.5, 0.25):
        yield Case(args=(PI_REF, REWARDS, beta), label=Text(f"seed reference and rewards, beta = {beta}", f"референс и награды из ноутбука, beta = {beta}"))
    yield Case(args=(PI_REF, np.array([1000.0, 1001.0, 999.0]), 1.0),
               edge="extremes", label=Text("large rewards: r/beta ~ 1000 must not overflow", "большие награды: r/beta ~ 1000 без переполнения"))
    yield Case(args=(PI_REF, REWARDS * 10.0, 0.01), label=Text("small beta: r/beta up to 1000 must not overflow", "малое beta: r/beta до 1000 без переполнения"))
    yield Case(args=(np.array([0.5, 0.0, 0.5]), np.array([0.0, 3.0, 1.0]), 0.5),
               edge="zeros_and_empties", hidden=False,
               label=Text("public: a zero-probability reference entry stays at 0", "открытый тест: элемент референса с нулевой вероятностью остаётся равным 0"))
    yield Case(args=(np.array([0.5, 0.5, 0.0]), np.array([0.0, 1.0, 1000.0]), 0.01),
               edge=('zeros_and_empties', 'extremes'), label=Text("zero-probability entry with a huge reward stays at 0", "элемент с нулевой вероятностью и огромной наградой остаётся равным 0"))
    yield Case(args=([0.2, 0.3, 0.5], [1.0, -1.0, 0.5], 2.0), edge="dtypes", label=Text("lists as inputs", "списки на входе"))
    yield Case(args=(np.array([1.0]), np.array([3.0]), 0.7), edge="shapes", label=Text("a single response", "единственный ответ"))
    yield Case(args=(np.array([1.0]), np.array([-2.0]), 0.25), edge="shapes", hidden=False,
               label=Text("public: one response: pi* = (1,)", "открытый пример: один ответ: pi* = (1,)"))
    yield Case(args=(np.array([0.25, 0.25, 0.5]), [1, 0, 2], 1), edge="python_types", hidden=False,
               label=Text("public: int rewards and an int beta", "открытый пример: целые награды и целое beta"))
    yield Case(args=(np.array([0.25, 0.25, 0.5], dtype=np.float32), np.array([1.0, 0.0, 2.0], dtype=np.float32),
                     np.float32(0.5)), edge="dtypes", hidden=False,
               label=Text("public: float32 inputs give a float64 policy", "открытый пример: входы float32 дают политику float64"))
    yield Case(args=(np.array([0.5, 0.5]), np.array([1000.0, 0.0]), 1.0), edge="extremes",
               label=Text("public: rewards 1000 apart, pi* = (1, 0) (exp(1000) overflows: shift first)",
                          "открытый пример: награды различаются на 1000, pi* = (1, 0) (exp(1000) переполняется: сначала сдвиг)"),
               hidden=False)
    yield Case(args=(PI_REF, REWARDS, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"), hidden=False)
    yield Case(args=(PI_REF, REWARDS, -1.0), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
    yield Case(args=(PI_REF, np.array([0.0, 1.0]), 1.0), raises=ValueError,
               label=Text("rewards of another length are refused", "награды другой длины отклоняются"), hidden=False)
    yield from hypothesis_cases(_policy_problem(False), count=15, seed=8_101,
                                to_case=lambda p: Case(args=p))


# reward_kl_frontier may build on the learner's own optimal_kl_policy: its calls are answered with the
# reference's optimum for exactly this case's inputs (sealed data, graders/engine/judging/answers.py), so only the
# frontier's own formulas (E[r], KL, the table) are graded here, and it earns nothing while the optimum is unimplemented
OPTIMUM = Answered(("optimal_kl_policy",))


@exercise(f"{M}.reward_kl_frontier", 
          edges=declare("extremes", "zeros_and_empties", "ties_and_near_ties", "shapes", "python_types", boundaries="betas > 0 is open: beta = 0 is a refusal row; a zero reference entry is zeros_and_empties", large_padding=NO_PADDING, dtypes=SCALAR_FLOATS, number_formats=NO_TEXT),
          points=2, call=OPTIMUM)
def _reward_kl_frontier():
    yield Case(args=(PI_REF, REWARDS, SEED_BETAS), label=Text("seed: the frontier table", "из ноутбука: таблица границы «награда–KL»"), hidden=False)
    yield Case(args=(PI_REF, REWARDS, np.array([0.25, 1.0, 4.0])), edge="shapes", label=Text("betas in increasing order", "значения beta по возрастанию"))
    yield Case(args=(PI_REF, REWARDS, np.array([0.5])), edge="shapes", hidden=False,
               label=Text("public: an array of one beta: a (1, K) table of policies",
                          "открытый пример: массив из одного beta: таблица политик (1, K)"))
    yield Case(args=(np.array([0.25, 0.75]), np.array([1.0, 0.0]), np.array([0.5, 2.0])), edge="shapes",
               label=Text("two responses, two betas (a square table)", "два ответа, два beta (квадратная таблица)"))
    yield Case(args=([0.25, 0.25, 0.5], [1, 0, 2], [1, 2]), edge="python_types", hidden=False,
               label=Text("public: lists, int rewards and betas", "открытый пример: списки, целые награды и beta"))
    yield Case(args=(PI_REF, REWARDS, 1.0), label=Text("a scalar beta counts as M = 1", "скалярное beta считается как M = 1"))
    yield Case(args=(np.array([0.5, 0.0, 0.5]), np.array([0.0, 3.0, 1.0]), np.array([0.5, 2.0])),
               edge="zeros_and_empties", label=Text("a zero-probability reference entry (0 log 0 = 0)", "элемент референса с нулевой вероятностью (0 log 0 = 0)"))
    yield Case(args=(PI_REF, REWARDS, np.array([1e-3, 1e4])),
               edge="extremes", label=Text("extreme betas: a near one-hot optimum and pi* ~ pi_ref", "крайние beta: почти one-hot оптимум и pi* ~ pi_ref"))
    yield Case(args=([0.25, 0.25, 0.25, 0.25], [1.0, 1.0, 1.0, 1.0], [0.5, 3.0]),
               edge="ties_and_near_ties", label=Text("equal rewards: pi* = pi_ref, KL = 0", "равные награды: pi* = pi_ref, KL = 0"))
    yield Case(args=(PI_REF, REWARDS, np.array([1.0, 0.0])), raises=ValueError,
               label=Text("a beta of 0 is refused", "beta, равное 0, отклоняется"), hidden=False)
    yield Case(args=(np.array([0.5, 0.6, -0.1]), REWARDS, SEED_BETAS), raises=ValueError,
               label=Text("a reference with a negative entry is refused", "референс с отрицательным элементом отклоняется"), hidden=False)
    yield from hypothesis_cases(_policy_problem(True), count=12, seed=8_102,
                                to_case=lambda p: Case(args=p))


# ---------------------------------------------------------------------------
# Token-level KL shaping
# ---------------------------------------------------------------------------
def _shaping_problem():
    """(policy_logp, reference_logp, terminal, beta, mask) for N x T, masks with gaps."""
    def build(shape):
        rows, width = shape
        logps = st.lists(_floats(-6.0, -0.01), min_size=rows * width, max_size=rows * width).map(
            lambda v: np.array(v).reshape(rows, width))
        masks = st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=width, max_size=width)
                         .filter(lambda row: any(row)), min_size=rows, max_size=rows).map(np.array)
        terminal = st.lists(_floats(-3.0, 3.0), min_size=rows, max_size=rows).map(np.array)
        return st.tuples(logps, logps, terminal, _floats(0.0, 1.0), masks)
    return st.tuples(st.integers(1, 3), st.integers(2, 7)).flatmap(build)


@exercise(f"{M}.shape_token_rewards", 
          edges=declare("zeros_and_empties", "large_padding", "dtypes", "shapes", "python_types", extremes="log-probabilities enter linearly (beta times a difference): no exp to overflow", ties_and_near_ties="the only argmax runs over the 0/1 mask, whose last active token is the rule", boundaries="beta = 0 is zeros_and_empties; an all-zero mask is a refusal row", number_formats=NO_TEXT),
          points=3)
def _shape_token_rewards():
    policy = np.array([-0.8, -1.1, -0.4, -0.7])
    reference = np.array([-0.9, -0.9, -0.5, -0.6])
    yield Case(args=(policy, reference), kwargs={"terminal_reward": 2.0, "beta": 0.15,
                                                 "mask": np.array([0.0, 1.0, 1.0, 1.0])},
               label=Text("seed: the shaping example", "из ноутбука: пример потокенного формирования наград"), hidden=False)
    yield Case(args=(policy, reference), kwargs={"terminal_reward": 2.0, "beta": 0.15,
                                                 "mask": np.array([1.0, 1.0, 0.0, 0.0])},
               label=Text("public: trailing padding [1, 1, 0, 0], R on the last ACTIVE token", "открытый пример: паддинг в конце [1, 1, 0, 0], R на последнем АКТИВНОМ токене"), hidden=False)
    yield Case(args=(policy, reference, 2.0, 0.15, np.array([1.0, 1.0, 1.0, 0.0])),
               label=Text("right padding: R goes on the last ACTIVE token", "паддинг справа: R ставится на последний АКТИВНЫЙ токен"))
    yield Case(args=(policy, reference, -1.0, 0.5, np.array([0.0, 1.0, 0.0, 1.0])),
               label=Text("a mask with a gap", "маска с пропуском"))
    batch_policy = np.array([[-1.0, -0.5, -2.0, -0.1, -3.0, 0.0],
                             [-0.2, -0.3, -0.4, 0.0, 0.0, 0.0]])
    batch_reference = np.array([[-1.2, -0.4, -1.0, -0.3, -2.5, -9.0],
                                [-0.1, -0.6, -0.2, -7.0, -7.0, -7.0]])
    batch_mask = np.array([[0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
                           [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
    yield Case(args=(batch_policy, batch_reference, np.array([1.0, -2.0]), 0.3, batch_mask),
               label=Text("(N, T) with gaps, padding values on inactive tokens, R per row", "(N, T) с пропусками, значения паддинга на неактивных токенах, своё R для каждой строки"))
    yield Case(args=(batch_policy, batch_reference, 0.5, 0.3, batch_mask),
               label=Text("(N, T) with a scalar R for every row", "(N, T) с одним скалярным R для всех строк"))
    yield Case(args=(np.array([[-1.0, -0.5, -0.25], [-0.5, -1.0, -2.0], [-0.2, -0.4, -0.8]]),
                     np.array([[-0.5, -0.5, -0.5], [-1.0, -1.0, -1.0], [-0.2, -0.2, -0.2]]), 1.0, 0.2,
                     np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])), edge="shapes", hidden=False,
               label=Text("public: a square batch (N = T), each row's last active token elsewhere",
                          "открытый пример: квадратный батч (N = T), последний активный токен у каждой строки свой"))
    padded_policy = np.array([-0.5, -1.5, -np.inf, -np.inf])
    padded_reference = np.array([-0.7, -1.0, -np.inf, -np.inf])
    yield Case(args=(padded_policy, padded_reference, 1.0, 0.2, np.array([1.0, 1.0, 0.0, 0.0])),
               edge="large_padding", label=Text("-inf padding on inactive tokens is ignored", "паддинг -inf на неактивных токенах игнорируется"))
    yield Case(args=(policy, reference, 2.0, 0.0, np.array([0.0, 1.0, 1.0, 1.0])),
               edge="zeros_and_empties", label=Text("beta = 0: only the terminal reward", "beta = 0: только финальная награда"))
    yield Case(args=(policy.tolist(), reference.tolist(), 1.5, 1.0, [0, 0, 1, 0]),
               edge=("dtypes", "python_types"), label=Text("lists, a single active token", "списки, единственный активный токен"))
    yield Case(args=(np.array([[-1.0, -0.5, -0.25]]), np.array([[-0.75, -0.5, -1.0]]), np.array([2.0]), 0.5,
                     np.array([[1.0, 1.0, 0.0]])), edge="shapes", hidden=False,
               label=Text("public: a batch of one (1, T) with R of shape (1,)", "открытый пример: батч из одного ответа (1, T) и R формы (1,)"))
    yield Case(args=(np.array([[-1.0, -0.5, -0.25], [-0.5, -2.0, -1.0], [-0.25, -0.25, -3.0]]),
                     np.array([[-0.75, -0.5, -1.0], [-1.0, -1.0, -1.0], [-0.5, -0.75, -0.25]]),
                     np.array([1.0, -2.0, 3.0]), 0.5,
                     np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])), edge="shapes",
               label=Text("a square batch (N = T), R per row: the last active token of each row",
                          "квадратный батч (N = T), R для каждой строки: последний активный токен строки"))
    yield Case(args=(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), 0.5, np.zeros((0, 3))), edge="shapes",
               label=Text("an empty batch (0, T)", "пустой батч (0, T)"))
    yield Case(args=([[-1.0, -0.5], [-0.25, -1.0]], [[-0.5, -0.5], [-1.0, -0.25]], [1, 2], 1, [[1, 1], [1, 0]]),
               edge="python_types", hidden=False,
               label=Text("public: nested lists, int R and beta, an int mask", "открытый пример: вложенные списки, целые R и beta, целочисленная маска"))
    yield Case(args=(policy, reference, 2.0, 0.15, np.array([False, True, True, False])), edge="python_types",
               label=Text("a boolean mask", "булева маска"))
    yield Case(args=(policy.astype(np.float32), reference.astype(np.float32), np.float32(2.0), np.float32(0.25),
                     np.array([0.0, 1.0, 1.0, 1.0], dtype=np.float32)), edge="dtypes", hidden=False,
               label=Text("public: float32 inputs give float64 rewards", "открытый пример: входы float32 дают награды float64"))
    yield Case(args=(policy, reference, 2.0, 0.15, np.zeros(4)), raises=ValueError,
               label=Text("an all-zero mask is refused", "полностью нулевая маска отклоняется"), hidden=False)
    yield Case(args=(policy, reference, 2.0, 0.15, np.array([0.0, 2.0, 1.0, 1.0])), raises=ValueError,
               label=Text("a mask value other than 0/1 is refused", "значение маски, отличное от 0/1, отклоняется"), hidden=False)
    yield Case(args=(policy, reference[:3], 2.0, 0.15, np.ones(4)), raises=ValueError,
               label=Text("mismatched shapes are refused", "несовпадающие формы отклоняются"), hidden=False)
    yield Case(args=(policy, reference, 2.0, -0.1, np.ones(4)), raises=ValueError,
               label=Text("beta < 0 is refused", "beta < 0 отклоняется"), hidden=False)
    # one bad entry among good ones: a guard that reads np.all as np.any lets each through
    yield Case(args=(np.array([-1.0, np.nan, -0.5, -0.25]), reference, 2.0, 0.15, np.ones(4)), raises=ValueError,
               hidden=False, label=Text("public: one non-finite active policy log-probability is refused",
                                        "открытый пример: одна нечисловая активная лог-вероятность политики отклоняется"))
    yield Case(args=(policy, np.array([-1.0, -0.5, -np.inf, -0.25]), 2.0, 0.15, np.ones(4)), raises=ValueError,
               hidden=False, label=Text("public: one non-finite active reference log-probability is refused",
                                        "открытый пример: одна нечисловая активная лог-вероятность эталона отклоняется"))
    yield Case(args=(np.array([[-1.0, -0.5, -0.25], [-0.5, -2.0, -1.0]]), np.array([[-0.75, -0.5, -1.0],
                                                                                  [-0.5, -1.0, -2.0]]),
                     np.array([1.0, 2.0]), 0.5, np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])), raises=ValueError,
               edge="shapes", hidden=False,
               label=Text("public: a batch with one row without active tokens is refused",
                          "открытый пример: батч, в котором у одной строки нет активных токенов, отклоняется"))
    yield from hypothesis_cases(_shaping_problem(), count=15, seed=8_103,
                                to_case=lambda p: Case(args=p))
