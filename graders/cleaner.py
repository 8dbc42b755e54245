"""One cleaner for every string a person reads: terminal lines, log lines and report fields.

Whatever came from a submission, a passport, a shard manifest or a notebook may hold characters
that act on whatever shows it (the reasons, character by character, are in
:mod:`graders.engine.values.learner_text`, which re-exports this module for the engine). They are
replaced by their visible escapes, as Python writes them (``\\x1b``, ``\\u202e``, ``\\ud800``).

This module is also the choke point of every terminal and log line of the
instructor's commands (``rl4llm grade``, ``merge``, ``report``, ``capstone
check|grade``, nbgrader's WARNINGs): :func:`say` is their only ``print``,
:func:`log_line` their only call of a logger, and both write
:func:`clean_line`'s text -- the same escapes, each line cut to
:data:`LINE_LIMIT` characters with a visible marker (``...[1048576 chars]``:
the length of the whole line). Report files cut each string at
:data:`FIELD_LIMIT` the same way (``clean(report, limit=FIELD_LIMIT)``).
``tests/test_one_cleaner.py`` checks by its syntax tree that the modules that
print call nothing else, and sends the same hostile strings through every
command that prints. Every operation here is linear in its input: one
character class, slices, ``str.split``.
"""

from __future__ import annotations

import re
import sys

# what is escaped: C0 controls but \t \n (a carriage return writes over a terminal line: escaped), DEL and C1,
# the bidirectional controls, every surrogate, the XML non-characters U+FFFE/U+FFFF; one character class: linear
_CONTROLS = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
             "\ud800-\udfff\ufffe\uffff")
_UNSAFE = re.compile(f"[{_CONTROLS}]")
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
LINE_LIMIT = 2000  # characters of one terminal or log line (a scoreboard line is ~80, an error ~300)
FIELD_LIMIT = 65536  # characters of one string in a report file (learner output is kept to 4000 a case)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` with every unsafe character replaced by its visible escape (``\\x00``, ``\\ud800``).

    With ``limit``, at most that many characters: a longer result ends with the marker ``...[N chars]``
    (``N``: the length of ``text``). Safe text within the limit is returned as it is; cleaning twice is
    cleaning once.
    """
    head = text if limit is None else text[:limit]  # never more work than the limit
    out = _UNSAFE.sub(_escape, head) if _UNSAFE.search(head) else head
    if limit is None or (len(text) <= limit and len(out) <= limit):
        return out
    marker = f"...[{len(text)} chars]"
    return out[:max(0, limit - len(marker))] + marker


def clean_line(text, limit: int = LINE_LIMIT) -> str:
    """``text`` (anything: ``str()`` of it) as terminal or log lines: escaped (:func:`clean_text`), newlines
    and tabs kept, each line cut to ``limit`` characters with a visible marker."""
    text = text if isinstance(text, str) else str(text)
    if len(text) <= limit and not _UNSAFE.search(text):
        return text
    return "\n".join(clean_text(part, limit) for part in text.split("\n"))


def say(*values, sep: str = " ", end: str = "\n", file=None, flush: bool = False) -> None:
    """``print`` for the instructor's commands: the text (not ``end``) cleaned by :func:`clean_line` first.

    The one way the modules that print write to a terminal (a test checks their syntax trees); a
    character the stream cannot encode is written as its escape, never raised.
    """
    stream = sys.stdout if file is None else file
    text = clean_line(sep.join(value if isinstance(value, str) else str(value) for value in values)) + end
    try:
        stream.write(text)
    except UnicodeEncodeError:  # an ASCII terminal: the escape of the character, as Python writes it
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    if flush:
        stream.flush()


def log_line(method, message: str, *args) -> None:
    """Call a logger's ``method`` (``log.warning``...) with ``message % args`` cleaned by :func:`clean_line`:
    the one way the modules that print write to a log (a formatter never sees the raw arguments)."""
    method("%s", clean_line(message % args if args else message))


def clean(value, limit: int | None = None):
    """``value`` with every string in it cleaned (:func:`clean_text`, cut at ``limit`` if given): dict keys
    and values, list items.

    For JSON-like structures (a worker's event, a report); a tuple is cleaned as a list and stays a tuple;
    anything else (numbers, arrays, None) is returned as it is. Dicts and lists are walked without
    recursion, so a structure as deep as ``json.loads`` accepts is cleaned too. The input is never
    changed: containers are copied (a container met twice, or inside itself, is copied once).
    """
    if isinstance(value, str):
        return clean_text(value, limit)
    if isinstance(value, tuple):
        return tuple(clean(list(value), limit))
    if not isinstance(value, (dict, list)):
        return value
    copies: dict[int, object] = {}  # id of an original container -> its copy
    pending: list[tuple[object, object]] = []  # (original, copy) still to fill

    def copy_of(item):
        if isinstance(item, str):
            return clean_text(item, limit)
        if isinstance(item, tuple):
            return clean(item, limit)
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
                copy[clean_text(key, limit) if isinstance(key, str) else key] = copy_of(item)
        else:
            copy.extend(copy_of(item) for item in original)
    return root


