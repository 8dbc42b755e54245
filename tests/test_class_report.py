"""The class report (``rl4llm report DIR``, and ``rl4llm grade`` for a batch of two or more).

- fast: a hand-made batch of four submissions (complete; partial with a misconception; a
  misconception, an error and a partial; missing work and a timeout) in the kit's report schema:
  pass rates, mean fractions (over the submissions that handed an exercise in), the order hardest first,
  discrimination against a hand computation, learners per misconception with who and the catalogue's
  hint, errors and timeouts apart, a self-contained page (anchors its only links) that shows no feedback
  text (so no input, hidden or not), both languages;
- slow: a real batch graded by ``rl4llm grade`` (the demo's three examples): the report is written
  and its counts agree with the ``report.json`` files; headless chromium renders the page (its DOM
  holds every section and the links from who holds a mistake to the student's part; its screenshot is
  not blank). ``tests/test_class_report_action.py`` has the rest (per student, unexplained, 300).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import string
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from graders.classreport import (FIGURES, MISCONCEPTIONS_FILE, OUTPUT_FILES, REPORT_FILE, SUMMARY_FILE, TEXT,
                                 ReportError, build_class_report, catalogue_hint)
from graders.engine.values.protocol import ExerciseReport, Status, SubmissionReport
from graders.engine.outputs.reports import write_submission_reports
from graders.paths import REPO_ROOT
from graders.text import table_in

A, B, C = "module_9_reference.group_relative_advantages", "module_9_reference.k3_kl", "module_8_reference.ipo_loss"
SECRET = "hidden input [1.0, 2.0, 99.123]"  # feedback text: must never reach the class report


def _exercise(exercise_id, status, points, max_points, misconceptions=()):
    return ExerciseReport(exercise_id, Status(status), points, max_points, f"{SECRET} -> {status}", misconceptions)


BATCH = {
    "s1_complete": [(A, "passed", 2.0, 2.0), (B, "passed", 1.0, 1.0), (C, "passed", 3.0, 3.0)],
    "s2_partial": [(A, "failed", 1.0, 2.0, ("sample_std",)), (B, "passed", 1.0, 1.0), (C, "passed", 3.0, 3.0)],
    "s3_broken": [(A, "failed", 0.0, 2.0, ("sample_std",)), (B, "error", 0.0, 1.0), (C, "failed", 1.5, 3.0)],
    "s4_absent": [(A, "missing", 0.0, 2.0), (B, "timeout", 0.0, 1.0), (C, "missing", 0.0, 3.0)],
}


@pytest.fixture()
def batch(tmp_path) -> Path:
    for name, rows in BATCH.items():
        report = SubmissionReport(name, tuple(_exercise(*row) for row in rows)).to_dict()
        write_submission_reports(tmp_path, name, report)
    return tmp_path


def test_the_numbers_agree_with_the_reports_and_a_hand_computation(batch):
    build_class_report(batch, "en")
    summary = pd.read_csv(batch / SUMMARY_FILE).set_index("exercise")
    # s4 handed neither A nor C in: a missing file is not a wrong answer, so A and C are over three submissions
    assert list(summary.index) == [A, B, C]  # hardest first: mean fractions 0.5 (pass rate 1/3), 0.5 (1/2), 5/6
    assert summary.loc[A, "mean_fraction"] == pytest.approx((2 + 1 + 0) / 3 / 2)
    assert summary.loc[B, "mean_fraction"] == pytest.approx((1 + 1 + 0 + 0) / 4 / 1)  # a timeout is handed in
    assert summary.loc[C, "mean_fraction"] == pytest.approx((3 + 3 + 1.5) / 3 / 3, abs=1e-4)
    assert list(summary["pass_rate"]) == pytest.approx([1 / 3, 0.5, 2 / 3], abs=1e-4)
    assert list(summary["handed_in"]) == [3, 4, 3] and list(summary["missing"]) == [1, 0, 1]
    # A's points [2, 1, 0] (s4 left out) against the rest of the totals [6-2, 5-1, 1.5-0] = [4, 4, 1.5]:
    # deviations [1, 0, -1] and [5/6, 5/6, -5/3]: r = 2.5 / sqrt(2 * 25/6)
    r = 2.5 / math.sqrt(2 * 25 / 6)
    assert summary.loc[A, "discrimination"] == pytest.approx(r, abs=1e-4)
    misconceptions = pd.read_csv(batch / MISCONCEPTIONS_FILE)
    assert misconceptions[["exercise", "misconception", "learners"]].values.tolist() == [[A, "sample_std", 2]]
    assert misconceptions.loc[0, "submissions"] == "s2_partial; s3_broken"
    assert misconceptions.loc[0, "hint"] == catalogue_hint(A, "sample_std", "en") and "ddof" in misconceptions.loc[0, "hint"]


def test_a_constant_exercise_has_no_discrimination(batch):
    for name in BATCH:  # every submission gets the same points for B
        path = batch / name / "report.json"
        report = json.loads(path.read_text(encoding="utf-8"))
        for entry in report["exercises"]:
            if entry["id"] == B:
                entry.update(points=1.0, status="passed")
        path.write_text(json.dumps(report), encoding="utf-8")
    build_class_report(batch, "en")
    summary = pd.read_csv(batch / SUMMARY_FILE).set_index("exercise")
    assert math.isnan(summary.loc[B, "discrimination"])
    assert "—" in (batch / REPORT_FILE).read_text(encoding="utf-8")


def test_the_page_is_self_contained_sectioned_and_shows_no_feedback(batch):
    written = build_class_report(batch, "en")
    page = (batch / REPORT_FILE).read_text(encoding="utf-8")
    for section in ("scores", "exercises", "misconceptions", "unexplained", "heatmap", "environment", "students"):
        assert f'<section id="{section}">' in page
    # no script, no link out: the only links are anchors within the page
    assert not re.search(r"<script|<link|@import|url\(|href=\"(?!#s-\d+\")|src=\"(?!data:image/png;base64,)", page)
    assert re.search(r'href="#s-\d+"', page)
    assert page.count('src="data:image/png;base64,') == 3
    for name in OUTPUT_FILES:
        assert SECRET not in (batch / name).read_text(encoding="utf-8", errors="replace")
    for key in FIGURES:
        assert written[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written[key].stat().st_size > 5000
    environment = page[page.index('<section id="environment">'):page.index('<section id="students">')]
    assert "s3_broken" in environment and "s4_absent" in environment and "s2_partial" not in environment
    assert "median 3.25" in page  # totals 6, 5, 1.5, 0


def test_both_languages(batch):
    build_class_report(batch, "ru")
    page = (batch / REPORT_FILE).read_text(encoding="utf-8")
    assert '<html lang="ru">' in page and "Отчёт по группе: работ 4, заданий 3" in page

    def fields(value):
        if isinstance(value, dict):
            return {key: fields(item) for key, item in value.items()}
        return sorted(name for _, name, _, _ in string.Formatter().parse(value) if name)

    assert fields(table_in(TEXT, "en")) == fields(table_in(TEXT, "ru"))


def test_grade_without_the_class_report(tmp_path):
    from graders.cli import build_parser

    args = build_parser().parse_args(["grade", "a", "b", "--out", str(tmp_path), "--no-class-report"])
    assert args.no_class_report


def test_a_folder_without_reports_is_a_clear_error(tmp_path):
    with pytest.raises(ReportError, match="no <submission>/report.json"):
        build_class_report(tmp_path)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "report.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ReportError, match="not a report.json"):
        build_class_report(tmp_path)


BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# CI installs Debian's chromium before the tests (`apt-get install -y chromium`); without one the test is skipped
BROWSER = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def _browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless chromium on its own profile, nothing fetched or synced (the page has nothing to fetch)."""
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", *args], capture_output=True, text=True,
                          timeout=180)


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="no headless browser on this machine (apt-get install -y chromium)")
def test_a_headless_browser_finds_every_section(batch, tmp_path):
    import matplotlib.image

    build_class_report(batch, "en")
    page = (batch / REPORT_FILE).as_uri()
    dom = _browser(tmp_path, "--dump-dom", page).stdout
    for section in ("scores", "exercises", "misconceptions", "unexplained", "heatmap", "environment", "students"):
        assert f'id="{section}"' in dom, section
    # what the browser built: who holds each mistake links to a student's part, which names it and its hint
    misconceptions = dom[dom.index('id="misconceptions"'):dom.index('id="unexplained"')]
    anchors = re.findall(r'href="#(s-\d+)">([^<]+)</a>', misconceptions)
    assert [name for _, name in anchors] == ["s2_partial", "s3_broken"]
    for anchor, name in anchors:
        assert re.search(f'<h3 id="{anchor}">{name}: ', dom)
    students = dom[dom.index('id="students"'):]
    assert "sample_std" in students and catalogue_hint(A, "sample_std", "en")[:30] in students
    unexplained = dom[dom.index('id="unexplained"'):dom.index('id="heatmap"')]
    assert C in unexplained and "s3_broken" in unexplained and A not in unexplained

    shot = tmp_path / "page.png"
    run = _browser(tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", "--hide-scrollbars", page)
    assert shot.is_file(), run.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)  # floats in [0, 1], height x width x channels
    assert pixels.shape[:2] == (1600, 1200)
    grey = pixels[..., :3].mean(axis=2)
    assert (grey < 0.5).mean() > 0.005  # text drawn: not a blank (white) page
    assert pixels[..., :3].std() > 0.05 and (grey > 0.9).mean() > 0.3  # and not one colour all over


