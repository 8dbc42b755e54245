"""No course total is written by hand: every module's points and exercise count, and the course's, come from
the registry (``graders.course``) -- in tests by computing them, in Markdown by a generated block
(``graders/build/docs.py``). A literal total goes stale silently when an exercise is added, so this test
fails on one in the kit's tests and hand-written prose."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from graders import course
from graders import checks
from graders.build.docs import _BLOCK
from graders.paths import REPO_ROOT

HERE = Path(__file__).resolve()


def _totals() -> tuple[set[int], set[int]]:
    """(points totals, exercise counts): per module and for the course."""
    groups = [[module.number] for module in course.selected()] + [None]
    points = {course.exercises(group) and round(sum(checks.points(e) for e in course.exercises(group)))
              for group in groups}
    counts = {len(course.exercises(group)) for group in groups}
    return points, counts


@functools.lru_cache(maxsize=None)  # the registry's totals do not change within a run: 0.1 s of CPU a file otherwise
def _patterns() -> tuple[re.Pattern, ...]:
    points, counts = _totals()
    number = "|".join(str(p) for p in sorted(points))
    count = "|".join(str(c) for c in sorted(counts))
    total = rf"(?:{number})(?:\.0)?"
    return tuple(re.compile(p) for p in (
        rf"(?<![\w.]){total}\s*(?:points|pts|баллов|балла)\b",  # "46 points"
        rf"\b(?:of|из)\s+{total}(?![\w.])",                      # "0 of 46"
        rf"(?<![\w./]){total}\s*/\s*{total}(?![\w.])",           # "46/46"
        rf"max_score\W+(?:==\s*)?{total}(?![\w.])",              # max_score == 46
        rf"(?<![\w.])(?:{count})\s+(?:exercises|упражнени)",     # "21 exercises"
    ))


def _hand_written() -> list[Path]:
    files = [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", REPO_ROOT / "assignments" / "README.md",
             *sorted((REPO_ROOT / "docs").glob("*.md")), *sorted((REPO_ROOT / "starter").glob("module_0*/README*.md")),
             *sorted((REPO_ROOT / "tests").glob("*.py"))]
    return [path for path in files if path.exists() and path.resolve() != HERE]


# a fenced block whose first line is "date: ..." is a dated transcript of a measured run: what it printed then
_TRANSCRIPT = re.compile(r"^```[^\n]*\ndate: .*?^```$", re.M | re.S)
# the table `rl4llm mutate --docs` writes into docs/mutation.md: mutant counts, which may equal a total by chance
_MUTATION_REPORT = re.compile(r"<!-- mutation-report:begin -->.*?<!-- mutation-report:end -->", re.S)


def literal_totals(text: str) -> list[str]:
    """The literal course totals in ``text``, generated blocks and dated transcripts left out."""
    text = _MUTATION_REPORT.sub("", _TRANSCRIPT.sub("", _BLOCK.sub("", text)))
    return [match.group(0) for pattern in _patterns() for match in pattern.finditer(text)]


@pytest.mark.parametrize("path", _hand_written(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_no_literal_course_total(path):
    found = literal_totals(path.read_text(encoding="utf-8"))
    assert not found, (f"{path.relative_to(REPO_ROOT)} writes a course total by hand: {found}; compute it from "
                       "graders.course (tests) or use a generated block (Markdown, graders/build/docs.py)")


def test_the_rule_finds_what_it_should():
    points, counts = _totals()
    some_points, some_count = max(points), max(counts)
    assert literal_totals(f"Module 9: {some_points} points") and literal_totals(f"scored 3 of {some_points}")
    assert literal_totals(f"shows {some_points}/{some_points}") and literal_totals(f"{some_count} exercises")
    assert literal_totals(f'assert r["max_score"] == {some_points}')
    block = f"<!-- generated:x:begin -->\n{some_points} points\n<!-- generated:x:end -->\n"
    assert not literal_totals(block) and not literal_totals("scored 42.49 of the points; 7 exercises")
    transcript = f"```\ndate: 2026-12-01\nscore {some_points} / {some_points}.0\n```\n"
    assert not literal_totals(transcript) and literal_totals(transcript.replace("date:", "run:"))
    report = f"<!-- mutation-report:begin -->\n| x | {some_points}/{some_points} (100.0 %) |\n<!-- mutation-report:end -->\n"
    assert not literal_totals(report) and literal_totals(report.replace("mutation-report", "mutation-notes"))
