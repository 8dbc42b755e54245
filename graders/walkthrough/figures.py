"""The figures of ``rl4llm run``: what each seed figure is called, says and shows, in each language.

The seed notebooks' own plotting code runs unchanged (:mod:`graders.walkthrough.run`);
when a seed calls ``plt.show()``, the figure it drew is finished here before it
is saved:

- it gets a descriptive file name (``module09_importance_ratios.png``), a
  title and labelled axes in the chosen language (``FIGURE_TEXT``), and its
  legend entries are translated (``SEED_TEXT``: every label either seed puts
  on a figure, in every language of the course);
- a series that its neighbours squash into a flat line (pass@4 next to the
  entropy, the mean ratio next to the min/max ratios) moves to a panel of its
  own below, on its own y-range, with its first and last values written on it;
- the ratio plot gets its clip bounds 1 − ε_low and 1 + ε_high (from the
  experiment's config) as dashed lines, and the line at ratio 1 goes behind
  the data.

A seed figure is recognised by its place (the k-th cell that shows a figure is
the k-th entry of ``SEED_FIGURES``) and checked by a text the seed puts on it
(``marker``), so a changed seed is noticed rather than mislabelled. The kit
also draws figures of its own from the results the seed computed
(``EXTRA_FIGURES``: the held-out accuracy of Module 9).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from graders.text import Text, table_in

# ----------------------------------------------------------------------------- texts
# Every label a seed puts on a figure, a table or a printed line, as a Text in every language. The seeds
# write Module 9 in Russian and Module 8 in English; a text not listed here (pass@4, G=8, a formula)
# is the same in every language.
SEED_TEXT = {
    # Module 9
    "вероятность успеха одного ответа p": Text("success probability of one answer p",
                                               "вероятность успеха одного ответа p"),
    "вероятность информативной группы": Text("probability that a group is informative",
                                             "вероятность информативной группы"),
    "ожидаемая награда": Text("expected reward", "ожидаемая награда"),
    "энтропия": Text("entropy", "энтропия"),
    "шаг точного обновления": Text("exact update step", "шаг точного обновления"),
    "до RL, train": Text("before RL, train", "до RL, обучающие"),
    "после RL, train": Text("after RL, train", "после RL, обучающие"),
    "до RL, held-out": Text("before RL, held-out", "до RL, отложенные"),
    "после RL, held-out": Text("after RL, held-out", "после RL, отложенные"),
    "точность свежей генерации": Text("accuracy of fresh samples", "точность свежей генерации"),
    "доля информативных групп": Text("fraction of informative groups", "доля информативных групп"),
    "обновление": Text("update", "обновление"),
    "минимальное отношение": Text("minimum ratio", "минимальное отношение"),
    "среднее отношение": Text("mean ratio", "среднее отношение"),
    "максимальное отношение": Text("maximum ratio", "максимальное отношение"),
    "до RL": Text("before RL", "до RL"),
    "после RL": Text("after RL", "после RL"),
    "доля правильных ответов": Text("fraction of correct answers", "доля правильных ответов"),
    "Реальная ветвь выключена. Установите RUN_REAL_MODEL=True только в подготовленной GPU-среде.": Text("The real-model branch is off. Set RUN_REAL_MODEL=True only in a prepared GPU environment.",
                                                                                                        "Реальная ветвь выключена. Установите RUN_REAL_MODEL=True только в подготовленной GPU-среде."),
    # Module 8
    "chosen response": Text("chosen response", "выбранный ответ"),
    "rejected response": Text("rejected response", "отвергнутый ответ"),
    "unlabeled response": Text("unlabeled response", "неразмеченный ответ"),
    "moderate: chosen": Text("moderate: chosen", "умеренный DPO: выбранный"),
    "moderate: rejected": Text("moderate: rejected", "умеренный DPO: отвергнутый"),
    "high pressure: chosen": Text("high pressure: chosen", "сильное давление: выбранный"),
    "high pressure: rejected": Text("high pressure: rejected", "сильное давление: отвергнутый"),
    "RUN_REAL_MODEL=False: no download or GPU training was attempted.": Text("RUN_REAL_MODEL=False: no download or GPU training was attempted.",
                                                                             "RUN_REAL_MODEL=False: загрузка модели и обучение на GPU не запускались."),
}

# Per figure (by file name): its title and axis labels; ``panel`` labels the y-axis of the panel
# a flat series moves to. Module 8's English seed texts are kept as they are.
FIGURE_TEXT = {
    "module09_informative_groups": {
        "title": Text("How often is a group of G answers informative (not all right, not all wrong)?",
                      "Как часто группа из G ответов информативна (не все верны и не все ошибочны)?"),
        "xlabel": Text("success probability of one answer p", "вероятность успеха одного ответа p"),
        "ylabel": Text("P(informative) = 1 − p^G − (1 − p)^G", "P(информативна) = 1 − p^G − (1 − p)^G"),
    },
    "module09_exact_updates": {
        "title": Text("Exact policy-gradient updates: reward rises, entropy collapses, pass@4 stays saturated",
                      "Точные обновления градиента политики: награда растёт, энтропия падает, pass@4 уже насыщен"),
        "xlabel": Text("exact update step", "шаг точного обновления"),
        "ylabel": Text("expected reward; entropy (nats)", "ожидаемая награда; энтропия (наты)"),
        "panel": Text("pass@4\n(own scale)", "pass@4\n(своя шкала)"),
    },
    "module09_training_curves": {
        "title": Text("Toy GRPO: accuracy, entropy and informative groups after each update",
                      "Игрушечный GRPO: точность, энтропия и информативные группы после каждого обновления"),
        "xlabel": Text("update", "обновление"),
        "ylabel": Text("accuracy, fraction; entropy (nats)", "точность, доля; энтропия (наты)"),
    },
    "module09_importance_ratios": {
        "title": Text("Importance ratios π_θ / π_old in each update, with the clip bounds",
                      "Отношения вероятностей π_θ / π_old в каждом обновлении и границы клипа"),
        "xlabel": Text("update", "обновление"),
        "ylabel": Text("ratio π_θ / π_old (min, max)", "отношение π_θ / π_old (мин., макс.)"),
        "panel": Text("mean ratio\n(own scale)", "среднее отношение\n(своя шкала)"),
    },
    "module09_accuracy_by_prompt": {
        "title": Text("Accuracy on each training prompt, before and after RL",
                      "Точность на каждом обучающем промпте до и после RL"),
        "xlabel": Text("training prompt", "обучающий промпт"),
        "ylabel": Text("fraction of correct answers", "доля правильных ответов"),
    },
    "module09_heldout_accuracy": {
        "title": Text("Accuracy on training and held-out prompts, before and after RL",
                      "Точность на обучающих и отложенных (held-out) промптах до и после RL"),
        "xlabel": Text("prompt set", "набор промптов"),
        "ylabel": Text("accuracy (fraction of correct answers)", "точность (доля правильных ответов)"),
    },
    "module08_reward_kl_frontier": {
        "title": Text("Exact reward–KL frontier", "Точная граница «награда – KL»"),
        "xlabel": Text(r"KL to the reference $D_{KL}(\pi^*\Vert\pi_{ref})$",
                       r"KL к референсной политике $D_{KL}(\pi^*\Vert\pi_{ref})$"),
        "ylabel": Text("expected reward", "ожидаемая награда"),
    },
    "module08_dpo_gradient_weight": {
        "title": Text("Which pairs receive the largest DPO update?",
                      "Какие пары получают самое большое обновление DPO?"),
        "xlabel": Text("reference-corrected margin h", "отступ h с поправкой на референс"),
        "ylabel": Text(r"gradient weight $\beta\sigma(-\beta h)$", r"вес градиента $\beta\sigma(-\beta h)$"),
    },
    "module08_likelihood_displacement": {
        "title": Text("A larger pair margin need not raise chosen probability",
                      "Больший отступ пары не обязательно повышает вероятность выбранного ответа"),
        "xlabel": Text("update parameter t", "параметр обновления t"),
        "ylabel": Text("probability", "вероятность"),
    },
    "module08_sequence_logprobs": {
        "title": Text("Pair accuracy alone misses absolute likelihood displacement",
                      "Точность на парах не видит смещения абсолютного правдоподобия"),
        "xlabel": Text("DPO update", "обновление DPO"),
        "ylabel": Text("mean sequence log-probability", "средняя лог-вероятность последовательности"),
    },
}

# The words the kit adds to a figure: lines it draws, the groups of its own figures.
WORDS = {
    "clip_low": Text("clip bound 1 − ε_low = {value:.2f}", "граница клипа 1 − ε_low = {value:.2f}"),
    "clip_high": Text("clip bound 1 + ε_high = {value:.2f}", "граница клипа 1 + ε_high = {value:.2f}"),
    "ratio_one": Text("ratio 1 (no change)", "отношение 1 (без изменений)"),
    "train_prompts": Text("training prompts ({count})", "обучающие промпты ({count})"),
    "heldout_prompts": Text("held-out prompts ({count})", "отложенные промпты ({count})"),
    "before": Text("before RL", "до RL"),
    "after": Text("after RL", "после RL"),
}


def translate(text: str, language: str) -> str:
    """A seed's label in ``language`` (a text the table lacks is the same in every language)."""
    return SEED_TEXT[text].in_(language) if text in SEED_TEXT else text


