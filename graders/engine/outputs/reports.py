"""Report files: ``report.json`` (the kit's schema), Gradescope ``results.json``, JUnit XML, ``grades.csv``.

All of them are deterministic functions of a report's ``report.json`` dict
(:meth:`graders.engine.values.protocol.SubmissionReport.to_dict`, or the file read
back): same submission, same bytes (sorted keys, fixed order, no timestamps,
paths or timings).

None of them raises on odd text: each writer first cleans the report
(:func:`graders.engine.values.learner_text.clean`: no lone surrogate, no control
character XML forbids, no ESC), so ``junit.xml`` is well-formed XML and every
file encodes as UTF-8 whatever a learner's code printed or raised, and the
files are written with encoding errors replaced, not raised. Every CSV cell
the kit writes goes through :func:`csv_cell` (no spreadsheet formulas).
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from graders.engine.values.learner_text import FIELD_LIMIT, clean, clean_text
from graders.engine.values.protocol import STATUSES
from graders.course import LANGUAGES
from graders.engine.values.texts import STATUS_WORDS, cli_text, detail, feedback_text, scoreboard_text, translated
from graders.language import default_language
from graders.text import Text


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
STATUS_LINE = Text("status: {status}", "статус: {status}")  # a Gradescope test's first line, in its language


def width(text: str) -> int:
    """``text``'s width on a terminal: combining marks take no column, East Asian wide characters two."""
    import unicodedata

    return sum(0 if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


def padded(text: str, columns: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``columns`` columns of a terminal (on the left with ``right``)."""
    room = " " * max(columns - width(text), 0)
    return room + text if right else text + room  # what a spreadsheet may read as the start of a formula


def csv_cell(value):
    """A CSV cell no spreadsheet runs and no terminal acts on: text is cleaned (``clean_text`` of
    :mod:`graders.engine.values.learner_text`, cut at its ``FIELD_LIMIT``), and text that begins like a formula
    gets a leading ``'`` (OWASP's rule).

    ``=HYPERLINK(...)``, ``@SUM(1)``, ``+1``, ``-1``, a leading tab or carriage return: any of them in a
    submission name or an id opened in Excel or LibreOffice could run as a formula. A carriage return
    anywhere is written as ``\\r`` (``csv.writer`` with ``\\n`` line ends leaves it unquoted, and a
    reader would end the row there). Only text is changed; numbers (``int``, ``float``) are returned as
    they are and stay numbers. Every CSV writer of the kit (``grades.csv``, the class report's CSVs)
    uses this.
    """
    if not isinstance(value, str):
        return value
    value = clean_text(value.replace("\r", "\\r"), FIELD_LIMIT)
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def _write(path: Path, text: str) -> None:
    """Write a report file: never raises for its text (clean text encodes; anything else is escaped)."""
    path.write_text(text, encoding="utf-8", errors="backslashreplace")


def report_json(report: dict) -> str:
    return json.dumps(clean(report, FIELD_LIMIT), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def gradescope_results(report: dict, language: str | None = None) -> dict:
    """Gradescope's ``results.json``: one test per exercise, the learner-facing feedback as output.

    With ``language`` (Gradescope's own route), the top-level ``output``, what the learner sees first, is a line
    in that language addressed to the learner ("Your score: ..."); without, it names the submission, in English,
    as ``rl4llm grade`` has always written it."""
    report = clean(report, FIELD_LIMIT)
    tests = []
    for entry in report["exercises"]:
        output = (f"status: {entry['status']}" if language is None else  # rl4llm grade's, as it always was
                  STATUS_LINE.in_(language, status=STATUS_WORDS[entry["status"]].in_(language)))
        if entry["feedback"]:
            output += "\n" + entry["feedback"]
        tests.append({
            "name": entry["id"],
            "score": entry["points"],
            "max_score": entry["max_points"],
            "status": "passed" if entry["status"] == "passed" else "failed",
            "output": output,
            "visibility": "visible",
        })
    counts = {s: sum(e["status"] == s for e in report["exercises"]) for s in STATUSES}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    return {
        "score": report["score"],
        "max_score": report["max_score"],
        "output": (f"{report['submission']}: {report['score']:g} / {report['max_score']:g} ({summary})"
                   if language is None else cli_text(language, "gradescope_output", score=report["score"],
                                                     max_score=report["max_score"], summary=", ".join(
                                                         f"{n} {STATUS_WORDS[s].in_(language)}"
                                                         for s, n in counts.items() if n))),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def missing_causes(report: dict, submission) -> dict:
    """``report`` with a ``cause`` on every ``missing`` exercise, so that no zero goes unexplained: a function left
    out of a file Python cannot compile whole (``file unreadable``: the error, its line and the lines left out), a
    function the file lacks (``function missing``), a file the submission lacks (``file missing``, with the
    near-miss "is that your ...?" note when a file is named like it). ``submission``: the graded
    :class:`~graders.engine.values.protocol.Submission` (its notes, in English or as a ``Text``)."""
    for entry in report["exercises"]:
        if entry["status"] != "missing" or entry.get("cause") or "." not in entry["id"]:
            continue
        stem, function = entry["id"].split(".", 1)
        notes = list(submission.notes.get(stem, []))
        lost = [note for note in notes if function in getattr(note, "functions", ())]
        if lost:
            kind, lines = "file unreadable", [[translated(note, language) for note in lost] for language in LANGUAGES]
        elif stem in submission.raw or stem in submission.sources:
            others = [note for note in notes if getattr(note, "functions", None) is not None]  # parts left out
            kind = "function missing"
            lines = [[feedback_text(language, "function_missing", detail=translated(
                detail("no_function", stem=stem, function=function), language)),
                *(translated(note, language) for note in others)] for language in LANGUAGES]
        else:
            kind = "file missing"
            lines = [[feedback_text(language, "file_missing", stem=stem), *(translated(note, language)
                                                                            for note in notes)]
                     for language in LANGUAGES]
        entry["cause"] = {"kind": kind, "text": {language: clean_text("; ".join(said), FIELD_LIMIT)
                                                 for language, said in zip(LANGUAGES, lines)}}
    return report


def zero_reasons(report: dict, language: str) -> str:
    """One line per exercise that scored 0, ``<id>: <why>`` in ``language`` (its cause; else, for the untouched
    stub, "not implemented yet"; else its status word): what a grade's feedback in an LMS says beside a zero.
    Only the kit's own words: never the exercise's ``feedback``, which may quote what the learner's code printed
    or raised (on a hidden input too)."""
    from graders.engine.values.texts import feedback_text

    lines = []
    for entry in report.get("exercises", ()):
        if entry.get("points") or entry.get("status") == "passed":
            continue
        cause = entry.get("cause") if isinstance(entry.get("cause"), dict) else {}
        texts = cause.get("text") if isinstance(cause.get("text"), dict) else {}
        why = texts.get(language) or texts.get("en")
        if not why and entry.get("not_implemented") is True:
            why = feedback_text(language, "not_implemented_marker")
        if not why:
            word = STATUS_WORDS.get(entry.get("status"))
            why = word.in_(language) if word is not None else "?"
        lines.append(f"{entry['id']}: {why}")
    return "\n".join(clean_text(line, FIELD_LIMIT) for line in lines)


def junit_xml(report: dict) -> str:
    """One ``<testcase>`` per exercise; ``<failure>`` for failed/missing, ``<error>`` for error/timeout.

    Well-formed for any report: its text is cleaned first (XML 1.0 has no way to write NUL, most other
    C0 controls, a lone surrogate or U+FFFE); ElementTree escapes ``<``, ``&``, ``>`` and quotes.
    """
    report = clean(report, FIELD_LIMIT)
    entries = report["exercises"]
    failures = sum(e["status"] in ("failed", "missing") for e in entries)
    errors = sum(e["status"] in ("error", "timeout") for e in entries)
    suite = ET.Element("testsuite", {
        "name": report["submission"], "tests": str(len(entries)), "failures": str(failures),
        "errors": str(errors), "skipped": "0", "time": "0",
    })
    root = ET.Element("testsuites")
    root.append(suite)
    for entry in entries:
        stem, function = entry["id"].split(".", 1)
        case = ET.SubElement(suite, "testcase", {"classname": stem, "name": function, "time": "0"})
        ET.SubElement(case, "properties").extend([
            ET.Element("property", {"name": "points", "value": f"{entry['points']:g}"}),
            ET.Element("property", {"name": "max_points", "value": f"{entry['max_points']:g}"}),
        ])
        if entry["status"] == "passed":
            continue
        tag = "failure" if entry["status"] in ("failed", "missing") else "error"
        first = entry["feedback"].splitlines()[0] if entry["feedback"] else entry["status"]
        node = ET.SubElement(case, tag, {"type": entry["status"], "message": first[:300]})
        node.text = entry["feedback"]
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=False) + "\n"


def grades_csv(reports: list[dict], exercise_ids: list[str]) -> str:
    """A row per submission (sorted by folder name): its folder name, its name as given (``Иван Петров``; the
    folder name where they are the same), for a class from an LMS download its LMS id (``lms_id``: the key of
    the LMS export), a column per exercise, then total and max.

    Names and ids are text cells (:func:`csv_cell`); the points are numbers, written as they are.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    ids = ["lms_id"] if any("lms_id" in report for report in reports) else []
    writer.writerow([csv_cell(text) for text in ["submission", "name", *ids, *exercise_ids, "total", "max_total"]])
    for report in sorted(reports, key=lambda r: r["submission"]):
        points = {e["id"]: e["points"] for e in report["exercises"]}
        writer.writerow([csv_cell(report["submission"]), csv_cell(report.get("name", report["submission"])),
                         *(csv_cell(str(report.get("lms_id", ""))) for _ in ids),
                         *(f"{points.get(i, 0):g}" for i in exercise_ids),
                         f"{report['score']:g}", f"{report['max_score']:g}"])
    return buffer.getvalue()


def write_submission_reports(out_dir: Path, name: str, report: dict) -> Path:
    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    report = clean(report, FIELD_LIMIT)
    _write(folder / "report.json", report_json(report))
    _write(folder / "results.json", json.dumps(gradescope_results(report), indent=2, sort_keys=True,
                                               ensure_ascii=False) + "\n")
    _write(folder / "junit.xml", '<?xml version="1.0" encoding="utf-8"?>\n' + junit_xml(report))
    return folder


def scoreboard(reports: list[dict], *, feedback: bool = False, feedback_lines: int = 6,
               language: str | None = None) -> str:
    """A plain-text table: one line per submission; with ``feedback``, each non-passed exercise too.

    Its words are in ``language`` (default: ``RL4LLM_LANG``, else the locale);
    statuses, ids and the reports' feedback are printed as they are.
    """
    language = language or default_language()
    reports = clean(reports)  # printed on a terminal: no ESC or other control from a learner's text

    def say(key: str, **fields) -> str:
        return scoreboard_text(language, key, **fields)

    if not reports:
        return say("nothing") + "\n"
    shown = {id(r): r.get("name", r["submission"]) for r in reports}  # the name as given: Иван Петров
    # columns measured on the terminal (a combining accent takes none, a CJK letter two), so rows align in any script
    names = max(12, width(say("submission")), *(width(name) for name in shown.values()))
    words = [STATUS_WORDS[s].in_(language) for s in STATUSES]  # the header's; the reports' statuses are keys
    column = max(7, *(width(word) for word in words))
    scores = max(15, width(say("score")))
    lines = [f"{padded(say('submission'), names)}  {padded(say('score'), scores, True)}  "
             + "  ".join(padded(word, column, True) for word in words),
             "-" * (names + 4 + scores + (2 + column) * len(STATUSES))]
    for report in reports:
        counts = [sum(e["status"] == s for e in report["exercises"]) for s in STATUSES]
        percent = 100.0 * report["score"] / report["max_score"] if report["max_score"] else 0.0
        score = f"{report['score']:g}/{report['max_score']:g} {percent:3.0f}%"
        lines.append(f"{padded(shown[id(report)], names)}  {padded(score, scores, True)}  "
                     + "  ".join(padded(str(count), column, True) for count in counts))
    if feedback:
        for report in reports:
            troubled = [e for e in report["exercises"] if e["status"] != "passed"]
            lines.append("")
            lines.append(say("not_passed", submission=shown[id(report)], score=f"{report['score']:g}",
                             max_score=f"{report['max_score']:g}", count=len(troubled)))
            for entry in troubled:
                tag = f" [{', '.join(entry['misconceptions'])}]" if entry["misconceptions"] else ""
                lines.append(f"  {entry['status']:<7} {entry['id']}  {entry['points']:g}/{entry['max_points']:g}{tag}")
                body = entry["feedback"].splitlines()
                for text in body[:feedback_lines]:
                    lines.append(f"          {text}")
                if len(body) > feedback_lines:
                    lines.append("          ...")
    return "\n".join(lines) + "\n"
