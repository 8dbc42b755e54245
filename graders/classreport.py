"""The class report: where a graded batch stands, and which misconceptions the class holds.

``rl4llm report DIR`` (and ``rl4llm grade ... --out DIR`` for a batch of two or more submissions)
reads every ``DIR/<submission>/report.json`` and writes:

- ``DIR/class_report.html``: one self-contained page (inline CSS, figures as ``data:`` PNGs, no
  script, no link to anything outside it), in English or Russian;
- ``DIR/class_summary.csv``: one row per exercise, hardest first;
- ``DIR/class_misconceptions.csv``: one row per (exercise, catalogued misconception) the class holds;
- ``DIR/class_scores.png``, ``DIR/class_exercises.png``, ``DIR/class_heatmap.png``: the figures.

What it computes, per exercise ``e`` over the submissions ``s`` (pandas does the statistics):

- mean fraction of points: mean_s points(s, e) / max_points(e);
- pass rate: the fraction of submissions whose status is ``passed``;
- discrimination: Pearson's r between points(s, e) and the rest of the total, total(s) - points(s, e)
  (the item-rest correlation of classical test theory; empty when either is constant);
- misconceptions: how many submissions the report names each catalogued mistake for, with its hint
  (from the kit's catalogue, in the report's language);
- errors and timeouts (statuses ``error`` and ``timeout``) listed apart from wrong answers: they
  usually point at the environment, not at what a learner understood. An exercise still the untouched
  stub (its report entry says ``"not_implemented": true``) shows as ``not_implemented``, neither a
  wrong answer nor an environment problem.

Nothing in it comes from a check's feedback text, so it never shows an input, hidden or not: it is
shareable with teaching assistants whatever ``--hide-hidden-inputs`` was.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path

from graders.engine.learner_text import clean
from graders.language import default_language
from graders.text import Text, table_in

REPORT_FILE = "class_report.html"
SUMMARY_FILE = "class_summary.csv"
MISCONCEPTIONS_FILE = "class_misconceptions.csv"
FIGURES = {"scores": "class_scores.png", "exercises": "class_exercises.png", "heatmap": "class_heatmap.png"}
STATUS_COLOURS = {"passed": "#2e7d32", "failed": "#ef6c00", "error": "#6a1b9a", "timeout": "#b71c1c",
                  "missing": "#9e9e9e", "not_implemented": "#cfd8dc"}
ENVIRONMENT_STATUSES = ("error", "timeout")

TEXT = {
    "title": Text("Class report: {submissions} submissions, {exercises} exercises",
                  "Отчёт по группе: работ {submissions}, заданий {exercises}"),
    "scores": Text("Scores", "Баллы"),
    "scores_figure": Text("Total scores of the class", "Итоговые баллы группы"),
    "score_axis": Text("total score (of {max_score})", "итоговый балл (из {max_score})"),
    "count_axis": Text("submissions", "работ"),
    "summary": Text("count {count}, mean {mean}, median {median}, quartiles {q1} and {q3}, min {min}, max {max}",
                    "работ {count}, среднее {mean}, медиана {median}, квартили {q1} и {q3}, минимум {min}, максимум {max}"),
    "exercises": Text("Exercises, hardest first", "Задания, от самого трудного"),
    "exercises_figure": Text("Mean fraction of points per exercise", "Средняя доля баллов по заданиям"),
    "fraction_axis": Text("mean fraction of points", "средняя доля баллов"),
    "exercise": Text("exercise", "задание"),
    "max_points": Text("points", "баллы"),
    "mean_fraction": Text("mean fraction", "средняя доля"),
    "pass_rate": Text("pass rate", "доля зачтённых"),
    "discrimination": Text("discrimination", "дискриминативность"),
    "discrimination_note": Text("discrimination: the correlation of an exercise's points with the rest of the "
                                "total (low or negative: the exercise does not separate strong from weak work)",
                                "дискриминативность: корреляция баллов за задание с остальной суммой "
                                "(низкая или отрицательная: задание не отделяет сильные работы от слабых)"),
    "misconceptions": Text("Misconceptions the class holds, most common first",
                           "Ошибочные представления группы, от самых частых"),
    "misconception": Text("misconception", "ошибка"),
    "learners": Text("submissions", "работ"),
    "hint": Text("hint", "подсказка"),
    "no_misconceptions": Text("No catalogued misconception was named in this batch.",
                              "В этой партии не названо ни одной ошибки из каталога."),
    "heatmap": Text("Every exercise of every submission", "Каждое задание каждой работы"),
    "heatmap_figure": Text("Status of each exercise in each submission (submissions by total score)",
                           "Статус каждого задания в каждой работе (работы по итоговому баллу)"),
    "submission_axis": Text("submission (highest total first)", "работа (от наибольшего балла)"),
    "environment": Text("Errors and timeouts (usually the environment, not the learning)",
                        "Ошибки выполнения и превышения времени (обычно среда, а не понимание)"),
    "environment_note": Text("an exercise left as its stub (NotImplementedError) is counted apart, as not "
                             "implemented; a row for every exercise of a submission usually means a broken setup",
                             "задание, оставленное заготовкой (NotImplementedError), учитывается отдельно, как "
                             "не реализованное; строки для всех заданий одной работы обычно значат сломанную среду"),
    "no_environment": Text("No exercise ended in an error or a timeout.",
                           "Ни одно задание не закончилось ошибкой выполнения или превышением времени."),
    "submission": Text("submission", "работа"),
    "status": Text("status", "статус"),
    "statuses": {
        "passed": Text("passed", "зачтено"),
        "failed": Text("failed", "неверно"),
        "error": Text("error", "ошибка"),
        "timeout": Text("timeout", "время"),
        "missing": Text("missing", "нет"),
        "not_implemented": Text("not implemented", "не реализовано"),
    },
}


class ReportError(Exception):
    """No class report can be built from this folder."""


@dataclass
class ClassData:
    """A batch's reports as tables: ``rows`` (one per submission and exercise) and the totals."""

    rows: object  # pandas.DataFrame: submission, exercise, status, points, max_points, misconceptions
    totals: object  # pandas.Series: submission -> total points
    max_score: float
    exercises: list[str]  # in course order


