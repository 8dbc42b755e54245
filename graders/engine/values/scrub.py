"""Linear rewrites of learner text: memory addresses, absolute paths, the grader's temporary folders.

Feedback and crash logs must be the same bytes for the same answer, so the grader rewrites what differs
between runs. Each rewrite here runs in time linear in its text, whatever the text: only literal
searches (``str.find``) and single character classes (``[...]+``, which never backtrack) are used. The
regular expressions they replace backtracked: ``/[^\\s'"]*?rl4llm-grade-...`` over a message of 6 MB of
``/`` held the GIL for minutes (every ``/`` a new start, each start a scan to the end), and the
absolute-path pattern of a crash log grew as the square of a run of ``-/a/`` (``tests/test_worker_door.py``
times each on growing inputs).
"""

from __future__ import annotations

import re

_RUNS = re.compile(r"([\s'\"]+)")  # the delimiters between paths (one class, greedy: linear)
_HEX = frozenset("0123456789abcdefABCDEF")
TEMP_MARKER = "rl4llm-grade-"


def without_addresses(text: str) -> str:
    """``0x`` followed by six or more hex digits becomes ``0x...`` (as ``re.sub(r"0x[0-9a-fA-F]{6,}")``)."""
    if "0x" not in text:
        return text
    out, position = [], 0
    while (start := text.find("0x", position)) >= 0:
        end = start + 2
        while end < len(text) and text[end] in _HEX:
            end += 1
        if end - start - 2 >= 6:
            out += [text[position:start], "0x..."]
        else:
            out.append(text[position:end])
        position = end if end > start + 2 else start + 2
    out.append(text[position:])
    return "".join(out)


def _word(character: str) -> bool:
    return character.isalnum() or character == "_"


def _short_paths(run: str) -> str:
    """One run without delimiters: every ``/a/b/c`` whose ``/`` follows no word character or dot becomes
    ``c`` (two segments at least, each non-empty)."""
    out, position, search = [], 0, 0
    while (start := run.find("/", search)) >= 0:
        if start and (_word(run[start - 1]) or run[start - 1] == "."):
            search = start + 1
            continue
        segments, last, cursor = 0, (0, 0), start + 1
        while True:
            slash = run.find("/", cursor)
            end = len(run) if slash < 0 else slash
            if end == cursor:
                break
            segments, last = segments + 1, (cursor, end)
            if slash < 0:
                break
            cursor = slash + 1
        if segments < 2:
            search = start + 1
            continue
        out += [run[position:start], run[last[0]:last[1]]]
        position = search = last[1]
    out.append(run[position:])
    return "".join(out)


def without_paths(text: str) -> str:
    """Absolute paths (``/a/b/c``) reduced to their last part, as a crash log shows them."""
    if "/" not in text:
        return text
    return "".join(_short_paths(part) if index % 2 == 0 else part for index, part in enumerate(_RUNS.split(text)))


def _temp_run(run: str, replacement: str) -> str:
    """One run without delimiters: from its first ``/`` to the first ``rl4llm-grade-<word>`` after it (with an
    optional ``/sub_<digits>``) becomes ``replacement``, repeatedly."""
    out, position = [], 0
    while (start := run.find("/", position)) >= 0:
        marker, end = run.find(TEMP_MARKER, start + 1), -1
        while marker >= 0:
            end = marker + len(TEMP_MARKER)
            while end < len(run) and (run[end].isascii() and (run[end].isalnum() or run[end] == "_")):
                end += 1
            if end > marker + len(TEMP_MARKER):
                break
            marker, end = run.find(TEMP_MARKER, marker + 1), -1
        if end < 0:
            break
        if run.startswith("/sub_", end):
            digits = end + 5
            while digits < len(run) and run[digits].isdecimal():
                digits += 1
            end = digits if digits > end + 5 else end
        out += [run[position:start], replacement]
        position = end
    out.append(run[position:])
    return "".join(out)


def without_temp_paths(text: str, replacement: str = "<submission>") -> str:
    """Every path into the grader's temporary folders (``.../rl4llm-grade-XXXX/sub_3``) becomes ``replacement``."""
    if TEMP_MARKER not in text:
        return text
    return "".join(_temp_run(part, replacement) if index % 2 == 0 else part
                   for index, part in enumerate(_RUNS.split(text)))
