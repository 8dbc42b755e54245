"""nbgrader's feedback on a cell whose function is still the stub: two lines in the notebook's language that name
the function's cell and say it is not implemented yet -- no traceback, no line of the file the engine graded (a
notebook's learner has none) -- and the grade as before (0).

Cheap: one engine run per language on Module 9's reference notebook, as ``generate_assignment`` releases it
(nbgrader's ``ClearSolutions``: ``raise NotImplementedError()``) in two cells and solved in the others; no course.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from nbgrader.preprocessors import ClearSolutions
from nbgrader.utils import determine_grade

from graders.engine.nbgrader import scoring
from graders.engine.values.protocol import CaseOutcome, CaseResult
from graders.engine.outputs.feedback import _problem_lines
from graders.paths import ASSIGNMENTS_DIR

pytestmark = pytest.mark.slow  # grades a released notebook twice (en, ru) through nbgrader's route; imports nbgrader

STEM = "module_9_reference"
STUBBED = ("k3_kl", "_last_box")  # an exercise left as released; a helper that verify_detailed calls
LOCATION = re.compile(r"\.py, line \d+|Traceback|File \"")


def _released_in(language: str) -> str:
    folder = "module_09" + ("" if language == "en" else f"_{language}")
    nb = nbformat.read(ASSIGNMENTS_DIR / "source" / folder / f"{STEM}.ipynb", as_version=4)
    cells = [cell for cell in nb.cells if cell.get("id") in STUBBED]
    assert len(cells) == len(STUBBED)
    stubbed = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
    ClearSolutions().preprocess(stubbed, {"language": "python"})
    assert all("raise NotImplementedError()" in cell.source for cell in cells)
    return nbformat.writes(nb)


@pytest.fixture(scope="module", params=["en", "ru"])
def graded(request):
    language = request.param
    return language, scoring.grade_notebook(_released_in(language), STEM, hide_hidden_inputs=True, language=language)


def _cell(points: float, outputs: list[dict]):
    return nbformat.from_dict({"cell_type": "code", "execution_count": None, "id": "test-x", "source": "",
                               "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True,
                                                         "grade_id": "test-x", "points": points,
                                                         "schema_version": 3}},
                               "outputs": outputs})


def test_the_stub_cell_is_two_lines_naming_its_cell(graded):
    language, entries = graded
    entry = entries[f"{STEM}.k3_kl"]
    assert entry["not_implemented"] and (entry["status"], entry["points"]) == ("error", 0.0)
    score, outputs = scoring.verdict_outputs(entry, entry["id"], entry["max_points"], language, hide=True)
    (output,) = outputs
    assert score == 0.0 and determine_grade(_cell(entry["max_points"], outputs)) == (0.0, entry["max_points"])
    text = scoring.TEXT
    assert output["traceback"] == [
        text["headline"].in_(language, exercise=entry["id"], score="0", points=f"{entry['max_points']:g}",
                             status=text["status"]["not_implemented"].in_(language)),
        text["stub_cell"].in_(language, function="k3_kl")]
    assert not LOCATION.search(json.dumps(outputs, ensure_ascii=False))
    if language == "ru":
        assert "Ячейка ноутбука, в которой определена функция k3_kl" in output["traceback"][1]


def test_a_stubbed_helper_is_named_without_a_file_line(graded):
    language, entries = graded
    entry = entries[f"{STEM}.verify_detailed"]
    assert (entry["status"], entry["points"]) == ("error", 0.0)  # the grade as before: its helper raises
    expected = {"en": "_last_box is not implemented yet: it still raises NotImplementedError",
                "ru": "_last_box: ещё не реализовано — функция по-прежнему выбрасывает NotImplementedError"}[language]
    assert expected in entry["feedback"].splitlines() and not LOCATION.search(entry["feedback"])
    _, outputs = scoring.verdict_outputs(entry, entry["id"], entry["max_points"], language, hide=True)
    assert not LOCATION.search(json.dumps(outputs, ensure_ascii=False))


def test_the_other_cells_keep_their_grades(graded):
    _, entries = graded
    unchanged = {k: e for k, e in entries.items() if k.split(".", 1)[1] not in ("k3_kl", "verify_detailed",
                                                                              "verify_numeric_answer")}
    assert unchanged and all(e["status"] == "passed" and e["points"] == e["max_points"] for e in unchanged.values())


@pytest.mark.parametrize("language", ["en", "ru"])
def test_the_kits_own_stub_message_is_kept_and_its_location_dropped(language):
    def outcome(message: str, where: str) -> CaseOutcome:  # a raise reads no case
        outcome = CaseOutcome(0, None, CaseResult.RAISED, error={"type": "NotImplementedError", "message": message,
                                                                 "where": where, "mro": ["NotImplementedError"]})
        assert outcome.not_implemented
        return outcome

    kit_message = f"{STEM}.k3_kl is not implemented yet -- k3 = exp(d) - d - 1"
    (line,) = _problem_lines([outcome(kit_message, f"{STEM}.py, line 12, in k3_kl")], [], True, language)
    assert not LOCATION.search(line) and "k3_kl" in line
    (line,) = _problem_lines([outcome("", f"{STEM}.py, line 12, in k3_kl")], [], True, language)
    assert line == {"en": "k3_kl is not implemented yet: it still raises NotImplementedError",
                    "ru": "k3_kl: ещё не реализовано — функция по-прежнему выбрасывает NotImplementedError"}[language]
    (line,) = _problem_lines([outcome("todo", f"{STEM}.py, line 12, in k3_kl")], [], True, language)
    assert line.endswith("NotImplementedError (todo)") and not LOCATION.search(line)
