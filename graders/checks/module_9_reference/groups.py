"""Hidden checks of informative groups and group-relative advantages (with the leave-one-out baseline).
"""

from __future__ import annotations

import numpy as np

from graders.checks.edges import NO_EXTREMES, NO_PADDING, NO_TEXT, NO_TIES, SCALAR_FLOATS, SCALARS_ONLY, declare
from graders.checks import Case, exercise, hypothesis_cases, st
from graders.text import Text
from graders.checks.module_9_reference.harnesses import INFORMATIVE, M

# ---------------------------------------------------------------------------
# Informative groups
# ---------------------------------------------------------------------------
SEED_P = (0.01, 0.10, 0.50, 0.90, 0.99)
probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)


@exercise(f"{M}.informative_group_probability", 
          edges=declare("boundaries", "extremes", "python_types", zeros_and_empties="p = 0 and G = 1 are the domain edges (boundaries)", ties_and_near_ties=NO_TIES, large_padding=NO_PADDING, dtypes=SCALAR_FLOATS, number_formats=NO_TEXT, shapes=SCALARS_ONLY),
          points=2)
def _informative_group_probability():
    for p in SEED_P:
        yield Case(args=(p, 8), label=Text(f"seed table p={p}, G=8", f"таблица из ноутбука: p={p}, G=8"), hidden=False)
    for p, group_size in ((0.5, 2), (0.5, 8), (0.1, 2), (0.0, 4), (1.0, 4), (0.3, 1)):
        yield Case(args=(p, group_size), label=Text("public test row", "строка открытого теста"), hidden=False,
                   edge="boundaries" if p in (0.0, 1.0) or group_size == 1 else ())
    yield Case(args=(0.5, 1), label=Text("a group of one is never informative", "группа из одного ответа никогда не информативна"))
    yield Case(args=(0.2, 3), label=Text("G=3: 1 - 0.2^3 - 0.8^3", "G=3: 1 - 0.2^3 - 0.8^3"))
    yield Case(args=(0.7, 5), label=Text("p above 1/2", "p больше 1/2"))
    yield Case(args=(1e-9, 16), label=Text("public: tiny p", "открытый тест: очень малое p"), hidden=False, edge="extremes")
    yield Case(args=(np.float32(0.25), 2), edge="python_types", hidden=False,
               label=Text("public: p as a NumPy float32 scalar (a Python float back)",
                          "открытый тест: p — скаляр NumPy float32 (возвращается число float)"))
    yield Case(args=(1, 3), edge="python_types", label=Text("p as the int 1", "p — целое число 1"))
    yield Case(args=(np.float32(0.75), 3), edge="python_types",
               label=Text("p as a NumPy float32 scalar above 1/2", "p — скаляр NumPy float32 больше 1/2"))
    for p, group_size, label, russian in ((1.5, 4, "p above 1", "p больше 1 отклоняется"),
                                           (-0.1, 4, "negative p", "отрицательное p отклоняется"),
                                           (float("nan"), 4, "NaN p", "p = NaN отклоняется"),
                                           (0.5, 0, "group_size 0", "group_size 0 отклоняется"),
                                           (0.5, -2, "negative group_size", "отрицательный group_size отклоняется")):
        yield Case(args=(p, group_size), raises=ValueError, label=Text(f"{label} is refused", russian),
                   hidden=label not in ("negative p", "NaN p"))
    yield from hypothesis_cases(st.tuples(probabilities, st.integers(min_value=1, max_value=64)), count=20,
                                seed=9_302, to_case=lambda pg: Case(args=pg))


@exercise(f"{M}.expected_draws_for_informative_groups", 
          edges=declare("zeros_and_empties", "boundaries", "python_types", ties_and_near_ties=NO_TIES, extremes="the draws are B / P_info with P_info in [0, 1]: its 0 edge (inf) is boundaries", large_padding=NO_PADDING, dtypes=SCALAR_FLOATS, number_formats=NO_TEXT, shapes=SCALARS_ONLY),
          points=1, call=INFORMATIVE)