@pytest.mark.slow
def test_rl4llm_grade_writes_the_class_report_of_a_real_batch(tmp_path):
    from graders.engine.routes.demo import assemble_examples

    examples = assemble_examples(tmp_path / "examples")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "graders.cli", "grade", *map(str, examples), "--out", str(out),
                          "--jobs", "2", "--quiet"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "class report:" in run.stdout and (out / REPORT_FILE).is_file()
    for name in (REPORT_FILE, SUMMARY_FILE, MISCONCEPTIONS_FILE):  # `rl4llm report` rebuilds them alone
        (out / name).unlink()
    rebuilt = subprocess.run([sys.executable, "-m", "graders.cli", "report", str(out), "--lang", "ru"], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=600)
    assert rebuilt.returncode == 0 and "Отчёт по группе" in (out / REPORT_FILE).read_text(encoding="utf-8")
    reports = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(out.glob("*/report.json"))]
    expected = Counter((e["id"], m) for r in reports for e in r["exercises"] for m in e["misconceptions"])
    table = pd.read_csv(out / MISCONCEPTIONS_FILE)
    assert {(e, m): n for e, m, n in table[["exercise", "misconception", "learners"]].values} == dict(expected)
    summary = pd.read_csv(out / SUMMARY_FILE).set_index("exercise")
    from graders.classreport.tables import ENVIRONMENT_STATUSES, NO_CODE_CAUSES

    def handed_in(entry: dict) -> bool:  # code to grade: not missing, not the stub, not a file that cannot load
        kind = (entry.get("cause") or {}).get("kind")
        return entry["status"] != "missing" and not entry.get("not_implemented") and not (
            entry["status"] in ENVIRONMENT_STATUSES and kind in NO_CODE_CAUSES)

    for exercise in summary.index:
        statuses = [e["status"] for r in reports for e in r["exercises"] if e["id"] == exercise and handed_in(e)]
        if not statuses:
            continue
        assert summary.loc[exercise, "pass_rate"] == pytest.approx(statuses.count("passed") / len(statuses),
                                                                   abs=1e-4)  # the CSV keeps 4 decimals


