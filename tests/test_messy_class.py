"""A messy class graded for real (``rl4llm grade --lang ru``, once): a file with a syntax error, the untouched stubs,
a submission that only leaves out input validation, a wrong value no catalogued mistake explains, a correct one.

The class report (in Russian as graded, then rebuilt in English from the same reports) must show: the syntax error
once, with its file and line, as the cause of its errors (not twenty reasonless rows); the validation left out as its
own kind, apart from the unexplained failures; "handed in" counting only exercises with code; the reason in the
per-student table and ``class_students.csv``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from graders.classreport import TEXT, REPORT_FILE, STUDENTS_FILE, SUMMARY_FILE, UNEXPLAINED_FILE, build_class_report
from graders.engine.judging.kit import DEFAULT_KIT

# slow: every test reads the module's grading batch of a messy class (about 4.5 s); the class report's rules are
# tested fast in test_class_report.py and test_class_report_action.py.
pytestmark = pytest.mark.slow

REF = "module_9_reference"
ENTROPY, K3 = f"{REF}.categorical_entropy", f"{REF}.k3_kl"
RANGE_CHECK = """    if np.any((p < 0) | (p > 1)) or np.any(np.abs(p.sum(axis=-1) - 1.0) > 1e-6):
        raise ValueError("probabilities must lie in [0, 1] and sum to 1 along the last axis")