def _expected_draws_for_informative_groups():
    for p in SEED_P:
        yield Case(args=(100, p, 8), label=Text(f"seed table: 100 informative prompts, p={p}, G=8", f"таблица из ноутбука: 100 информативных промптов, p={p}, G=8"), hidden=False)
    for wanted, p, group_size in ((100, 0.5, 2), (100, 0.5, 8), (5, 0.0, 8)):
        yield Case(args=(wanted, p, group_size), label=Text("public test row", "строка открытого теста"), hidden=False,
                   edge="boundaries" if p == 0.0 else ())
    yield Case(args=(1, 0.5, 2), hidden=False,  # B = 1: tells a guard on B = 1 from one on B = 0
               label=Text("public: one informative group at P_info = 1/2", "открытый тест: одна информативная группа при P_info = 1/2"))
    yield Case(args=(3, 0.25, 4), label=Text("B=3, p=0.25, G=4", "B=3, p=0.25, G=4"))
    yield Case(args=(np.int64(3), np.float32(0.25), 4), edge="python_types", hidden=False,
               label=Text("public: B a NumPy int, p a NumPy float32 (a Python float back)",
                          "открытый тест: B — целое NumPy, p — NumPy float32 (возвращается число float)"))
    yield Case(args=(np.int64(0), np.float32(0.5), 2), edge="python_types",
               label=Text("B = 0 as a NumPy int", "B = 0 как целое NumPy"))
    for wanted, p, group_size in ((0, 0.5, 8), (0, 1.0, 8)):
        yield Case(args=(wanted, p, group_size), edge="zeros_and_empties", label=Text("public test row: B = 0 needs no draws", "строка открытого теста: B = 0, сэмплировать группы не нужно"), hidden=False)
    yield Case(args=(0, 0.0, 8), edge="zeros_and_empties", label=Text("B = 0 needs no draws even when P_info = 0 (p = 0)", "B = 0: сэмплировать группы не нужно даже при P_info = 0 (p = 0)"))
    yield Case(args=(0, 0.3, 1), label=Text("B = 0 needs no draws even with a group of one", "B = 0: сэмплировать группы не нужно даже при группе из одного ответа"))
    yield Case(args=(7, 0.3, 1), edge="boundaries", label=Text("a group of one never helps: inf", "группа из одного ответа никогда не поможет: inf"))
    yield Case(args=(-1, 0.5, 8), raises=ValueError, label=Text("negative num_informative is refused", "отрицательный num_informative отклоняется"), hidden=False)
    yield Case(args=(10, 1.2, 8), raises=ValueError, label=Text("p above 1 is refused", "p больше 1 отклоняется"), hidden=False)
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


