"""The values a seed prints that its module page documents, checked on the learner's run (``rl4llm run``).

A seed prints what the learner's functions return on the notebook's cases
(``beta=1 optimum: [...]``, a table of DPO, cDPO and IPO losses); the module
page (``starter/module_0X/README.md`` and ``README.ru.md``) gives the right
numbers for the same cases. After the cell that computes one of them, the run
says whether the learner's value matches the page (to the decimals the page
writes) or, when it does not, the page's value, the learner's and the function
to look at: a learner sees a wrong DPO loss in the walkthrough itself, not
only in ``pytest``.

Only the closed-form cases are checked: the toy training runs' numbers depend
on floating-point order and are compared with the reference's bands by the
public tests (``test_*_trains_the_toy_like_the_reference``).

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
    ],
    "module_09": [
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
    "unreadable": Text("  ✗ {name}: the module page gives {page}, but the run's value could not be read "
                       "({reason}); look at {function}",
                       "  ✗ {name}: на странице модуля {page}, но значение этого запуска не прочитать "
                       "({reason}); посмотрите {function}"),
}


def _numbers(value) -> list[float]:
    flat = np.asarray(value, dtype=float).ravel()
    return [float(number) for number in flat]


def _matches(got: list[float], expected: list[tuple[float, int]]) -> bool:
    """Each number of the run rounds to the page's number at the page's decimals (a whole number: exactly)."""
    if len(got) != len(expected):
        return False
    return all(np.isfinite(value) and abs(value - number) <= (0.5 * 10.0 ** -decimals if decimals else 0.0) + 1e-9
               for value, (number, decimals) in zip(got, expected))


def _written(got: list[float], expected: list[tuple[float, int]], matches: bool) -> str:
    """The run's numbers as the page writes its own (two decimals more when they differ from the page's)."""
    if len(got) != len(expected):
        return "(" + (", ".join(f"{value:.6g}" for value in got) or "nothing") + ")"
    extra = 0 if matches else 2
    parts = [f"{value:.{decimals + extra}f}" if decimals else f"{value:.{extra}f}"
             for value, (_, decimals) in zip(got, expected)]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def check_cell(module: str, source: str, namespace: dict, shown: list, language: str) -> list[dict]:
    """The documented values computed by the seed cell ``source`` (module folder ``module``), checked.

    Returns one record per value: ``name``, ``function``, ``page``, ``got`` (the run's numbers or
    None), ``matches`` and ``line`` (what the run prints, in ``language``).
    """
    records = []
    for value in PAGE_VALUES.get(module, []):
        if value.cell not in source:
            continue
        name = value.name.in_(language)
        fields = {"name": name, "page": value.page, "function": f"`{value.function}`"}
        try:
            got = _numbers(value.read(namespace, shown))
        except Exception as error:  # the learner's result may have any shape: say so, never crash the run
            reason = f"{type(error).__name__}: {error}"[:160]
            records.append({"name": name, "function": value.function, "page": value.page, "got": None,
                            "matches": False, "line": TEXT["unreadable"].in_(language, reason=reason, **fields)})
            continue
        matches = _matches(got, value.expected)
        key = "match" if matches else "differ"
        line = TEXT[key].in_(language, got=_written(got, value.expected, matches), **fields)
        records.append({"name": name, "function": value.function, "page": value.page, "got": got,
                        "matches": matches, "line": line})
    return records
