"""Hidden checks of constraints (safe RLHF): the Lagrangian, dual ascent and the two-action constrained optimum.
"""

from __future__ import annotations

import numpy as np

from graders.checks.edges import NO_PADDING, NO_TEXT, NO_TIES, SCALAR_FLOATS, SCALARS_ONLY, declare
from graders.checks import Case, hypothesis_cases, st
from graders.text import Text
from graders.checks.module_8_reference.common import M, _floats, exercise

# ---------------------------------------------------------------------------
# Constraints (safe RLHF)
# ---------------------------------------------------------------------------
def _constraint_problem():
    def build(size):
        vector = st.lists(_floats(-2.0, 2.0), min_size=size, max_size=size).map(np.array)
        multipliers = st.lists(_floats(0.0, 5.0), min_size=size, max_size=size).map(np.array)
        return st.tuples(_floats(-5.0, 5.0), vector, vector, multipliers)
    return st.integers(1, 5).flatmap(build)


@exercise(f"{M}.constrained_lagrangian", 
          edges=declare("zeros_and_empties", "shapes", "python_types", extremes="linear in every input: no exp or log to overflow", ties_and_near_ties=NO_TIES, boundaries="multipliers >= 0: the 0 edge is zeros_and_empties", large_padding=NO_PADDING, dtypes=SCALAR_FLOATS, number_formats=NO_TEXT),
          points=1)
def _constrained_lagrangian():
    yield Case(kwargs={"expected_reward": 1.4, "expected_costs": [0.10, 0.03], "limits": [0.06, 0.04],
                       "multipliers": [2.0, 1.5]}, label=Text("seed: the Lagrangian call", "из ноутбука: вызов лагранжиана"), hidden=False)
    yield Case(args=(0.5, 0.3, 0.1, 2.0), label=Text("scalars count as J = 1", "скаляры считаются как J = 1"))
    yield Case(args=(2.0, np.array([0.1, 0.2, 0.3]), np.array([0.2, 0.2, 0.2]), np.array([0.0, 1.0, 3.0])),
               edge="zeros_and_empties", label=Text("J = 3, one zero multiplier, slack and violation", "J = 3, один нулевой множитель, запас и нарушение"))
    yield Case(args=(0.0, np.array([0.05, 0.01]), np.array([0.10, 0.03]), np.array([4.0, 2.0])),
               label=Text("both constraints satisfied with slack", "оба ограничения выполнены с запасом"))
    yield Case(args=(1.0, np.array([0.3]), np.array([0.1]), np.array([2.0])), edge="shapes", hidden=False,
               label=Text("public: J = 1 as arrays of one", "открытый пример: J = 1, массивы из одного элемента"))
    yield Case(args=(1.5, np.zeros(0), np.zeros(0), np.zeros(0)), edge="shapes",
               label=Text("no constraints (J = 0): E[R]", "нет ограничений (J = 0): E[R]"))
    yield Case(args=(2, [1, 0, 3], [0, 1, 1], [1, 2, 0]), edge="python_types", hidden=False,
               label=Text("public: int lists and an int reward (a Python float back)",
                          "открытый пример: списки целых и целая награда (возвращается число float)"))
    yield Case(args=(np.float32(0.5), np.array([0.25, 0.75]), np.array([0.5, 0.25]), np.array([1.0, 2.0])),
               edge="python_types", label=Text("a NumPy float32 expected reward", "ожидаемая награда — NumPy float32"))
    yield Case(args=(1.0, [0.1, 0.2], [0.1, 0.1], [1.0, -0.5]), raises=ValueError,
               label=Text("a negative multiplier is refused", "отрицательный множитель отклоняется"), hidden=False)
    yield Case(args=(1.0, [0.1, 0.2], [0.1], [1.0, 0.5]), raises=ValueError,
               label=Text("limits of another length are refused", "limits другой длины отклоняются"), hidden=False)
    yield from hypothesis_cases(_constraint_problem(), count=12, seed=8_104,
                                to_case=lambda p: Case(args=p))


