"""The values a seed prints that its module page documents, checked on the learner's run (``rl4llm run``).

A seed prints what the learner's functions return on the notebook's cases
(``beta=1 optimum: [...]``, a table of DPO, cDPO and IPO losses); the module
page (``starter/module_0X/README.md`` and ``README.ru.md``) gives the right
numbers for the same cases. After the cell that computes one of them, the run
says whether the learner's value matches the page (to the decimals the page
writes) or, when it does not, the page's value, the learner's and the function
to look at: a learner sees a wrong DPO loss in the walkthrough itself, not
only in ``pytest``.

The closed-form cases are checked to the decimals the page writes. The toy
DPO run's dashboard (smoke profile only) is checked within a relative band
(``tolerance``): its numbers depend on floating-point order, but a loss
without β or with the sign flipped moves them far outside it. The public
tests compare the toy runs with the reference's own bands
(``test_*_trains_the_toy_like_the_reference``).

**The callee before its callers.** A function that calls another of the
learner's functions gives a wrong value when the callee is wrong. When a
value differs and its function calls (directly or through others, in the
learner's own code) a function whose own documented value already differed,
the ✗ line points at that callee first (:func:`blamed`).

``tests/test_walkthrough_values.py`` checks that each ``page`` snippet is in
both module pages, that the reference solutions match every value, and that
a wrong function is named.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from graders.text import Text


@dataclass(frozen=True)
class PageValue:
    """One documented value: where the seed computes it, how to read it, and what the page says."""

    name: Text  # what the value is, in every language
    function: str  # the learner's function that computes it (module.function)
    cell: str  # a text of the seed cell that computes it
    read: Callable  # (the seed's namespace, the tables the cell showed) -> the learner's value(s)
    page: str  # the numbers as both module pages write them (a minus may be U+2212)
    context: str = ""  # a longer text of both pages around ``page`` (default: ``page`` alone)
    tolerance: float = 0.0  # a relative band for a toy run's value (0: the page's decimals decide)
    profile: str | None = None  # checked only when the seed runs this PROFILE (a toy run's numbers)
    fed_by: tuple[str, ...] = ()  # the learner's functions whose outputs the seed passes to ``function`` here

    @property
    def expected(self) -> list[tuple[float, int]]:
        """Each number of ``page`` with the count of decimals it is written to."""
        return [(float(number.replace("−", "-")), len(decimals))
                for number, decimals in re.findall(r"([-−]?\d+(?:\.(\d+))?)", self.page)]


def _shown(shown: list, column: str, row: int = 0):
    """A cell of the first table the cell showed that has ``column``."""
    for table in shown:
        if column in getattr(table, "columns", ()):
            return table[column].iloc[row]
    raise KeyError(column)


def _row(rows: list, key: str, value: str) -> dict:
    return next(row for row in rows if row.get(key) == value)


def _regime(regime: str, column: str) -> Callable:
    """The reader of one column of the Module 8 seed's DPO dashboard row ``regime``."""
    return lambda ns, shown: _row(ns["summary"].to_dict("records"), "regime", regime)[column]


def _response_totals(reduction: str) -> Callable:
    """The reader of one reduction's three response totals in the Module 9 seed's ``summary`` rows."""
    return lambda ns, shown: [_row(ns["summary"], "reduction", reduction)[f"response_{i}"] for i in (1, 2, 3)]


