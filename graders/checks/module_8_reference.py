"""Hidden checks of module_8_reference (see graders/checks/__init__.py for the API).

Per exercise: the seed notebook's cases (``hidden=False``), hidden fixed cases
(extreme margins +-1e4, broadcasting, zero-probability reference entries,
masks with gaps), ``ValueError`` cases and Hypothesis cases with a fixed seed.
Every catalogued misconception (graders/misconceptions/module_8_reference/)
fails at least one case of its exercise; the default tolerances (rtol 1e-5,
atol 1e-6) admit a correct float32 implementation.

``reward_kl_frontier`` is graded on its own: while it runs, the learner's
``optimal_kl_policy`` is replaced by the exact optimum (see
:func:`frontier_with_exact_optimum`), so a mistake in the optimum costs points
on ``optimal_kl_policy`` only.

Comparisons are the default ones plus one rule (:func:`_strict_close`): an
infinity matches only the same infinity, so an overflowing misconception is
not named for every wrong finite answer.
"""

from __future__ import annotations

import numpy as np

from graders.checks import DEFAULT_ATOL, DEFAULT_RTOL, Case, Harness, close, hypothesis_cases, st
from graders.checks import exercise as _register
from graders.text import Text

M = "module_8_reference"

PI_REF = np.array([0.55, 0.30, 0.15])
REWARDS = np.array([0.0, 1.0, -0.5])
SEED_BETAS = np.array([4.0, 2.0, 1.0, 0.5, 0.25])
EXTREME = np.array([-1e4, 1e4])


def _infinity_mismatch(expected, got, where: str = "") -> str | None:
    """A reason when ``expected`` holds an infinity that ``got`` does not (at the same place), else None.

    The default comparison's allclose rule |got - exp| <= atol + rtol |exp| accepts ANY finite value
    against an infinite one (inf <= inf); an overflowing misconception (inf) would then be named for
    every wrong finite answer. Only the positions of infinities are checked here.
    """
    if isinstance(expected, dict) and isinstance(got, dict):
        for key, want in expected.items():
            reason = _infinity_mismatch(want, got.get(key), f"{where}[{key!r}]")
            if reason:
                return reason
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for index, (want, have) in enumerate(zip(expected, got)):
            reason = _infinity_mismatch(want, have, f"{where}[{index}]")
            if reason:
                return reason
        return None
    if isinstance(expected, (float, np.ndarray)) and isinstance(got, (float, np.ndarray)):
        want, have = np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
        if want.shape == have.shape and np.any(np.isinf(want) & (have != want)):
            at = Text(f"at {where}", f"в {where}") if where else Text("at the result", "в результате")
            return Text(f"{at}: expected an infinity where the answer is finite (or the other sign)",
                        f"{at.in_('ru')}: ожидалась бесконечность, а ответ конечен (или другого знака)")
    return None


def _strict_close(rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL):
    """The default comparison, except that an infinity matches only the same infinity."""
    base = close(rtol, atol)

    def compare(expected, got, case):
        return base(expected, got, case) or _infinity_mismatch(expected, got)
    return compare


def exercise(exercise_id: str, **options):
    """``graders.checks.exercise`` with the infinity-aware comparison as the default."""
    if "compare" not in options:
        options["compare"] = _strict_close(options.get("rtol", DEFAULT_RTOL), options.get("atol", DEFAULT_ATOL))
    return _register(exercise_id, **options)


def _floats(low: float, high: float):
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def _distributions(min_size: int = 2, max_size: int = 6):
    """Probability vectors: positive weights, normalised (sum 1 within round-off)."""
    weights = st.lists(_floats(0.01, 1.0), min_size=min_size, max_size=max_size)
    return weights.map(lambda w: np.array(w) / np.sum(w))


def _policy_problem(count_betas: bool):
    """(reference, rewards, beta or betas) with matching sizes."""
    def build(draw_reference):
        size = draw_reference.size
        rewards = st.lists(_floats(-5.0, 5.0), min_size=size, max_size=size).map(np.array)
        beta = (st.lists(_floats(0.05, 10.0), min_size=1, max_size=4).map(np.array) if count_betas
                else _floats(0.05, 10.0))
        return st.tuples(st.just(draw_reference), rewards, beta)
    return _distributions().flatmap(build)