@exercise(f"{M}.dual_ascent_step", 
          edges=declare("boundaries", "shapes", "python_types", extremes="linear in every input: no exp or log to overflow", ties_and_near_ties=NO_TIES, zeros_and_empties="a multiplier at 0 is the projection boundary (boundaries)", large_padding=NO_PADDING, dtypes=SCALAR_FLOATS, number_formats=NO_TEXT),
          points=2)
def _dual_ascent_step():
    yield Case(args=(np.array([0.5, 0.1]), np.array([0.10, 0.00]), np.array([0.06, 0.04])),
               kwargs={"learning_rate": 5.0}, edge="boundaries", label=Text("the public example: projection onto >= 0", "открытый пример: проекция на >= 0"), hidden=False)
    yield Case(args=(np.array([1.0, 2.0, 0.0]), np.array([0.3, 0.1, 0.5]), np.array([0.2, 0.2, 0.2]), 0.5),
               label=Text("J = 3: raise, lower, raise from 0", "J = 3: рост, снижение, рост от 0"))
    yield Case(args=(0.2, 0.06, 0.1, 10.0), edge="boundaries", label=Text("scalars: projected to 0 (a float back)", "скаляры: проекция в 0 (возвращается float)"))
    yield Case(args=(0.2, 0.3, 0.1, 1.0), label=Text("scalars: a violated constraint raises lambda", "скаляры: нарушенное ограничение увеличивает lambda"))
    yield Case(args=(np.array([3.0, 0.0]), np.array([0.1, 0.1]), np.array([0.1, 0.1]), 2.0),
               edge="boundaries", label=Text("constraints exactly met: unchanged", "ограничения выполнены в точности: без изменений"))
    yield Case(args=(np.array([0.5]), np.array([0.1]), np.array([0.3]), 2.0), edge="shapes", hidden=False,
               label=Text("public: J = 1 as arrays of one, projected to 0", "открытый пример: J = 1, массивы из одного элемента, проекция в 0"))
    yield Case(args=(np.zeros(0), np.zeros(0), np.zeros(0), 1.0), edge="shapes", hidden=False,
               label=Text("public: no constraints (J = 0): an empty array", "открытый пример: нет ограничений (J = 0): пустой массив"))
    yield Case(args=([1, 0, 2], [1, 2, 0], [0, 1, 1], 1), edge="python_types", hidden=False,
               label=Text("public: int lists and an int learning_rate give floats",
                          "открытый пример: списки целых и целый learning_rate дают числа float"))
    yield Case(args=(np.array([0.5, 1.0]), np.array([0.25, 0.5]), np.array([0.5, 0.25]), np.float32(2.0)),
               edge="python_types", label=Text("learning_rate as a NumPy float32 scalar", "learning_rate — скаляр NumPy float32"))
    yield Case(args=(np.array([-0.1, 1.0]), np.array([0.1, 0.1]), np.array([0.1, 0.1]), 1.0),
               raises=ValueError, label=Text("a negative multiplier is refused", "отрицательный множитель отклоняется"), hidden=False)
    yield Case(args=(np.array([0.1, 1.0]), np.array([0.1, 0.1]), np.array([0.1, 0.1]), 0.0),
               raises=ValueError, label=Text("learning_rate = 0 is refused", "learning_rate = 0 отклоняется"), hidden=False)
    yield Case(args=(np.array([0.1, 1.0]), np.array([0.1, 0.1, 0.1]), np.array([0.1, 0.1]), 1.0),
               raises=ValueError, label=Text("observed_costs of another length are refused", "observed_costs другой длины отклоняются"), hidden=False)

    def build(size):
        costs = st.lists(_floats(0.05, 1.0), min_size=size, max_size=size).map(np.array)  # E[C] >= 0
        multipliers = st.lists(_floats(0.0, 2.0), min_size=size, max_size=size).map(np.array)
        return st.tuples(multipliers, costs, costs, _floats(0.01, 3.0))
    yield from hypothesis_cases(st.integers(1, 5).flatmap(build), count=12, seed=8_105,
                                to_case=lambda p: Case(args=p))