PAGE_VALUES = {
    "module_08": [
        PageValue(Text("E[r] on the reward-KL frontier (β = 4, 2, 1, 0.5, 0.25)",
                       "E[r] на границе «награда – KL» (β = 4, 2, 1, 0.5, 0.25)"),
                  "module_8_reference.reward_kl_frontier", "reward_kl_frontier(reference, rewards, betas)",
                  lambda ns, shown: ns["frontier"]["reward"],
                  "0.298825 | 0.375575 | 0.528674 | 0.775763 | 0.965755"),
        PageValue(Text("KL on the reward-KL frontier", "KL на границе «награда – KL»"),
                  "module_8_reference.reward_kl_frontier", "reward_kl_frontier(reference, rewards, betas)",
                  lambda ns, shown: ns["frontier"]["kl"],
                  "0.009310 | 0.038130 | 0.152662 | 0.514117 | 1.032766"),
        PageValue(Text("π* at β = 1", "π* при β = 1"), "module_8_reference.optimal_kl_policy",
                  "optimal_kl_policy(reference, rewards, beta=1.0)", lambda ns, shown: ns["base"],
                  "(0.377627, 0.559907, 0.062466)"),
        PageValue(Text("the shaped token rewards", "награды токенов с KL-штрафом"),
                  "module_8_reference.shape_token_rewards", "shape_token_rewards(", lambda ns, shown: ns["shaped"],
                  "(0, 0.03, −0.015, 2.015)"),
        PageValue(Text("the DPO loss (h = 0.8, β = 0.2)", "лосс DPO (h = 0.8, β = 0.2)"),
                  "module_8_reference.dpo_loss_from_margin", '"DPO": float(dpo_loss_from_margin(',
                  lambda ns, shown: _shown(shown, "DPO"), "0.616344"),
        PageValue(Text("the cDPO loss (ε = 0.1)", "лосс cDPO (ε = 0.1)"),
                  "module_8_reference.conservative_dpo_loss", '"DPO": float(dpo_loss_from_margin(',
                  lambda ns, shown: _shown(shown, "cDPO eps=0.1"), "0.632344"),
        PageValue(Text("the IPO loss (τ = 0.5)", "лосс IPO (τ = 0.5)"), "module_8_reference.ipo_loss",
                  '"DPO": float(dpo_loss_from_margin(', lambda ns, shown: _shown(shown, "IPO tau=0.5"), "0.04",
                  context="IPO (τ = 0.5) 0.04"),
        PageValue(Text("the chosen probability at t = 1", "вероятность выбранного ответа при t = 1"),
                  "module_8_reference.likelihood_displacement_curve", "likelihood_displacement_curve(t)",
                  lambda ns, shown: ns["disp"]["chosen"][-1], "0.006687"),
        PageValue(Text("the SimPO loss", "лосс SimPO"), "module_8_reference.simpo_loss", '"method": "SimPO"',
                  lambda ns, shown: _row(ns["contracts"].to_dict("records"), "method", "SimPO")["loss"],
                  "0.974077"),
        PageValue(Text("the ORPO loss", "лосс ORPO"), "module_8_reference.orpo_total_loss", '"method": "SimPO"',
                  lambda ns, shown: _row(ns["contracts"].to_dict("records"), "method", "ORPO")["loss"],
                  "0.851109"),
        PageValue(Text("the constrained Lagrangian", "лагранжиан с ограничениями"),
                  "module_8_reference.constrained_lagrangian", "lagrangian = constrained_lagrangian(",
                  lambda ns, shown: ns["lagrangian"], "1.335", context="L = 1.335"),
        *(PageValue(name, "module_8_training.dpo_loss", '"regime": "moderate DPO"', _regime(regime, column), page,
                    context=context, tolerance=0.05, profile="smoke")
          for name, regime, column, page, context in (
              (Text("the toy DPO loss after moderate DPO", "лосс игрушечного DPO после умеренного DPO"),
               "moderate DPO", "loss", "0.515941", "| 0.515941 | 1.0 | 4.675 |"),
              (Text("the toy DPO mean margin after moderate DPO", "средний отступ игрушечного DPO после умеренного DPO"),
               "moderate DPO", "mean_margin", "4.675", "| 0.515941 | 1.0 | 4.675 |"),
              (Text("the toy DPO mean margin after high-pressure DPO",
                    "средний отступ игрушечного DPO после DPO с высоким давлением"),
               "high-pressure DPO", "mean_margin", "171.242", "| 0.000744 | 1.0 | 171.242 |"))),
    ],
    "module_09": [
        PageValue(Text("the centred advantages of rewards [1, 1, 0, 0]", "центрированные преимущества наград [1, 1, 0, 0]"),
                  "module_9_reference.group_relative_advantages", "raw_advantages = group_relative_advantages(",
                  lambda ns, shown: ns["raw_advantages"], "[0.5, 0.5, −0.5, −0.5]"),
        PageValue(Text("the standardised advantages of rewards [1, 1, 0, 0]",
                       "стандартизованные преимущества наград [1, 1, 0, 0]"),
                  "module_9_reference.group_relative_advantages", "raw_advantages = group_relative_advantages(",
                  lambda ns, shown: ns["advantages"], "[1.0000, 1.0000, −1.0000, −1.0000]"),
        PageValue(Text("the clipped surrogate terms", "усечённые суррогатные слагаемые"),
                  "module_9_reference.clipped_surrogate_terms", "raw_advantages = group_relative_advantages(",
                  lambda ns, shown: ns["terms"], "[1.2000, 0.8500, −1.1000, −0.8000]",
                  fed_by=("module_9_reference.group_relative_advantages",)),
        *(PageValue(name, f"module_9_reference.{reduction}_token_weights",
                    '"original_grpo": original_grpo_token_weights(', _response_totals(reduction), page)
          for name, reduction, page in (
              (Text("original GRPO's response totals", "суммы по ответам в исходном GRPO"), "original_grpo",
               "[0.2357, −0.4714, 0.2357]"),
              (Text("Dr. GRPO's response totals (L = 8)", "суммы по ответам в Dr. GRPO (L = 8)"), "dr_grpo",
               "[0.0278, −0.1389, 0.1111]"),
              (Text("DAPO's response totals", "суммы по ответам в DAPO"), "dapo", "[0.0943, −0.4714, 0.3771]"))),
        PageValue(Text("the expected reward at step 0", "ожидаемая награда на шаге 0"),
                  "module_9_reference.synthetic_mode_training", "synthetic_mode_training(beta_entropy=0.0",
                  lambda ns, shown: ns["finite_table"]["expected_reward"].iloc[0], "0.654"),
        PageValue(Text("the expected reward at step 60", "ожидаемая награда на шаге 60"),
                  "module_9_reference.synthetic_mode_training", "synthetic_mode_training(beta_entropy=0.0",
                  lambda ns, shown: ns["finite_table"]["expected_reward"].iloc[60], "0.889"),
        PageValue(Text("the entropy at step 0", "энтропия на шаге 0"), "module_9_reference.categorical_entropy",
                  "synthetic_mode_training(beta_entropy=0.0",
                  lambda ns, shown: ns["finite_table"]["entropy"].iloc[0], "1.168"),
        PageValue(Text("the entropy at step 60", "энтропия на шаге 60"), "module_9_reference.categorical_entropy",
                  "synthetic_mode_training(beta_entropy=0.0",
                  lambda ns, shown: ns["finite_table"]["entropy"].iloc[60], "0.645"),
    ],
}

