"""Finding the learner files of a submission: a directory, a ``.zip``, or a notebook in either.

- Learner files are found by their starter names (``module_9_reference.py``
  ...) at any depth. When a name occurs more than once the shallowest copy is
  graded (ties: the first in sorted order) and the feedback says so.
- Every file is read by the one reader, :mod:`graders.engine.intake.reader`: a
  symbolic link or a special file, in a folder or a zip, refuses the whole
  submission with its name; a ``.zip`` is checked member by member before
  anything is extracted (no absolute paths, no ``..``); files, bytes per file,
  bytes in all, depth and path length are capped while reading
  (:data:`graders.engine.intake.reader.SUBMISSION_CAPS`). An unsafe submission is
  refused as a whole, with the reason.
- A completed notebook (``*.ipynb``) stands in for a learner file that is not
  present as ``.py``: its code cells are reduced to their definitions
  (imports, functions, classes, constant assignments -- no top-level calls, so
  no experiments run at import) and that module is graded for every exercise
  function it defines. Notebooks are reduced once per submission, in one
  budgeted child process (:mod:`graders.engine.intake.notebook_reader`).
"""

from __future__ import annotations

import codecs
import difflib
import re
from pathlib import Path

from graders.engine.values.texts import detail
from graders.text import Particular, Text
from graders.engine.intake import reader as intake
from graders.engine.intake import source_parts as parts
from graders.engine.intake.reader import SKIP_DIRS, SUBMISSION_CAPS, UnsafeSubmission  # noqa: F401  (read here)
from graders.engine.values.learner_text import clean, clean_text
from graders.engine.values.protocol import Submission
from graders.engine.intake.notebook_cells import (CellProblem, _defined_functions, notebook_definitions,  # noqa: F401
                                           read_notebook)

MAX_MEMBERS = SUBMISSION_CAPS.files
MAX_MEMBER_BYTES = SUBMISSION_CAPS.file_bytes
MAX_TOTAL_BYTES = SUBMISSION_CAPS.total_bytes
MAX_FILE_BYTES = 5 << 20  # a learner .py file


# Cyrillic letters as a reader of Latin would say them (a folder name stays readable: ivan_petrov-3f2a9c1b)
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ",
                     ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r", "s",
                      "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "i", "i", "e", "g"]))
