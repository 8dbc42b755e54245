"""The class report's page: one self-contained HTML file (inline CSS, ``data:`` PNGs, no script).

The only links are anchors within the page (``href="#s-3"``): each name in "who holds it" and in the
unexplained failures leads to that submission's section. Every text from a report is escaped.
"""

from __future__ import annotations

import base64
import html

from graders.classreport.plots import number
from graders.classreport.texts import TEXT
from graders.engine.values.learner_text import FIELD_LIMIT, clean_text
from graders.text import table_in

STYLE = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;"
         "padding:3px 8px;text-align:left;vertical-align:top}th{background:#f0f0f0}img{max-width:100%}"
         ".note{color:#555}h3{margin:1.4em 0 .3em;font-size:105%}.who a{margin-right:.5em}")


def _e(value) -> str:
    """One HTML field: the text cleaned (:func:`~graders.engine.values.learner_text.clean_text`: no control, escape
    sequence or bidirectional control, cut at ``FIELD_LIMIT``), then HTML-escaped."""
    return html.escape(clean_text(str(value), FIELD_LIMIT))


def _table(headers: list[str], rows: list[list[str]], raw: frozenset[int] = frozenset()) -> str:
    """A table of escaped cells; the columns in ``raw`` hold HTML this module made (links of escaped names)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if i in raw else _e(c)}</td>" for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{key}"><h2>{_e(title)}</h2>{body}</section>'


def render_html(data, table, misconceptions, unexplained, students, environment, images: dict[str, bytes],
                language: str, validation=None) -> str:
    """The page, in ``language``: every table of the report, the figures inline."""
    if validation is None:
        from graders.classreport.tables import validation_table

        validation = validation_table(data)
    text = table_in(TEXT, language)
    quartiles = data.totals.quantile([0.25, 0.5, 0.75])
    summary = text["summary"].format(count=len(data.totals), mean=number(data.totals.mean()),
                                     median=number(quartiles[0.5]), q1=number(quartiles[0.25]),
                                     q3=number(quartiles[0.75]), min=number(data.totals.min()),
                                     max=number(data.totals.max()))

    def image(key: str, alt: str) -> str:
        encoded = base64.b64encode(images[key]).decode("ascii")
        return f'<img alt="{_e(alt)}" src="data:image/png;base64,{encoded}">'

    def who(names) -> str:
        return '<span class="who">' + "".join(f'<a href="#{data.anchor(n)}">{_e(n)}</a>' for n in names) + "</span>"

    def note(key: str) -> str:
        return f'<p class="note">{_e(text[key])}</p>'

    title = text["title"].format(submissions=len(data.totals), exercises=len(data.exercises))
    exercise_rows = [[e, number(r.max_points), int(r.handed_in), int(r.missing), int(r.no_code),
                      "—" if r.mean_fraction != r.mean_fraction else f"{r.mean_fraction:.0%}",
                      "—" if r.pass_rate != r.pass_rate else f"{r.pass_rate:.0%}", number(r.discrimination)]
                     for e, r in table.iterrows()]
    named_rows = [[r.exercise, r.misconception, r.learners, who(r.submissions.split("; ")), r.hint]
                  for r in misconceptions.itertuples()]
    sections = [
        f"<h1>{_e(title)}</h1>" + (note("mixed_note") if data.mixed else ""),
        _section("scores", text["scores"], f"<p>{_e(summary)}</p>{image('scores', text['scores_figure'])}"),
        _section("exercises", text["exercises"],
                 _table([text[k] for k in ("exercise", "max_points", "handed_in", "missing_count", "no_code_count",
                                           "mean_fraction", "pass_rate", "discrimination")], exercise_rows)
                 + note("discrimination_note") + image("exercises", text["exercises_figure"])),
        _section("misconceptions", text["misconceptions"],
                 _table([text[k] for k in ("exercise", "misconception", "learners", "who", "hint")], named_rows,
                        frozenset({3}))
                 if named_rows else f'<p>{_e(text["no_misconceptions"])}</p>'),
        _section("unexplained", text["unexplained"], note("unexplained_note") + _unexplained(unexplained, text, who)),
        _section("validation", text["validation"], note("validation_note") + _by_exercise(
            validation, text, who, "no_validation")),
        _section("heatmap", text["heatmap"], image("heatmap", text["heatmap_figure"])),
        _section("environment", text["environment"], note("environment_note")
                 + (_table([text[k] for k in ("cause", "submission", "status", "stopped", "count")],
                           [[c, s, text["statuses"][st], e, n] for c, s, st, e, n in environment.values.tolist()])
                    if len(environment) else f'<p>{_e(text["no_environment"])}</p>')),
        _section("students", text["students"], note("students_note") + _students(data, students, text)),
    ]
    return (f'<!DOCTYPE html>\n<html lang="{language}"><head><meta charset="utf-8">'
            f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>\n" + "\n".join(sections)
            + "\n</body></html>\n")


def _unexplained(unexplained, text, who) -> str:
    """Per exercise (course order): how many, who (links), the candidates the reports list."""
    if not len(unexplained):
        return f'<p>{_e(text["no_unexplained"])}</p>'
    rows = []
    for exercise, group in unexplained.groupby("exercise", sort=False):
        candidates = sorted({c for cell in group["candidates"] for c in cell.split("; ") if c})
        rows.append([exercise, group["submission"].nunique(), who(list(group["submission"])), "; ".join(candidates)])
    return _table([text[k] for k in ("exercise", "learners", "who", "candidates")], rows, frozenset({2}))


def _by_exercise(frame, text, who, empty: str) -> str:
    """Per exercise (course order): how many submissions, and who (links)."""
    if not len(frame):
        return f'<p>{_e(text[empty])}</p>'
    rows = [[exercise, group["submission"].nunique(), who(list(group["submission"]))]
            for exercise, group in frame.groupby("exercise", sort=False)]
    return _table([text[k] for k in ("exercise", "learners", "who")], rows, frozenset({2}))


def _students(data, students, text) -> str:
    """A part per submission (by name, with its anchor): the exercises not passed, points lost, mistakes, hints."""
    by_name = {name: group for name, group in students.groupby("submission", sort=False)}
    parts = []
    for name in data.submissions:
        heading = text["student_title"].format(submission=name, score=number(data.totals[name]),
                                               max_score=number(data.max_scores.get(name, data.max_score)))
        parts.append(f'<h3 id="{data.anchor(name)}">{_e(heading)}</h3>')
        group = by_name.get(name)
        if group is None:
            parts.append(f'<p>{_e(text["all_passed"])}</p>')
            continue
        rows, by_cause = [], {}  # an error's cause once (a syntax error stops every exercise of its file)
        for row in group.itertuples():
            status = "unexplained" if row.status == "failed" and not row.misconceptions else row.status
            mistakes = row.misconceptions or (text["no_mistake"] if status == "unexplained" else "")
            if row.candidates:
                mistakes += f" ({text['candidates_are'].format(candidates=row.candidates)})"
            if status in ("error", "timeout") and (status, row.reason) in by_cause:
                same = by_cause[(status, row.reason)]
                same[0] += f"; {row.exercise}"
                same[3] = number(float(same[3]) + row.points_lost)
                continue
            rows.append([row.exercise, text["statuses"].get(status, status), row.reason, number(row.points_lost),
                         mistakes, row.hint])
            if status in ("error", "timeout"):
                by_cause[(status, row.reason)] = rows[-1]
        parts.append(_table([text[k] for k in ("exercise", "status", "reason", "points_lost", "mistakes", "hint")],
                            rows))
    return "".join(parts)
