"""Finding the learner files of a submission: a directory, a ``.zip``, or a notebook in either.

- Learner files are found by their starter names (``module_9_reference.py``
  ...) at any depth. When a name occurs more than once the shallowest copy is
  graded (ties: the first in sorted order) and the feedback says so.
- Symbolic links are never followed or graded, in directories or in zips.
- A ``.zip`` is checked member by member before anything is extracted: no
  absolute paths, no ``..``, no links or special files, at most
  :data:`MAX_MEMBERS` members, :data:`MAX_MEMBER_BYTES` per member and
  :data:`MAX_TOTAL_BYTES` in all (counted while decompressing, not trusted
  from the header). An unsafe zip is refused as a whole, with the reason.
- A completed notebook (``*.ipynb``) stands in for a learner file that is not
  present as ``.py``: its code cells are reduced to their definitions
  (imports, functions, classes, constant assignments -- no top-level calls, so
  no experiments run at import) and that module is graded for every exercise
  function it defines.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from graders.engine.learner_text import clean, clean_text
from graders.engine.notebook_cells import CellProblem, read_cells
from graders.loader import parse

MAX_MEMBERS = 2000
MAX_MEMBER_BYTES = 20 << 20
MAX_TOTAL_BYTES = 100 << 20
MAX_FILE_BYTES = 5 << 20  # a learner .py file
SKIP_DIRS = {"__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints", "node_modules", ".venv", "venv"}


LEARNER_NAME = re.compile(r"module_\d+_[a-z]+\.py")


class UnsafeSubmission(ValueError):
    """A submission the grader refuses to open (the message says why)."""


@dataclass
class Submission:
    """A submission ready to grade: its name and, per file stem, the learner source to use."""

    name: str
    origin: Path
    sources: dict[str, str] = field(default_factory=dict)  # stem -> python source text (or bytes problem)
    raw: dict[str, bytes] = field(default_factory=dict)  # stem -> raw bytes of a .py file
    where: dict[str, str] = field(default_factory=dict)  # stem -> path inside the submission
    notes: dict[str, list[str]] = field(default_factory=dict)  # stem -> feedback notes
    problem: str | None = None  # the whole submission could not be read


def submission_name(path: Path) -> str:
    path = Path(path)
    name = path.name[:-4] if path.suffix.lower() == ".zip" else path.name
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"
    return name


# ---------------------------------------------------------------------------
# Zips
# ---------------------------------------------------------------------------
def _unsafe_member_reason(info: zipfile.ZipInfo, max_member_bytes: int | None = None) -> str | None:
    max_member_bytes = MAX_MEMBER_BYTES if max_member_bytes is None else max_member_bytes
    name = info.filename
    if "\x00" in name:
        return "a member name contains a NUL byte"
    normalised = name.replace("\\", "/")
    if normalised.startswith("/") or re.match(r"^[A-Za-z]:", normalised):
        return f"member {name!r} has an absolute path"
    if ".." in PurePosixPath(normalised).parts:
        return f"member {name!r} escapes the folder ('..')"
    mode = (info.external_attr >> 16) & 0o177777
    file_type = stat.S_IFMT(mode)
    if file_type == stat.S_IFLNK:
        return f"member {name!r} is a symbolic link"
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"member {name!r} is not a regular file"
    if info.file_size > max_member_bytes:
        return f"member {name!r} is too large ({info.file_size} bytes; the limit is {max_member_bytes})"
    return None


def read_zip(path: Path, *, keep: tuple[str, ...] | None = (".py", ".ipynb"), max_members: int | None = None,
             max_member_bytes: int | None = None, max_total_bytes: int | None = None) -> dict[str, bytes]:
    """The regular members of a safe zip whose names end in ``keep`` (None: every one) as ``{posix path:
    bytes}``; raises ``UnsafeSubmission``. Every member counts towards the caps (None: MAX_MEMBERS,
    MAX_MEMBER_BYTES, MAX_TOTAL_BYTES), kept or not."""
    max_members = MAX_MEMBERS if max_members is None else max_members
    max_member_bytes = MAX_MEMBER_BYTES if max_member_bytes is None else max_member_bytes
    max_total_bytes = MAX_TOTAL_BYTES if max_total_bytes is None else max_total_bytes
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:  # ValueError: a non-UTF-8 "UTF-8" name
        raise UnsafeSubmission(f"{Path(path).name} is not a readable zip file ({error})") from error
    with archive:
        members = archive.infolist()
        if len(members) > max_members:
            raise UnsafeSubmission(f"the zip has {len(members)} members; the limit is {max_members}")
        for info in members:
            reason = _unsafe_member_reason(info, max_member_bytes)
            if reason:
                raise UnsafeSubmission(f"unsafe zip: {reason}")
        files: dict[str, bytes] = {}
        total = 0
        for info in members:
            if info.is_dir():
                continue
            parts = PurePosixPath(info.filename.replace("\\", "/")).parts
            if any(part in SKIP_DIRS for part in parts):
                continue
            wanted = keep is None or parts[-1].endswith(keep)
            data = bytearray()
            try:
                with archive.open(info) as handle:
                    while chunk := handle.read(1 << 16):
                        data += chunk
                        total += len(chunk)
                        if len(data) > max_member_bytes:
                            raise UnsafeSubmission(f"unsafe zip: member {info.filename!r} is larger than "
                                                   f"{max_member_bytes} bytes once decompressed")
                        if total > max_total_bytes:
                            raise UnsafeSubmission(f"unsafe zip: more than {max_total_bytes} bytes once decompressed")
                        if not wanted:
                            data.clear()  # counted, not kept
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as error:
                raise UnsafeSubmission(f"the zip member {info.filename!r} cannot be read ({error})") from error
            if wanted:
                files["/".join(parts)] = bytes(data)
        return files


def read_directory(root: Path) -> dict[str, bytes]:
    """``{posix path: bytes}`` of the ``.py``/``.ipynb`` files under ``root`` (links never followed)."""
    files: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names):
            if not name.endswith((".py", ".ipynb")):
                continue
            full = os.path.join(folder, name)
            info = os.lstat(full)
            if not stat.S_ISREG(info.st_mode):
                continue  # symbolic links and special files are ignored
            relative = Path(full).relative_to(root).as_posix()
            with open(full, "rb") as handle:
                files[relative] = handle.read(MAX_MEMBER_BYTES + 1)  # size checked by learner_source
    return files


# ---------------------------------------------------------------------------
# Notebooks
# ---------------------------------------------------------------------------
_KIT_IMPORT = re.compile(r"^module_\d+_\w+$")


def notebook_definitions(data: bytes) -> str:
    """The definitions of a notebook's code cells as one module source (raises ValueError); see :func:`read_notebook`."""
    return read_notebook(data)[0]