# ---------------------------------------------------------------------------
# The KL-regularised optimum
# ---------------------------------------------------------------------------
@exercise(f"{M}.optimal_kl_policy", points=2)
def _optimal_kl_policy():
    yield Case(args=(PI_REF, REWARDS), kwargs={"beta": 1.0}, label=Text("seed: beta = 1 optimum", "из ноутбука: оптимум при beta = 1"), hidden=False)
    yield Case(args=(PI_REF, REWARDS + 100.0), kwargs={"beta": 1.0},
               label=Text("seed: rewards shifted by +100 (shift invariance)", "из ноутбука: награды сдвинуты на +100 (инвариантность к сдвигу)"), hidden=False)
    yield Case(args=(PI_REF, REWARDS), kwargs={"beta": 0.5}, label=Text("public: beta = 0.5 divides the rewards", "открытый пример: beta = 0.5 делит награды"), hidden=False)
    for beta in (4.0, 0.5, 0.25):
        yield Case(args=(PI_REF, REWARDS, beta), label=Text(f"seed reference and rewards, beta = {beta}", f"референс и награды из ноутбука, beta = {beta}"))
    yield Case(args=(PI_REF, np.array([1000.0, 1001.0, 999.0]), 1.0),
               label=Text("large rewards: r/beta ~ 1000 must not overflow", "большие награды: r/beta ~ 1000 без переполнения"))
    yield Case(args=(PI_REF, REWARDS * 10.0, 0.01), label=Text("small beta: r/beta up to 1000 must not overflow", "малое beta: r/beta до 1000 без переполнения"))
    yield Case(args=(np.array([0.5, 0.0, 0.5]), np.array([0.0, 3.0, 1.0]), 0.5),
               label=Text("a zero-probability reference entry stays at 0", "элемент референса с нулевой вероятностью остаётся равным 0"))
    yield Case(args=(np.array([0.5, 0.5, 0.0]), np.array([0.0, 1.0, 1000.0]), 0.01),
               label=Text("zero-probability entry with a huge reward stays at 0", "элемент с нулевой вероятностью и огромной наградой остаётся равным 0"))
    yield Case(args=([0.2, 0.3, 0.5], [1.0, -1.0, 0.5], 2.0), label=Text("lists as inputs", "списки на входе"))
    yield Case(args=(np.array([1.0]), np.array([3.0]), 0.7), label=Text("a single response", "единственный ответ"))
    yield Case(args=(PI_REF, REWARDS, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"))
    yield Case(args=(PI_REF, REWARDS, -1.0), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
    yield Case(args=(PI_REF, np.array([0.0, 1.0]), 1.0), raises=ValueError,
               label=Text("rewards of another length are refused", "награды другой длины отклоняются"))
    yield from hypothesis_cases(_policy_problem(False), count=15, seed=8_101,
                                to_case=lambda p: Case(args=p))


def frontier_with_exact_optimum(fn, learner, starter, *args, **kwargs):
    """Run ``reward_kl_frontier`` with the module's ``optimal_kl_policy`` replaced by the exact optimum.

    A learner's frontier may build on their own ``optimal_kl_policy``; for this
    exercise only the frontier's own formulas (E[r], KL, the table) are graded.
    """
    import numpy as np

    def exact_optimum(reference, rewards, beta):
        reference = np.array(reference, dtype=np.float64)
        rewards = np.array(rewards, dtype=np.float64)
        beta = np.array(beta, dtype=np.float64)
        if reference.ndim != 1 or reference.size == 0 or not np.all(np.isfinite(reference)):
            raise ValueError("reference must be a non-empty 1-D array of finite numbers")
        if np.any(reference < 0) or abs(reference.sum() - 1.0) > 1e-6:  # looser: float32 callers
            raise ValueError("reference must be non-negative and sum to 1")
        if rewards.shape != reference.shape or not np.all(np.isfinite(rewards)):
            raise ValueError("rewards must be finite and shaped like reference")
        if beta.ndim != 0 or not np.isfinite(beta) or beta <= 0:
            raise ValueError("beta must be a finite number > 0")
        support = reference > 0
        logits = np.full(reference.shape, -np.inf)
        logits[support] = np.log(reference[support]) + rewards[support] / float(beta)
        weights = np.exp(logits - logits[support].max())
        return weights / weights.sum()

    missing = object()
    saved = vars(learner).get("optimal_kl_policy", missing)
    learner.optimal_kl_policy = exact_optimum
    try:
        return fn(*args, **kwargs)
    finally:
        if saved is missing:
            del learner.optimal_kl_policy
        else:
            learner.optimal_kl_policy = saved


@exercise(f"{M}.reward_kl_frontier", points=2, call=Harness(frontier_with_exact_optimum, torch=False))
def _reward_kl_frontier():
    yield Case(args=(PI_REF, REWARDS, SEED_BETAS), label=Text("seed: the frontier table", "из ноутбука: таблица границы «награда–KL»"), hidden=False)
    yield Case(args=(PI_REF, REWARDS, np.array([0.25, 1.0, 4.0])), label=Text("betas in increasing order", "значения beta по возрастанию"))
    yield Case(args=(PI_REF, REWARDS, 1.0), label=Text("a scalar beta counts as M = 1", "скалярное beta считается как M = 1"))
    yield Case(args=(np.array([0.5, 0.0, 0.5]), np.array([0.0, 3.0, 1.0]), np.array([0.5, 2.0])),
               label=Text("a zero-probability reference entry (0 log 0 = 0)", "элемент референса с нулевой вероятностью (0 log 0 = 0)"))
    yield Case(args=(PI_REF, REWARDS, np.array([1e-3, 1e4])),
               label=Text("extreme betas: a near one-hot optimum and pi* ~ pi_ref", "крайние beta: почти one-hot оптимум и pi* ~ pi_ref"))
    yield Case(args=([0.25, 0.25, 0.25, 0.25], [1.0, 1.0, 1.0, 1.0], [0.5, 3.0]),
               label=Text("equal rewards: pi* = pi_ref, KL = 0", "равные награды: pi* = pi_ref, KL = 0"))
    yield Case(args=(PI_REF, REWARDS, np.array([1.0, 0.0])), raises=ValueError,
               label=Text("a beta of 0 is refused", "beta, равное 0, отклоняется"))
    yield Case(args=(np.array([0.5, 0.6, -0.1]), REWARDS, SEED_BETAS), raises=ValueError,
               label=Text("a reference with a negative entry is refused", "референс с отрицательным элементом отклоняется"))
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


@exercise(f"{M}.shape_token_rewards", points=3)
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
    padded_policy = np.array([-0.5, -1.5, -np.inf, -np.inf])
    padded_reference = np.array([-0.7, -1.0, -np.inf, -np.inf])
    yield Case(args=(padded_policy, padded_reference, 1.0, 0.2, np.array([1.0, 1.0, 0.0, 0.0])),
               label=Text("-inf padding on inactive tokens is ignored", "паддинг -inf на неактивных токенах игнорируется"))
    yield Case(args=(policy, reference, 2.0, 0.0, np.array([0.0, 1.0, 1.0, 1.0])),
               label=Text("beta = 0: only the terminal reward", "beta = 0: только финальная награда"))
    yield Case(args=(policy.tolist(), reference.tolist(), 1.5, 1.0, [0, 0, 1, 0]),
               label=Text("lists, a single active token", "списки, единственный активный токен"))
    yield Case(args=(policy, reference, 2.0, 0.15, np.zeros(4)), raises=ValueError,
               label=Text("an all-zero mask is refused", "полностью нулевая маска отклоняется"))
    yield Case(args=(policy, reference, 2.0, 0.15, np.array([0.0, 2.0, 1.0, 1.0])), raises=ValueError,
               label=Text("a mask value other than 0/1 is refused", "значение маски, отличное от 0/1, отклоняется"))
    yield Case(args=(policy, reference[:3], 2.0, 0.15, np.ones(4)), raises=ValueError,
               label=Text("mismatched shapes are refused", "несовпадающие формы отклоняются"))
    yield Case(args=(policy, reference, 2.0, -0.1, np.ones(4)), raises=ValueError,
               label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
    yield from hypothesis_cases(_shaping_problem(), count=15, seed=8_103,
                                to_case=lambda p: Case(args=p))


# ---------------------------------------------------------------------------
# Constraints (safe RLHF)
# ---------------------------------------------------------------------------
def _constraint_problem():
    def build(size):
        vector = st.lists(_floats(-2.0, 2.0), min_size=size, max_size=size).map(np.array)
        multipliers = st.lists(_floats(0.0, 5.0), min_size=size, max_size=size).map(np.array)
        return st.tuples(_floats(-5.0, 5.0), vector, vector, multipliers)
    return st.integers(1, 5).flatmap(build)


@exercise(f"{M}.constrained_lagrangian", points=1)
def _constrained_lagrangian():
    yield Case(kwargs={"expected_reward": 1.4, "expected_costs": [0.10, 0.03], "limits": [0.06, 0.04],
                       "multipliers": [2.0, 1.5]}, label=Text("seed: the Lagrangian call", "из ноутбука: вызов лагранжиана"), hidden=False)
    yield Case(args=(0.5, 0.3, 0.1, 2.0), label=Text("scalars count as J = 1", "скаляры считаются как J = 1"))
    yield Case(args=(2.0, np.array([0.1, 0.2, 0.3]), np.array([0.2, 0.2, 0.2]), np.array([0.0, 1.0, 3.0])),
               label=Text("J = 3, one zero multiplier, slack and violation", "J = 3, один нулевой множитель, запас и нарушение"))
    yield Case(args=(0.0, np.array([0.05, 0.01]), np.array([0.10, 0.03]), np.array([4.0, 2.0])),
               label=Text("both constraints satisfied with slack", "оба ограничения выполнены с запасом"))
    yield Case(args=(1.0, [0.1, 0.2], [0.1, 0.1], [1.0, -0.5]), raises=ValueError,
               label=Text("a negative multiplier is refused", "отрицательный множитель отклоняется"))
    yield Case(args=(1.0, [0.1, 0.2], [0.1], [1.0, 0.5]), raises=ValueError,
               label=Text("limits of another length are refused", "limits другой длины отклоняются"))
    yield from hypothesis_cases(_constraint_problem(), count=12, seed=8_104,
                                to_case=lambda p: Case(args=p))


@exercise(f"{M}.dual_ascent_step", points=2)
def _dual_ascent_step():
    yield Case(args=(np.array([0.5, 0.1]), np.array([0.10, 0.00]), np.array([0.06, 0.04])),
               kwargs={"learning_rate": 5.0}, label=Text("the public example: projection onto >= 0", "открытый пример: проекция на >= 0"), hidden=False)
    yield Case(args=(np.array([1.0, 2.0, 0.0]), np.array([0.3, 0.1, 0.5]), np.array([0.2, 0.2, 0.2]), 0.5),
               label=Text("J = 3: raise, lower, raise from 0", "J = 3: рост, снижение, рост от 0"))
    yield Case(args=(0.2, 0.06, 0.1, 10.0), label=Text("scalars: projected to 0 (a float back)", "скаляры: проекция в 0 (возвращается float)"))
    yield Case(args=(0.2, 0.3, 0.1, 1.0), label=Text("scalars: a violated constraint raises lambda", "скаляры: нарушенное ограничение увеличивает lambda"))
    yield Case(args=(np.array([3.0, 0.0]), np.array([0.1, 0.1]), np.array([0.1, 0.1]), 2.0),
               label=Text("constraints exactly met: unchanged", "ограничения выполнены в точности: без изменений"))
    yield Case(args=(np.array([-0.1, 1.0]), np.array([0.1, 0.1]), np.array([0.1, 0.1]), 1.0),
               raises=ValueError, label=Text("a negative multiplier is refused", "отрицательный множитель отклоняется"))
    yield Case(args=(np.array([0.1, 1.0]), np.array([0.1, 0.1]), np.array([0.1, 0.1]), 0.0),
               raises=ValueError, label=Text("learning_rate = 0 is refused", "learning_rate = 0 отклоняется"))
    yield Case(args=(np.array([0.1, 1.0]), np.array([0.1, 0.1, 0.1]), np.array([0.1, 0.1]), 1.0),
               raises=ValueError, label=Text("observed_costs of another length are refused", "observed_costs другой длины отклоняются"))

    def build(size):
        costs = st.lists(_floats(0.05, 1.0), min_size=size, max_size=size).map(np.array)  # E[C] >= 0
        multipliers = st.lists(_floats(0.0, 2.0), min_size=size, max_size=size).map(np.array)
        return st.tuples(multipliers, costs, costs, _floats(0.01, 3.0))
    yield from hypothesis_cases(st.integers(1, 5).flatmap(build), count=12, seed=8_105,
                                to_case=lambda p: Case(args=p))


@exercise(f"{M}.two_action_constrained_optimum", points=2)
def _two_action_constrained_optimum():
    yield Case(args=(0.6, 1.0, 1.0, 0.25), label=Text("the spec's example (q = 0.25, E[R] = 0.7)", "пример из условия (q = 0.25, E[R] = 0.7)"), hidden=False)
    yield Case(args=(0.0, 2.0, 4.0, 1.0), label=Text("public: a binding budget, q = 0.25, multiplier 0.5", "открытый пример: бюджет исчерпан, q = 0.25, множитель 0.5"), hidden=False)
    yield Case(args=(0.2, 0.9, 0.5, 0.8), label=Text("public: a slack budget, q = 1, multiplier 0", "открытый пример: бюджет с запасом, q = 1, множитель 0"), hidden=False)
    yield Case(args=(1.0, 0.5, 2.0, 0.1), label=Text("the risky action is worse: q = 0", "рискованное действие хуже: q = 0"))
    yield Case(args=(0.2, 0.9, 0.5, 0.8), label=Text("a loose budget: q = 1, multiplier 0", "свободный бюджет: q = 1, множитель 0"))
    yield Case(args=(0.0, 2.0, 4.0, 1.0), label=Text("a binding budget: q = d / c", "бюджет исчерпан: q = d / c"))
    yield Case(args=(0.3, 0.8, 2.0, 0.0), label=Text("a zero budget: q = 0, positive multiplier", "нулевой бюджет: q = 0, положительный множитель"))
    yield Case(args=(0.5, 0.5, 1.0, 0.5), label=Text("equal rewards: q = 0", "равные награды: q = 0"))
    yield Case(args=(0.1, 0.4, 0.0, 0.0), label=Text("a free risky action: q = 1", "бесплатное рискованное действие: q = 1"))
    yield Case(args=(0.0, 1.0, 0.5, 2.0), label=Text("a budget four times the cost: q = 1", "бюджет вчетверо больше стоимости: q = 1"))
    yield Case(args=(0.6, 1.0, -1.0, 0.25), raises=ValueError, label=Text("a negative cost is refused", "отрицательная стоимость отклоняется"))
    yield Case(args=(0.6, 1.0, 1.0, -0.25), raises=ValueError, label=Text("a negative budget is refused", "отрицательный бюджет отклоняется"))
    problems = st.tuples(_floats(-2.0, 2.0), _floats(-2.0, 2.0), _floats(0.01, 3.0), _floats(0.0, 3.0))
    yield from hypothesis_cases(problems, count=15, seed=8_106, to_case=lambda p: Case(args=p))


# ---------------------------------------------------------------------------
# DPO and its relatives
# ---------------------------------------------------------------------------
_margin_and_beta = st.tuples(_floats(-50.0, 50.0), _floats(0.01, 5.0))


def _broadcast_margins():
    return np.array([[-2.0], [0.0], [0.5]]), np.array([0.1, 1.0])


@exercise(f"{M}.dpo_loss_from_margin", points=2)
def _dpo_loss_from_margin():
    yield Case(args=(0.8,), kwargs={"beta": 0.2}, label=Text("seed: h = 0.8, beta = 0.2", "из ноутбука: h = 0.8, beta = 0.2"), hidden=False)
    yield Case(args=(0.0, 0.7), label=Text("h = 0: log 2", "h = 0: log 2"))
    yield Case(args=(EXTREME, 1.0), label=Text("extreme margins +-1e4 (no overflow)", "экстремальные отступы +-1e4 (без переполнения)"))
    yield Case(args=(np.array([-5e3, 5e3]), np.array([2.0, 2.0])), label=Text("beta h = +-1e4 with array beta", "beta h = +-1e4, beta — массив"))
    yield Case(args=(np.array([-3.0, -0.5, 0.0, 0.5, 3.0]), 1.5), label=Text("an array of margins", "массив отступов"))
    yield Case(args=_broadcast_margins(), label=Text("broadcasting (3, 1) with (2,)", "бродкастинг (3, 1) и (2,)"))
    yield Case(args=([0.3, -0.3], 0.5), label=Text("a list of margins", "список отступов"))
    yield Case(args=(0.8, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"))
    yield Case(args=(0.8, -0.2), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
    yield Case(args=(np.nan, 0.2), raises=ValueError, label=Text("a NaN margin is refused", "отступ NaN отклоняется"))
    yield from hypothesis_cases(_margin_and_beta, count=15, seed=8_107, to_case=lambda p: Case(args=p))


@exercise(f"{M}.dpo_gradient_weight", points=2)
def _dpo_gradient_weight():
    margins = np.linspace(-5.0, 5.0, 401)
    for beta in (0.5, 1.0, 2.0):
        yield Case(args=(margins, beta), label=Text(f"seed: the weight curve, beta = {beta}", f"из ноутбука: кривая веса, beta = {beta}"), hidden=False)
    yield Case(args=(1.0,), kwargs={"beta": 2.0}, label=Text("public: h = 1, beta = 2: 2 sigma(-2)", "открытый пример: h = 1, beta = 2: 2 sigma(-2)"), hidden=False)
    yield Case(args=(0.0, 2.0), label=Text("h = 0: beta / 2", "h = 0: beta / 2"))
    yield Case(args=(EXTREME, 1.0), label=Text("extreme margins +-1e4 (no overflow, no NaN)", "экстремальные отступы +-1e4 (без переполнения и NaN)"))
    yield Case(args=(np.array([-5e3, 5e3]), np.array([2.0, 0.5])), label=Text("large beta h with array beta", "большое beta h, beta — массив"))
    yield Case(args=_broadcast_margins(), label=Text("broadcasting (3, 1) with (2,)", "бродкастинг (3, 1) и (2,)"))
    yield Case(args=(0.8, 0.0), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"))
    yield Case(args=(np.inf, 1.0), raises=ValueError, label=Text("an infinite margin is refused", "бесконечный отступ отклоняется"))
    yield from hypothesis_cases(_margin_and_beta, count=15, seed=8_108, to_case=lambda p: Case(args=p))


@exercise(f"{M}.conservative_dpo_loss", points=2)
def _conservative_dpo_loss():
    yield Case(args=(0.8,), kwargs={"beta": 0.2, "label_smoothing": 0.1}, label=Text("seed: cDPO eps = 0.1", "из ноутбука: cDPO eps = 0.1"),
               hidden=False)
    yield Case(args=(0.8, 0.2, 0.0), label=Text("eps = 0 is plain DPO", "eps = 0 — обычный DPO"))
    yield Case(args=(-1.5, 1.0, 0.3), label=Text("a wrong pair, eps = 0.3", "пара в неверном порядке, eps = 0.3"))
    yield Case(args=(EXTREME, 1.0, 0.1), label=Text("extreme margins +-1e4 (no overflow)", "экстремальные отступы +-1e4 (без переполнения)"))
    yield Case(args=(EXTREME,), kwargs={"beta": 0.5, "label_smoothing": 0.2},
               label=Text("public: extreme margins +-1e4, beta = 0.5, eps = 0.2 (no overflow)", "открытый пример: экстремальные отступы +-1e4, beta = 0.5, eps = 0.2 (без переполнения)"),
               hidden=False)
    yield Case(args=(np.array([-5e3, 5e3]), 2.0, np.array([0.25, 0.0])), label=Text("beta h = +-1e4 with array eps", "beta h = +-1e4, eps — массив"))
    yield Case(args=(np.array([[-1.0], [2.0]]), 0.5, np.array([0.0, 0.2, 0.45])),
               label=Text("broadcasting h (2, 1) with eps (3,)", "бродкастинг h (2, 1) и eps (3,)"))
    yield Case(args=(np.array([0.5, -0.5, 4.0]), np.array([1.0, 2.0, 0.1]), 0.25), label=Text("array beta", "beta — массив"))
    yield Case(args=(0.8, 0.2, 0.5), raises=ValueError, label=Text("eps = 0.5 is refused", "eps = 0.5 отклоняется"))
    yield Case(args=(0.8, 0.2, -0.1), raises=ValueError, label=Text("eps < 0 is refused", "eps < 0 отклоняется"))
    yield Case(args=(0.8, -1.0, 0.1), raises=ValueError, label=Text("beta < 0 is refused", "beta < 0 отклоняется"))
    problems = st.tuples(_floats(-30.0, 30.0), _floats(0.01, 5.0), _floats(0.0, 0.49))
    yield from hypothesis_cases(problems, count=15, seed=8_109, to_case=lambda p: Case(args=p))


@exercise(f"{M}.ipo_loss", points=2)
def _ipo_loss():
    yield Case(args=(0.8,), kwargs={"tau": 0.5}, label=Text("seed: IPO tau = 0.5", "из ноутбука: IPO tau = 0.5"), hidden=False)
    yield Case(args=(0.0, 0.1), label=Text("tau = 0.1: target 5", "tau = 0.1: целевой отступ 5"))
    yield Case(args=(np.array([-1.0, 0.0, 0.25, 3.0]), 2.0), label=Text("an array of margins, tau = 2", "массив отступов, tau = 2"))
    yield Case(args=(np.array([[0.0], [1.0]]), np.array([0.25, 1.0, 4.0])), label=Text("broadcasting (2, 1) with (3,)", "бродкастинг (2, 1) и (3,)"))
    yield Case(args=(EXTREME, 0.5), label=Text("extreme margins +-1e4", "экстремальные отступы +-1e4"))
    yield Case(args=(0.8, 0.0), raises=ValueError, label=Text("tau = 0 is refused", "tau = 0 отклоняется"))
    yield Case(args=(0.8, -0.5), raises=ValueError, label=Text("tau < 0 is refused", "tau < 0 отклоняется"))
    problems = st.tuples(_floats(-10.0, 10.0), _floats(0.05, 10.0))
    yield from hypothesis_cases(problems, count=15, seed=8_110, to_case=lambda p: Case(args=p))


@exercise(f"{M}.simpo_loss", points=2)
def _simpo_loss():
    yield Case(args=(-4.0, 4, -5.4, 6), kwargs={"beta": 2.0, "target_margin": 0.3},
               label=Text("seed: SimPO(-4, 4, -5.4, 6, beta=2, gamma=0.3)", "из ноутбука: SimPO(-4, 4, -5.4, 6, beta=2, gamma=0.3)"), hidden=False)
    yield Case(args=(-12.0, 10, -3.0, 2, 2.5, 0.0), label=Text("gamma = 0, unequal lengths", "gamma = 0, разные длины"))
    yield Case(args=(-2.0, 4, -30.0, 12, 0.5, 1.2), label=Text("beta = 0.5, gamma = 1.2", "beta = 0.5, gamma = 1.2"))
    yield Case(args=(np.array([-400.0, -1.0]), 2, np.array([-1.0, -400.0]), 2, 1.0, 0.0),
               label=Text("large margins +-200", "большие отступы +-200"))
    yield Case(args=(np.array([-3.0, -8.0, -1.5]), np.array([3, 4, 1]), np.array([-6.0, -2.0, -9.0]),
                     np.array([2, 5, 3]), 2.0, 0.5), label=Text("arrays of sums and lengths", "массивы сумм и длин"))
    yield Case(args=(np.array([[-3.0], [-6.0]]), 3, np.array([-4.0, -5.0, -9.0]), 5, 1.5, 0.2),
               label=Text("broadcasting (2, 1) with (3,)", "бродкастинг (2, 1) и (3,)"))
    yield Case(args=(-4.0, 0, -5.4, 6, 2.0, 0.3), raises=ValueError, label=Text("a zero length is refused", "нулевая длина отклоняется"))
    yield Case(args=(-4.0, 4, -5.4, -6, 2.0, 0.3), raises=ValueError, label=Text("a negative length is refused", "отрицательная длина отклоняется"))
    yield Case(args=(-4.0, 4, -5.4, 6, 0.0, 0.3), raises=ValueError, label=Text("beta = 0 is refused", "beta = 0 отклоняется"))
    problems = st.tuples(_floats(-40.0, -0.1), st.integers(1, 20), _floats(-40.0, -0.1), st.integers(1, 20),
                         _floats(0.1, 5.0), _floats(0.0, 2.0))
    yield from hypothesis_cases(problems, count=15, seed=8_111, to_case=lambda p: Case(args=p))


@exercise(f"{M}.orpo_total_loss", points=2)
def _orpo_total_loss():
    yield Case(args=(0.8, -0.7, -1.5), kwargs={"lam": 0.2}, label=Text("seed: ORPO(0.8, -0.7, -1.5, lam=0.2)", "из ноутбука: ORPO(0.8, -0.7, -1.5, lam=0.2)"),
               hidden=False)
    yield Case(args=(1.3, -0.2, -0.05, 1.0), label=Text("chosen less likely than rejected, lam = 1", "выбранный ответ менее вероятен, чем отвергнутый, lam = 1"))
    yield Case(args=(0.5, -2.0, -1.0, 0.0), label=Text("lam = 0: the NLL alone", "lam = 0: только NLL"))
    yield Case(args=(0.2, -1e-3, -4.0, 0.5), label=Text("a mean log-probability near 0", "средний логарифм вероятности около 0"))
    yield Case(args=(0.1, -1e-300, -3e-300), kwargs={"lam": 0.5},
               label=Text("public: m = -1e-300 and -3e-300, log-odds finite (L = 0.1 + 0.5 log(4/3))", "открытый пример: m = -1e-300 и -3e-300, логарифм шансов конечен (L = 0.1 + 0.5 log(4/3))"),
               hidden=False)
    yield Case(args=(0.1, -1.5e-15, -4.5e-15), kwargs={"lam": 0.5},
               label=Text("public: m = -1.5e-15 and -4.5e-15, log(1 - e^m) to full precision (L = 0.1 + 0.5 log(4/3))", "открытый пример: m = -1.5e-15 и -4.5e-15, log(1 - e^m) с полной точностью "
                        "(L = 0.1 + 0.5 log(4/3))"), hidden=False)
    yield Case(args=(0.4, np.array([-2e-300, -1e-14, -7e-13]), np.array([-1e-300, -6e-14, -2e-12]), 1.5),
               label=Text("mean log-probabilities close to 0- (arrays, lam = 1.5)", "средние логарифмы вероятностей около 0- (массивы, lam = 1.5)"))
    yield Case(args=(2.0, -30.0, -0.3, 0.1), label=Text("a very unlikely chosen response", "очень маловероятный выбранный ответ"))
    yield Case(args=(np.array([0.8, 1.2, 0.1]), np.array([-0.7, -2.5, -0.05]), np.array([-1.5, -0.4, -3.0]),
                     0.2), label=Text("arrays", "массивы"))
    yield Case(args=(0.6, np.array([[-0.3], [-1.2]]), np.array([-0.1, -0.9, -2.0]), np.array([0.1, 0.5, 1.0])),
               label=Text("broadcasting (2, 1) with (3,)", "бродкастинг (2, 1) и (3,)"))
    yield Case(args=(0.8, 0.0, -1.5, 0.2), raises=ValueError, label=Text("chosen_mean_logp = 0 is refused", "chosen_mean_logp = 0 отклоняется"))
    yield Case(args=(0.8, -0.7, 0.3, 0.2), raises=ValueError, label=Text("rejected_mean_logp > 0 is refused", "rejected_mean_logp > 0 отклоняется"))
    yield Case(args=(0.8, -0.7, -1.5, -0.2), raises=ValueError, label=Text("lam < 0 is refused", "lam < 0 отклоняется"))
    yield Case(args=(-0.8, -0.7, -1.5, 0.2), raises=ValueError, label=Text("a negative NLL is refused", "отрицательный NLL отклоняется"))
    problems = st.tuples(_floats(0.0, 5.0), _floats(-8.0, -0.02), _floats(-8.0, -0.02), _floats(0.0, 2.0))
    yield from hypothesis_cases(problems, count=15, seed=8_112, to_case=lambda p: Case(args=p))


@exercise(f"{M}.likelihood_displacement_curve", points=2)
def _likelihood_displacement_curve():
    yield Case(args=(np.linspace(0.0, 1.0, 301),), label=Text("seed: the displacement curve on [0, 1]", "из ноутбука: кривая смещения правдоподобия на [0, 1]"), hidden=False)
    yield Case(args=(0.5,), label=Text("a scalar t (floats back)", "скалярное t (возвращаются float)"))
    yield Case(args=(np.array([-1.0, -0.25, 0.0]),), label=Text("negative t", "отрицательные t"))
    yield Case(args=(np.array([5.0, 10.0]),), label=Text("larger t: a tiny rejected probability", "большие t: очень малая вероятность отвергнутого ответа"))
    yield Case(args=(np.array([[0.1, 0.2], [0.3, 0.4]]),), label=Text("a (2, 2) array of t", "массив t формы (2, 2)"))
    yield Case(args=(np.nan,), raises=ValueError, label=Text("a NaN t is refused", "t = NaN отклоняется"))
    yield from hypothesis_cases(_floats(-3.0, 3.0), count=10, seed=8_113, to_case=lambda t: Case(args=(t,)))


# Each exercise's formula typeset for the notebooks' Markdown (`rl4llm build`); the first line of its
# docstring holds the same formula in plain text.
LATEX = {
    "optimal_kl_policy": (
        r"\pi^*(y) = \frac{\pi_{\mathrm{ref}}(y)\, e^{r(y)/\beta}}{Z},\quad Z = \sum_{y} "
        r"\pi_{\mathrm{ref}}(y)\, e^{r(y)/\beta}"
    ),
    "reward_kl_frontier": (
        r"\mathbb{E}_{\pi^*}[r],\quad \mathrm{KL}(\pi^* \,\|\, \pi_{\mathrm{ref}}) = \sum_y \pi^*(y) \log "
        r"\frac{\pi^*(y)}{\pi_{\mathrm{ref}}(y)} \quad \text{for each } \beta"
    ),
    "shape_token_rewards": (
        r"r_t = -\beta \left(\log \pi(y_t \mid \cdot) - \log \pi_{\mathrm{ref}}(y_t \mid \cdot)\right) \;+\; "
        r"R\,[t = \text{last active token}]"
    ),
    "constrained_lagrangian": (
        r"\mathcal{L} = \mathbb{E}[R] - \sum_j \lambda_j \left(\mathbb{E}[C_j] - d_j\right),\quad \lambda_j "
        r"\ge 0"
    ),
    "dual_ascent_step": r"\lambda_j \leftarrow \max\!\left(0,\; \lambda_j + \eta\,(\hat C_j - d_j)\right)",
    "two_action_constrained_optimum": (
        r"\max_q\, (1-q)\, r_{\mathrm{safe}} + q\, r_{\mathrm{risky}} \ \text{ s.t. } q\, c_{\mathrm{risky}} "
        r"\le d:\quad q^* = \min\!\left(1, \frac{d}{c_{\mathrm{risky}}}\right) \text{ if } r_{\mathrm{risky}} "
        r"> r_{\mathrm{safe}} \text{ else } 0"
    ),
    "dpo_loss_from_margin": r"\mathcal{L} = -\log \sigma(\beta h) = \operatorname{softplus}(-\beta h)",
    "dpo_gradient_weight": r"\left|\frac{\partial \mathcal{L}}{\partial h}\right| = \beta\, \sigma(-\beta h)",
    "conservative_dpo_loss": (
        r"\mathcal{L} = (1-\varepsilon)\operatorname{softplus}(-\beta h) + \varepsilon "
        r"\operatorname{softplus}(\beta h)"
    ),
    "ipo_loss": r"\mathcal{L} = \left(h - \frac{1}{2\tau}\right)^2",
    "simpo_loss": (
        r"\mathcal{L} = \operatorname{softplus}(-z),\quad z = \frac{\beta}{|y_w|}\log \pi(y_w) - "
        r"\frac{\beta}{|y_l|}\log \pi(y_l) - \gamma"
    ),
    "orpo_total_loss": (
        r"\mathcal{L} = \mathrm{NLL}_w + \lambda \operatorname{softplus}\!\left(-(\operatorname{logodds}(m_w) "
        r"- \operatorname{logodds}(m_l))\right),\quad \operatorname{logodds}(m) = m - \log(1 - e^m)"
    ),
    "likelihood_displacement_curve": (
        r"p = \operatorname{softmax}(-t, -3t, 4t),\quad \log p_{\mathrm{chosen}} - \log p_{\mathrm{rejected}} "
        r"= 2t"
    ),
}