@exercise(f"{M}.group_relative_advantages", 
          edges=declare("ties_and_near_ties", "boundaries", "dtypes", "shapes", "python_types", extremes="rewards are bounded scores; the only division is by std + eps, whose 0 edge is ties_and_near_ties", zeros_and_empties="an empty group is a refusal row; zero rewards are a tie (ties_and_near_ties)", large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=3, rtol=1e-5, atol=1e-8, float_trap=True)
def _group_relative_advantages():
    yield Case(args=(SEED_REWARDS,), kwargs={"scale": True}, label=Text("seed table, standardised", "таблица из ноутбука, стандартизация"), hidden=False)
    yield Case(args=(SEED_REWARDS,), kwargs={"scale": False}, label=Text("seed table, centred", "таблица из ноутбука, только центрирование"), hidden=False)
    # more groups than responses per group: ddof is held to the group size (the last axis), not the group count
    yield Case(args=(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),), kwargs={"ddof": 2}, raises=ValueError,
               edge="shapes", hidden=False,
               label=Text("public: ddof equal to the group size is refused, with more groups than responses",
                          "открытый пример: ddof, равный размеру группы, отклоняется, когда групп больше, чем ответов"))
    for group_size in (2, 3, 4, 8, 16):
        yield Case(args=(np.eye(1, group_size)[0],), label=Text(f"public: one success in G={group_size}", f"открытый тест: один успех при G={group_size}"), hidden=False)
    yield Case(args=(np.array([[0.7, 0.7, 0.7], [1.0, 0.0, 0.0]]),), kwargs={"eps": 0.0},
               edge=('ties_and_near_ties', 'boundaries'), label=Text("public: an all-equal group gives zeros, eps = 0", "открытый тест: группа равных наград даёт нули, eps = 0"), hidden=False)
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5]]),), edge="ties_and_near_ties", label=Text("two groups, one all-equal", "две группы, в одной все награды равны"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]]),), label=Text("two groups of 4", "две группы по 4"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]]),), kwargs={"scale": False},
               label=Text("two groups of 4, centred", "две группы по 4, только центрирование"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0]]),), edge="shapes",
               label=Text("three groups of 3 (square)", "три группы по 3 (квадратная матрица)"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]]),), kwargs={"scale": False},
               edge="shapes", label=Text("three groups of 3 (square), centred", "три группы по 3 (квадратная матрица), только центрирование"))
    yield Case(args=(np.array([[0.2, 0.9, 0.4, 0.0]]),), edge="shapes", hidden=False,
               label=Text("public: a batch of one group (1, G)", "открытый тест: батч из одной группы (1, G)"))
    yield Case(args=(np.array([3.0]),), edge="shapes", label=Text("a group of one: zero", "группа из одного ответа: ноль"))
    yield Case(args=(np.array([[2.0], [5.0]]),), kwargs={"scale": False}, edge="shapes",
               label=Text("two groups of one, centred", "две группы из одного ответа, только центрирование"))
    yield Case(args=(np.zeros((0, 4)),), edge="shapes", label=Text("an empty batch (0, G)", "пустой батч (0, G)"))
    yield Case(args=([[1, 0, 0], [1, 1, 0]],), kwargs={"eps": np.float32(0.25)}, edge="python_types", hidden=False,
               label=Text("public: nested int lists, eps a NumPy float32", "открытый тест: вложенные списки целых, eps — NumPy float32"))
    yield Case(args=(np.array([0.5, 1.0, 0.0, 0.25]),), kwargs={"ddof": 1}, edge="python_types",
               label=Text("an ndarray group (unchanged), ddof = 1", "группа в ndarray (не меняется), ddof = 1"))
    yield Case(args=([0.2, 0.9, 0.4],), kwargs={"ddof": 1}, edge="dtypes", label=Text("ddof=1 on request (a list input)", "ddof=1 по запросу (вход — список)"))
    yield Case(args=(np.array([3.0, 1.0]),), kwargs={"eps": 0.0}, edge="boundaries", label=Text("eps = 0", "eps = 0"))
    yield Case(args=(np.array([3.0, 1.0]),), kwargs={"eps": 0.5}, label=Text("a large eps", "большое eps"))
    yield Case(args=(np.array([1.0, 0.0, 0.0]),), kwargs={"eps": 0.5}, label=Text("public: eps = 0.5 is added to the std", "открытый тест: eps = 0.5 прибавляется к std"), hidden=False)
    yield Case(args=(np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]]),),
               label=Text("public: two groups, each standardised by its own std", "открытый тест: две группы, каждая стандартизуется своим std"), hidden=False)
    yield Case(args=(np.array([2.0, 2.0, 2.0]),), edge="ties_and_near_ties", label=Text("an all-equal group gives zeros", "группа равных наград даёт нули"))
    # a std of exactly 0 with eps = 0: 0 / 0 unless the all-equal group is left out of the division (a mutant
    # that divides everywhere survived every other case: the 0.7s of the public row leave a std of 2e-16)
    yield Case(args=(np.array([[2.0, 2.0, 2.0], [1.0, 0.0, 1.0]]),), kwargs={"eps": 0.0},
               edge=("ties_and_near_ties", "boundaries"),
               label=Text("an all-equal group with a std of exactly 0 gives zeros, eps = 0 (no NaN)",
                          "группа равных наград со std, равным ровно 0, даёт нули, eps = 0 (без NaN)"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], dtype=np.float32),), edge="dtypes", hidden=False,
               label=Text("public: float32 rewards give float64 advantages", "открытый тест: награды float32 дают преимущества float64"))
    yield Case(args=([1, 0, 0, 0],), kwargs={"scale": False}, edge="dtypes", hidden=False,
               label=Text("public: a list of ints, centred", "открытый тест: список целых, только центрирование"))
    yield Case(args=(np.zeros((2, 0)),), raises=ValueError, label=Text("an empty group is refused", "пустая группа отклоняется"))
    yield Case(args=(np.zeros((2, 2, 2)),), raises=ValueError, label=Text("3-D rewards are refused", "3-мерные награды отклоняются"), hidden=False)
    yield Case(args=(np.array([1.0, np.nan]),), raises=ValueError, label=Text("NaN rewards are refused", "награды NaN отклоняются"), hidden=False)
    yield Case(args=(np.array([1.0, 0.0]),), kwargs={"ddof": 2}, raises=ValueError, label=Text("ddof >= G is refused", "ddof >= G отклоняется"), hidden=False)
    yield Case(args=(np.array([1.0, 0.0]),), kwargs={"eps": -1.0}, raises=ValueError,
               label=Text("negative eps is refused", "отрицательное eps отклоняется"), hidden=False)
    groups = st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=8)
    yield from hypothesis_cases(st.lists(groups, min_size=1, max_size=3), count=20,
                                seed=9_303, to_case=lambda g: Case(args=(_rectangle(g),)))
    real_groups = st.lists(st.floats(-5.0, 5.0, allow_subnormal=False), min_size=2, max_size=6)
    yield from hypothesis_cases(st.tuples(real_groups, st.booleans()), count=10, seed=9_305,
                                to_case=lambda gs: Case(args=(np.array(gs[0]),), kwargs={"scale": gs[1]}))