def read_reports(folder: Path | str) -> ClassData:
    """Every ``<submission>/report.json`` under ``folder`` as :class:`ClassData`."""
    import pandas as pd

    folder = Path(folder)
    paths = sorted(folder.glob("*/report.json"))
    if not paths:
        raise ReportError(f"{folder}: no <submission>/report.json here; grade a batch into it first "
                          f"(rl4llm grade ... --out {folder})")
    records, order, max_scores, names = [], {}, [], set()
    for path in paths:
        try:
            # a report's text (a submission name from an nbgrader student id, ids) is anyone's: cleaned here,
            # then escaped for HTML, neutralised for CSV and shown without mathtext by the figures
            report = clean(json.loads(path.read_text(encoding="utf-8")))
            entries = report["exercises"]
            max_scores.append(float(report["max_score"]))
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
            raise ReportError(f"{path}: not a report.json of the kit ({type(error).__name__}: {error})") from error
        name = str(report.get("submission", path.parent.name))
        if name in names:  # two folders, one name: each submission keeps a row of its own
            name = f"{name} ({path.parent.name})"
        names.add(name)
        for entry in entries:
            order.setdefault(entry["id"], len(order))
            records.append({"submission": name, "exercise": entry["id"],
                            # an untouched stub is neither a wrong answer nor an environment problem
                            "status": "not_implemented" if entry.get("not_implemented") else entry["status"],
                            "points": float(entry["points"]),
                            "max_points": float(entry["max_points"]),
                            "misconceptions": tuple(entry.get("misconceptions") or ())})
    rows = pd.DataFrame.from_records(records)
    totals = rows.groupby("submission")["points"].sum()
    return ClassData(rows, totals, max(max_scores), sorted(order, key=order.get))


def exercise_table(data: ClassData):
    """One row per exercise: max_points, mean_fraction, pass_rate, discrimination; hardest first."""
    import pandas as pd

    points = data.rows.pivot(index="submission", columns="exercise", values="points")[data.exercises]
    rest = points.sum(axis=1).to_numpy()[:, None] - points
    passed = (data.rows.pivot(index="submission", columns="exercise", values="status")[data.exercises] == "passed")
    max_points = data.rows.groupby("exercise")["max_points"].max()[data.exercises]
    table = pd.DataFrame({
        "max_points": max_points,
        "mean_fraction": points.mean() / max_points,
        "pass_rate": passed.mean(),
        "discrimination": points.corrwith(rest),  # item-rest Pearson r; NaN when either side is constant
    })
    table.index.name = "exercise"
    return table.sort_values(["mean_fraction", "pass_rate"], kind="stable")


