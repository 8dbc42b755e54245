"""A learner file Python cannot compile, graded in the parts it can: what a syntax error or a bad encoding costs.

Python refuses a whole file for one syntax error or one byte that is not UTF-8. A learner's notebook loses only
the cell (Jupyter runs cells one by one, :mod:`graders.engine.intake.notebook_cells`); a ``.py`` file loses only
the **top-level definitions** the error is in, here:

- The file is cut at its top-level statements: a line at column 0 that is code (not a comment, not ``else:`` /
  ``except`` / a closing bracket, not after a backslash) starts one; decorators stay with their ``def``; the
  comments and blank lines at column 0 after a definition stand alone.
- A part whose bytes are not UTF-8, or that does not compile on its own, is left out (its lines blank, so every
  other line keeps its number). A part that fails and is not a ``def``/``class`` of its own (a stray dedented
  ``return``) takes the definition above it along: it was most likely that definition's.
- What is kept must compile as one file and define something, else the whole file is the problem (as before).
- Every part left out is a note in the feedback of each exercise of the file: its lines, what it defined, the
  error and its line (or the byte and the encoding the file seems to be in); a function left out is
  ``missing`` with that note as its cause (:func:`lost_function`).

A PEP 263 declaration (``# -*- coding: cp1251 -*-``) is honoured, as Python honours it: the file is read in
that encoding and graded whole. Every operation is linear in the file's size (each part compiled once).
"""

from __future__ import annotations

import codecs
import re

from graders.engine.values.learner_text import clean_text
from graders.text import Text

CONTINUATIONS = (b"else", b"elif", b"except", b"finally")
COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
DEFINITION = re.compile(rb"(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)")

SAID = {
    "lost": Text("{where} line {line}: {error}; Python cannot compile it, so line(s) {span} ({what}) were left "
                 "out and the rest of the file was graded",
                 "{where}, строка {line}: {error}; Python не может это скомпилировать, поэтому строки {span} "
                 "({what}) не учтены, а остальной файл проверен"),
    "syntax": Text("{message}", "{message}"),
    "too_deep": Text("too deeply nested or too long to compile ({error})",
                     "слишком глубокая вложенность или слишком длинное выражение ({error})"),
    "bytes": Text("byte {byte} is not UTF-8{guess}", "байт {byte} — не UTF-8{guess}"),
    "guess": Text(" (the file looks like {encoding}: save it as UTF-8, or declare `# -*- coding: {codec} -*-` on "
                  "its first line)",
                  " (похоже, файл в кодировке {encoding}: сохраните его в UTF-8 или объявите кодировку строкой "
                  "`# -*- coding: {codec} -*-` в начале файла)"),
    "statement": Text("a statement", "инструкция"),
    "comment": Text("a comment", "комментарий"),
    "empty": Text("{where} is empty ({size} bytes): there is nothing to grade; save your work into it and resubmit",
                  "файл {where} пуст (байт: {size}): проверять нечего; сохраните в него решение и отправьте заново"),
    "whole_encoding": Text("{where} is not valid UTF-8 (byte {position}: {byte}){guess}; nothing of it could be "
                           "read, so none of its exercises was graded",
                           "файл {where} не является корректным текстом в UTF-8 (байт {position}: {byte}){guess}; "
                           "ничего из него не прочитано, поэтому ни одно его упражнение не проверено"),
    "bad_cookie": Text("{where} declares the encoding {codec}, which Python does not know; save it as UTF-8 and "
                       "remove the declaration",
                       "в файле {where} объявлена кодировка {codec}, которой Python не знает; сохраните файл в UTF-8 "
                       "и удалите объявление"),
}
ENCODINGS = {"cp1251": Text("Windows-1251 (Cyrillic)", "Windows-1251 (кириллица)"),
             "cp1252": Text("Windows-1252 (Western European)", "Windows-1252 (западноевропейская)"),
             "utf-16": Text("UTF-16 (Notepad's \"Unicode\")", "UTF-16 (\"Юникод\" в Блокноте)")}


class Lost(Text):
    """A note: a part of a learner file left out, in every language; ``functions`` the names it defined."""

    def __new__(cls, en: str, ru: str, functions: tuple[str, ...] = ()) -> Lost:
        text = super().__new__(cls, en, ru)
        text.functions = functions
        return text


