"""The merge's integrity checks: every shard's reports are this kit's, untouched (:func:`verify_shards`).

The exercises, points and misconception names each report may hold (:func:`kit_registry`,
:func:`report_problems`), and each report's other files exactly as the grader writes them from it.
What is checked and why: :mod:`graders.engine.routes.shards`.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import graders
from graders.engine.outputs import reports
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.engine.values.protocol import STATUSES
from graders.engine.sandbox.layers import LAYERS
from graders.engine.routes.shard_files import (ENTRY_KEYS, ENTRY_OPTIONAL, MAX_FILE_BYTES, REPORT_FILES, REPORT_KEYS,
                                        REPORT_OPTIONAL, SHARD_FILES, MergeRefused, Shard, _Unfit, _kind,
                                        _open_folder, _read_file, _shown, _strict_json)
from graders.engine.routes.shard_manifest import MANIFEST, ShardError, kit_digest


@dataclass(frozen=True)
class CheckedReport:
    """One submission's report as the merge checked it, and its files' bytes: what ``OUT`` receives."""

    report: dict
    files: dict[str, bytes]  # REPORT_FILES -> their bytes, exactly as the shard holds them


@dataclass(frozen=True)
class Registry:
    """What this kit says the report of a batch of ``modules`` holds (:func:`kit_registry`)."""

    modules: tuple[str, ...]
    exercise_ids: tuple[str, ...]  # in course order, as prepare_job lists them
    max_points: dict[str, float]  # as a report rounds them
    misconceptions: dict[str, frozenset[str]]  # the catalogue's names for each exercise


def kit_registry(modules, kit: Kit = DEFAULT_KIT) -> Registry:
    """The exercises of ``modules`` as this kit grades them: ids, ``max_points`` and misconception names.

    The same sources as grading: :meth:`Kit.exercises` and :class:`~graders.engine.routes.grading.Exercise` for
    ids and points, the catalogue files for names. An unknown module raises ``ValueError`` saying so.
    """
    from graders.checks import spec_for
    from graders.engine.routes.grading import Exercise
    from graders.engine.judging.misconceptions import CatalogueError, catalogue_file, read_entries

    ids = kit.exercises(modules)
    max_points = {i: round(Exercise(i, *i.split(".", 1), spec_for(i)).max_points, 4) for i in ids}
    names: dict[str, frozenset[str]] = {}
    for i in ids:
        path = catalogue_file(i, kit)
        try:
            names[i] = frozenset(entry.name for entry in read_entries(path)) if path.is_file() else frozenset()
        except CatalogueError as error:
            raise ShardError(f"this kit's misconception catalogue cannot be read: {error}") from error
    return Registry(tuple(modules), tuple(ids), max_points, names)


# -- reading a shard: regular files only, never through a link ---------------

# -- what a report may hold ----------------------------------------------------
def _number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _entry_problems(entry: dict, registry: Registry) -> list[str]:
    """Why one exercise entry (whose id is the kit's) is not as the grader writes it."""
    where = f"exercise {entry['id']}"
    keys = set(entry)
    if not ENTRY_KEYS <= keys or keys - ENTRY_KEYS - ENTRY_OPTIONAL:
        return [f"{where}: its fields are {_shown(sorted(keys))}, not {sorted(ENTRY_KEYS)}"]
    problems = []
    top, points = entry["max_points"], entry["points"]
    if top != registry.max_points[entry["id"]] or not _number(top):
        problems.append(f"{where}: max_points {_shown(top)}, but this kit gives {registry.max_points[entry['id']]!r}")
    if not _number(points):
        problems.append(f"{where}: points {_shown(points)} are not a finite number")
    elif points < 0:
        problems.append(f"{where}: points {points!r} are negative")
    elif _number(top) and points > top:
        problems.append(f"{where}: points {points!r} are more than max_points {top!r}")
    status = entry["status"]
    if status not in STATUSES:
        problems.append(f"{where}: status {_shown(status)} is not one of {', '.join(STATUSES)}")
    elif _number(points) and _number(top) and (
            (status == "passed" and abs(points - top) > 1e-9) or (status in ("missing", "timeout") and points != 0)):
        problems.append(f"{where}: status {status} with {points!r} of {top!r} points (the grader gives "
                        "passed all points, missing and timeout none)")
    if not isinstance(entry["feedback"], str):
        problems.append(f"{where}: its feedback is not a text")
    named = entry["misconceptions"]
    if not isinstance(named, list) or not all(isinstance(name, str) for name in named):
        problems.append(f"{where}: misconceptions {_shown(named)} are not a list of names")
    else:
        catalogue = registry.misconceptions[entry["id"]]
        problems += [f"{where}: misconception {_shown(name)} is not in this kit's catalogue for that exercise"
                     for name in named if name not in catalogue]
        if named != sorted(set(named)):
            problems.append(f"{where}: misconceptions are not sorted and distinct, as the grader writes them")
    if "not_implemented" in entry and (entry["not_implemented"] is not True or status != "error" or points != 0):
        problems.append(f"{where}: not_implemented {_shown(entry['not_implemented'])} with status "
                        f"{_shown(status)} and points {_shown(points)} (the grader writes true, error, 0)")
    problems += _optional_problems(entry, where)
    return problems


def _optional_problems(entry: dict, where: str) -> list[str]:
    """Why an entry's optional fields (candidates, cause, failing, hints) are not as the grader writes them."""
    from graders.course import LANGUAGES
    from graders.engine.values.protocol import CaseResult

    problems = []
    for key in ("candidates", "failing"):
        if key in entry and (not isinstance(entry[key], list) or not all(isinstance(v, str) for v in entry[key])
                             or entry[key] != sorted(set(entry[key]))):
            problems.append(f"{where}: {key} {_shown(entry[key])} are not a sorted list of distinct names")
    if "failing" in entry and not set(entry["failing"]) <= {result.value for result in CaseResult}:
        problems.append(f"{where}: failing {_shown(entry['failing'])} holds a kind the grader does not write")
    cause = entry.get("cause")
    if "cause" in entry and not (isinstance(cause, dict) and set(cause) == {"kind", "text"}
                                 and isinstance(cause["kind"], str) and isinstance(cause["text"], dict)
                                 and set(cause["text"]) == set(LANGUAGES)
                                 and all(isinstance(v, str) for v in cause["text"].values())):
        problems.append(f"{where}: cause {_shown(cause)} is not {{kind, text: {{language: line}}}}")
    hints = entry.get("hints")
    if "hints" in entry and not (isinstance(hints, dict) and set(hints) <= set(entry.get("misconceptions") or ())
                                 and all(isinstance(texts, dict) and set(texts) == set(LANGUAGES)
                                         and all(isinstance(v, str) for v in texts.values())
                                         for texts in hints.values())):
        problems.append(f"{where}: hints {_shown(hints)} are not {{named misconception: {{language: hint}}}}")
    return problems


def report_problems(report, name: str, registry: Registry) -> list[str]:
    """Why ``report`` (a ``report.json`` read back) is not one this kit's grader writes for the submission
    ``name`` of a batch of ``registry``'s modules: one line per problem, none when it is one.

    Everything a report holds is checked against the kit (ids, max_points, misconception names, statuses)
    or against the rest of the report (the totals, recomputed as :class:`SubmissionReport` makes them).
    """
    if not isinstance(report, dict):
        return ["is not a report (a JSON object)"]
    keys = set(report)
    if not REPORT_KEYS <= keys or keys - REPORT_KEYS - REPORT_OPTIONAL:
        return [f"its fields are {_shown(sorted(keys))}, not {sorted(REPORT_KEYS)}"]
    if report["submission"] != name:
        return [f"is not the report of submission {name!r} (it names {_shown(report['submission'])})"]
    if "name" in report and not (isinstance(report["name"], str) and 0 < len(report["name"]) <= 4096
                                 and report["name"] != name):
        return [f"its name {_shown(report['name'])} is not a submission's name as given"]
    if "lms_id" in report and not (isinstance(report["lms_id"], str) and report["lms_id"].isascii()
                                   and report["lms_id"].isdigit() and len(report["lms_id"]) <= 40):
        return [f"its LMS id {_shown(report['lms_id'])} is not one an LMS download gives (digits)"]
    entries = report["exercises"]
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        return ["its exercises are not a list of entries"]
    ids = [entry.get("id") for entry in entries]
    known = [isinstance(i, str) and i in registry.max_points for i in ids]
    problems = [f"unknown exercise id {_shown(i)}: this kit's module(s) {', '.join(registry.modules)} have no "
                "such exercise" for i, fits in zip(ids, known) if not fits]
    absent = [i for i in registry.exercise_ids if i not in ids]
    if absent:
        problems.append(f"lacks exercise(s) {', '.join(absent[:3])}{' ...' if len(absent) > 3 else ''}")
    if not problems and ids != list(registry.exercise_ids):
        problems.append("lists its exercises out of course order, or one twice")
    for entry, fits in zip(entries, known):
        if fits:
            problems += _entry_problems(entry, registry)
    numbers = [(e.get("points"), e.get("max_points")) for e in entries]
    if all(_number(p) and _number(m) for p, m in numbers):  # else the lines above say which is not a number
        for key, field, total in (("score", "points", round(sum(p for p, _ in numbers), 4)),
                                  ("max_score", "max_points", round(sum(m for _, m in numbers), 4))):
            if report[key] != total or not _number(report[key]):
                problems.append(f"{key} {_shown(report[key])} is not the sum of its exercises' {field} ({total!r})")
    sandbox = report.get("sandbox")  # absent only from an internal error's report (batch._internal_error_report)
    if "sandbox" in report and not (isinstance(sandbox, dict) and set(sandbox) == {*LAYERS, "identity"}
                                    and all(type(sandbox[layer]) is bool for layer in LAYERS)
                                    and isinstance(sandbox["identity"], str)):
        problems.append("its sandbox record is not the grader's (yes or no for each sandbox layer, and an identity)")
    return problems


def _rendered(scratch: Path, name: str, report: dict) -> dict[str, bytes]:
    """The bytes :func:`reports.write_submission_reports` writes for ``report`` (written under ``scratch``)."""
    folder = reports.write_submission_reports(scratch, name, report)
    return {file: (folder / file).read_bytes() for file in REPORT_FILES}


# -- checking every shard ----------------------------------------------------
class _Problems(list):
    """The lines of a :class:`MergeRefused`: which shard, which file, why."""

    def add(self, shard: Shard, relative: str, why) -> None:
        self.append(f"{shard.label}: {relative}: {why}")


def _unexpected(shard: Shard, dir_fd: int, prefix: str, allowed, holds: str, problems: _Problems) -> None:
    """A problem for every entry of the folder ``dir_fd`` that is not in ``allowed``."""
    for entry in sorted(os.listdir(dir_fd)):
        if entry not in allowed:
            kind = _kind(os.stat(entry, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            problems.add(shard, prefix + _shown(entry), f"unexpected {kind[2:]}: {holds}")


def _read_or_say(shard: Shard, dir_fd: int, relative: str, problems: _Problems, missing: str = "") -> bytes | None:
    """The file ``relative`` (its last part in the folder ``dir_fd``), or ``None`` with a problem saying why."""
    try:
        return _read_file(dir_fd, relative.rsplit("/", 1)[-1], MAX_FILE_BYTES)
    except FileNotFoundError:
        problems.add(shard, relative, "is missing" + missing)
    except _Unfit as why:
        problems.add(shard, relative, why)
    return None


def _read_submission(shard: Shard, top: int, name: str, problems: _Problems) -> dict[str, bytes] | None:
    """The report files of submission ``name`` in the shard (folder ``top``), or ``None`` (problems say why)."""
    nothing = f": the shard has no report for submission {name!r}"
    try:
        folder = _open_folder(name, top)
    except FileNotFoundError:
        problems.add(shard, f"{name}/", "is missing" + nothing)
        return None
    except _Unfit as why:
        problems.add(shard, f"{name}/", why)
        return None
    try:
        _unexpected(shard, folder, f"{name}/", REPORT_FILES,
                    f"a submission's folder holds only {', '.join(REPORT_FILES)}", problems)
        files = {file: _read_or_say(shard, folder, f"{name}/{file}", problems,
                                    nothing if file == "report.json" else "") for file in REPORT_FILES}
    finally:
        os.close(folder)
    return files if all(data is not None for data in files.values()) else None


def _check_submission(shard: Shard, name: str, files: dict[str, bytes], registry: Registry, scratch: Path,
                      problems: _Problems) -> dict | None:
    """The checked report of ``name`` (its files as read), or ``None`` (problems say why)."""
    where = f"{name}/report.json"
    try:
        report = _strict_json(files["report.json"])
    except (ValueError, RecursionError) as error:
        problems.add(shard, where, f"cannot be read: {error}")
        return None
    found = report_problems(report, name, registry)
    for why in found:
        problems.add(shard, where, why)
    if found:
        return None
    rendered = _rendered(scratch, name, report)
    differ = [file for file in REPORT_FILES if files[file] != rendered[file]]
    for file in differ:
        why = (f"is not what {where} gives: one of the two was edited after grading" if file != "report.json"
               else "is not byte for byte as the grader writes it: edited after grading")
        problems.add(shard, f"{name}/{file}", why)
    return None if differ else report


def _check_shard(shard: Shard, registry: Registry | None, scratch: Path,
                 problems: _Problems) -> dict[str, CheckedReport]:
    """Read one shard's files (the layout grade_shard leaves, nothing else); with a ``registry``, check its reports."""
    names = shard.manifest["names"]
    held = [names[index] for index in shard.manifest["indices"]]
    checked: dict[str, CheckedReport] = {}
    try:
        top = os.open(shard.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _unexpected(shard, top, "", (*SHARD_FILES, *held), f"a shard holds only {MANIFEST}, grades.csv, "
                        "_lms.json (an LMS download's) and a folder for each submission it graded", problems)
            grades = _read_or_say(shard, top, "grades.csv", problems)
            for name in held:
                files = _read_submission(shard, top, name, problems)
                report = None if files is None or registry is None else \
                    _check_submission(shard, name, files, registry, scratch, problems)
                if report is not None:
                    checked[name] = CheckedReport(report, files)
        finally:
            os.close(top)
    except OSError as error:
        problems.add(shard, ".", f"cannot be read: {error}")
        return checked
    if grades is not None and len(checked) == len(held):
        expected = reports.grades_csv([checked[name].report for name in held], shard.manifest["exercise_ids"])
        if grades != expected.encode("utf-8"):
            problems.add(shard, "grades.csv", "is not what the shard's reports give: edited after grading")
    return checked


def verify_shards(shards: list[Shard], kit: Kit = DEFAULT_KIT) -> dict[str, CheckedReport]:
    """Check every shard of a complete set against this kit (see the module docstring); every submission's checked
    report by name, or :class:`MergeRefused` listing every problem.

    With a kit other than the one that graded (the digest differs) the reports are not checked one by one:
    another kit's exercises and points would say little; the files are still looked at.
    """
    problems = _Problems()
    shards = sorted(shards, key=lambda shard: shard.manifest["index"])
    first = shards[0].manifest  # every shard agrees on the kit, modules and exercises (check_complete_set)
    mine = {"version": graders.__version__, "digest": kit_digest(kit)}
    registry = None
    if first["kit"] != mine:
        for shard in shards:
            graded = shard.manifest["kit"]
            problems.add(shard, MANIFEST, f"records kit {graded['version']} with kit digest {graded['digest']}, but "
                         f"this kit is {mine['version']} with kit digest {mine['digest']}: the shard was graded by "
                         "another kit (engine, checks or references changed), or the record was edited")
    else:
        try:
            registry = kit_registry(first["options"]["modules"], kit)
        except ShardError:  # the kit's own catalogue: no shard's fault
            raise
        except ValueError as error:  # a module this kit does not have
            for shard in shards:
                problems.add(shard, MANIFEST, f"its modules cannot be graded by this kit: {error}")
    if registry is not None and first["exercise_ids"] != list(registry.exercise_ids):
        unknown = [i for i in first["exercise_ids"] if i not in registry.max_points]
        words = (f"unknown exercise id {_shown(unknown[0])}" if unknown else "they are listed otherwise")
        for shard in shards:
            problems.add(shard, MANIFEST, f"its exercise_ids are not this kit's for module(s) "
                         f"{', '.join(registry.modules)} ({words})")
    checked: dict[str, CheckedReport] = {}
    with tempfile.TemporaryDirectory(prefix="rl4llm-merge-") as scratch:
        for shard in shards:
            checked.update(_check_shard(shard, registry, Path(scratch), problems))
    if problems:
        raise MergeRefused(problems)
    return checked