def misconception_table(data: ClassData, language: str):
    """One row per (exercise, misconception) named in the batch: learners, hint; most common first."""
    import pandas as pd

    named = data.rows[["submission", "exercise", "misconceptions"]].explode("misconceptions").dropna()
    if named.empty:
        return pd.DataFrame(columns=["exercise", "misconception", "learners", "hint"])
    counts = (named.groupby(["exercise", "misconceptions"])["submission"].nunique()
              .rename("learners").reset_index().rename(columns={"misconceptions": "misconception"}))
    counts["hint"] = [catalogue_hint(e, m, language) for e, m in zip(counts["exercise"], counts["misconception"])]
    return counts.sort_values(["learners", "exercise", "misconception"], ascending=[False, True, True],
                              kind="stable").reset_index(drop=True)


def catalogue_hint(exercise: str, name: str, language: str) -> str:
    """The catalogue's hint for a misconception in ``language`` (English where it has no other); "" if unknown."""
    for entry in _catalogue(exercise):
        if entry.name == name:
            return entry.hint_in(language)
    return ""


@functools.cache
def _catalogue(exercise: str) -> tuple:
    """An exercise's catalogue entries, each file parsed once (a report names several of its mistakes)."""
    from graders.engine.misconceptions import catalogue_file, read_entries

    try:
        return tuple(read_entries(catalogue_file(exercise)))
    except Exception:  # noqa: BLE001 - a report from another kit version: the name alone is still useful
        return ()


def environment_table(data: ClassData):
    """The (submission, exercise, status) rows that ended in an error or a timeout."""
    rows = data.rows[data.rows["status"].isin(ENVIRONMENT_STATUSES)]
    return rows[["submission", "exercise", "status"]].sort_values(["exercise", "submission"]).reset_index(drop=True)


