"""The class report's numbers: a batch's reports read as tables (pandas), and every table the page shows."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from graders.engine.outputs import outfolder
from graders.engine.values.learner_text import FIELD_LIMIT, clean

ENVIRONMENT_STATUSES = ("error", "timeout")
# an error whose cause is one of these kinds (graders.engine.values.protocol.Reason) ran no code of the exercise: the file
# cannot be read or loaded (a syntax error, an import that fails...), or the submission as a whole cannot be graded
NO_CODE_CAUSES = ("submission ungradable", "file unreadable", "load failed", "load refused", "load timeout",
                  "load crashed")
NOT_RAISED = "not raised"  # graders.engine.values.protocol.CaseResult.NOT_RAISED: a value where an exception is expected


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


def _alike(name: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFC", name).casefold()


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
            # the name as given (Иван Петров); two that read alike (José in NFC and in NFD, one name in two
            # cases) or the same name twice: each keeps a row of its own, its folder name beside it
            name = str(report.get("name") or report.get("submission", path.parent.name))
            if _alike(name) in {_alike(other) for other in names}:
                name = f"{name} ({path.parent.name})"
            parsed = [_record(name, entry) for entry in entries]
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
    columns = ["submission", "exercise", "status", "points", "max_points", "misconceptions", "candidates", "cause_kind",
               "cause", "no_code", "hints"]
    rows = pd.DataFrame.from_records(records, columns=columns)
    totals = rows.groupby("submission")["points"].sum().reindex(sorted(names), fill_value=0.0)
    if len(sets) > 1:
        notes.append("the reports hold different sets of exercises (runs of different modules?): each exercise's "
                     "numbers are over the submissions graded on it")
    return ClassData(rows, totals, max(max_scores.values()), sorted(order, key=order.get), max_scores, notes,
                     len(sets) > 1)


def _record(name: str, entry: dict) -> dict:
    """One report entry as a row: its class-report status (``not_implemented`` for the untouched stub,
    ``validation_missing`` for a failure whose every failing check returned a value where an exception is expected,
    else the report's), its cause (kind, and its line by language) and whether it holds no code to judge."""
    status = str(entry["status"])
    failing = tuple(map(str, entry.get("failing") or ()))
    named = tuple(map(str, entry.get("misconceptions") or ()))
    if entry.get("not_implemented"):  # an untouched stub is neither a wrong answer nor an environment problem
        status = "not_implemented"
    elif status == "failed" and failing == (NOT_RAISED,) and not named:
        status = "validation_missing"
    cause = entry.get("cause") if isinstance(entry.get("cause"), dict) else {}
    kind = str(cause.get("kind") or "")
    lines = cause.get("text") if isinstance(cause.get("text"), dict) else {}
    hints = entry.get("hints") if isinstance(entry.get("hints"), dict) else {}
    return {"hints": {str(name): {str(k): str(v) for k, v in texts.items()} for name, texts in hints.items()
                      if isinstance(texts, dict)},
            "submission": name, "exercise": str(entry["id"]), "status": status,
            "points": float(entry["points"]), "max_points": float(entry["max_points"]), "misconceptions": named,
            "candidates": tuple(map(str, entry.get("candidates") or ())), "cause_kind": kind,
            "cause": {str(k): str(v) for k, v in lines.items()},
            "no_code": status == "not_implemented" or (status in ENVIRONMENT_STATUSES and kind in NO_CODE_CAUSES)}


def cause_line(row, language: str) -> str:
    """A row's cause in ``language`` (English, else any, where the report lacks it); "" when it has none."""
    lines = row["cause"] if isinstance(row, dict) else row.cause
    return lines.get(language) or lines.get("en") or next(iter(lines.values()), "")


def _pivot(data: ClassData, values: str):
    return data.rows.pivot(index="submission", columns="exercise", values=values).reindex(
        index=data.totals.index, columns=data.exercises)


def exercise_table(data: ClassData):
    """One row per exercise: max_points, handed_in, missing, no_code, mean_fraction, pass_rate, discrimination;
    hardest first.

    Handed in means with code to judge: not ``missing``, not the untouched stub, not a file that cannot be read or
    loaded (``no_code`` counts those two). The mean, the pass rate and the discrimination are over the submissions
    that handed it in (an exercise a report does not hold at all, from a run of another module, counts nowhere).
    """
    import pandas as pd

    status = _pivot(data, "status")
    no_code = _pivot(data, "no_code").fillna(False).astype(bool)
    handed = status.notna() & (status != "missing") & ~no_code
    points = _pivot(data, "points").where(handed)
    rest = data.totals.to_numpy()[:, None] - points  # the rest of the total: NaN where not handed in
    max_points = data.rows.groupby("exercise")["max_points"].max().reindex(data.exercises)
    table = pd.DataFrame({
        "max_points": max_points,
        "handed_in": handed.sum(),
        "missing": (status == "missing").sum(),
        "no_code": (status.notna() & no_code).sum(),
        "mean_fraction": points.mean() / max_points,
        "pass_rate": (status == "passed").astype(float).where(handed).mean(),
        "discrimination": points.corrwith(rest),  # item-rest Pearson r; NaN when either side is constant
    })
    table.index.name = "exercise"
    return table.sort_values(["mean_fraction", "pass_rate"], kind="stable", na_position="last")


def report_hint(hints: dict, exercise: str, name: str, language: str) -> str:
    """A named misconception's hint in ``language`` as its report carries it (``hints``: the row's); a report
    written before reports carried hints falls back on the catalogue (:func:`catalogue_hint`)."""
    texts = hints.get(name) if isinstance(hints, dict) else None
    if texts:
        return texts.get(language) or texts.get("en") or next(iter(texts.values()), "")
    return catalogue_hint(exercise, name, language)


def catalogue_hint(exercise: str, name: str, language: str) -> str:
    """The catalogue's hint for a misconception in ``language`` (English where it has no other); "" if unknown."""
    for entry in _catalogue(exercise):
        if entry.name == name:
            return entry.hint_in(language)
    return ""


@functools.cache
def _catalogue(exercise: str) -> tuple:
    """An exercise's catalogue entries, each file parsed once (a report names several of its mistakes)."""
    from graders.engine.judging.misconceptions import catalogue_file, read_entries

    try:
        return tuple(read_entries(catalogue_file(exercise)))
    except Exception:  # noqa: BLE001 - a report from another kit version: the name alone is still useful
        return ()


def misconception_table(data: ClassData, language: str):
    """One row per (exercise, misconception) named in the batch: learners, submissions (who), hint; most common
    first. Only claimed names count (a report's "candidates" are not claims: see :func:`unexplained_table`)."""
    import pandas as pd

    named = data.rows[["submission", "exercise", "misconceptions", "hints"]].explode("misconceptions").dropna(
        subset=["misconceptions"])
    if named.empty:
        return pd.DataFrame(columns=["exercise", "misconception", "learners", "submissions", "hint"])
    grouped = named.groupby(["exercise", "misconceptions"])["submission"]
    counts = grouped.nunique().rename("learners").reset_index().rename(columns={"misconceptions": "misconception"})
    who = grouped.agg(lambda names: tuple(sorted(set(names))))
    counts["submissions"] = ["; ".join(who[(e, m)]) for e, m in zip(counts["exercise"], counts["misconception"])]
    hints = {(e, m): report_hint(h, e, m, language)
             for e, m, h in zip(named["exercise"], named["misconceptions"], named["hints"])}
    counts["hint"] = [hints[(e, m)] for e, m in zip(counts["exercise"], counts["misconception"])]
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


def validation_table(data: ClassData):
    """The (exercise, submission) rows whose only failing checks expected an exception and got a value (the input
    validation left out, not a wrong formula); by exercise in course order, then submission."""
    rows = data.rows[data.rows["status"] == "validation_missing"]
    rows = rows.assign(order=rows["exercise"].map(data.exercises.index))
    return (rows.sort_values(["order", "submission"], kind="stable")
            [["exercise", "submission", "points", "max_points"]].reset_index(drop=True))


def reason_of(row, language: str) -> str:
    """Why a row is not passed, in ``language``, from what its report holds: an error's or a timeout's cause, a
    missing exercise's cause (the file or function, a near-miss name, a part Python could not compile), the
    validation left out, the stub; "" for a wrong answer (its mistakes say the rest)."""
    from graders.classreport.texts import TEXT

    status = row["status"] if isinstance(row, dict) else row.status
    if status in ENVIRONMENT_STATUSES:
        return cause_line(row, language) or TEXT["no_cause"].in_(language)
    if status == "missing" and cause_line(row, language):  # which file or function, and why (a near miss...)
        return cause_line(row, language)
    if status in ("validation_missing", "not_implemented", "missing"):
        return TEXT["reasons"][status].in_(language)
    return ""


def student_table(data: ClassData, language: str):
    """One row per (submission, exercise) not passed: status, the reason (an error's cause, the validation left
    out...), points lost, the named mistakes and their hints (in ``language``), the candidates; by submission name,
    then course order."""
    import pandas as pd

    rows = data.rows[data.rows["status"] != "passed"]
    records = []
    for row in rows.to_dict("records"):
        records.append({"submission": row["submission"], "exercise": row["exercise"], "status": row["status"],
                        "reason": reason_of(row, language), "points_lost": row["max_points"] - row["points"],
                        "misconceptions": "; ".join(row["misconceptions"]),
                        "hint": " | ".join(h for h in (report_hint(row["hints"], row["exercise"], m, language)
                                                       for m in row["misconceptions"]) if h),
                        "candidates": "; ".join(row["candidates"]),
                        "order": data.exercises.index(row["exercise"])})
    columns = ["submission", "exercise", "status", "reason", "points_lost", "misconceptions", "hint", "candidates"]
    if not records:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame.from_records(records).sort_values(["submission", "order"], kind="stable")[columns] \
        .reset_index(drop=True)


def environment_table(data: ClassData, language: str = "en"):
    """The errors and timeouts grouped by cause: one row per (cause, submission) with its status, the cause in
    ``language`` (a syntax error once, with its file and line, however many exercises it stops) and the exercises
    it stopped; by cause, then submission."""
    import pandas as pd

    columns = ["cause", "submission", "status", "exercises", "count"]
    rows = data.rows[data.rows["status"].isin(ENVIRONMENT_STATUSES)]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    records: dict = {}
    for row in rows.to_dict("records"):
        key = (reason_of(row, language), row["submission"], row["status"])
        records.setdefault(key, []).append(row["exercise"])
    table = pd.DataFrame([[cause, name, status, "; ".join(sorted(ids, key=data.exercises.index)), len(ids)]
                          for (cause, name, status), ids in records.items()], columns=columns)
    return table.sort_values(["cause", "submission"], kind="stable").reset_index(drop=True)
