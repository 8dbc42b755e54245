"""The learner's pytest's "likely mistake" rule and the grader's Russian lines, as source for the notebooks.

A notebook's visible checks name a catalogued mistake by the rule of the
learner's pytest (``starter/conftest.py``: a mistake is named only when it is
the ONE entry of the shipped table ``_hints.json`` that explains every recorded
input of the exercise's visible checks, by the grader's rule -- ``fitting_entries``,
``diagnosis``, ``kit_compare.explaining``), and speak
the notebook's language. Rather than a second copy of that rule, this module
copies, by name and verbatim (:func:`graders.build.comparator._definitions`),
the conftest's recorder, tagging, input key and diagnosis, and ``Text`` from
:mod:`graders.text` into one program (the comparator's line needs no translation: it is a
``Particular`` of the comparator's copy, rendered in the notebook's language by its own accessor). The helper cell holds it as the
body of ``_kit_hints(kit_compare, language)`` (:mod:`.helper`), whose
parameters are the comparator's functions and the notebook's language. A
change to the conftest's rule reaches the notebooks at the next ``rl4llm
build``, and ``rl4llm build --check`` fails until it has.
"""

from __future__ import annotations

from graders.build.comparator import _definitions, _undefined_names
from graders.build.notebooks.texts import CHECK_TEXT
from graders.paths import REPO_ROOT, STARTER_DIR

PARTS = (  # (file, its top-level definitions copied, in file order)
    (REPO_ROOT / "graders" / "text.py", ("LANGUAGES", "placeholders", "Text")),
    (STARTER_DIR / "_kit_values.py", ("untagged",)),  # the one decoder of the tagged form (the conftest's too)
    (STARTER_DIR / "conftest.py",
     ("MAX_NUMBERS", "MAX_STRING", "KEY_DIGITS", "RTOL, ATOL", "REFERENCE", "RAISES", "MESSAGES", "message", "hint_text",
      "Unsupported", "_float", "_leaf", "tagged", "key_of", "grad_signature", "input_grads", "matches_wrong_value",
      "_Recorder", "RECORDER", "_wrap", "_observed", "_observations", "_grad_agrees", "_wrong", "_arrays", "fitting_entries", "_matches", "_float_trap",
      "diagnosis", "_round")),
)
IMPORTS = """\
import dataclasses
import functools
import hashlib
import json
import math
import re
import string
import sys
from types import SimpleNamespace

import numpy as np
"""
PARAMETERS = ("kit_compare", "language")  # the comparator's functions; the notebook's language (a function)
RETURNED = ("Text", "message", "diagnosis", "fitting_entries", "_observations", "RECORDER", "_wrap",
            "CHECK_TEXT")


def _table(name: str, table: dict) -> str:
    """``name = {key: Text(en, ru), ...}``: a table of texts as a literal."""
    rows = [f"    {key!r}: Text({text.in_('en')!r}, {text.in_('ru')!r})," for key, text in table.items()]
    return "\n".join([f"{name} = {{", *rows, "}"])


def diagnosis_program() -> str:
    """Imports, the copied definitions, the tables of texts, then ``kit_text`` (what ``hint_text`` reads) and
    the return of what the helper calls: the body of ``_kit_hints`` (module level; not yet indented)."""
    blocks = [IMPORTS.rstrip("\n"),
              "Text = str  # bound before the class Text: its methods' annotations name it (evaluated in a function)"]
    for path, names in PARTS:
        blocks += _definitions(path, names)
    blocks += [_table("CHECK_TEXT", CHECK_TEXT),
               "kit_text = SimpleNamespace(LANGUAGES=LANGUAGES)",
               "return SimpleNamespace(" + ", ".join(f"{name.lstrip('_')}={name}" for name in RETURNED) + ")"]
    program = "\n\n\n".join(blocks) + "\n"
    checked_program = program.rpartition("\n\n\nreturn ")[0] + "\n"
    undefined = _undefined_names(checked_program) - set(PARAMETERS)
    if undefined:
        raise ValueError(f"the notebooks' copy of the hint rule needs {sorted(undefined)}: add them to PARTS")
    if "graders" in program:  # as the comparator's copy: the learner's side has no kit to point to
        raise ValueError("the notebooks' copy of the hint rule mentions `graders`, which a notebook does not have")
    return program