def read_notebook(data: bytes) -> tuple[str, list[CellProblem]]:
    """(the definitions of a notebook's code cells as one module source, the cells that could not be read).

    The cells are read as Jupyter runs them (:mod:`graders.engine.notebook_cells`): IPython's magics and
    shell lines made inert, ``from __future__`` imports at the top of the module, each cell compiled
    on its own. A cell that cannot be read as Python -- a syntax error, a NUL or a lone surrogate in it,
    an expression too deep for the parser or for ``ast.unparse`` (RecursionError, MemoryError) -- is left
    out, as Jupyter fails it alone, and named in the problems; a notebook whose JSON is too deep is not a
    readable notebook (ValueError).
    """
    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, RecursionError, MemoryError) as error:
        raise ValueError(f"not a readable notebook ({type(error).__name__})") from error
    if not isinstance(cells, list):
        raise ValueError("not a readable notebook (cells is not a list)")
    pieces, problems = read_cells(cells, _is_definition)
    return "\n\n\n".join(pieces) + "\n", problems


def cell_note(notebook: str, problem: CellProblem, *, graded: bool) -> str:
    """The feedback note (English; :func:`graders.engine.texts.translated` reads it) on a cell left out."""
    from graders.engine.texts import detail

    return detail("note_cell_graded" if graded else "note_cell_nothing", notebook=notebook, cell=problem.cell,
                  start=problem.start, error=problem.reason)


def is_cell_note(note: str) -> bool:
    """Whether a feedback note (in any language) is :func:`cell_note`'s."""
    from graders.course import LANGUAGES
    from graders.engine.texts import DETAILS

    return any(note.endswith(DETAILS[key].in_(language).rsplit("}; ", 1)[1]) for language in LANGUAGES
               for key in ("note_cell_graded", "note_cell_nothing"))


