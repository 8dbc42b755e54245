"""The class report's numbers: a batch's reports read as tables (pandas), and every table the page shows."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from graders.engine import outfolder
from graders.engine.learner_text import FIELD_LIMIT, clean

ENVIRONMENT_STATUSES = ("error", "timeout")


class ReportError(Exception):
    """No class report can be built from this folder."""


@dataclass
class ClassData:
    """A batch's reports as tables: ``rows`` (one per submission and exercise) and the totals."""

    rows: object  # pandas.DataFrame: submission, exercise, status, points, max_points, misconceptions, candidates
    totals: object  # pandas.Series: submission -> total points
    max_score: float
    exercises: list[str]  # in course order
    max_scores: dict = field(default_factory=dict)  # submission -> its report's max_score
    notes: list[str] = field(default_factory=list)  # what the one who runs the report should know about the folder
    mixed: bool = False  # the reports hold different sets of exercises (runs of different modules)

    @functools.cached_property
    def submissions(self) -> list[str]:
        """Every submission, sorted by name: the order of the per-student section (and its anchors)."""
        return sorted(self.totals.index)

    @functools.cached_property
    def _anchors(self) -> dict[str, str]:
        return {name: f"s-{number}" for number, name in enumerate(self.submissions, 1)}

    def anchor(self, submission: str) -> str:
        """The id of a submission's section on the page (``s-3``: never a learner-made text)."""
        return self._anchors[submission]


def _report_paths(folder: Path) -> tuple[list[Path], list[str]]:
    """The ``report.json`` files of the folder's last run (its run manifest's), and notes for the reader."""
    try:
        manifest = outfolder.read_run_manifest(folder)
    except outfolder.OutFolderError as error:
        raise ReportError(str(error)) from error
    # (nbgrader's report_dir names a student's folder "_x-<digest>" for an odd id: "_" is no sign of the kit's own
    # files here; an earlier run set aside is two levels down, DIR/_previous/<time>/<name>/)
    found = sorted(path for path in folder.glob("*/report.json") if not path.parent.is_symlink())
    if manifest is None:
        return found, [f"{folder} has no {outfolder.RUN_MANIFEST} (written by an older kit, or a report folder of "
                       "nbgrader's): every <submission>/report.json in it is read; grade into a new folder to be "
                       "sure it holds one run only"]
    paths = [folder / name / "report.json" for name in manifest["names"]]
    absent = [str(path) for path in paths if not path.is_file() or path.parent.is_symlink()]
    if absent:
        raise ReportError(f"{folder}/{outfolder.RUN_MANIFEST} lists submissions whose report is missing: "
                          f"{', '.join(absent[:5])}{' ...' if len(absent) > 5 else ''}; grade the batch again "
                          "into a new folder")
    listed = set(paths)
    others = [path.parent.name for path in found if path not in listed]
    notes = []
    if others:
        notes.append(f"{len(others)} folder(s) of {folder} not in its last run are left out of the report: "
                     f"{', '.join(others[:5])}{' ...' if len(others) > 5 else ''}")
    return paths, notes


def read_reports(folder: Path | str) -> ClassData:
    """The last run's ``<submission>/report.json`` under ``folder`` as :class:`ClassData`."""
    import pandas as pd

    folder = Path(folder)
    paths, notes = _report_paths(folder)
    if not paths:
        raise ReportError(f"{folder}: no <submission>/report.json here; grade a batch into it first "
                          f"(rl4llm grade ... --out {folder})")
    records, order, max_scores, names, sets = [], {}, {}, set(), set()
    for path in paths:
        try:
            # a report's text (a submission name from an nbgrader student id, ids) is anyone's: cleaned here,
            # then escaped for HTML, neutralised for CSV and shown without mathtext by the figures
            report = clean(json.loads(path.read_text(encoding="utf-8")), FIELD_LIMIT)
            entries = report["exercises"]
            max_score = float(report["max_score"])
            name = str(report.get("submission", path.parent.name))
            if name in names:  # two folders, one name: each submission keeps a row of its own
                name = f"{name} ({path.parent.name})"
            parsed = [{"submission": name, "exercise": str(entry["id"]),
                       # an untouched stub is neither a wrong answer nor an environment problem
                       "status": "not_implemented" if entry.get("not_implemented") else str(entry["status"]),
                       "points": float(entry["points"]), "max_points": float(entry["max_points"]),
                       "misconceptions": tuple(map(str, entry.get("misconceptions") or ())),
                       "candidates": tuple(map(str, entry.get("candidates") or ()))} for entry in entries]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            raise ReportError(f"{path}: not a report.json of the kit ({type(error).__name__}: {error})") from error
        names.add(name)
        max_scores[name] = max_score
        seen = set()
        for record in parsed:
            if record["exercise"] in seen:  # one exercise twice in one report: the first counts
                continue
            seen.add(record["exercise"])
            order.setdefault(record["exercise"], len(order))
            records.append(record)
        sets.add(frozenset(seen))
    columns = ["submission", "exercise", "status", "points", "max_points", "misconceptions", "candidates"]
    rows = pd.DataFrame.from_records(records, columns=columns)
    totals = rows.groupby("submission")["points"].sum().reindex(sorted(names), fill_value=0.0)
    if len(sets) > 1:
        notes.append("the reports hold different sets of exercises (runs of different modules?): each exercise's "
                     "numbers are over the submissions graded on it")
    return ClassData(rows, totals, max(max_scores.values()), sorted(order, key=order.get), max_scores, notes,
                     len(sets) > 1)