def test_an_untouched_stub_is_counted_apart_from_errors(batch):
    path = batch / "s3_broken" / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    for entry in report["exercises"]:
        if entry["id"] == B:  # the error there is the untouched stub's NotImplementedError
            entry["not_implemented"] = True
    path.write_text(json.dumps(report), encoding="utf-8")
    build_class_report(batch, "en")
    page = (batch / REPORT_FILE).read_text(encoding="utf-8")
    environment = page[page.index('<section id="environment">'):page.index('<section id="students">')]
    assert "s3_broken" not in environment and "s4_absent" in environment
    assert "not implemented" in page
    stub = SubmissionReport("x", (ExerciseReport(B, Status.ERROR, 0.0, 1.0, "", (), True),)).to_dict()
    assert stub["exercises"][0]["not_implemented"] is True
    assert "not_implemented" not in _exercise(B, "error", 0.0, 1.0).to_dict()  # the other reports read as before


def test_the_class_report_reads_each_hint_from_the_reports_in_both_languages(tmp_path, monkeypatch):
    """A report carries each named misconception's hint in every language (``hints``); the class report takes
    it from there, never from the catalogue's source (the control: a report without ``hints``, written before
    reports carried them, still finds the catalogue's)."""
    from graders.classreport import tables

    hints = {"sample_std": {"en": "EN: divide by n", "ru": "RU: делите на n"}}
    for name, rows in BATCH.items():
        exercises = tuple(ExerciseReport(row[0], Status(row[1]), row[2], row[3], row[1],
                                         row[4] if len(row) > 4 else (), hints=hints if len(row) > 4 else None)
                          for row in rows)
        write_submission_reports(tmp_path, name, SubmissionReport(name, exercises).to_dict())
    entry = json.loads((tmp_path / "s2_partial" / "report.json").read_text(encoding="utf-8"))["exercises"][0]
    assert entry["hints"] == hints
    monkeypatch.setattr(tables, "_catalogue", lambda exercise: ())  # the catalogue cannot be read
    data = tables.read_reports(tmp_path)
    for language, text in hints["sample_std"].items():
        assert tables.misconception_table(data, language)["hint"].tolist() == [text]
        assert set(tables.student_table(data, language)["hint"]) >= {text}
    old = tmp_path / "old"
    for name, rows in BATCH.items():
        write_submission_reports(old, name, SubmissionReport(name, tuple(_exercise(*row) for row in rows)).to_dict())
    assert tables.misconception_table(tables.read_reports(old), "en")["hint"].tolist() == [""]
    monkeypatch.undo()
    assert tables.misconception_table(tables.read_reports(old), "en")["hint"].tolist() == [
        catalogue_hint(A, "sample_std", "en")] != [""]