"""
K3_LINE = "    return np.asarray(np.expm1(difference) - difference, dtype=np.float64)\n"


def _submissions(root: Path) -> list[Path]:
    reference = DEFAULT_KIT.solution_path(REF).read_text(encoding="utf-8")
    starter = DEFAULT_KIT.starter_path(REF).read_text(encoding="utf-8")
    assert RANGE_CHECK in reference and K3_LINE in reference
    files = {
        "correct": reference,
        "stub": starter,
        # no definition compiles (a syntax error in one costs only it: tests/test_zero_reasons.py): the whole file
        "syntax": starter.replace("\ndef ", "\ndef def ").replace("\nclass ", "\nclass class "),
        "validation": reference.replace(RANGE_CHECK, ""),  # the formula right, bad probabilities not refused
        "wrong": reference.replace(K3_LINE, K3_LINE.replace("return ", "return 1.37 * ")),  # no catalogued mistake
    }
    paths = []
    for name, text in files.items():
        (root / name).mkdir(parents=True)
        (root / name / f"{REF}.py").write_text(text, encoding="utf-8")
        paths.append(root / name)
    return paths


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from graders.cli import main

    root = tmp_path_factory.mktemp("messy")
    out = root / "out"
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["grade", *map(str, _submissions(root / "in")), "--out", str(out), "--module", "9", "--jobs", "2",
                     "--lang", "ru", "--quiet"])
    assert code == 0, printed.getvalue()[-3000:]
    return out, printed.getvalue()


def _section(page: str, key: str) -> str:
    start = page.index(f'<section id="{key}">')
    return page[start:page.index("</section>", start)]


def _entry(out: Path, name: str, exercise: str) -> dict:
    report = json.loads((out / name / "report.json").read_text(encoding="utf-8"))
    return next(e for e in report["exercises"] if e["id"] == exercise)


def test_the_reports_carry_the_cause_and_the_kind_of_failure(graded):
    out, _ = graded
    syntax = _entry(out, "syntax", K3)
    assert syntax["status"] == "error" and syntax["cause"]["kind"] == "file unreadable"
    assert re.search(r"module_9_reference\.py has a syntax error at line \d+", syntax["cause"]["text"]["en"])
    assert "синтакс" in syntax["cause"]["text"]["ru"]
    assert _entry(out, "validation", ENTROPY)["failing"] == ["not raised"]
    assert _entry(out, "validation", ENTROPY)["status"] == "failed"
    assert "not raised" not in _entry(out, "wrong", K3)["failing"] and _entry(out, "wrong", K3)["status"] == "failed"
    assert "cause" not in _entry(out, "stub", K3) and _entry(out, "stub", K3)["not_implemented"] is True
    assert "cause" not in _entry(out, "correct", K3) and "failing" not in _entry(out, "correct", K3)


@pytest.mark.parametrize("language", ["ru", "en"])
def test_the_class_report_of_a_messy_class(graded, language):
    out, _ = graded
    if language == "en":
        build_class_report(out, "en")  # from the same reports, graded in Russian
    page = (out / REPORT_FILE).read_text(encoding="utf-8")
    words = {"en": ("syntax error at line", "input validation missing", "still the stub"),
             "ru": ("синтаксическая ошибка в строке", "нет проверки входных данных", "всё ещё заготовка")}[language]
    # errors grouped by cause: the syntax error once, with its file and line, for every exercise it stops
    environment = _section(page, "environment")
    assert environment.count("<tr>") == 2 and environment.count(words[0]) == 1  # header + one row
    assert "module_9_reference.py" in environment and re.search(r"line \d+|строке \d+", environment)
    assert ">stub<" not in environment and ">correct<" not in environment  # a stub is not an error of the environment
    syntax = re.search(r"<td>[^<]*" + words[0] + r"[^<]*</td><td>syntax</td><td>[^<]*</td><td>([^<]*)</td><td>(\d+)",
                       environment)
    assert syntax and int(syntax.group(2)) > 5 and K3 in syntax.group(1)
    # input validation missing: its own kind, not an unexplained failure
    validation = _section(page, "validation")
    assert ENTROPY in validation and "validation" in validation and "wrong" not in validation
    unexplained = pd.read_csv(out / UNEXPLAINED_FILE)
    assert unexplained[["exercise", "submission"]].values.tolist() == [[K3, "wrong"]]
    assert "validation" not in _section(page, "unexplained") and K3 in _section(page, "unexplained")
    # handed in: only exercises with code (not the stub, not the unparsable file)
    summary = pd.read_csv(out / SUMMARY_FILE).set_index("exercise")
    assert summary.loc[K3, "handed_in"] == 3 and summary.loc[K3, "no_code"] == 2  # correct, validation, wrong
    assert summary.loc[ENTROPY, "handed_in"] == 3 and summary.loc[ENTROPY, "pass_rate"] == pytest.approx(2 / 3, abs=1e-4)
    # the per-student table and class_students.csv carry the reason
    students = pd.read_csv(out / STUDENTS_FILE, dtype=str, keep_default_na=False)
    reasons = {(s, e): r for s, e, r in students[["submission", "exercise", "reason"]].values}
    assert words[0] in reasons[("syntax", K3)]
    assert reasons[("validation", ENTROPY)] == TEXT["reasons"]["validation_missing"].in_(language)
    mine = students[students["submission"] == "validation"]
    assert mine[mine["status"] != "missing"]["status"].tolist() == ["validation_missing"]  # (no training file)
    assert reasons[("stub", K3)].startswith(words[2])
    assert reasons[("wrong", K3)] == ""
    part = _section(page, "students")
    syntax_part = part[part.index(">syntax: "):part.index(">validation: ")]
    assert syntax_part.count(words[0]) == 1  # the cause once, however many exercises it stops


def _english_prose(output: str) -> list[str]:
    """The lines of a Russian run that still hold English prose (as tests/test_walkthrough.py reads it: a word with
    a path's or a name's characters is code; the submission names of this batch are names)."""
    names = {"correct", "stub", "syntax", "validation", "wrong"}
    left = []
    for line in output.splitlines():
        words = re.findall(r"[A-Za-z][A-Za-z0-9]*", re.sub(r"\S*[/_.=<>`]\S*", " ", line))
        if [w for w in words if len(w) > 1 and w not in names | {"rl4llm", "csv", "json", "html", "png", "xml"}]:
            left.append(line)
    return left


def test_rl4llm_grade_in_russian_prints_no_english_prose(graded):
    _, printed = graded
    assert "зачтено" in printed and "отчёты в" in printed and "отчёт по группе" in printed
    assert _english_prose(printed) == []
    assert _english_prose("reports in /x/ (grades.csv)\nclass report: /x/a.html") != []  # the check can fail