# ----------------------------------------------------------------------------- figures
def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def figures(data: ClassData, table, language: str) -> dict[str, bytes]:
    """The three figures as PNG bytes: score histogram, exercises' mean fraction, status heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import ListedColormap

    text = table_in(TEXT, language)
    out = {}
    figure, axis = plt.subplots(figsize=(7, 3.6))
    bins = min(40, max(5, int(np.ceil(np.sqrt(len(data.totals))))))
    axis.hist(data.totals.to_numpy(), bins=bins, range=(0, data.max_score), color="#1565c0", edgecolor="white")
    axis.set(title=text["scores_figure"], xlabel=text["score_axis"].format(max_score=_number(data.max_score)),
             ylabel=text["count_axis"])
    out["scores"] = _png(figure)
    plt.close(figure)

    figure, axis = plt.subplots(figsize=(7, 0.28 * len(table) + 1.2))
    axis.barh(range(len(table)), table["mean_fraction"].to_numpy(), color="#1565c0")
    # labels are text from the reports: never mathtext (a name like "$\x{$" would stop the figure)
    axis.set_yticks(range(len(table)), [_short(e) for e in table.index], fontsize=7, parse_math=False)
    axis.invert_yaxis()  # hardest on top
    axis.set(title=text["exercises_figure"], xlabel=text["fraction_axis"], xlim=(0, 1))
    out["exercises"] = _png(figure)
    plt.close(figure)

    statuses = list(STATUS_COLOURS)
    ranked = data.totals.sort_values(ascending=False, kind="stable").index
    codes = (data.rows.pivot(index="exercise", columns="submission", values="status")
             .loc[data.exercises, ranked].map(statuses.index).to_numpy())
    width = min(30.0, 4.0 + 0.06 * len(ranked))
    figure, axis = plt.subplots(figsize=(width, 0.22 * len(data.exercises) + 1.6))
    axis.imshow(codes, aspect="auto", interpolation="nearest", vmin=0, vmax=len(statuses) - 1,
                cmap=ListedColormap(list(STATUS_COLOURS.values())))
    axis.set_yticks(range(len(data.exercises)), [_short(e) for e in data.exercises], fontsize=6, parse_math=False)
    if len(ranked) <= 60:
        axis.set_xticks(range(len(ranked)), list(ranked), rotation=90, fontsize=6, parse_math=False)
    else:
        axis.set_xticks([])
    axis.set(title=text["heatmap_figure"], xlabel=text["submission_axis"], ylabel=text["exercise"])
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour) for colour in STATUS_COLOURS.values()]
    axis.legend(handles, [text["statuses"][s] for s in statuses], loc="upper left", bbox_to_anchor=(1.0, 1.0),
                fontsize=7)
    out["heatmap"] = _png(figure)
    plt.close(figure)
    return out


def _short(exercise: str) -> str:
    """``module_9_reference.k3_kl`` -> ``9.k3_kl`` (an id of another form stays as it is)."""
    stem, _, function = exercise.partition(".")
    parts = stem.split("_")
    return f"{parts[1]}.{function}" if function and len(parts) > 1 and parts[0] == "module" else exercise


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value == value else "—"


# ----------------------------------------------------------------------------- the page
def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(data: ClassData, table, misconceptions, environment, images: dict[str, bytes], language: str) -> str:
    text = table_in(TEXT, language)
    quartiles = data.totals.quantile([0.25, 0.5, 0.75])
    summary = text["summary"].format(count=len(data.totals), mean=_number(data.totals.mean()),
                                     median=_number(quartiles[0.5]), q1=_number(quartiles[0.25]),
                                     q3=_number(quartiles[0.75]), min=_number(data.totals.min()),
                                     max=_number(data.totals.max()))

    def image(key: str, alt: str) -> str:
        encoded = base64.b64encode(images[key]).decode("ascii")
        return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'

    exercise_rows = [[e, _number(r.max_points), f"{r.mean_fraction:.0%}", f"{r.pass_rate:.0%}",
                      _number(r.discrimination)] for e, r in table.iterrows()]
    sections = [
        f'<h1>{html.escape(text["title"].format(submissions=len(data.totals), exercises=len(data.exercises)))}</h1>',
        f'<section id="scores"><h2>{html.escape(text["scores"])}</h2><p>{html.escape(summary)}</p>'
        f'{image("scores", text["scores_figure"])}</section>',
        f'<section id="exercises"><h2>{html.escape(text["exercises"])}</h2>'
        + _html_table([text[k] for k in ("exercise", "max_points", "mean_fraction", "pass_rate", "discrimination")],
                      exercise_rows)
        + f'<p class="note">{html.escape(text["discrimination_note"])}</p>'
        f'{image("exercises", text["exercises_figure"])}</section>',
        f'<section id="misconceptions"><h2>{html.escape(text["misconceptions"])}</h2>'
        + (_html_table([text[k] for k in ("exercise", "misconception", "learners", "hint")],
                       misconceptions[["exercise", "misconception", "learners", "hint"]].values.tolist())
           if len(misconceptions) else f'<p>{html.escape(text["no_misconceptions"])}</p>') + "</section>",
        f'<section id="heatmap"><h2>{html.escape(text["heatmap"])}</h2>{image("heatmap", text["heatmap_figure"])}'
        "</section>",
        f'<section id="environment"><h2>{html.escape(text["environment"])}</h2>'
        f'<p class="note">{html.escape(text["environment_note"])}</p>'
        + (_html_table([text[k] for k in ("submission", "exercise", "status")],
                       [[s, e, text["statuses"][st]] for s, e, st in environment.values.tolist()])
           if len(environment) else f'<p>{html.escape(text["no_environment"])}</p>') + "</section>",
    ]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
             "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;"
             "padding:3px 8px;text-align:left}th{background:#f0f0f0}img{max-width:100%}.note{color:#555}")
    return (f'<!DOCTYPE html>\n<html lang="{language}"><head><meta charset="utf-8">'
            f'<title>{html.escape(text["title"].format(submissions=len(data.totals), exercises=len(data.exercises)))}'
            f"</title><style>{style}</style></head><body>\n" + "\n".join(sections) + "\n</body></html>\n")


def _csv_safe(frame):
    """``frame`` with every text cell and header neutralised for spreadsheets (:func:`graders.engine.reports.csv_cell`);
    numbers stay numbers."""
    from graders.engine.reports import csv_cell

    import pandas as pd

    frame = frame.copy()
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):  # text (object or pandas' string dtype)
            frame[column] = frame[column].map(csv_cell)
    return frame.rename(columns=csv_cell)


def build_class_report(folder: Path | str, language: str | None = None) -> dict[str, Path]:
    """Write the class report files into ``folder`` (which holds the batch's reports); return their paths."""
    language = language or default_language()
    folder = Path(folder)
    data = read_reports(folder)
    table = exercise_table(data)
    misconceptions = misconception_table(data, language)
    environment = environment_table(data)
    images = figures(data, table, language)
    written = {}
    for key, name in FIGURES.items():
        (folder / name).write_bytes(images[key])
        written[key] = folder / name
    _csv_safe(table.reset_index()).to_csv(folder / SUMMARY_FILE, index=False, float_format="%.4f")
    _csv_safe(misconceptions).to_csv(folder / MISCONCEPTIONS_FILE, index=False)
    (folder / REPORT_FILE).write_text(render_html(data, table, misconceptions, environment, images, language),
                                      encoding="utf-8", errors="backslashreplace")
    written.update(summary=folder / SUMMARY_FILE, misconceptions=folder / MISCONCEPTIONS_FILE,
                   report=folder / REPORT_FILE)
    return written