@exercise(f"{M}.two_action_constrained_optimum", 
          edges=declare("boundaries", "zeros_and_empties", "ties_and_near_ties", "python_types", extremes="linear in every input: no exp or log to overflow", large_padding=NO_PADDING, dtypes=SCALAR_FLOATS, number_formats=NO_TEXT, shapes=SCALARS_ONLY),
          points=2)
def _two_action_constrained_optimum():
    yield Case(args=(0.6, 1.0, 1.0, 0.25), label=Text("the spec's example (q = 0.25, E[R] = 0.7)", "пример из условия (q = 0.25, E[R] = 0.7)"), hidden=False)
    yield Case(args=(0.0, 2.0, 4.0, 1.0), label=Text("public: a binding budget, q = 0.25, multiplier 0.5", "открытый пример: бюджет исчерпан, q = 0.25, множитель 0.5"), hidden=False)
    yield Case(args=(0.2, 0.9, 0.5, 0.8), label=Text("public: a slack budget, q = 1, multiplier 0", "открытый пример: бюджет с запасом, q = 1, множитель 0"), hidden=False)
    yield Case(args=(1.0, 0.5, 2.0, 0.1), label=Text("the risky action is worse: q = 0", "рискованное действие хуже: q = 0"))
    yield Case(args=(0.2, 0.9, 0.5, 0.8), label=Text("a loose budget: q = 1, multiplier 0", "свободный бюджет: q = 1, множитель 0"))
    yield Case(args=(0.0, 2.0, 4.0, 1.0), label=Text("a binding budget: q = d / c", "бюджет исчерпан: q = d / c"))
    yield Case(args=(0.3, 0.8, 2.0, 0.0), edge="zeros_and_empties", label=Text("a zero budget: q = 0, positive multiplier", "нулевой бюджет: q = 0, положительный множитель"))
    yield Case(args=(0.5, 0.5, 1.0, 0.5), edge="ties_and_near_ties", label=Text("equal rewards: q = 0", "равные награды: q = 0"))
    yield Case(args=(0.1, 0.4, 0.0, 0.0), edge=('zeros_and_empties', 'boundaries'), label=Text("a free risky action: q = 1", "бесплатное рискованное действие: q = 1"))
    yield Case(args=(0.0, 1.0, 0.5, 2.0), label=Text("a budget four times the cost: q = 1", "бюджет вчетверо больше стоимости: q = 1"))
    yield Case(args=(0.0, 1.0, 0.5, 0.5), edge="boundaries",
               label=Text("public: the cost equals the budget, q = 1, multiplier 0",
                          "открытый пример: стоимость равна бюджету, q = 1, множитель 0"), hidden=False)
    yield Case(args=(0.3, 0.8, 2.0, 0.0), edge="zeros_and_empties",
               label=Text("public: a zero budget, q = 0, multiplier 0.25", "открытый пример: нулевой бюджет, q = 0, множитель 0.25"),
               hidden=False)
    yield Case(args=(0.5, 0.5, 1.0, 0.5), edge="ties_and_near_ties",
               label=Text("public: equal rewards, q = 0, multiplier 0", "открытый пример: равные награды, q = 0, множитель 0"),
               hidden=False)
    yield Case(args=(0, 2, 4, 1), edge="python_types", hidden=False,
               label=Text("public: ints (Python floats back), q = 0.25", "открытый пример: целые числа (возвращаются float), q = 0.25"))
    yield Case(args=(np.float32(0.5), np.float32(1.0), np.float32(2.0), np.float32(0.5)), edge="python_types",
               label=Text("NumPy float32 scalars (Python floats back)", "скаляры NumPy float32 (возвращаются float)"))
    yield Case(args=(0.6, 1.0, -1.0, 0.25), raises=ValueError, label=Text("a negative cost is refused", "отрицательная стоимость отклоняется"), hidden=False)
    yield Case(args=(0.6, 1.0, 1.0, -0.25), raises=ValueError, hidden=False, label=Text("a negative budget is refused", "отрицательный бюджет отклоняется"))
    problems = st.tuples(_floats(-2.0, 2.0), _floats(-2.0, 2.0), _floats(0.01, 3.0), _floats(0.0, 3.0))
    yield from hypothesis_cases(problems, count=15, seed=8_106, to_case=lambda p: Case(args=p))
