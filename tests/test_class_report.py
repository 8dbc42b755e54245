"""The class report (``rl4llm report DIR``, and ``rl4llm grade`` for a batch of two or more).

- fast: a hand-made batch of four submissions (complete; partial with a misconception; a
  misconception, an error and a partial; missing work and a timeout) in the kit's report schema:
  pass rates, mean fractions, the order hardest first, discrimination against a hand computation,
  learners per misconception with the catalogue's hint, errors and timeouts apart, a self-contained
  page that shows no feedback text (so no input, hidden or not), both languages;
- slow: a real batch graded by ``rl4llm grade`` (the demo's three examples): the report is written
  and its counts agree with the ``report.json`` files.
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

from graders.classreport import (FIGURES, MISCONCEPTIONS_FILE, REPORT_FILE, SUMMARY_FILE, TEXT, ReportError,
                                 build_class_report, catalogue_hint)
from graders.engine.protocol import ExerciseReport, Status, SubmissionReport
from graders.engine.reports import write_submission_reports
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
    assert list(summary.index) == [A, B, C]  # hardest first: mean fractions 0.375, 0.5, 0.625
    assert summary.loc[A, "mean_fraction"] == pytest.approx((2 + 1 + 0 + 0) / 4 / 2)
    assert summary.loc[C, "mean_fraction"] == pytest.approx((3 + 3 + 1.5 + 0) / 4 / 3)
    assert list(summary["pass_rate"]) == [0.25, 0.5, 0.5]
    # A's points [2, 1, 0, 0] against the rest of the totals [6-2, 5-1, 1.5-0, 0-0] = [4, 4, 1.5, 0]:
    # deviations [1.25, .25, -.75, -.75] and [1.625, 1.625, -.875, -2.375]
    r = 4.875 / math.sqrt(2.75 * 11.6875)
    assert summary.loc[A, "discrimination"] == pytest.approx(r, abs=1e-4)
    misconceptions = pd.read_csv(batch / MISCONCEPTIONS_FILE)
    assert misconceptions[["exercise", "misconception", "learners"]].values.tolist() == [[A, "sample_std", 2]]
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
    for section in ("scores", "exercises", "misconceptions", "heatmap", "environment"):
        assert f'<section id="{section}">' in page
    assert not re.search(r"<script|<link|@import|url\(|href=|src=\"(?!data:image/png;base64,)", page)
    assert page.count('src="data:image/png;base64,') == 3
    for name in (REPORT_FILE, SUMMARY_FILE, MISCONCEPTIONS_FILE, *FIGURES.values()):
        assert SECRET not in (batch / name).read_text(encoding="utf-8", errors="replace")
    for key in FIGURES:
        assert written[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written[key].stat().st_size > 5000
    environment = page[page.index('<section id="environment">'):]
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


@pytest.mark.skipif(not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")),
                    reason="no headless browser on this machine")
def test_a_headless_browser_finds_every_section(batch):
    build_class_report(batch, "en")
    browser = next(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b))
    dom = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom",
                          (batch / REPORT_FILE).as_uri()], capture_output=True, text=True, timeout=120).stdout
    for section in ("scores", "exercises", "misconceptions", "heatmap", "environment"):
        assert f'id="{section}"' in dom


@pytest.mark.slow
def test_rl4llm_grade_writes_the_class_report_of_a_real_batch(tmp_path):
    from graders.engine.demo import assemble_examples

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
    for exercise in summary.index:
        statuses = [e["status"] for r in reports for e in r["exercises"] if e["id"] == exercise]
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
    environment = page[page.index('<section id="environment">'):]
    assert "s3_broken" not in environment and "s4_absent" in environment
    assert "not implemented" in page
    stub = SubmissionReport("x", (ExerciseReport(B, Status.ERROR, 0.0, 1.0, "", (), True),)).to_dict()
    assert stub["exercises"][0]["not_implemented"] is True
    assert "not_implemented" not in _exercise(B, "error", 0.0, 1.0).to_dict()  # the other reports read as before
