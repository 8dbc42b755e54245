"""Learner text made safe for every file and tool the grader writes to, once, where it enters.

Whatever a learner's code says reaches the grader as text: an exception's
message and type name, printed output, a function's name in a traceback, a
returned string, a file or zip member name, the line of a syntax error. Any
of it may hold characters that break the files built from it:

- a lone surrogate (``raise ValueError("\\ud800")``; a file name that is not
  UTF-8, decoded by ``os.walk`` with ``surrogateescape``): no UTF-8 encoder
  writes it, so ``report.json`` could not be written at all;
- C0 controls other than tab, newline and carriage return (NUL, ``\\x01``,
  ESC), and U+FFFE / U+FFFF: XML 1.0 forbids them, so ``junit.xml`` would be
  ill-formed, and ESC drives the terminal a scoreboard is printed on;
- DEL and the C1 controls (U+007F-U+009F): legal XML, but some terminals read
  U+009B as the start of an escape sequence.

:func:`clean` replaces each such character by its visible escape (``\\x01``,
``\\ud800``, ``\\ufffe``: backslash and hex digits, as Python writes them), so
that the learner still sees what their code produced and every writer gets
text it can encode. It is applied where learner results enter the grader
(:mod:`graders.engine.runner` on the worker's events, :mod:`graders.engine.inline`
on in-process outcomes, :mod:`graders.engine.submission` on file names and
syntax errors) and again, as a second line, by every report writer
(:mod:`graders.engine.reports`). Text without such characters is returned as
it is (the same object): ordinary reports do not change by a byte, and
cleaning twice is cleaning once.

A correct submission is never affected: neither the reference solutions nor
the checks' inputs hold these characters, so a returned value equal to the
reference is left as it is.

:func:`file_name` makes a name given from outside (an nbgrader student id)
safe as one path component.
"""

from __future__ import annotations

import hashlib
import re

# what is escaped: C0 controls but \t \n \r, DEL and C1, every surrogate, and the XML non-characters U+FFFE/U+FFFF
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
NAME_LIMIT = 200  # characters of a file name made by file_name (most file systems allow 255 bytes)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean_text(text: str) -> str:
    """``text`` with every unsafe character replaced by its visible escape (``\\x00``, ``\\ud800``)."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def clean(value):
    """``value`` with every string in it cleaned (:func:`clean_text`): dict keys and values, list items.

    For JSON-like structures (a worker's event, a report); a tuple is cleaned as a list and stays a tuple;
    anything else (numbers, arrays, None) is returned as it is. Dicts and lists are walked without
    recursion, so a structure as deep as ``json.loads`` accepts is cleaned too. The input is never
    changed: containers are copied (a container met twice, or inside itself, is copied once).
    """
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, tuple):
        return tuple(clean(list(value)))
    if not isinstance(value, (dict, list)):
        return value
    copies: dict[int, object] = {}  # id of an original container -> its copy
    pending: list[tuple[object, object]] = []  # (original, copy) still to fill

    def copy_of(item):
        if isinstance(item, str):
            return clean_text(item)
        if isinstance(item, tuple):
            return clean(item)
        if not isinstance(item, (dict, list)):
            return item
        if id(item) not in copies:  # the originals outlive this call: their ids stay theirs
            copies[id(item)] = {} if isinstance(item, dict) else []
            pending.append((item, copies[id(item)]))
        return copies[id(item)]

    root = copy_of(value)
    while pending:
        original, copy = pending.pop()
        if isinstance(original, dict):
            for key, item in original.items():
                copy[clean_text(key) if isinstance(key, str) else key] = copy_of(item)
        else:
            copy.extend(copy_of(item) for item in original)
    return root


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