# ----------------------------------------------------------------------------- what each figure is
@dataclass(frozen=True)
class SeedFigure:
    """A figure a seed draws, in the order the seed shows them."""

    slug: str  # the file name without .png, and the key of FIGURE_TEXT
    marker: str  # a text the seed puts on this figure (axis label, legend entry or title)
    panel: str | None = None  # the seed's legend label of a flat series that gets a panel of its own
    legend_outside: bool = False  # the legend would cover data points
    clip_bounds: bool = False  # draw 1 - eps_low and 1 + eps_high of experiment["config"]


@dataclass(frozen=True)
class ExtraFigure:
    """A figure the kit draws itself from a result the seed computed (the variable ``needs``)."""

    slug: str
    needs: str
    draw: Callable  # (value of ``needs``, language) -> a matplotlib Figure with data and legend


SEED_FIGURES = {
    "module_09": (
        SeedFigure("module09_informative_groups", marker="вероятность успеха одного ответа p"),
        SeedFigure("module09_exact_updates", marker="шаг точного обновления", panel="pass@4"),
        SeedFigure("module09_training_curves", marker="точность свежей генерации", legend_outside=True),
        SeedFigure("module09_importance_ratios", marker="среднее отношение", panel="среднее отношение",
                   legend_outside=True, clip_bounds=True),
        SeedFigure("module09_accuracy_by_prompt", marker="доля правильных ответов"),
    ),
    "module_08": (
        SeedFigure("module08_reward_kl_frontier", marker="Exact reward–KL frontier"),
        SeedFigure("module08_dpo_gradient_weight", marker="Which pairs receive the largest DPO update?"),
        SeedFigure("module08_likelihood_displacement", marker="A larger pair margin need not raise chosen probability"),
        SeedFigure("module08_sequence_logprobs", marker="Pair accuracy alone misses absolute likelihood displacement",
                   legend_outside=True),
    ),
}


