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


# ---------------------------------------------------------------------------
# Highlighting remembered across the notebooks of one process
# ---------------------------------------------------------------------------
@pytest.fixture
def lexed(monkeypatch) -> list:
    """The sources Pygments lexes from here on (nbconvert's ``_pygments_highlight``), with an empty memory."""
    from nbconvert.filters import highlight

    feedback_html.RememberedHighlight.forget()
    calls, real = [], highlight._pygments_highlight
    monkeypatch.setattr(highlight, "_pygments_highlight",
                        lambda source, *a, **k: calls.append(source) or real(source, *a, **k))
    yield calls
    feedback_html.RememberedHighlight.forget()


def test_a_second_student_s_page_reuses_the_shared_cells_and_is_the_same_page(lexed):
    """Two students' notebooks share the released cells: the second page lexes only its own cell, and both pages
    are, parsed, the stock exporter's pages (so a remembered cell is the HTML nbconvert would write)."""
    first = _notebook()
    second = _notebook(nbformat.v4.new_code_cell("def clip(x, low=0.0, high=1.0):\n    return x  # bob's\n"))
    ours_first, _ = FeedbackHTML(config=_config()).from_notebook_node(first, _resources())
    lexed_first = len(lexed)
    ours_second, _ = FeedbackHTML(config=_config()).from_notebook_node(second, _resources())
    assert lexed[lexed_first:] == [second.cells[-1].source]  # only the cell the first page did not have
    stock_first, _ = HTMLExporter(config=_config()).from_notebook_node(first, _resources())
    stock_second, _ = HTMLExporter(config=_config()).from_notebook_node(second, _resources())
    assert str(BeautifulSoup(ours_first, features="html.parser")) == stock_first
    assert str(BeautifulSoup(ours_second, features="html.parser")) == stock_second


@pytest.mark.parametrize("magics", [{"magics_language": "bash"}, {"magics_language": "None"}, {"magics_language": None},
                                    {"magics_language": "text"}, {}])
def test_every_input_of_the_highlighting_is_in_the_key(lexed, magics):
    """The same source under another lexer, another cell magic (a string "None" and None too) or other formatter
    options is lexed again, and each answer is what nbconvert's own filter writes for those inputs."""
    from nbconvert.filters.highlight import Highlight2HTML

    source = "echo $HOME  # x = [1, 2]\n"
    asked = (("ipython3", {}), ("ipython3", magics), ("python", magics), ("ipython3", magics))
    stock = [Highlight2HTML(pygments_lexer="ipython3")(source, lexer, metadata) for lexer, metadata in asked]
    wide = Highlight2HTML(extra_formatter_options={"linenos": True})(source, "ipython3", magics)
    lexed.clear()
    remembered = feedback_html.RememberedHighlight(pygments_lexer="ipython3")
    assert [remembered(source, lexer, metadata) for lexer, metadata in asked] == stock
    assert len(lexed) == len({(lexer, repr(metadata)) for lexer, metadata in asked})  # each new key once
    plain = feedback_html.RememberedHighlight(pygments_lexer="ipython3")
    plain.extra_formatter_options = {"linenos": True}
    assert plain(source, "ipython3", magics) == wide != stock[1]


def test_the_memory_is_bounded_and_a_huge_cell_is_not_kept(lexed, monkeypatch):
    """A learner's huge cell cannot fill the grader's memory: one over a quarter of the bound is not kept, and the
    oldest cells leave first when the bound is reached."""
    monkeypatch.setattr(feedback_html, "REMEMBERED_CHARACTERS", 8_000)
    remembered = feedback_html.RememberedHighlight(pygments_lexer="ipython3")
    huge = "x = 1\n" * 100  # with its HTML, over a quarter of the bound
    remembered(huge)
    remembered(huge)
    assert lexed == [huge, huge]
    for number in range(120):
        remembered(f"y_{number} = {number}\n")
    assert 0 < feedback_html.RememberedHighlight._size <= 8_000
    kept = [key[0] for key in feedback_html.RememberedHighlight._kept]
    assert kept[-1] == "y_119 = 119\n" and "y_0 = 0\n" not in kept and huge not in kept