def _is_definition(node: ast.stmt) -> bool:
    """A statement the grader loads from a notebook: a function, a class, an import, a module constant."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        return not any(_KIT_IMPORT.match(n.split(".")[0]) for n in names)
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        return _is_constant(node)
    return False


def _is_constant(node: ast.Assign | ast.AnnAssign) -> bool:
    """A module constant: a literal value, or UPPER_CASE names (``DIGITS = tuple(...)``, ``PROFILES = {...}``).

    Other assignments (``experiment = run_toy_grpo_experiment(...)``) are the
    notebook's own runs, which grading must not repeat.
    """
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names: list[str] = []
    for target in targets:
        parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(part, ast.Name) for part in parts):
            return False  # attribute or subscript targets change other objects
        names += [part.id for part in parts]
    try:
        ast.literal_eval(node.value)
        return True
    except (ValueError, SyntaxError, TypeError):
        return all(name.lstrip("_").isupper() for name in names)


def _defined_functions(source: str) -> set[str]:
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


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
        if path.is_dir():
            files = read_directory(path)
        elif path.is_file() and path.suffix.lower() == ".zip":
            files = read_zip(path)
        elif path.is_file() and path.suffix in (".py", ".ipynb"):
            files = {path.name: path.read_bytes()}
            submission.name = submission_name(path.with_suffix(""))
        else:
            raise UnsafeSubmission(f"{path} is neither a folder, a .zip, nor a learner file")
    except UnsafeSubmission as error:
        submission.problem = clean_text(str(error))
        return submission
    except OSError as error:
        submission.problem = clean_text(f"the submission could not be read ({error})")
        return submission

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
            notes.append(f"found {len(candidates)} copies of {stem}.py; graded the shallowest, {chosen} "
                         f"(ignored: {others})")
        submission.raw[stem] = files[chosen]
    notebooks = sorted((r for r in files if r.endswith(".ipynb") and "checkpoint" not in r), key=depth_key)
    for stem, functions in stems.items():
        if stem in submission.raw:
            continue
        unread: list[str] = []  # the unreadable cells of a notebook named after the stem, if none is graded
        for relative in notebooks:
            try:
                source, problems = read_notebook(files[relative])
            except ValueError:
                continue
            if _defined_functions(source) & set(functions):
                submission.sources[stem] = source
                submission.where[stem] = relative
                submission.notes.setdefault(stem, []).append(
                    f"graded the definitions in notebook {relative} (no {stem}.py in the submission)")
                submission.notes[stem] += [cell_note(relative, problem, graded=True) for problem in problems]
                break
            if relative.rsplit("/", 1)[-1] == f"{stem}.ipynb":
                unread += [cell_note(relative, problem, graded=False) for problem in problems]
        if stem not in submission.sources and unread:
            submission.notes.setdefault(stem, []).extend(unread)
    for stem in stems:
        if stem not in submission.raw and stem not in submission.sources:
            near = _near_misses(stem, files)
            if near:
                submission.notes.setdefault(stem, []).append(
                    f"found {', '.join(near)}: is that your {stem}.py? Learner files are graded by "
                    f"their exact starter names; rename it to {stem}.py and resubmit")
    # file and member names are the learner's text (any byte but / on Linux; a lone surrogate from os.walk
    # when a name is not UTF-8): made safe for every report here, once
    submission.where, submission.notes = clean(submission.where), clean(submission.notes)
    return submission


def _near_misses(stem: str, files: dict[str, bytes]) -> list[str]:
    """Python files whose names look like a misspelt ``<stem>.py`` (``Module9_reference.py``, ...)."""
    def key(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", name.lower())

    wanted = key(stem)
    names = {relative: relative.rsplit("/", 1)[-1] for relative in files if relative.lower().endswith(".py")}
    # another learner file by its exact name (module_8_reference.py for module_9_reference) is no misspelling
    names = {relative: name for relative, name in names.items() if not LEARNER_NAME.fullmatch(name)}
    by_key = {relative: key(name[:-3]) for relative, name in names.items()}
    close = set(difflib.get_close_matches(wanted, set(by_key.values()), n=3, cutoff=0.85))
    return sorted(relative for relative, k in by_key.items() if k in close)[:3]


def learner_source(submission: Submission, stem: str) -> tuple[str | None, str | None]:
    """``(source, None)`` for a usable learner file, or ``(None, problem)``; ``(None, None)`` when absent."""
    if stem in submission.sources:
        return submission.sources[stem], None
    if stem not in submission.raw:
        return None, None
    data = submission.raw[stem]
    where = submission.where.get(stem, f"{stem}.py")
    if len(data) > MAX_FILE_BYTES:
        return None, f"{where} is larger than {MAX_FILE_BYTES} bytes and was not graded"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return None, (f"{where} is not valid UTF-8 (byte {error.start}: {data[error.start:error.start + 1]!r}); "
                      "save it as UTF-8 and resubmit")
    try:
        compile(text, f"{stem}.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        code = f": {error.text.strip()[:120]}" if error.text and error.text.strip() else ""
        return None, clean_text(f"{where} has a syntax error at line {error.lineno} ({error.msg}){code}")
    except ValueError as error:  # e.g. NUL bytes
        return None, clean_text(f"{where} cannot be compiled: {error}")
    except (RecursionError, MemoryError) as error:  # a 200,000-term sum, blocks in blocks: the learner's fault
        return None, f"{where} is too deeply nested or too long to be compiled ({type(error).__name__}); shorten " \
                     "its longest expression or its deepest nesting and resubmit"
    return text, None
