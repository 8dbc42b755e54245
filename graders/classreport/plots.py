"""The class report's figures: the score histogram, the exercises' mean fraction, the status heat map.

Readable for a large class: the heat map is cut into panels of at most :data:`PANEL` submissions
(highest total first, each panel under the previous one), every submission labelled at
:data:`LABEL_POINTS` pt with room for its label (a column is :data:`COLUMN_INCHES` wide); past
:data:`MAX_PANELS` panels the panels get wider and only every k-th label is written, so the PNG stays
bounded (about 1.5k × 5k pixels at 400 submissions and 30 exercises). ``tests/test_class_report.py``
measures it at 300 submissions.
"""

from __future__ import annotations

import io
import math

from graders.text import table_in

STATUS_COLOURS = {"passed": "#2e7d32", "failed": "#ef6c00", "unexplained": "#fdd835", "validation_missing": "#90caf9",
                  "error": "#6a1b9a",
                  "timeout": "#b71c1c", "missing": "#9e9e9e", "not_implemented": "#cfd8dc", "not_graded": "#ffffff"}
PANEL = 60  # submissions per heat-map panel
MAX_PANELS = 8
COLUMN_INCHES = 0.16  # 11.5 pt a column: a 7 pt label, rotated, fits with room to spare
LABEL_POINTS = 7
ROW_INCHES = 0.14  # an exercise's row: 10 pt, its 6 pt label fits
LABEL_CHARACTERS = 24  # a longer submission name is cut, with "…"
EXERCISE_CHARACTERS = 44  # a longer exercise id is cut, with "…" (the course's longest short id: 39)
BAR_LABEL_POINTS = 7
DPI = 110


def png(figure) -> bytes:
    """The figure as PNG bytes at :data:`DPI`, drawn once (its layout is in inches already)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def short(exercise: str) -> str:
    """``module_9_reference.k3_kl`` -> ``9.k3_kl`` (an id of another form stays as it is)."""
    stem, _, function = exercise.partition(".")
    parts = stem.split("_")
    return f"{parts[1]}.{function}" if function and len(parts) > 1 and parts[0] == "module" else exercise


def number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value == value else "—"


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARACTERS else name[:LABEL_CHARACTERS - 1] + "…"


def heatmap_codes(data):
    """exercise × submission (highest total first) status codes (indices into :data:`STATUS_COLOURS`)."""
    statuses = list(STATUS_COLOURS)
    rows = data.rows.assign(status=[
        "unexplained" if status == "failed" and not named else status
        for status, named in zip(data.rows["status"], data.rows["misconceptions"])])
    ranked = data.totals.sort_values(ascending=False, kind="stable").index
    grid = (rows.pivot(index="exercise", columns="submission", values="status")
            .reindex(index=data.exercises, columns=ranked).fillna("not_graded"))  # a report of another module
    return grid.map(lambda s: statuses.index(s) if s in statuses else statuses.index("error")), list(ranked)


def heatmap_figure(data, language: str):
    """The heat map as a matplotlib figure (the caller closes it): panels of at most :data:`PANEL` submissions,
    laid out in inches (no layout engine: a class of 300 draws in seconds)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    from graders.classreport.texts import TEXT

    text = table_in(TEXT, language)
    codes, ranked = heatmap_codes(data)
    panels = min(MAX_PANELS, max(1, math.ceil(len(ranked) / PANEL)))
    size = max(1, math.ceil(len(ranked) / panels))
    step = max(1, math.ceil(size / PANEL))  # past MAX_PANELS panels: every step-th label
    labels = [exercise_label(e) for e in data.exercises]
    # inches: the exercise labels, the columns, the legend; per panel its title, rows and rotated labels
    left = 0.5 + 0.05 * max(len(label) for label in labels)
    columns = max(4.0, COLUMN_INCHES * size / step)
    right = 2.6
    rows = ROW_INCHES * len(data.exercises)
    under = 0.3 + 0.056 * max(len(_label(name)) for name in ranked)
    panel = 0.35 + rows + under
    top, bottom = 0.4, 0.3
    width, height = left + columns + right, top + panel * panels + bottom
    figure = plt.figure(figsize=(width, height))
    statuses = list(STATUS_COLOURS)
    colours = ListedColormap(list(STATUS_COLOURS.values()))
    axes = []
    for index in range(panels):
        part = ranked[index * size:(index + 1) * size]
        y = height - top - index * panel - 0.35 - rows
        axis = figure.add_axes((left / width, y / height, columns / width, rows / height))
        axes.append(axis)
        axis.imshow(codes.loc[:, part].to_numpy(), aspect="auto", interpolation="nearest", vmin=0,
                    vmax=len(statuses) - 1, cmap=colours)
        axis.set_xlim(-0.5, size - 0.5)  # every panel on the same scale
        # labels are text from the reports: never mathtext (a name like "$\x{$" would stop the figure)
        axis.set_yticks(range(len(labels)), labels, fontsize=LABEL_POINTS - 1, parse_math=False)
        ticks = list(range(0, len(part), step))
        axis.set_xticks(ticks, [_label(part[i]) for i in ticks], rotation=90, fontsize=LABEL_POINTS,
                        parse_math=False)
        if panels > 1:
            axis.set_title(f"{index * size + 1}–{index * size + len(part)} / {len(ranked)}",
                           fontsize=LABEL_POINTS + 1, loc="right")
    figure.text(left / width, 1 - 0.12 / height, text["heatmap_figure"], fontsize=LABEL_POINTS + 3, va="top",
                parse_math=False)
    axes[-1].set_xlabel(text["submission_axis"], fontsize=LABEL_POINTS + 1)
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colour, edgecolor="#999999") for colour in STATUS_COLOURS.values()]
    axes[0].legend(handles, [text["statuses"][s] for s in statuses], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                   fontsize=LABEL_POINTS)
    return figure