@exercise(f"{M}.leave_one_out_baseline", 
          edges=declare("boundaries", "shapes", "python_types", "dtypes", zeros_and_empties="G = 1 (no other answer) is a refusal row; zero rewards follow the same mean", extremes="a mean of the other rewards: no exp, no division by a value", ties_and_near_ties=NO_TIES, large_padding=NO_PADDING, number_formats=NO_TEXT),
          points=2, rtol=1e-6, atol=1e-9)
def _leave_one_out_baseline():
    yield Case(args=([1.0, 2.0, 3.0, 4.0],), label=Text("public test row", "строка открытого теста"), hidden=False)
    yield Case(args=(np.array([[1.0, 2.0], [3.0, 5.0]]),), label=Text("public: two groups of 2", "открытый тест: две группы по 2"), hidden=False)
    yield Case(args=(SEED_REWARDS,), label=Text("the seed group [1, 1, 0, 0]", "группа из ноутбука [1, 1, 0, 0]"))
    yield Case(args=(np.array([1.0, 0.0]),), edge="boundaries", label=Text("G = 2: the other reward", "G = 2: награда другого ответа"))
    yield Case(args=(np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 6.0]]),), label=Text("two groups", "две группы"))
    yield Case(args=(np.array([[1.0, 1.0], [0.0, 1.0], [5.0, -5.0]]),), hidden=False, label=Text("public: three groups of 2", "открытый тест: три группы по 2"))
    yield Case(args=(np.array([[1.0], [2.0]]),), raises=ValueError, hidden=False,
               label=Text("public: two groups of one are refused (G is the last axis)",
                          "открытый тест: две группы из одного ответа отклоняются (G — последняя ось)"))
    yield Case(args=([1.0],), raises=ValueError, label=Text("G = 1 has no other answers", "при G = 1 других ответов нет"))
    yield Case(args=(np.array([[1.0, 2.0, 6.0]]),), edge="shapes", hidden=False,
               label=Text("public: a batch of one group (1, G)", "открытый тест: батч из одной группы (1, G)"))
    yield Case(args=(np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 8.0], [5.0, 5.0, 2.0]]),), edge="shapes",
               label=Text("three groups of 3 (square)", "три группы по 3 (квадратная матрица)"))
    yield Case(args=(np.zeros((0, 3)),), edge="shapes", label=Text("an empty batch (0, G)", "пустой батч (0, G)"))
    yield Case(args=([[1, 2, 3], [4, 5, 9]],), edge="python_types", hidden=False,
               label=Text("public: nested int lists give floats", "открытый тест: вложенные списки целых дают числа float"))
    yield Case(args=(np.array([1.5, 2.0, 0.25, 4.0], dtype=np.float32),), edge="dtypes", hidden=False,
               label=Text("public: float32 rewards give float64 baselines", "открытый тест: награды float32 дают базы float64"))
    yield Case(args=(np.zeros((2, 2, 2)),), raises=ValueError, label=Text("3-D rewards are refused", "3-мерные награды отклоняются"), hidden=False)
    yield Case(args=(np.array([1.0, np.inf]),), raises=ValueError, label=Text("infinite rewards are refused", "бесконечные награды отклоняются"), hidden=False)
    rows = st.lists(st.floats(-10.0, 10.0, allow_subnormal=False), min_size=2, max_size=6)
    yield from hypothesis_cases(st.lists(rows, min_size=1, max_size=3), count=15, seed=9_306,
                                to_case=lambda g: Case(args=(_rectangle(g),)))