TEXT = {
    "match": Text("  ✓ {name}: {got}, as on the module page",
                  "  ✓ {name}: {got}, как на странице модуля"),
    "differ": Text("  ✗ {name}: the module page gives {page}, your code gives {got}; look at {function}",
                   "  ✗ {name}: на странице модуля {page}, ваш код даёт {got}; посмотрите {function}"),
    "differ_callee": Text("  ✗ {name}: the module page gives {page}, your code gives {got}; {function} uses "
                          "`{callee}`, whose own value above differs: look at `{callee}` first",
                          "  ✗ {name}: на странице модуля {page}, ваш код даёт {got}; {function} использует "
                          "`{callee}`, чьё собственное значение выше расходится: сначала посмотрите `{callee}`"),
    "callee": Text("; it uses `{callee}`, whose own value above differs: look there first",
                   "; она использует `{callee}`, чьё собственное значение выше расходится: сначала посмотрите туда"),
    "unreadable": Text("  ✗ {name}: the module page gives {page}, but the run's value could not be read "
                       "({reason}); look at {function}",
                       "  ✗ {name}: на странице модуля {page}, но значение этого запуска не прочитать "
                       "({reason}); посмотрите {function}"),
}


def _numbers(value) -> list[float]:
    flat = np.asarray(value, dtype=float).ravel()
    return [float(number) for number in flat]


