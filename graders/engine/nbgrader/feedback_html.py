"""``nbgrader generate_feedback``'s pages: nbconvert's HTML, without a re-serialisation that changes nothing.

nbconvert 7's :meth:`HTMLExporter.from_notebook_node` renders the template, then parses the whole page with
BeautifulSoup (``html.parser``) and writes it out again, to give ``<img>`` tags without ``alt`` a default text
and JupyterLab's cell wrappers (``.jp-Notebook div.jp-Cell-inputWrapper``, ``div.jp-OutputArea-output``) a
``tabindex``. nbgrader's feedback template is the classic one: it has no JupyterLab wrappers, and the kit's
autograded notebooks hold no images (their outputs are the engine's verdicts, as text). The pass then only
re-serialises the page, and it was most of the command's time: 55 of 88 profiled seconds for 16 notebooks
(700 kB pages, 13 thousand tags each, from Pygments' highlighting).

:class:`FeedbackHTML` renders the same template with the same filters and skips that pass exactly when it
selects nothing: the rendered page holds no ``<img`` and no ``jp-Notebook``. Otherwise the page goes through
nbconvert's own path, unchanged, and so does every page with an nbconvert other than 7.x
(:func:`knows_this_nbconvert`: the skip repeats 7.x's rendering steps). Either way ``BeautifulSoup(page)``
is the page nbconvert writes (tests/test_feedback_html.py). The pass was never a sanitiser: it keeps a
learner's markup (a ``<script>`` in a markdown cell too) and drops only end tags that close nothing, which
browsers ignore as well. Configured in ``assignments/nbgrader_config.py``
(``c.GenerateFeedback.exporter_class``).

Highlighting is the other large cost (Pygments' lexer, about 12 of 22 profiled seconds for Module 9's 16
notebooks), and most of it is the same cells again: every student's notebook repeats the released cells. The
exporter highlights with :class:`RememberedHighlight`, which keeps each highlighted cell for the rest of the
process (bounded by :data:`REMEMBERED_CHARACTERS`), keyed by everything the highlighting reads: the source,
the lexer, the cell's ``magics_language`` and the formatter's options. The same key always gives the same
HTML, so a remembered cell is the page nbconvert's highlighter would write (tests/test_feedback_html.py).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import nbconvert
from nbconvert.exporters import HTMLExporter, TemplateExporter

try:  # nbconvert 7's layout, which the skip below repeats; any other nbconvert takes its own path, unchanged
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
except ImportError:  # pragma: no cover - another nbconvert
    Highlight2HTML = WidgetsDataTypeFilter = None

# what nbconvert's pass after rendering selects (html.py, HTMLExporter.from_notebook_node): where neither is in
# the page, the pass selects nothing and only writes the same tree out again
SOUP_TARGETS = ("<img", "jp-Notebook")


REMEMBERED_CHARACTERS = 16 << 20  # sources and highlighted pages kept per process (at most 64 MB); oldest out first


class RememberedHighlight(Highlight2HTML or object):
    """nbconvert's ``highlight_code`` filter, remembering what it highlighted: a cell seen before (the same
    source, lexer, ``magics_language`` and formatter options) is not lexed again.

    The key is every input of :func:`nbconvert.filters.highlight._pygments_highlight` that can change its
    output; a learner's cell is a key like any other (compared by value, never by hash alone), and one larger
    than the bound is highlighted and not kept."""

    _kept: "OrderedDict[tuple, str]" = OrderedDict()
    _size = 0
    _lock = threading.Lock()

    def __call__(self, source, language=None, metadata=None):
        if not isinstance(source, str) or not isinstance(language or self.pygments_lexer, str):
            return super().__call__(source, language, metadata)
        magics = (True, repr(metadata["magics_language"])) if metadata and "magics_language" in metadata else (False,)
        key = (source, language or self.pygments_lexer, magics,
               json.dumps(self.extra_formatter_options, sort_keys=True, default=repr))
        cls = RememberedHighlight
        with cls._lock:
            html = cls._kept.get(key)
            if html is not None:
                cls._kept.move_to_end(key)
                return html
        html = super().__call__(source, language, metadata)
        size = len(source) + len(html)
        if size <= REMEMBERED_CHARACTERS // 4:
            with cls._lock:
                if key not in cls._kept:
                    cls._kept[key] = html
                    cls._size += size
                while cls._size > REMEMBERED_CHARACTERS:
                    (old_source, *_), old_html = cls._kept.popitem(last=False)
                    cls._size -= len(old_source) + len(old_html)
        return html

    @classmethod
    def forget(cls) -> None:
        """Drop everything remembered (tests)."""
        with cls._lock:
            cls._kept.clear()
            cls._size = 0


def knows_this_nbconvert() -> bool:
    """Whether the installed nbconvert is the one whose ``from_notebook_node`` :class:`FeedbackHTML` repeats
    (7.x, with the filters and the private ``_init_resources`` it uses)."""
    return (nbconvert.__version__.split(".")[0] == "7" and Highlight2HTML is not None
            and hasattr(HTMLExporter, "_init_resources"))


def soup_pass_changes_nothing(page: str) -> bool:
    """Whether nbconvert's BeautifulSoup pass over ``page`` would only re-serialise it."""
    lowered = page.lower()
    return not any(target.lower() in lowered for target in SOUP_TARGETS)


class FeedbackHTML(HTMLExporter):
    """nbconvert's HTML exporter, without the BeautifulSoup pass where it would change nothing."""

    def from_notebook_node(self, nb, resources: dict[str, Any] | None = None, **kw: Any):
        if not knows_this_nbconvert() or not hasattr(self, "_nb_metadata"):
            return super().from_notebook_node(nb, resources, **kw)
        # HTMLExporter.from_notebook_node up to its template rendering (nbconvert 7.17), then the check
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get("highlight_code", RememberedHighlight(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self,
                                                 resources=resources)
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        if soup_pass_changes_nothing(page):
            return page, resources
        return super().from_notebook_node(nb, resources, **kw)