def _draw_heldout_accuracy(experiment: dict, language: str):
    import matplotlib.pyplot as plt

    words = table_in(WORDS, language)
    groups = [words["train_prompts"].format(count=len(experiment["prompts"])),
              words["heldout_prompts"].format(count=len(experiment["heldout_prompts"]))]
    before = [experiment["before_train"]["accuracy"], experiment["before_heldout"]["accuracy"]]
    after = [experiment["after_train"]["accuracy"], experiment["after_heldout"]["accuracy"]]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    x, width = np.arange(len(groups)), 0.38
    for offset, values, label in ((-width / 2, before, words["before"]), (width / 2, after, words["after"])):
        bars = ax.bar(x + offset, values, width, label=label)
        ax.bar_label(bars, fmt="%.3f", padding=2)
    ax.set_xticks(x, groups)
    ax.set_ylim(0, 1.08)
    ax.grid(True, axis="y", alpha=0.25)
    ax.legend(loc="upper left")
    return fig


EXTRA_FIGURES = {
    "module_09": (ExtraFigure("module09_heldout_accuracy", needs="experiment", draw=_draw_heldout_accuracy),),
    "module_08": (),
}


# ----------------------------------------------------------------------------- finishing a figure
def figure_texts(fig) -> set[str]:
    """Every title, axis label and legend entry on ``fig``."""
    suptitle = getattr(fig, "_suptitle", None)
    texts = {suptitle.get_text()} if suptitle is not None else set()
    for ax in fig.axes:
        texts |= {ax.get_title(), ax.get_xlabel(), ax.get_ylabel()}
        legend = ax.get_legend()
        if legend is not None:
            texts |= {entry.get_text() for entry in legend.get_texts()}
    return texts - {""}