def _inches(figure, left: float, right: float, bottom: float, top: float) -> None:
    """Place the figure's one axis by margins in inches: the layout is known before drawing, so the PNG
    is drawn once (``bbox_inches="tight"`` draws it twice: once to measure, once to save)."""
    width, height = figure.get_size_inches()
    figure.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)


def exercise_label(exercise: str) -> str:
    """An exercise's label in the figures: :func:`short`, cut past :data:`EXERCISE_CHARACTERS` (every id
    of the course fits; a forged report's longer one cannot widen the figure without bound)."""
    label = short(exercise)
    return label if len(label) <= EXERCISE_CHARACTERS else label[:EXERCISE_CHARACTERS - 1] + "…"


def scores_figure(data, language: str):
    """The histogram of total scores as a matplotlib figure (the caller closes it), margins in inches."""
    import matplotlib.pyplot as plt
    import numpy as np

    from graders.classreport.texts import TEXT

    text = table_in(TEXT, language)
    figure, axis = plt.subplots(figsize=(7, 3.6))
    _inches(figure, left=0.75, right=0.25, bottom=0.6, top=0.4)  # tick numbers and axis labels; the title
    bins = min(40, max(5, int(np.ceil(np.sqrt(len(data.totals))))))
    axis.hist(data.totals.to_numpy(), bins=bins, range=(0, data.max_score), color="#1565c0", edgecolor="white")
    axis.set(title=text["scores_figure"], xlabel=text["score_axis"].format(max_score=number(data.max_score)),
             ylabel=text["count_axis"])
    return figure


def exercises_figure(table, language: str):
    """The exercises' mean fraction of points as horizontal bars, hardest on top (the caller closes it); the
    left margin holds the longest label (:data:`BAR_LABEL_POINTS` pt, about 0.6 of a point a character)."""
    import matplotlib.pyplot as plt

    from graders.classreport.texts import TEXT

    text = table_in(TEXT, language)
    labels = [exercise_label(e) for e in table.index]
    left = 0.3 + 0.6 * BAR_LABEL_POINTS / 72 * max((len(label) for label in labels), default=0)
    figure, axis = plt.subplots(figsize=(left + 5.5, 0.28 * len(table) + 1.2))
    _inches(figure, left=left, right=0.3, bottom=0.6, top=0.4)
    axis.barh(range(len(table)), table["mean_fraction"].fillna(0).to_numpy(), color="#1565c0")
    axis.set_yticks(range(len(table)), labels, fontsize=BAR_LABEL_POINTS, parse_math=False)
    axis.invert_yaxis()  # hardest on top
    axis.set(title=text["exercises_figure"], xlabel=text["fraction_axis"], xlim=(0, 1))
    return figure


def figures(data, table, language: str) -> dict[str, bytes]:
    """The three figures as PNG bytes: score histogram, exercises' mean fraction, status heat map. Each is
    laid out in inches and drawn once."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    for key, make in (("scores", lambda: scores_figure(data, language)),
                      ("exercises", lambda: exercises_figure(table, language)),
                      ("heatmap", lambda: heatmap_figure(data, language))):
        made = make()
        try:
            out[key] = png(made)
        finally:
            plt.close(made)
    return out