def both(key: str, **fields) -> Text:
    """``SAID[key]`` in every language, each field that is a Text read in that language."""
    return Text(*(SAID[key].in_(language, **{name: value.in_(language) if isinstance(value, Text) else value
                                             for name, value in fields.items()}) for language in ("en", "ru")))


def declared(data: bytes) -> str | None:
    """The encoding a PEP 263 declaration on line 1 or 2 names (normalised), else None."""
    for line in data.splitlines()[:2]:
        match = COOKIE.match(line)
        if match:
            return match.group(1).decode("ascii").lower()
        if line.strip() and not line.lstrip().startswith(b"#"):
            return None
    return None


def undeclared(text: str) -> str:
    """``text`` read through its declaration, with the declaration made inert (the grader writes it as UTF-8):
    the same lines, the same line numbers."""
    lines = text.split("\n")
    for number in range(min(2, len(lines))):
        if COOKIE.match(lines[number].encode("utf-8", "replace")):
            lines[number] = "# (its encoding declaration was read by the grader)"
            break
    return "\n".join(lines)


def guess(data: bytes) -> Text | None:
    """The encoding ``data`` (not UTF-8) most likely is in, if one is likely."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return ENCODINGS["utf-16"]
    for codec, letters in (("cp1251", ("\u0400", "\u04ff")), ("cp1252", ("\u00c0", "\u00ff"))):
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        wide = [char for char in text if ord(char) > 127]
        if wide and sum(letters[0] <= char <= letters[1] for char in wide) >= 0.8 * len(wide):
            return ENCODINGS[codec]
    return None


def guess_text(data: bytes) -> Text | str:
    """What to say of the encoding of ``data`` (not UTF-8): the likely one and what to do, or ""."""
    found = guess(data)
    if found is None:
        return ""
    codec = "cp1251" if found is ENCODINGS["cp1251"] else "cp1252" if found is ENCODINGS["cp1252"] else "utf-16"
    return both("guess", encoding=found, codec=codec)


def _starts(line: bytes) -> bool:
    """Whether ``line`` could start a top-level statement (code at column 0, not a continuation)."""
    if not line or line[:1] in b" \t\f\r\n#" or line.startswith((b")", b"]", b"}")):
        return False
    word = re.match(rb"[A-Za-z_]+", line)
    return not (word and word.group(0) in CONTINUATIONS)


def _heads(line: bytes) -> bool:
    """A definition's first line: Python never has one inside a bracket at column 0, so outside a string it
    starts a part whatever brackets the lines above left open (an unclosed bracket costs its own part only; an
    unclosed triple-quoted string runs on, as Python reads it, to its next triple quote)."""
    return line.startswith((b"def ", b"class ", b"async def ", b"@"))


def _scan(line: bytes, state: tuple[bytes | None, int]) -> tuple[bytes | None, int]:
    """``(the triple quote a string left open, the depth of open brackets)`` after ``line``, from those before it:
    quotes and brackets followed character by character (a comment ends the line; a backslash escapes)."""
    quote, depth = state
    at, size = 0, len(line)
    while at < size:
        if quote is not None:  # inside a string: find its end
            if line[at:at + 1] == b"\\":
                at += 2
                continue
            if line.startswith(quote, at):
                at += len(quote)
                quote = None
                continue
            if len(quote) == 1 and line[at:at + 1] in b"\r\n":
                quote = None  # a one-line string left open ends with its line (a syntax error of its own)
            at += 1
            continue
        char = line[at:at + 1]
        if char == b"#":
            break
        if char in b"'\"":
            quote = char * 3 if line.startswith(char * 3, at) else char
            at += len(quote)
            continue
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth = max(depth - 1, 0)
        at += 1
    if quote is not None and len(quote) == 1:
        quote = None
    return quote, depth


def _neutral(line: bytes) -> bool:
    return not line.strip() or line.startswith(b"#")


def parts(data: bytes) -> list[tuple[int, list[bytes]]]:
    """``data`` cut into top-level parts: ``(first line number, lines)``, in order, every line in one part."""
    lines = data.splitlines(keepends=True)
    chunks: list[tuple[int, list[bytes]]] = []
    state: tuple[bytes | None, int] = (None, 0)
    joined = False  # the line before ended with a backslash outside a string
    decorators = False  # the part so far is decorators waiting for their definition
    for number, line in enumerate(lines, 1):
        open_before = state != (None, 0) or joined
        head = _heads(line) and state[0] is None  # inside a string it is the string's text
        if head:
            state, open_before = (None, 0), False
        if not chunks or (not decorators and (head or (not open_before and _starts(line)))):
            chunks.append((number, []))
            decorators = line.startswith(b"@")  # decorators so far: the definition below joins them
        elif head and not line.startswith(b"@"):
            decorators = False
        chunks[-1][1].append(line)
        state = _scan(line, state)
        joined = state[0] is None and line.rstrip(b"\r\n").endswith(b"\\")
    out: list[tuple[int, list[bytes]]] = []
    for start, body in chunks:  # the comments and blank lines at column 0 after a part stand alone
        end = len(body)
        while end > 0 and _neutral(body[end - 1]):
            end -= 1
        if end:
            out.append((start, body[:end]))
        if end < len(body):
            out.append((start + end, body[end:]))
    return out


def _defined(lines: list[bytes]) -> tuple[str, ...]:
    """``("def", name)`` or ``("class", name)`` for a part that is a definition, else ``()``."""
    for line in lines:
        if not line.startswith(b"@") and not _neutral(line):
            match = DEFINITION.match(line)
            return (match.group(1).decode("ascii"), match.group(2).decode("ascii")) if match else ()
    return ()


def _read(raw: bytes, start: int, encoding: str, where: str, data: bytes):
    """A part's text, or ``(None, (line, the error))``."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as failure:
        line = start + raw[:failure.start].count(b"\n")
        return None, (line, both("bytes", byte=f"0x{raw[failure.start]:02x}", guess=guess_text(data)))
    try:
        compile(text, where, "exec", dont_inherit=True)
    except SyntaxError as failure:
        message = clean_text(f"{type(failure).__name__}: {failure.msg}")[:200]
        return None, (start + (failure.lineno or 1) - 1, both("syntax", message=message))
    except ValueError as failure:  # a NUL byte
        return None, (start, both("syntax", message=clean_text(f"ValueError: {failure}")[:200]))
    except (RecursionError, MemoryError) as failure:
        return None, (start, both("too_deep", error=type(failure).__name__))
    return text, None