def describe(fig) -> dict:
    """What a reader sees on ``fig``: its title and, per panel, the axis labels and legend entries."""
    panels = []
    for ax in fig.axes:
        legend = ax.get_legend()
        panels.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                       "legend": [entry.get_text() for entry in legend.get_texts()] if legend else []})
    suptitle = getattr(fig, "_suptitle", None)
    title = suptitle.get_text() if suptitle is not None else (panels[0]["title"] if panels else "")
    return {"title": title, "panels": panels}


def _own_panel(fig, ax, label: str):
    """Move the series labelled ``label`` from ``ax`` to a new panel below it, on its own y-range."""
    line = next(line for line in ax.get_lines() if line.get_label() == label)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height * 1.45)
    grid = fig.add_gridspec(2, 1, height_ratios=(2.2, 1.0), hspace=0.08)
    ax.set_subplotspec(grid[0])
    low = fig.add_subplot(grid[1], sharex=ax)
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    low.plot(x, y, color=line.get_color(), marker="o", markersize=3, linewidth=1.8, label=label, zorder=3)
    line.remove()
    ax.relim()
    ax.autoscale_view()
    ax.tick_params(labelbottom=False)
    ax.set_xlabel("")
    spread = float(y.max() - y.min())
    pad = max(0.25 * spread, 1e-3 * max(1.0, abs(float(y.max()))))
    low.set_ylim(float(y.min()) - pad, float(y.max()) + pad)
    low.ticklabel_format(axis="y", useOffset=False)
    rising = y[-1] >= y[0]
    for index, above in ((0, not rising), (-1, rising)):  # the first and last value: the point of a flat line
        low.annotate(f"{y[index]:.4f}", (x[index], y[index]), textcoords="offset points",
                     xytext=(4 if index == 0 else -4, 6 if above else -12), ha="left" if index == 0 else "right",
                     fontsize=8)
    low.grid(True, alpha=0.25)
    return low


def _ratio_lines(ax, low, config, language: str) -> None:
    """Clip bounds on the min/max panel; the line at ratio 1 behind the data on both panels."""
    words = table_in(WORDS, language)
    for line in ax.get_lines():  # the seed's ax.axhline(1.0, ...): put it behind the data, in grey
        if line.get_label().startswith("_") and set(np.asarray(line.get_ydata(), float)) == {1.0}:
            line.set(color="0.55", linewidth=0.9, linestyle=":", zorder=1, label=words["ratio_one"])
    if low is not None:
        low.axhline(1.0, color="0.55", linewidth=0.9, linestyle=":", zorder=1, label=words["ratio_one"])
        lo, hi = low.get_ylim()
        low.set_ylim(min(lo, 0.999), max(hi, 1.001))
    if config is not None:
        ax.axhline(1.0 - config.eps_low, color="tab:red", linestyle="--", linewidth=1.2,
                   label=words["clip_low"].format(value=1.0 - config.eps_low), zorder=2)
        ax.axhline(1.0 + config.eps_high, color="tab:purple", linestyle="--", linewidth=1.2,
                   label=words["clip_high"].format(value=1.0 + config.eps_high), zorder=2)


def _legend(ax, outside: bool) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if outside:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(handles, labels)


def finish(fig, slug: str, language: str, *, panel: str | None = None, legend_outside: bool = False,
           clip_bounds: bool = False, context: dict | None = None) -> None:
    """Title, labels and legend of ``fig`` in ``language``, and the fixes its :class:`SeedFigure` asks for."""
    text = table_in(FIGURE_TEXT[slug], language)
    ax = fig.axes[0]
    low = _own_panel(fig, ax, panel) if panel is not None else None
    if clip_bounds:
        experiment = (context or {}).get("experiment")
        config = experiment.get("config") if isinstance(experiment, dict) else None
        _ratio_lines(ax, low, config, language)
    for axes in (ax, low):
        if axes is None:
            continue
        for handle in axes.get_legend_handles_labels()[0]:
            handle.set_label(translate(handle.get_label(), language))
        _legend(axes, legend_outside)
    ax.set_title(text["title"], fontsize=11)
    ax.set_ylabel(text["ylabel"])
    (low if low is not None else ax).set_xlabel(text["xlabel"])
    if low is not None:
        low.set_ylabel(text["panel"])


def finish_seed_figure(fig, spec: SeedFigure, language: str, context: dict) -> None:
    finish(fig, spec.slug, language, panel=spec.panel, legend_outside=spec.legend_outside,
           clip_bounds=spec.clip_bounds, context=context)