def _pivot(data: ClassData, values: str):
    return data.rows.pivot(index="submission", columns="exercise", values=values).reindex(
        index=data.totals.index, columns=data.exercises)


def exercise_table(data: ClassData):
    """One row per exercise: max_points, handed_in, missing, mean_fraction, pass_rate, discrimination; hardest first.

    A ``missing`` exercise is not a wrong answer: the mean, the pass rate and the discrimination are over the
    submissions that handed it in (an exercise a report does not hold at all, from a run of another module,
    counts nowhere); ``missing`` counts the others.
    """
    import pandas as pd

    status = _pivot(data, "status")
    handed = status.notna() & (status != "missing")
    points = _pivot(data, "points").where(handed)
    rest = data.totals.to_numpy()[:, None] - points  # the rest of the total: NaN where not handed in
    max_points = data.rows.groupby("exercise")["max_points"].max().reindex(data.exercises)
    table = pd.DataFrame({
        "max_points": max_points,
        "handed_in": handed.sum(),
        "missing": (status == "missing").sum(),
        "mean_fraction": points.mean() / max_points,
        "pass_rate": (status == "passed").astype(float).where(handed).mean(),
        "discrimination": points.corrwith(rest),  # item-rest Pearson r; NaN when either side is constant
    })
    table.index.name = "exercise"
    return table.sort_values(["mean_fraction", "pass_rate"], kind="stable", na_position="last")


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


def misconception_table(data: ClassData, language: str):
    """One row per (exercise, misconception) named in the batch: learners, submissions (who), hint; most common
    first. Only claimed names count (a report's "candidates" are not claims: see :func:`unexplained_table`)."""
    import pandas as pd

    named = data.rows[["submission", "exercise", "misconceptions"]].explode("misconceptions").dropna()
    if named.empty:
        return pd.DataFrame(columns=["exercise", "misconception", "learners", "submissions", "hint"])
    grouped = named.groupby(["exercise", "misconceptions"])["submission"]
    counts = grouped.nunique().rename("learners").reset_index().rename(columns={"misconceptions": "misconception"})
    who = grouped.agg(lambda names: tuple(sorted(set(names))))
    counts["submissions"] = ["; ".join(who[(e, m)]) for e, m in zip(counts["exercise"], counts["misconception"])]
    counts["hint"] = [catalogue_hint(e, m, language) for e, m in zip(counts["exercise"], counts["misconception"])]
    return counts.sort_values(["learners", "exercise", "misconception"], ascending=[False, True, True],
                              kind="stable").reset_index(drop=True)


def unexplained_table(data: ClassData):
    """The (exercise, submission) rows that failed with no catalogued mistake claimed, with the ``candidates`` a
    report lists (several entries fit, none claimed); by exercise in course order, then submission."""
    rows = data.rows[(data.rows["status"] == "failed") & (data.rows["misconceptions"].map(len) == 0)]
    rows = rows.assign(candidates=rows["candidates"].map("; ".join),
                       order=rows["exercise"].map(data.exercises.index))
    return (rows.sort_values(["order", "submission"], kind="stable")
            [["exercise", "submission", "points", "max_points", "candidates"]].reset_index(drop=True))


def student_table(data: ClassData, language: str):
    """One row per (submission, exercise) not passed: status, points lost, the named mistakes and their hints
    (in ``language``), the candidates; by submission name, then course order."""
    import pandas as pd

    rows = data.rows[data.rows["status"] != "passed"]
    records = []
    for row in rows.itertuples(index=False):
        records.append({"submission": row.submission, "exercise": row.exercise, "status": row.status,
                        "points_lost": row.max_points - row.points,
                        "misconceptions": "; ".join(row.misconceptions),
                        "hint": " | ".join(h for h in (catalogue_hint(row.exercise, m, language)
                                                       for m in row.misconceptions) if h),
                        "candidates": "; ".join(row.candidates),
                        "order": data.exercises.index(row.exercise)})
    columns = ["submission", "exercise", "status", "points_lost", "misconceptions", "hint", "candidates"]
    if not records:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame.from_records(records).sort_values(["submission", "order"], kind="stable")[columns] \
        .reset_index(drop=True)


def environment_table(data: ClassData):
    """The (submission, exercise, status) rows that ended in an error or a timeout."""
    rows = data.rows[data.rows["status"].isin(ENVIRONMENT_STATUSES)]
    return rows[["submission", "exercise", "status"]].sort_values(["exercise", "submission"]).reset_index(drop=True)
