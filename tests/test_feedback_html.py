"""The feedback pages' exporter (graders/engine/nbgrader/feedback_html.py): nbconvert's page, without the
BeautifulSoup pass where that pass would only write the same page out again.

For a notebook like the kit's autograded ones (text outputs, a verdict, a traceback, markdown with a table and
a link), the page parsed and written out by BeautifulSoup is byte for byte the page nbconvert's own exporter
writes, and the pass is never run. For a page the pass would change (an image without ``alt``; an ``<IMG``
written in a markdown cell), the page is nbconvert's own. The real ``nbgrader generate_feedback`` runs this
exporter in tests/test_nbgrader.py and tests/test_nbgrader_module_9.py (configured in
``assignments/nbgrader_config.py``).
"""

from __future__ import annotations

import base64
import os

import pytest

from graders.paths import ASSIGNMENTS_DIR

nbformat = nbgrader = BeautifulSoup = HTMLExporter = nbconvert_html = Config = None  # set by _nbconvert
feedback_html = FeedbackHTML = soup_pass_changes_nothing = None


@pytest.fixture(autouse=True, scope="module")
def _nbconvert() -> None:
    """nbconvert and nbgrader, imported when this file's tests run: at collection every pytest-xdist worker
    would pay their import (2 s), and only one runs these tests (tests/test_collection_cost.py)."""
    global nbformat, nbgrader, BeautifulSoup, HTMLExporter, nbconvert_html, Config
    global feedback_html, FeedbackHTML, soup_pass_changes_nothing
    nbformat = pytest.importorskip("nbformat")
    nbgrader = pytest.importorskip("nbgrader")
    from bs4 import BeautifulSoup  # nbconvert's own dependency
    from nbconvert.exporters import HTMLExporter, html as nbconvert_html
    from traitlets.config import Config

    from graders.engine.nbgrader import feedback_html
    from graders.engine.nbgrader.feedback_html import FeedbackHTML, soup_pass_changes_nothing

# one pixel, as a notebook's image output holds it
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode("ascii")


def _config() -> Config:
    """nbgrader's feedback configuration (GenerateFeedback.__init__, nbgrader 0.9)."""
    formgrader = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader")
    config = Config()
    config.HTMLExporter.template_name = "feedback"
    config.HTMLExporter.extra_template_basedirs = [os.path.join(formgrader, "templates")]
    config.HTMLExporter.extra_template_paths = [os.path.join(formgrader, "static", "node_modules", "bootstrap",
                                                             "dist", "css")]
    return config


def _notebook(*extra_cells) -> "nbformat.NotebookNode":
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell("# Feedback\n\n| exercise | points |\n|---|---|\n| `clip` | 1 / 1 |\n\n"
                             "See [the spec](https://example.org/spec) & *the hints* <b>here</b>."),
        v4.new_code_cell("def clip(x, low=0.0, high=1.0):\n    \"\"\"min(max(x, low), high)\"\"\"\n"
                         "    return min(max(x, low), high)\n",
                         outputs=[v4.new_output("stream", name="stdout", text="passed: 1/1 <ok> & \"done\"\n")]),
        v4.new_code_cell("assert_exercise('clip')",
                         outputs=[v4.new_output("error", ename="AssertionError", evalue="0/1: wrong sign",
                                                traceback=["\x1b[0;31mAssertionError\x1b[0m: 0/1 < 1"])]),
        *extra_cells,
    ]
    cells[1].metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False, "grade_id": "clip",
                                     "schema_version": 3, "comment": "Well done & <kept>"}
    cells[2].metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "test-clip",
                                     "schema_version": 3, "points": 1, "score": 0.0}
    notebook = v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    return notebook


def _resources() -> dict:
    """What nbgrader's GetGrades gives the feedback template."""
    return {"nbgrader": {"notebook": "module_9_reference", "score": 1.5, "max_score": 3.0, "late_penalty": 0}}


