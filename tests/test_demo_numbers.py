"""The numbers the docs quote for ``rl4llm demo``'s ``typical_mistakes`` come from the kit as it is (issue 52,
point 7): docs/instructors.md's Gradescope step and README.md's summary say the score grading the bundled examples
gives today (the dated container logs below them are records of their day and say so)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from graders.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # grades the bundled examples' Module 9 (about 6 s)


@pytest.fixture(scope="module")
def module_9_score() -> float:
    import graders.engine.routes.batch as batch
    from graders.engine.routes.demo import assemble_examples
    from graders.engine.routes.grading import GradeOptions

    with tempfile.TemporaryDirectory() as temp:
        paths = assemble_examples(Path(temp) / "in", modules=("9",))
        mistakes = [path for path in paths if path.name == "typical_mistakes"]
        result = batch.grade_paths(mistakes, Path(temp) / "out", GradeOptions(modules=("9",)), progress=False,
                                   log=lambda _message: None)
    return result.reports[0]["score"]


def test_the_instructors_guide_quotes_todays_score(module_9_score):
    page = (REPO_ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    quoted = re.search(r"partial marks: ([\d.]+) / 46 for\s+Module 9", page)
    assert quoted and float(quoted.group(1)) == pytest.approx(module_9_score, abs=5e-5), module_9_score
    assert "records of their day" in page  # the dated logs are not read as today's numbers


def test_the_readme_quotes_todays_score(module_9_score):
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"full marks, ([\d.]+) points \(today.s kit\) and 0", readme)
    assert quoted and float(quoted.group(1)) == pytest.approx(module_9_score, abs=0.005), module_9_score
