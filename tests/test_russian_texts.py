"""Russian as a Russian speaker writes it (issue 52, point 6): the kit is «комплект заданий» (never «кит», a whale)
in every Russian text of graders/ and of the learner's pages; no English word where a Russian one belongs (the
interpreter, a status); the scoreboard aligned by what a terminal shows; CSVs Excel opens with Cyrillic intact
(``--excel``) while the kit's own tools keep reading the CSVs as before."""

from __future__ import annotations

import csv
import importlib
import io
import pkgutil
import re
import unicodedata
from pathlib import Path

import pytest

import graders
from graders.engine.outputs.reports import gradescope_results, scoreboard, width
from graders.engine.values.texts import translated
from graders.paths import REPO_ROOT
from graders.text import Text

WHALE = re.compile(r"(?<![А-Яа-яЁё])[Кк]ит(?:а|у|ом|е|ы|ов|ам|ами|ах)?(?![А-Яа-яЁё])")


def _texts():
    """Every Text of every importable module of graders/ (checks and catalogue aside: their labels are tested apart)."""
    seen, visited = {}, set()

    def walk(value, where):
        if isinstance(value, Text):
            seen[id(value)] = (where, value)
            return
        if id(value) in visited or not isinstance(value, (dict, list, tuple)):
            return  # a container that holds itself (a module's registry) is read once
        visited.add(id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}[{key!r}]")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    for module in pkgutil.walk_packages(graders.__path__, "graders."):
        if ".checks" in module.name or "misconceptions" in module.name:
            continue
        try:
            loaded = importlib.import_module(module.name)
        except Exception:  # noqa: BLE001 - an optional dependency (the capstone's): its texts are read elsewhere
            continue
        for name, value in vars(loaded).items():
            walk(value, f"{module.name}.{name}")
    return list(seen.values())


def test_no_russian_text_calls_the_kit_a_whale():
    texts = _texts()
    assert len(texts) > 300
    whales = [where for where, text in texts if WHALE.search(text.in_("ru"))]
    assert not whales, whales
    pages = [*REPO_ROOT.glob("starter/*/README.ru.md"), *REPO_ROOT.glob("assignments/source/*_ru/*"),
             *REPO_ROOT.glob("graders/**/*.py")]
    found = [str(page.relative_to(REPO_ROOT)) for page in pages if page.is_file()
             and WHALE.search(page.read_text(encoding="utf-8", errors="replace"))]
    assert not found, found


def test_the_keep_root_note_names_the_interpreter_and_the_kit_in_russian():
    from graders.engine.values.texts import detail

    for key, what, russian in (("keep_root_to_interpreter", "the interpreter", "интерпретатору"),
                               ("keep_root_to_kit", "the kit", "комплекту заданий")):
        note = detail("keep_root_start", python="/v/python", error="denied",  # as graders.engine.sandbox.layers says it
                      fix=detail("keep_root_fix", folder="/root", what=detail(key), path="/root/x"))
        assert note == (f"running as root, but user nobody cannot start /v/python (denied): workers keep root; user "
                        f"nobody cannot enter /root, on the way to {what} (/root/x): run `chmod o+x /root` (others may "
                        "then pass through it, not list it), or install the kit with a Python outside it (e.g. "
                        "python3 -m venv /opt/rl4llm-venv)")
        said = translated(note, "ru")
        assert f"на пути к {russian} (/root/x)" in said and what not in said


def test_a_gradescope_test_says_its_status_in_the_feedbacks_language():
    report = {"submission": "s", "score": 0, "max_score": 1, "exercises": [
        {"id": "m.f", "status": "failed", "points": 0, "max_points": 1, "feedback": "", "misconceptions": []}]}
    assert gradescope_results(report, "ru")["tests"][0]["output"] == "статус: неверно"
    assert gradescope_results(report, "en")["tests"][0]["output"] == "status: failed"
    assert gradescope_results(report)["tests"][0]["output"] == "status: failed"  # rl4llm grade's results.json


@pytest.mark.parametrize("language", ["ru", "en"])
def test_the_scoreboard_is_aligned_by_display_width(language):
    names = ["Иван Петров", unicodedata.normalize("NFD", "Йорж Ёлкин-Åström"), "王小明", "bob", "Анастасия " * 3]
    reports = [{"submission": f"s{i}", "name": name, "score": 3, "max_score": 50, "exercises": [
        {"id": "m.f", "status": status, "points": 0, "max_points": 1, "feedback": "", "misconceptions": []}]}
        for i, (name, status) in enumerate(zip(names, ["passed", "failed", "error", "timeout", "missing"]))]
    lines = scoreboard(reports, language=language).splitlines()
    header, rule, *rows = lines
    assert len({width(line) for line in (header, *rows)}) == 1, lines
    for row in rows:  # every count sits under its status word's last letter
        assert width(row) == width(header)
    assert width(rule) == width(header) + 2  # as it always was


def test_excel_copies_keep_cyrillic_and_the_kits_csvs_as_they_were(tmp_path):
    from graders.cli_checks import excel_copies

    text = "submission,name,total,max_total\nivan_petrov-2b8929ba,Иван Петров,40,46\n"
    (tmp_path / "grades.csv").write_text(text, encoding="utf-8")
    target = excel_copies(tmp_path)
    data = (target / "grades.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and "Иван Петров".encode("utf-8") in data and b"\r\n" in data
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0]["name"] == "Иван Петров"
    assert (tmp_path / "grades.csv").read_text(encoding="utf-8") == text  # what `rl4llm export` and merge read


def test_excel_copies_are_set_aside_with_the_run(tmp_path):
    from graders.engine.outputs import outfolder

    (tmp_path / "excel").mkdir()
    (tmp_path / "excel" / "grades.csv").write_bytes(b"\xef\xbb\xbfa\r\n")
    (tmp_path / "grades.csv").write_text("a\n", encoding="utf-8")
    assert outfolder.earlier_run(tmp_path) == ["excel", "grades.csv"]


def test_every_new_line_of_the_intake_and_the_command_line_is_in_both_languages():
    from graders import cli_checks
    from graders.engine.intake import source_parts
    from graders.engine.outputs import outfolder

    for table in (cli_checks.SAID, source_parts.SAID, source_parts.ENCODINGS, outfolder.REASONS, outfolder.DONE):
        for key, text in table.items():
            assert isinstance(text, Text) and text.in_("ru") != text.in_("en") or key in ("syntax",), key
            assert not re.search(r"(?<![\w`{-])(the|is|of|and|with)(?![\w`}])", text.in_("ru")), key


def test_the_english_scoreboard_did_not_change():
    reports = [{"submission": "alice", "score": 40, "max_score": 50, "exercises": [
        {"id": "m.f", "status": "passed", "points": 1, "max_points": 1, "feedback": "", "misconceptions": []}]}]
    assert scoreboard(reports, language="en") == (
        "submission              score   passed   failed    error  timeout  missing\n"
        + "-" * 76 + "\n"
        + f"{'alice':<12}  {'40/50  80%':>15}  " + "  ".join(f"{count:>7}" for count in (1, 0, 0, 0, 0)) + "\n")