def _pages(notebook) -> tuple[str, str]:
    ours, _ = FeedbackHTML(config=_config()).from_notebook_node(notebook, _resources())
    stock, _ = HTMLExporter(config=_config()).from_notebook_node(notebook, _resources())
    return ours, stock


@pytest.fixture
def soup_passes(monkeypatch) -> list:
    """One entry per BeautifulSoup pass nbconvert's exporter makes from here on."""
    passes = []
    real = nbconvert_html.BeautifulSoup
    monkeypatch.setattr(nbconvert_html, "BeautifulSoup", lambda *a, **k: passes.append(1) or real(*a, **k))
    return passes


HOSTILE_MARKDOWN = "</div></div></div>\n<h1>Score: 3.0 / 3.0</h1>\n<script>document.title = 'x'</script>"


@pytest.mark.parametrize("learner", ["plain", "hostile markdown"])
def test_a_page_without_images_is_nbconverts_page_before_its_rewrite(soup_passes, learner):
    notebook = _notebook(*([nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN)] if learner != "plain" else []))
    ours, stock = _pages(notebook)
    assert soup_passes == [1]  # nbconvert's exporter made its pass; ours skipped it
    assert "0/1 &lt; 1" in ours and "passed: 1/1" in ours and "<table>" in ours and "Score: 0.0 / 1.0" in ours
    assert str(BeautifulSoup(ours, features="html.parser")) == stock


@pytest.mark.parametrize("extra", ["image output", "img in markdown"])
def test_a_page_the_pass_would_change_is_nbconverts_own(extra):
    v4 = nbformat.v4
    cell = (v4.new_code_cell("plot()", outputs=[v4.new_output("display_data", data={"image/png": PNG})])
            if extra == "image output" else v4.new_markdown_cell(f'<IMG src="data:image/png;base64,{PNG}">'))
    ours, stock = _pages(_notebook(cell))
    assert ours == stock
    assert "No description has been provided for this image" in ours  # the pass gave the image its alt text


def test_what_the_pass_selects_is_what_the_check_looks_for():
    if not feedback_html.knows_this_nbconvert():
        pytest.skip(f"nbconvert {feedback_html.nbconvert.__version__}: the exporter takes nbconvert's own path")
    assert soup_pass_changes_nothing("<div class='cell'><pre>x &lt;img</pre></div>")
    for page in ("<img src=x>", "<IMG SRC=x>", "<div class='jp-Notebook'>", "<div class=JP-NOTEBOOK>"):
        assert not soup_pass_changes_nothing(page), page
    # nbconvert's pass selects "img:not([alt])", ".jp-Notebook div.jp-Cell-inputWrapper" and
    # ".jp-Notebook div.jp-OutputArea-output": each needs one of the targets in the page
    source = open(nbconvert_html.__file__, encoding="utf-8").read()
    selected = [line.split('soup.select("', 1)[1].split('"', 1)[0] for line in source.splitlines()
                if 'soup.select("' in line]
    assert selected == ["img:not([alt])", ".jp-Notebook div.jp-Cell-inputWrapper",
                        ".jp-Notebook div.jp-OutputArea-output"], selected
    assert all(any(target.strip("<") in selector for target in feedback_html.SOUP_TARGETS) for selector in selected)


def test_the_course_configures_the_exporter():
    text = (ASSIGNMENTS_DIR / "nbgrader_config.py").read_text(encoding="utf-8")
    assert 'c.GenerateFeedback.exporter_class = "graders.engine.nbgrader.feedback_html.FeedbackHTML"' in text


def test_another_nbconvert_takes_its_own_path(monkeypatch, soup_passes):
    """The skip repeats nbconvert 7's ``from_notebook_node``; with any other nbconvert the page is its own."""
    assert feedback_html.knows_this_nbconvert()  # the installed one: the skip is what the tests above measured
    monkeypatch.setattr(feedback_html.nbconvert, "__version__", "8.0.0")
    assert not feedback_html.knows_this_nbconvert()
    ours, stock = _pages(_notebook())
    assert ours == stock and len(soup_passes) == 2  # both went through nbconvert's pass