NAME_BYTES = 200  # a folder name kept as given, at most (file systems allow 255 bytes; unique_names' NAME_LIMIT)
LATIN_BYTES = 80  # the Latin spelling before a digest or an LMS id
DIGEST_CHARS = 8
ID_CHARS = 40  # an LMS id in a folder name: Moodle's and Canvas's ids are digits, far fewer than this
# beside a student staged from an LMS download (graders.engine.outputs.lms.stage): the LMS id and the name as the
# LMS gives it; a staged submission is <staging>/<id>/submission (a folder) or <id>/submission.zip
STAGED_FILE = ".lms.json"
STAGED_NAMES = ("submission", "submission.zip")


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def capped(name: str, limit: int) -> str:
    """``name`` as a file name of at most ``limit`` UTF-8 bytes: as it is when it fits; else its head (whole
    characters), ``-``, a digest of the whole name, and its extension (kept when short): two names that differ
    anywhere stay two names. Bytes, not characters: 130 Cyrillic letters are 260 bytes."""
    size = len(name.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return name
    stem, dot, suffix = name.rpartition(".")
    suffix = f".{suffix}" if dot and stem and len(suffix.encode("utf-8", "surrogatepass")) < 16 else ""
    room = limit - len(suffix.encode("utf-8", "surrogatepass")) - 1 - DIGEST_CHARS
    head = name[:len(name) - len(suffix)].encode("utf-8", "surrogatepass")[:max(room, 0)]
    head = head.decode("utf-8", "ignore")  # a character cut in two is dropped whole
    return f"{head}-{_digest(name)}{suffix}"


def _lms_id_part(lms_id: str) -> str:
    """An LMS id as the end of a folder name: its digits, or (an id no LMS writes) ``x`` and a digest."""
    if lms_id.isascii() and lms_id.isdigit() and len(lms_id) <= ID_CHARS:
        return lms_id
    return f"x{_digest(lms_id)}"


def folder_name(given: str, lms_id: str | None = None) -> str:
    """The output folder name for the name ``given``: ASCII letters, digits, ``. _ -`` only, at most
    :data:`NAME_BYTES` bytes.

    - A student of an LMS download (``lms_id``): the name spelt in Latin letters, ``-`` and the LMS's id
      (``ivan_petrov-1201``): the id keeps two students apart, whatever their names.
    - Else a name that is already so stays as it is (unless it ends as a digest does, ``-`` and 8 hex digits:
      a name could copy another's folder name); any other is spelt in Latin letters (Cyrillic transliterated,
      accents dropped), cut to :data:`LATIN_BYTES`, and gets a digest of the name as given
      (``ivan_petrov-3f2a9c1b``): unique for every different name (NFC and NFD spellings, case), the same on
      every run and every shard.
    """
    import unicodedata

    latin = "".join(_CYRILLIC.get(char.lower(), char) if char.lower() in _CYRILLIC else char for char in given)
    latin = unicodedata.normalize("NFKD", latin).encode("ascii", "ignore").decode("ascii")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", latin).strip("._") or "submission"
    if lms_id is not None:
        return f"{name[:LATIN_BYTES].rstrip('._') or 'submission'}-{_lms_id_part(lms_id)}"
    if name == given and len(name) <= NAME_BYTES and not _ends_like_digest(name):
        return name
    return f"{name[:LATIN_BYTES]}-{_digest(given)}"


def _ends_like_digest(name: str) -> bool:
    tail = name[-DIGEST_CHARS - 1:]
    return len(tail) == DIGEST_CHARS + 1 and tail[0] == "-" and all(c in "0123456789abcdef" for c in tail[1:])


def staged(path: Path) -> dict | None:
    """The record of a student staged from an LMS download (:func:`graders.engine.outputs.lms.stage` writes
    ``<id>/submission`` or ``<id>/submission.zip`` beside ``<id>/.lms.json``): ``{"id": the LMS's own id,
    "name": the name as the LMS gives it, "problem": why their files could not all be written, if so}``;
    None for any other submission."""
    import json

    path = Path(path)
    if path.name not in STAGED_NAMES:
        return None
    try:
        record = json.loads(intake.read_file(path.parent / STAGED_FILE, 1 << 16).decode("utf-8"))
    except (UnsafeSubmission, OSError, ValueError):
        return None
    if not (isinstance(record, dict) and record.get("id") == path.parent.name
            and isinstance(record.get("name"), str)):
        return None
    return record


def lms_id(path: Path) -> str | None:
    """The LMS's own id of a student staged from an LMS download (:func:`staged`), else None: what their
    report, ``grades.csv`` and the LMS export key their grade by."""
    record = staged(path)
    return record["id"] if record else None


def staged_problem(path: Path) -> Particular | None:
    """Why the files of a student staged from an LMS download could not all be written, else None: that
    student's error (their report says it, ``submission_unreadable`` with the system's reason), never the batch's."""
    record = staged(path)
    problem = record.get("problem") if record else None
    return detail("submission_unreadable", error=clean_text(problem)) if isinstance(problem, str) and problem else None


def display_name(path: Path) -> str:
    """A submission's name as given: the name the LMS gives a student staged from its download; else its folder
    or file name (``.zip`` dropped), any Unicode, exactly as the file system holds it (two spellings of one name,
    NFC and NFD, stay two names); what a person reads in every output. Control characters are made visible by
    the outputs' cleaner."""
    path = Path(path)
    record = staged(path)
    if record is not None:
        return record["name"] or "submission"
    return (path.name[:-4] if path.suffix.lower() == ".zip" else path.name) or "submission"


def submission_name(path: Path) -> str:
    """The submission's folder name in the outputs (:func:`folder_name` of its :func:`display_name`, with its LMS
    id when it was staged from an LMS download)."""
    return folder_name(display_name(path), lms_id(path))


def read_zip(path: Path, *, keep: tuple[str, ...] | None = (".py", ".ipynb"), max_members: int | None = None,
             max_member_bytes: int | None = None, max_total_bytes: int | None = None) -> dict[str, bytes]:
    """:func:`graders.engine.intake.reader.read_zip` with the submission's caps, any of them changed."""
    changes = {key: value for key, value in (("files", max_members), ("file_bytes", max_member_bytes),
                                             ("total_bytes", max_total_bytes)) if value is not None}
    return intake.read_zip(path, caps().but(**changes), keep)


def read_directory(root: Path) -> dict[str, bytes]:
    """``{posix path: bytes}`` of the ``.py``/``.ipynb`` files under ``root`` (:func:`graders.engine.intake.reader.read_tree`)."""
    return intake.read_tree(root, caps())


def caps() -> intake.Caps:
    """The submission's caps: :data:`graders.engine.intake.reader.SUBMISSION_CAPS` with this module's numbers."""
    return SUBMISSION_CAPS.but(files=MAX_MEMBERS, file_bytes=MAX_MEMBER_BYTES, total_bytes=MAX_TOTAL_BYTES)


# ---------------------------------------------------------------------------
# Notebooks
# ---------------------------------------------------------------------------
def cell_note(notebook: str, problem: CellProblem, *, graded: bool) -> str:
    """The feedback note (English; :func:`graders.engine.values.texts.translated` reads it) on a cell left out."""
    return detail("note_cell_graded" if graded else "note_cell_nothing", notebook=notebook, cell=problem.cell,
                  start=problem.start, error=problem.reason)


def is_cell_note(note: str) -> bool:
    """Whether a feedback note (in any language) is :func:`cell_note`'s."""
    from graders.course import LANGUAGES
    from graders.engine.values.texts import DETAILS

    return any(note.endswith(DETAILS[key].in_(language).rsplit("}; ", 1)[1]) for language in LANGUAGES
               for key in ("note_cell_graded", "note_cell_nothing"))


# ---------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------
def discover(path: Path, stems: dict[str, list[str]]) -> Submission:
    """Read submission ``path`` and pick one learner source per stem.

    ``stems`` maps each learner file stem to its exercise function names
    (used to match notebooks). Never raises for a bad submission: problems
    are recorded in ``Submission.problem`` or per-file ``notes``.
    """
    path = Path(path)
    submission = Submission(submission_name(path), path)
    try:
        files = intake.read_submission(path, caps())
    except UnsafeSubmission as error:
        said = error.args[0] if error.args else ""
        submission.problem = said if isinstance(said, Text) else clean_text(str(error))
        return submission
    except OSError as error:
        submission.problem = detail("submission_unreadable", error=clean_text(str(error)))
        return submission
    if path.suffix in (".py", ".ipynb") and not path.is_dir():
        submission.name = submission_name(path.with_suffix(""))

    def depth_key(relative: str):
        return (relative.count("/"), relative)

    for stem in stems:
        candidates = sorted((r for r in files if r.rsplit("/", 1)[-1] == f"{stem}.py"), key=depth_key)
        if not candidates:
            continue
        chosen = candidates[0]
        submission.where[stem] = chosen
        notes = submission.notes.setdefault(stem, [])
        if len(candidates) > 1:
            others = ", ".join(candidates[1:4]) + (" ..." if len(candidates) > 4 else "")
            notes.append(detail("note_copies", count=len(candidates), stem=stem, chosen=clean_text(chosen),
                                others=clean_text(others)))
        submission.raw[stem] = files[chosen]
    _graded_notebooks(submission, files, stems, depth_key)
    for stem in stems:
        if stem not in submission.raw and stem not in submission.sources:
            near = _near_misses(stem, files, stems[stem])
            if near:
                submission.notes.setdefault(stem, []).append(
                    detail("note_near_miss", files=clean_text(", ".join(near)), stem=stem))
    _resubmitted(submission, staged(path), stems)
    # file and member names are the learner's text (any byte but / on Linux; a lone surrogate from os.walk
    # when a name is not UTF-8): made safe for every report here, once
    submission.where, submission.notes = clean(submission.where), clean(submission.notes)
    return submission


def _resubmitted(submission: Submission, record: dict | None, stems: dict[str, list[str]]) -> None:
    """A note for each file a student staged from an LMS download handed in more than once (``.lms.json``'s
    ``resubmitted``, :func:`graders.engine.outputs.lms.stage`): which one was graded, which were set aside; on
    the file's stem, or on every stem for another file (a zip)."""
    for fields in (record or {}).get("resubmitted") or []:
        if not (isinstance(fields, dict) and all(isinstance(fields.get(key), (str, int))
                                                 for key in ("file", "count", "graded", "aside"))):
            continue
        stem = str(fields["file"]).rpartition(".")[0]
        note = detail("note_resubmitted", **{key: fields[key] for key in ("file", "count", "graded", "aside")})
        for each in [stem] if stem in stems else list(stems):
            submission.notes.setdefault(each, []).append(note)


def _graded_notebooks(submission: Submission, files: dict[str, bytes], stems: dict[str, list[str]],
                      depth_key) -> None:
    """For each stem with no ``.py``: the first notebook (shallowest) that defines one of its functions.

    Every notebook is reduced once for all stems, in one budgeted child process
    (:func:`graders.engine.intake.notebook_reader.reduce_notebooks`), and only when some stem needs one.
    """
    from graders.engine.intake.notebook_reader import reduce_notebooks

    notebooks = sorted((r for r in files if r.endswith(".ipynb") and "checkpoint" not in r), key=depth_key)
    missing = [stem for stem in stems if stem not in submission.raw]
    if not notebooks or not missing:
        return
    reduced = reduce_notebooks({relative: files[relative] for relative in notebooks})
    for stem in missing:
        unread: list[str] = []  # the unreadable cells of a notebook named after the stem, if none is graded
        for relative in notebooks:
            found = reduced[relative]
            if isinstance(found, str):
                continue
            if found.functions & set(stems[stem]):
                submission.sources[stem] = found.source
                submission.where[stem] = relative
                submission.notes.setdefault(stem, []).append(
                    detail("note_notebook", notebook=clean_text(relative), stem=stem))
                submission.notes[stem] += [cell_note(relative, problem, graded=True) for problem in found.problems]
                break
            if relative.rsplit("/", 1)[-1] == f"{stem}.ipynb":
                unread += [cell_note(relative, problem, graded=False) for problem in found.problems]
        if stem not in submission.sources and unread:
            submission.notes.setdefault(stem, []).extend(unread)


def is_learner_name(name: str) -> bool:
    """Whether ``name`` is a learner file's name, ``module_<digits>_<a-z letters>.py`` (literal operations)."""
    if not (name.startswith("module_") and name.endswith(".py")):
        return False
    number, _, word = name[len("module_"):-len(".py")].partition("_")
    return number.isascii() and number.isdigit() and word.isascii() and word.isalpha() and word.islower()


def _near_misses(stem: str, files: dict[str, bytes], functions=()) -> list[str]:
    """Python files whose names look like a misspelt ``<stem>.py`` (``Module9_reference.py``, ...), or that define
    one of its exercise ``functions`` (``module9.py`` with ``def grpo_loss(``); every operation on a name is
    linear in its length (literal ones, and difflib against the short stem), on a file's bytes one search per
    function."""
    def key(name: str) -> str:
        return "".join(c for c in name.lower() if c.isascii() and c.isalnum())

    wanted = key(stem)
    names = {relative: relative.rsplit("/", 1)[-1] for relative in files if relative.lower().endswith(".py")}
    # another learner file by its exact name (module_8_reference.py for module_9_reference) is no misspelling
    names = {relative: name for relative, name in names.items() if not is_learner_name(name)}
    by_key = {relative: key(name[:-3]) for relative, name in names.items()}
    close = set(difflib.get_close_matches(wanted, set(by_key.values()), n=3, cutoff=0.85))
    # an LMS's prefix (alice_1234_module_9_reference.py, Full Name_12_assignsubmission_file_module_9_...)
    close |= {k for k in by_key.values() if k.endswith(wanted)}
    marks = [f"def {function}(".encode("ascii") for function in functions if function.isascii()]
    defining = {relative for relative in names if any(mark in files[relative] for mark in marks)}
    return sorted(relative for relative, k in by_key.items() if k in close or relative in defining)[:3]


def learner_source(submission: Submission, stem: str) -> tuple[str | None, str | None]:
    """``(source, None)`` for a usable learner file, or ``(None, problem)``; ``(None, None)`` when absent."""
    if stem in submission.sources:
        return submission.sources[stem], None
    if stem not in submission.raw:
        return None, None
    data = submission.raw[stem]
    where = submission.where.get(stem, f"{stem}.py")
    if len(data) > MAX_FILE_BYTES:
        return None, detail("file_too_large", where=clean_text(where), limit=MAX_FILE_BYTES)
    if not data.strip():
        return None, parts.both("empty", where=clean_text(where), size=len(data))
    text, problem = _whole(data, where, stem)
    if problem is None:
        return text, None
    encoding = parts.declared(data) or "utf-8"
    encoding = "utf-8" if encoding in ("utf8", "utf_8", "utf-8-sig") else encoding
    try:
        codecs.lookup(encoding)
    except LookupError:
        return None, problem
    kept, lost = parts.compilable(data, where, encoding)
    if kept is None:
        return None, problem
    submission.notes.setdefault(stem, []).extend(lost)  # each part left out, in the feedback of every exercise
    return (parts.undeclared(kept) if encoding != "utf-8" else kept), None


def _whole(data: bytes, where: str, stem: str) -> tuple[str | None, str | None]:
    """The whole file as Python reads it (its PEP 263 declaration honoured, the declaration made inert in the text
    the grader writes as UTF-8), or the problem that stops Python reading it whole."""
    encoding = parts.declared(data)
    if encoding is not None and encoding not in ("utf-8", "utf8", "utf_8", "utf-8-sig"):
        try:
            codecs.lookup(encoding)
        except LookupError:
            return None, parts.both("bad_cookie", where=clean_text(where), codec=clean_text(encoding)[:40])
        try:
            text = parts.undeclared(data.decode(encoding))
        except UnicodeDecodeError:
            encoding = None
        else:
            return _compiled(text, where, stem)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return None, parts.both("whole_encoding", where=clean_text(where), position=error.start,
                                byte=repr(data[error.start:error.start + 1]), guess=parts.guess_text(data))
    return _compiled(text, where, stem)


def _compiled(text: str, where: str, stem: str) -> tuple[str | None, str | None]:
    try:
        compile(text, f"{stem}.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        code = f": {error.text.strip()[:120]}" if error.text and error.text.strip() else ""
        return None, detail("file_syntax", where=clean_text(where), line=error.lineno, message=clean_text(str(error.msg)),
                            code=clean_text(code))
    except ValueError as error:  # e.g. NUL bytes
        return None, detail("file_uncompilable", where=clean_text(where), error=clean_text(str(error)))
    except (RecursionError, MemoryError) as error:  # a 200,000-term sum, blocks in blocks: the learner's fault
        return None, detail("file_too_deep", where=clean_text(where), error=type(error).__name__)
    return text, None
