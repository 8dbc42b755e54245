"""Every zero has a reason (issue 52, point 4), and a syntax error or a bad encoding costs only the definitions it is in.

A wrong file name (with its "is that your ...?" note), an empty file, a syntax error (with its line), a file that
is not UTF-8 (with the encoding it looks like): each is the ``cause`` of its exercises in ``report.json``, the reason
in the class report's per-student table and ``class_students.csv``, and the line :func:`reports.zero_reasons` gives
an LMS's feedback. A ``.py`` file Python cannot compile whole is graded in its top-level parts that compile
(:mod:`graders.engine.intake.source_parts`), as Jupyter runs a notebook cell by cell; docs/instructors.md says so.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from graders.engine.intake import source_parts
from graders.engine.intake.submission import learner_source
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.outputs.reports import zero_reasons
from graders.engine.values.protocol import Submission
from graders.engine.values.texts import translated

REF = "module_9_reference"
K3, ENTROPY = f"{REF}.k3_kl", f"{REF}.categorical_entropy"
K3_LINE = "    return np.asarray(np.expm1(difference) - difference, dtype=np.float64)\n"


def _reference() -> str:
    return DEFAULT_KIT.solution_path(REF).read_text(encoding="utf-8")


def _source(data: bytes) -> tuple[str | None, object, list]:
    submission = Submission("s", Path("."), raw={REF: data})
    text, problem = learner_source(submission, REF)
    return text, problem, submission.notes.get(REF, [])


# ---------------------------------------------------------------------------------------------- the parts, unit
def test_a_syntax_error_costs_only_its_definition_and_keeps_every_line_number():
    data = b"import math\n\n\ndef good(x):\n    return math.sqrt(x)\n\n\ndef bad(x:\n    return 1\n\n\ndef also(x):\n" \
           b"    return x\n"
    text, problem, notes = _source(data)
    assert problem is None and text.splitlines()[3:5] == ["def good(x):", "    return math.sqrt(x)"]
    assert "def also(x):" in text and "def bad" not in text and len(text.splitlines()) == len(data.splitlines())
    (note,) = notes
    assert note.functions == ("bad",)
    assert "line 8" in note and "line(s) 8-9 (def bad)" in note and "the rest of the file was graded" in note
    assert translated(note, "ru").startswith(f"{REF}.py, строка 8:") and "не учтены" in translated(note, "ru")


def test_a_stray_dedented_line_takes_its_definition_along():
    text, problem, notes = _source(b"def f(x):\n    y = x\nreturn y\n\ndef g():\n    return 2\n")
    assert problem is None and "def g" in text and "def f" not in text
    assert notes[0].functions == ("f",) and "line(s) 1-3" in notes[0]


def test_decorators_stay_with_their_function_and_comments_stand_alone():
    parts = source_parts.parts(b"@a\n@b(1,\n2)\ndef f():\n    pass\n# about g\n\ndef g():\n    pass\n")
    assert [start for start, _ in parts] == [1, 6, 8]


def test_strings_and_brackets_hold_their_column_0_lines():
    data = b'"""Doc\nx = 1\n"""\nVALUES = [\n1,\n2]\ndef f(x:\n    return 1\nY = (1,\ndef g():\n    return 2\n'
    assert [start for start, _ in source_parts.parts(data)] == [1, 4, 7, 10]  # f's bracket holds Y's line
    text, problem, notes = _source(data)
    assert problem is None and "def g():" in text and "VALUES" in text and "Y = " not in text
    assert [note.functions for note in notes] == [("f",)]


def test_a_cp1251_comment_costs_only_its_definition_and_names_the_encoding():
    source = _reference().replace(K3_LINE, "    # Вычисляем оценку k3\n" + K3_LINE)
    text, problem, notes = _source(source.encode("cp1251"))
    assert problem is None and "def categorical_entropy(" in text and "def k3_kl(" not in text
    (note,) = [note for note in notes if note.functions]
    # the reference's Russian comment block at column 0 stands alone: lost alone, costing nothing
    assert all("(a comment)" in other for other in notes if other is not note)
    assert note.functions == ("k3_kl",) and "Windows-1251 (Cyrillic)" in note and "coding: cp1251" in note
    assert "Windows-1251 (кириллица)" in translated(note, "ru")


def test_a_declared_encoding_is_read_as_python_reads_it():
    data = "# -*- coding: cp1251 -*-\nLABEL = 'Привет'\n\ndef f():\n    return LABEL\n".encode("cp1251")
    text, problem, notes = _source(data)
    assert problem is None and notes == [] and "'Привет'" in text
    assert source_parts.COOKIE.match(text.splitlines()[0].encode()) is None  # the grader writes it as UTF-8
    compile(text, "f.py", "exec")


@pytest.mark.parametrize("data, words", [
    (b"", "is empty (0 bytes)"),
    (b"\n  \n", "is empty (4 bytes)"),
    (b"def f(:\n", "syntax error at line 1"),
    ("x = 'Привет'\n".encode("cp1251"), "Windows-1251 (Cyrillic)"),
    (b"\xff\xfex\x00=\x001\x00", "UTF-16"),
])
def test_a_file_with_nothing_to_grade_is_one_problem_with_its_reason(data, words):
    text, problem, _ = _source(data)
    assert text is None and words in problem
    assert translated(problem, "ru") != problem  # said in Russian too


def test_a_part_is_read_once_linearly():
    data = b"".join(b"def f%d(x):\n    return x\n\n" % i for i in range(3000)) + b"def broken(:\n    pass\n"
    text, problem, notes = _source(data)
    assert problem is None and len(notes) == 1 and "def f2999(x):" in text


# ------------------------------------------------------------------------------------ a class graded for real
@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from graders.cli import main
    import graders.engine.routes.batch as batch

    root = tmp_path_factory.mktemp("zeros")
    reference = _reference()
    assert K3_LINE in reference
    files = {
        "wrong_name": {"module9.py": reference.encode()},
        "empty": {f"{REF}.py": b""},
        "syntax": {f"{REF}.py": reference.replace(K3_LINE, K3_LINE.replace("float64)", "float64")).encode()},
        "cp1251": {f"{REF}.py": reference.replace(K3_LINE, "    # оценка k3\n" + K3_LINE).encode("cp1251")},
    }
    for name, found in files.items():
        (root / "in" / name).mkdir(parents=True)
        for file_name, data in found.items():
            (root / "in" / name / file_name).write_bytes(data)
    saved, batch.kit_fingerprint = batch.kit_fingerprint, lambda kit: {}  # others' edits of the checkout
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["grade", *(str(root / "in" / name) for name in files), "--out", str(root / "out"),
                         "--module", "9", "--lang", "ru", "--quiet", "--jobs", "2"])
    finally:
        batch.kit_fingerprint = saved
    assert code in (0, 1)
    reports = {name: json.loads((root / "out" / name / "report.json").read_text(encoding="utf-8")) for name in files}
    return root / "out", reports


def _entry(report: dict, exercise: str) -> dict:
    return next(entry for entry in report["exercises"] if entry["id"] == exercise)


def test_every_zero_of_the_class_has_a_cause(graded):
    _, reports = graded
    for name, report in reports.items():
        for entry in report["exercises"]:
            if entry["points"] == 0 and not entry.get("not_implemented") and entry["id"].startswith(REF):
                assert entry.get("cause") and set(entry["cause"]["text"]) == {"en", "ru"}, (name, entry["id"])


def test_the_causes_say_what_happened(graded):
    _, reports = graded
    wrong = _entry(reports["wrong_name"], K3)["cause"]
    assert wrong["kind"] == "file missing" and "module9.py" in wrong["text"]["en"]
    assert "is that your module_9_reference.py?" in wrong["text"]["en"] and "Это ваш" in wrong["text"]["ru"]
    empty = _entry(reports["empty"], K3)["cause"]
    assert "is empty (0 bytes)" in empty["text"]["en"] and "пуст" in empty["text"]["ru"]
    syntax = _entry(reports["syntax"], K3)
    assert syntax["status"] == "missing" and syntax["cause"]["kind"] == "file unreadable"
    assert "SyntaxError" in syntax["cause"]["text"]["en"] and "(def k3_kl)" in syntax["cause"]["text"]["en"]
    assert _entry(reports["syntax"], ENTROPY)["status"] == "passed"  # the rest of the file is graded
    encoding = _entry(reports["cp1251"], K3)["cause"]["text"]
    assert "Windows-1251" in encoding["en"] and "кириллица" in encoding["ru"]
    assert _entry(reports["cp1251"], ENTROPY)["status"] == "passed"


def test_the_class_report_and_the_lms_feedback_give_the_reasons(graded):
    out, reports = graded
    students = pd.read_csv(out / "class_students.csv", dtype=str, keep_default_na=False)
    reasons = {(s, e): r for s, e, r in students[["submission", "exercise", "reason"]].values}
    assert "module9.py" in reasons[("wrong_name", K3)] and "Это ваш" in reasons[("wrong_name", K3)]
    assert "пуст" in reasons[("empty", K3)]
    assert "SyntaxError" in reasons[("syntax", K3)] and "cp1251" in reasons[("cp1251", K3)]
    assert "module9.py" in (out / "class_report.html").read_text(encoding="utf-8")
    for name, report in reports.items():
        said = zero_reasons(report, "ru")
        assert K3 in said, name
    assert "module9.py" in zero_reasons(reports["wrong_name"], "en")
    assert "SyntaxError" in zero_reasons(reports["syntax"], "en") and ENTROPY not in zero_reasons(reports["syntax"], "en")


def test_zero_reasons_never_quote_an_exercises_feedback():
    """What learner code printed or raised lands in an exercise's feedback (on a hidden input too, without hide
    mode): the LMS's feedback line reads only the kit's words (a cause, "not implemented yet", a status)."""
    secret = "FPsecret-hidden-input"
    report = {"exercises": [
        {"id": "m.a", "points": 0.0, "status": "error", "feedback": f"raised ValueError: {secret}"},
        {"id": "m.b", "points": 0.0, "status": "failed", "feedback": f"got {secret}"},
        {"id": "m.c", "points": 0.0, "status": "error", "not_implemented": True, "feedback": secret},
        {"id": "m.d", "points": 0.0, "status": "missing", "feedback": secret,
         "cause": {"kind": "file missing", "text": {"en": "no file", "ru": "нет файла"}}}]}
    for language in ("en", "ru"):
        said = zero_reasons(report, language)
        assert secret not in said and len(said.splitlines()) == 4, said
    assert zero_reasons(report, "ru").splitlines()[3] == "m.d: нет файла"
