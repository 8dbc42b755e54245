"""Learner text made safe for every file and tool the grader writes to, once, where it enters.

Whatever a learner's code says reaches the grader as text: an exception's
message and type name, printed output, a function's name in a traceback, a
returned string, a file or zip member name, the line of a syntax error. Any
of it may hold characters that break the files built from it:

- a lone surrogate (``raise ValueError("\\ud800")``; a file name that is not
  UTF-8, decoded by ``os.walk`` with ``surrogateescape``): no UTF-8 encoder
  writes it, so ``report.json`` could not be written at all;
- C0 controls other than tab and newline (NUL, ``\\x01``, ESC), and U+FFFE /
  U+FFFF: XML 1.0 forbids them, so ``junit.xml`` would be ill-formed, and ESC
  drives the terminal a scoreboard is printed on; a carriage return is legal
  XML but makes a terminal write over the line (``score: 100/100``), so it is
  escaped too;
- DEL and the C1 controls (U+007F-U+009F): legal XML, but some terminals read
  U+009B as the start of an escape sequence;
- the bidirectional controls (U+061C, U+200E/U+200F, U+202A-U+202E,
  U+2066-U+2069): they reorder what a person reads (a name that displays as
  ``exe.txt`` but is ``txt.exe``, a score that reads backwards).

Escaping ESC (and BEL, and the C1 CSI U+009B) makes every escape sequence
inert: an OSC 52 clipboard write (``ESC ] 52 ; c ; <base64> BEL``), a CSI
clear-screen (``ESC [ 2 J``), a DCS string are shown as their characters,
``\\x1b]52;c;...\\x07``, and no terminal acts on them.

:func:`clean` replaces each such character by its visible escape (``\\x01``,
``\\ud800``, ``\\ufffe``: backslash and hex digits, as Python writes them), so
that the learner still sees what their code produced and every writer gets
text it can encode. It is applied where learner results enter the grader
(:mod:`graders.engine.worker.runner` on the worker's events, :mod:`graders.engine.routes.inline`
on in-process outcomes, :mod:`graders.engine.intake.submission` on file names and
syntax errors) and again, as a second line, by every report writer
(:mod:`graders.engine.outputs.reports`). Text without such characters is returned as
it is (the same object): ordinary reports do not change by a byte, and
cleaning twice is cleaning once.

A correct submission is never affected: neither the reference solutions nor
the checks' inputs hold these characters, so a returned value equal to the
reference is left as it is.

:func:`file_name` makes a name given from outside (an nbgrader student id)
safe as one path component.

The cleaning itself is :mod:`graders.cleaner` (outside the engine, so that the
learner bundle's ``rl4llm capstone check`` uses it too); this module re-exports
it for the engine and keeps :func:`file_name`.
"""

from __future__ import annotations

import hashlib
import re

from graders.cleaner import (BIDI_CONTROLS, FIELD_LIMIT, LINE_LIMIT, clean, clean_line,  # noqa: F401
                             clean_text, log_line, say)

NAME_LIMIT = 200  # characters of a file name made by file_name (most file systems allow 255 bytes)


def file_name(value, default: str = "submission") -> str:
    """``value`` as one safe path component: letters, digits and ``_ . - @ +`` only, never hidden or an option.

    Other characters become ``_``; leading dots and dashes are dropped (no ``..``, no hidden file, no
    ``-rf``); at most :data:`NAME_LIMIT` characters. A name that had to change gets a short digest of
    the original (``_x-3f1c0a9d2b``), so two different ids never share a folder; a safe name stays
    as it is.
    """
    text = str(value)
    safe = re.sub(r"[^\w.@+-]", "_", text).lstrip(".-")[:NAME_LIMIT]
    if safe == text and safe:
        return safe
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{(safe or default)[:NAME_LIMIT - 11]}-{digest}"
