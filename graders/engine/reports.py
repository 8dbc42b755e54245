"""Report files: ``report.json`` (the kit's schema), Gradescope ``results.json``, JUnit XML, ``grades.csv``.

All of them are deterministic functions of a report's ``report.json`` dict
(:meth:`graders.engine.protocol.SubmissionReport.to_dict`, or the file read
back): same submission, same bytes (sorted keys, fixed order, no timestamps,
paths or timings).
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from graders.engine.protocol import STATUSES
from graders.engine.texts import scoreboard_text
from graders.language import default_language


def report_json(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def gradescope_results(report: dict) -> dict:
    """Gradescope's ``results.json``: one test per exercise, the learner-facing feedback as output."""
    tests = []
    for entry in report["exercises"]:
        output = f"status: {entry['status']}"
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
        "output": f"{report['submission']}: {report['score']:g} / {report['max_score']:g} ({summary})",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def junit_xml(report: dict) -> str:
    """One ``<testcase>`` per exercise; ``<failure>`` for failed/missing, ``<error>`` for error/timeout."""
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
    """A row per submission (sorted by name), a column per exercise, then total and max."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", *exercise_ids, "total", "max_total"])
    for report in sorted(reports, key=lambda r: r["submission"]):
        points = {e["id"]: e["points"] for e in report["exercises"]}
        writer.writerow([report["submission"], *(f"{points.get(i, 0):g}" for i in exercise_ids),
                         f"{report['score']:g}", f"{report['max_score']:g}"])
    return buffer.getvalue()


def write_submission_reports(out_dir: Path, name: str, report: dict) -> Path:
    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(report_json(report), encoding="utf-8")
    (folder / "results.json").write_text(json.dumps(gradescope_results(report), indent=2, sort_keys=True,
                                                    ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "junit.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n' + junit_xml(report),
                                      encoding="utf-8")
    return folder


def scoreboard(reports: list[dict], *, feedback: bool = False, feedback_lines: int = 6,
               language: str | None = None) -> str:
    """A plain-text table: one line per submission; with ``feedback``, each non-passed exercise too.

    Its words are in ``language`` (default: ``RL4LLM_LANG``, else the locale);
    statuses, ids and the reports' feedback are printed as they are.
    """
    language = language or default_language()

    def say(key: str, **fields) -> str:
        return scoreboard_text(language, key, **fields)

    if not reports:
        return say("nothing") + "\n"
    width = max(12, *(len(r["submission"]) for r in reports))
    lines = [f"{say('submission'):<{width}}  {say('score'):>15}  " + "  ".join(f"{s:>7}" for s in STATUSES),
             "-" * (width + 19 + 9 * len(STATUSES))]
    for report in reports:
        counts = [sum(e["status"] == s for e in report["exercises"]) for s in STATUSES]
        percent = 100.0 * report["score"] / report["max_score"] if report["max_score"] else 0.0
        score = f"{report['score']:g}/{report['max_score']:g} {percent:3.0f}%"
        lines.append(f"{report['submission']:<{width}}  {score:>15}  " + "  ".join(f"{c:>7}" for c in counts))
    if feedback:
        for report in reports:
            troubled = [e for e in report["exercises"] if e["status"] != "passed"]
            lines.append("")
            lines.append(say("not_passed", submission=report["submission"], score=f"{report['score']:g}",
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