def compilable(data: bytes, where: str, encoding: str = "utf-8") -> tuple[str | None, list[Lost]]:
    """The file's text with every part that cannot be read or compiled blanked out, and a note per part left out;
    ``(None, [])`` when what is left does not compile or defines nothing (the whole file is then the problem)."""
    where = clean_text(where)
    cut = parts(data)
    texts, errors = [], []
    for index, (start, lines) in enumerate(cut):
        raw = b"".join(lines)
        if index == 0 and encoding == "utf-8" and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        text, error = _read(raw, start, encoding, where, data)
        texts.append(text)
        errors.append(error)
    losses: list[tuple[int, int, tuple[str, ...], int, Text]] = []  # first, last line, names, error's line, error
    for index, (start, lines) in enumerate(cut):
        if errors[index] is None:
            continue
        line, error = errors[index]
        first, names = start, _defined(lines)
        code = any(not _neutral(text) for text in lines)
        if code and not names and not lines[0].startswith(b"@") and index and texts[index - 1] is not None \
                and _defined(cut[index - 1][1]):  # a stray dedented line: the definition above's
            first, names = cut[index - 1][0], _defined(cut[index - 1][1])
            texts[index - 1] = None
        losses.append((first, start + len(lines) - 1, names if code else None, line, error))
    text = "".join(t if t is not None else "\n" * len(lines) for t, (_, lines) in zip(texts, cut))
    defined = [names for t, (_, lines) in zip(texts, cut) if t is not None for names in [_defined(lines)] if names]
    if not defined:
        return None, []
    try:
        compile(text, where, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, []
    notes = []
    for first, last, names, line, error in losses:
        what = (SAID["comment"] if names is None else SAID["statement"] if not names
                else Text(" ".join(names), " ".join(names)))
        notes.append(Lost(*(SAID["lost"].in_(language, where=where, line=line, error=error.in_(language),
                                              span=f"{first}-{last}" if last > first else first, what=what.in_(language))
                            for language in ("en", "ru")), functions=names[1:] if names else ()))
    return text, notes