def _matches(got: list[float], expected: list[tuple[float, int]], tolerance: float = 0.0) -> bool:
    """Each number of the run rounds to the page's number at the page's decimals (a whole number: exactly), or
    lies within ``tolerance`` (relative) of it."""
    if len(got) != len(expected):
        return False
    return all(np.isfinite(value) and abs(value - number) <= (0.5 * 10.0 ** -decimals if decimals else 0.0) + 1e-9
               + tolerance * abs(number) for value, (number, decimals) in zip(got, expected))


def _written(got: list[float], expected: list[tuple[float, int]], matches: bool) -> str:
    """The run's numbers as the page writes its own (two decimals more when they differ from the page's)."""
    if len(got) != len(expected):
        return "(" + (", ".join(f"{value:.6g}" for value in got) or "nothing") + ")"
    extra = 0 if matches else 2
    parts = [f"{value:.{decimals + extra}f}" if decimals else f"{value:.{extra}f}"
             for value, (_, decimals) in zip(got, expected)]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def _callees(function, seen: set | None = None) -> list[str]:
    """The learner's public functions ``function`` calls, directly or through each other and private helpers
    (deepest first): functions defined in a learner module (``module_*``)."""
    import ast
    import inspect

    seen = set() if seen is None else seen
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callee = getattr(function, "__globals__", {}).get(node.func.id)
            module = getattr(callee, "__module__", "") or ""
            if callable(callee) and module.startswith("module_"):
                qualified = f"{module}.{node.func.id}"
                if qualified not in seen and callee is not function:
                    seen.add(qualified)
                    public = [] if node.func.id.startswith("_") else [qualified]
                    found = _callees(callee, seen) + public + found
    return list(dict.fromkeys(found))


def blamed(function: str, namespace: dict, differing: set[str], fed_by: tuple[str, ...] = ()) -> str | None:
    """The deepest function ``function`` calls (in the learner's code), or the first that fed it its inputs
    (``fed_by``), whose own documented value differed."""
    learner = namespace.get(function.rsplit(".", 1)[-1])
    callees = _callees(learner) if callable(learner) else []
    return next((callee for callee in [*callees, *fed_by] if callee in differing), None)


def check_cell(module: str, source: str, namespace: dict, shown: list, language: str,
               differing: set[str] | None = None) -> list[dict]:
    """The documented values computed by the seed cell ``source`` (module folder ``module``), checked.

    Returns one record per value: ``name``, ``function``, ``page``, ``got`` (the run's numbers or
    None), ``matches``, ``blame`` (the function to look at first: a callee whose own value differed
    earlier, listed in ``differing``, else the value's own function) and ``line`` (what the run
    prints, in ``language``). ``differing`` gains the function of every value that differs.
    """
    differing = set() if differing is None else differing
    records = []
    for value in PAGE_VALUES.get(module, []):
        if value.cell not in source or (value.profile and namespace.get("PROFILE") != value.profile):
            continue
        name = value.name.in_(language)
        fields = {"name": name, "page": value.page, "function": f"`{value.function}`"}
        try:
            got = _numbers(value.read(namespace, shown))
        except Exception as error:  # the learner's result may have any shape: say so, never crash the run
            reason = f"{type(error).__name__}: {error}"[:160]
            callee = blamed(value.function, namespace, differing, value.fed_by)
            line = TEXT["unreadable"].in_(language, reason=reason, **fields)
            records.append({"name": name, "function": value.function, "page": value.page, "got": None,
                            "matches": False, "blame": callee or value.function,
                            "line": line + (TEXT["callee"].in_(language, callee=callee) if callee else "")})
            differing.add(value.function)
            continue
        matches = _matches(got, value.expected, value.tolerance)
        callee = None if matches else blamed(value.function, namespace, differing, value.fed_by)
        if callee:
            line = TEXT["differ_callee"].in_(language, got=_written(got, value.expected, matches), callee=callee,
                                             **fields)
        else:
            line = TEXT["match" if matches else "differ"].in_(language, got=_written(got, value.expected, matches),
                                                               **fields)
        if not matches:
            differing.add(value.function)
        records.append({"name": name, "function": value.function, "page": value.page, "got": got,
                        "matches": matches, "blame": None if matches else (callee or value.function), "line": line})
    return records
