"""The one reader of every input from outside the kit: folders, zips, single files and shard folders.

Every file the grader reads from a submission (a folder, a ``.zip``, a lone ``.py``/``.ipynb``), a capstone
folder or zip, or a shard folder of ``rl4llm merge`` comes through here:

- no links and no special files: a folder is walked by descriptors (``os.scandir`` of a folder opened with
  ``O_DIRECTORY | O_NOFOLLOW``, each file opened with ``O_NOFOLLOW | O_NONBLOCK`` relative to it and checked
  with ``fstat`` to be the regular file ``lstat`` saw); a symbolic link, a named pipe, a socket or a device
  anywhere in it refuses the whole input with its name and kind (a zip: a link or special member, an absolute
  or ``..`` name, the same);
- caps counted WHILE reading (:class:`Caps`): files, bytes per file, bytes in all, folder depth and the length
  of a path name. A file that is not kept (not ``.py``/``.ipynb`` for a submission) is not read, but its
  ``st_size`` counts: a sparse 20 MiB file costs its 20 MiB of the total. A kept file is read up to its cap
  and no further, whatever its header or ``st_size`` says.

A zip is checked from its end records (:func:`check_zip_ends`) before ``zipfile``, which makes an object of
every directory entry before a cap can count them, reads it: :func:`open_zip` is the one way to open one. A
refusal is :class:`UnsafeSubmission` with the reason in one line.
"""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from graders.engine.values.learner_text import clean_text
from graders.engine.values.texts import detail
from graders.text import Particular

SKIP_DIRS = frozenset({"__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints", "node_modules", ".venv", "venv"})
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeSubmission(ValueError):
    """An input the grader refuses to open (the message says why, in one line)."""


@dataclass(frozen=True)
class Caps:
    """What one input may hold; each is counted while reading, never trusted from a header."""

    files: int = 2000  # files (zip members) in all, kept or not; folders count too when a folder is walked
    file_bytes: int = 20 << 20  # one file, once decompressed
    total_bytes: int = 100 << 20  # every file together (st_size for a file not read)
    depth: int = 32  # folders inside one another
    path_chars: int = 1024  # characters of a path name inside the input

    def but(self, **changes) -> Caps:
        """These caps with ``changes``."""
        return replace(self, **changes)


SUBMISSION_CAPS = Caps()


def kind(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a symbolic link", "a named pipe", ...)."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
                        (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "a device"


def shown(name: str, limit: int = 120) -> str:
    """A learner's name for a message: quoted and escaped (no control characters), cut to ``limit``."""
    text = ascii(name)
    return text if len(text) <= limit else text[:limit] + "...'"


def _not_a(mode: int, wanted: str) -> UnsafeSubmission:
    link = " (links are never followed)" if stat.S_ISLNK(mode) else ""
    return UnsafeSubmission(f"is {kind(mode)}, not {wanted}{link}")


def lstat_in(name, dir_fd: int | None) -> os.stat_result:
    """``name``'s own status (a link's, not its target's); a missing name raises FileNotFoundError."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise UnsafeSubmission(f"cannot be looked at: {error.strerror}") from None


def _open_as(name, dir_fd: int | None, flags: int, is_kind, kind: str, verb: str) -> tuple[int, os.stat_result]:
    """``name`` (in ``dir_fd``) opened with ``flags`` when ``lstat`` says it is ``kind``; (descriptor, that stat)."""
    before = lstat_in(name, dir_fd)
    if not is_kind(before.st_mode):
        raise _not_a(before.st_mode, kind)
    try:
        return os.open(name, flags, dir_fd=dir_fd), before
    except OSError as error:
        raise UnsafeSubmission(f"cannot be {verb}: {error.strerror}") from None


def open_folder(name, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``name`` (in ``dir_fd``), which must be a folder itself, not a link to one."""
    fd, before = _open_as(name, dir_fd, _FOLDER_FLAGS, stat.S_ISDIR, "a folder", "opened")
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise UnsafeSubmission("changed while it was read")
    return fd


def read_file_in(dir_fd: int | None, name, limit: int, *, one_name: bool = False) -> bytes:
    """The bytes of the regular file ``name`` (in the folder ``dir_fd``), at most ``limit`` of them: opened with
    ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a named pipe put in its place cannot stall the grader), read until
    ``limit`` + 1 bytes and no further; ``one_name``: a hard link is refused too."""
    fd, before = _open_as(name, dir_fd, _FILE_FLAGS, stat.S_ISREG, "a file", "read")
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(now.st_mode):
            raise UnsafeSubmission("changed while it was read")
        if one_name and now.st_nlink != 1:  # the same file under another name, maybe outside
            raise UnsafeSubmission(f"is a hard link ({now.st_nlink} names for one file); its files have one name")
        if now.st_size > limit:
            raise UnsafeSubmission(f"is larger than the {limit} bytes the grader reads ({now.st_size} bytes)")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnsafeSubmission(f"is larger than the {limit} bytes the grader reads")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_file(path: Path, limit: int) -> bytes:
    """:func:`read_file_in` of one file named by its path (the last component never followed)."""
    try:
        return read_file_in(None, os.fspath(path), limit)
    except UnsafeSubmission as why:
        raise UnsafeSubmission(f"{Path(path).name} {why}") from None
    except OSError as error:
        raise UnsafeSubmission(f"{Path(path).name} cannot be read ({error.strerror})") from None


class _Count:
    """The running count of one input against its caps."""

    def __init__(self, caps: Caps):
        self.caps, self.files, self.entries, self.bytes = caps, 0, 0, 0

    def name(self, relative: str, depth: int) -> None:
        if len(relative) > self.caps.path_chars:
            raise UnsafeSubmission(f"a path name is longer than {self.caps.path_chars} characters: "
                                   f"{shown(relative[:60])}")
        if depth > self.caps.depth:
            raise UnsafeSubmission(f"{shown(relative)} is more than {self.caps.depth} folders deep")

    def entry(self) -> None:
        self.entries += 1
        if self.entries > self.caps.files:
            raise UnsafeSubmission(f"it holds more than {self.caps.files} files and folders")

    def file(self, relative: str, size: int) -> None:
        self.files += 1
        if self.files > self.caps.files:
            raise UnsafeSubmission(f"it holds more than {self.caps.files} files")
        if size > self.caps.file_bytes:
            raise UnsafeSubmission(f"{shown(relative)} is larger than {self.caps.file_bytes} bytes ({size} bytes)")
        self.more(size)

    def more(self, size: int) -> None:
        self.bytes += size
        if self.bytes > self.caps.total_bytes:
            raise UnsafeSubmission(f"it holds more than {self.caps.total_bytes} bytes")


def read_tree(root: Path, caps: Caps = SUBMISSION_CAPS, keep: tuple[str, ...] | None = (".py", ".ipynb"),
              skip: frozenset = SKIP_DIRS) -> dict[str, bytes]:
    """``{posix path: bytes}`` of the regular files under the folder ``root`` whose names end in ``keep`` (None:
    all), walked by descriptors (module docstring); every file counts towards ``caps``, kept or not; a
    folder named in ``skip`` is not entered. Raises :class:`UnsafeSubmission`."""
    count, files = _Count(caps), {}
    try:
        top = open_folder(os.fspath(root))
    except UnsafeSubmission as why:
        raise UnsafeSubmission(f"{shown(Path(root).name)} {why}") from None
    _walk(top, "", 0, count, files, keep, skip)
    return files


def _walk(fd: int, prefix: str, depth: int, count: _Count, files: dict, keep, skip) -> None:
    """Read the folder ``fd`` (closed here) into ``files``, depth first: at most ``caps.depth`` descriptors open."""
    try:
        names = []
        with os.scandir(fd) as listing:
            for entry in listing:  # every entry counts, folders too (as a zip's members do), while listing
                count.entry()
                names.append(entry.name)
        for name in sorted(names):
            relative = prefix + name
            count.name(relative, depth)
            try:
                status = lstat_in(name, fd)
                if stat.S_ISDIR(status.st_mode):
                    if name not in skip:
                        _walk(open_folder(name, fd), relative + "/", depth + 1, count, files, keep, skip)
                    continue
                if not stat.S_ISREG(status.st_mode):
                    raise _not_a(status.st_mode, "a file")
            except FileNotFoundError:
                raise UnsafeSubmission(f"{shown(relative)} changed while it was read") from None
            except UnsafeSubmission as why:
                text = str(why)
                raise UnsafeSubmission(f"{shown(relative)} {text}" if text.startswith(("is ", "cannot ", "changed "))
                                       else text) from None
            count.file(relative, status.st_size)  # st_size counted before a byte is read: a sparse file costs it
            if keep is None or name.endswith(keep):  # read up to what is left of the caps, no further
                left = min(count.caps.file_bytes, count.caps.total_bytes - count.bytes + status.st_size)
                try:
                    data = read_file_in(fd, name, left)
                except UnsafeSubmission as why:
                    raise UnsafeSubmission(f"{shown(relative)} {why}") from None
                count.more(len(data) - status.st_size)
                files[relative] = data
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# Zips: the end records first, then zipfile
# ---------------------------------------------------------------------------
_END, _END64 = struct.Struct("<4s4H2LH"), struct.Struct("<4sQ2H2L4Q")  # the end record (22 bytes), ZIP64's (56)
ENTRY_EXTRAS = 1024  # bytes of extra field and comment a member may take in the directory, on average


def _not_readable(name: str, key: str, **fields) -> UnsafeSubmission:
    return UnsafeSubmission(detail("zip_not_readable", name=shown(name), reason=detail(f"zip_{key}", **fields)))


def check_zip_ends(fd: int, name: str, caps: Caps = SUBMISSION_CAPS) -> int:
    """The member count of the zip open as ``fd``, checked from its end records (found as ``zipfile`` finds them)
    before ``zipfile``, which parses the ``size`` bytes before them entry by entry whatever the count says, reads
    it. Refused (:class:`UnsafeSubmission`, naming ``name``): more than ``caps.files`` members; ``offset + size``
    past the end records; ``size`` bytes that are not ``count`` entries (``count`` 46-byte headers read, a name
    over ``caps.path_chars`` refused); a ``size`` over ``count`` x (46 + 4 ``caps.path_chars`` + ENTRY_EXTRAS)."""
    start = max(os.fstat(fd).st_size - (1 << 16) - _END.size, 0)  # where zipfile looks: 64 KiB of comment, the record
    tail = os.pread(fd, (1 << 16) + _END.size, start)
    if tail[-22:-18] == b"PK\x05\x06" and tail[-2:] == b"\0\0":
        at = len(tail) - _END.size  # no comment: the file's last 22 bytes
    else:
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + _END.size > len(tail):
            raise _not_readable(name, "no_end")
    *_, count, size, offset, _ = _END.unpack_from(tail, at)
    end = start + at  # where the directory stops: the end record, or the ZIP64 record before its 20-byte locator
    if end >= 76 and os.pread(fd, 4, end - 20) == b"PK\x06\x07":
        record = os.pread(fd, _END64.size, end - 76)
        if record[:4] == b"PK\x06\x06":  # (a locator naming other disks: zipfile refuses the zip itself)
            *_, count, size, offset = _END64.unpack(record)
            end -= 76
    if count > caps.files:
        raise UnsafeSubmission(detail("zip_members", count=count, limit=caps.files))
    if offset + size > end:
        raise _not_readable(name, "outside", size=size, offset=offset, end=end)
    step, walked, first = 0, 0, end - size
    while walked < count and step + 46 <= size:
        header = os.pread(fd, 46, first + step)
        if header[:4] != b"PK\x01\x02":
            break
        name_bytes, extra, comment = struct.unpack_from("<3H", header, 28)
        if name_bytes > 4 * caps.path_chars:  # more characters than the cap in any encoding: the reader's refusal
            _Count(caps).name(os.pread(fd, name_bytes, first + step + 46).decode("utf-8", "replace"), 0)
        step, walked = step + 46 + name_bytes + extra + comment, walked + 1
    if (walked, step) != (count, size):
        raise _not_readable(name, "entries", count=count)
    if size > (limit := count * (46 + 4 * caps.path_chars + ENTRY_EXTRAS)):
        raise _not_readable(name, "large", size=size, limit=limit, count=count)
    return count


@contextmanager
def open_zip(path: Path, caps: Caps = SUBMISSION_CAPS):
    """``with open_zip(path, caps) as archive``: the ``zipfile.ZipFile`` of a learner's zip, a regular file opened
    without following a link and checked by :func:`check_zip_ends` first. Raises :class:`UnsafeSubmission`."""
    name = Path(path).name
    try:
        fd = os.open(os.fspath(path), _FILE_FLAGS)
    except OSError as error:
        raise UnsafeSubmission(f"{shown(name)} cannot be read ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(mode := os.fstat(fd).st_mode):
            raise UnsafeSubmission(f"{shown(name)} {_not_a(mode, 'a zip file')}")
        check_zip_ends(fd, name, caps)
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, IndexError, KeyError, struct.error,
                NotImplementedError) as error:  # ValueError: a non-UTF-8 "UTF-8" name
            raise UnsafeSubmission(detail("zip_unreadable", name=shown(name), error=clean_text(str(error)))) from error
        with archive:
            yield archive


def _member_reason(info: zipfile.ZipInfo, count: _Count) -> Particular | str | None:
    name = info.filename
    if "\x00" in name:
        return detail("zip_nul")
    if not name.replace("\\", "/").strip("/"):
        return "a member has an empty name"  # zipfile cuts a name at its first NUL
    normalised = name.replace("\\", "/")
    count.name(normalised, normalised.count("/"))
    if normalised.startswith("/") or (len(normalised) > 1 and normalised[1] == ":" and normalised[0].isalpha()):
        return detail("zip_absolute", name=shown(name))
    if ".." in PurePosixPath(normalised).parts:
        return detail("zip_escapes", name=shown(name))
    file_type = stat.S_IFMT((info.external_attr >> 16) & 0o177777)
    if file_type == stat.S_IFLNK:
        return detail("zip_symlink", name=shown(name))
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        return detail("zip_special", name=shown(name))
    if info.file_size > count.caps.file_bytes:
        return detail("zip_member_large", name=shown(name), size=info.file_size, limit=count.caps.file_bytes)
    return None


def read_zip(path: Path, caps: Caps = SUBMISSION_CAPS, keep: tuple[str, ...] | None = (".py", ".ipynb"),
             skip: frozenset = SKIP_DIRS) -> dict[str, bytes]:
    """The regular members of a safe zip (:func:`open_zip`) whose names end in ``keep`` (None: all) as ``{posix path:
    bytes}``; every member counts towards ``caps`` (bytes counted while decompressing). Raises UnsafeSubmission."""
    with open_zip(path, caps) as archive:
        return _read_archive(archive, _Count(caps), keep, skip)


def _read_archive(archive: zipfile.ZipFile, count: _Count, keep, skip) -> dict[str, bytes]:
    caps = count.caps
    members = archive.infolist()  # at most caps.files: check_zip_ends walked them
    for info in members:
        reason = _member_reason(info, count)
        if reason:
            raise UnsafeSubmission(detail("zip_unsafe", reason=reason))
    files: dict[str, bytes] = {}
    for info in members:
        if info.is_dir():
            continue
        parts = PurePosixPath(info.filename.replace("\\", "/")).parts
        if any(part in skip for part in parts):
            continue
        wanted = keep is None or parts[-1].endswith(keep)
        count.file(info.filename, 0)  # its bytes are counted as they come
        member = bytearray()
        try:
            with archive.open(info) as handle:
                while chunk := handle.read(1 << 16):
                    member += chunk
                    if len(member) > caps.file_bytes:
                        raise UnsafeSubmission(detail("zip_unsafe", reason=detail(
                            "zip_member_inflates", name=shown(info.filename), limit=caps.file_bytes)))
                    if count.bytes + len(chunk) > caps.total_bytes:
                        raise UnsafeSubmission(detail("zip_unsafe", reason=detail("zip_total", limit=caps.total_bytes)))
                    count.more(len(chunk))
                    if not wanted:
                        member.clear()  # counted, not kept
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError, ValueError, IndexError,
                KeyError, struct.error) as error:  # what zipfile raises on a damaged member
            raise UnsafeSubmission(detail("zip_member_unreadable", name=shown(info.filename),
                                          error=clean_text(str(error)))) from error
        if wanted:
            files["/".join(parts)] = bytes(member)
    return files


def read_submission(path: Path, caps: Caps = SUBMISSION_CAPS,
                    keep: tuple[str, ...] | None = (".py", ".ipynb")) -> dict[str, bytes]:
    """A submission's files, whatever its form: a folder (:func:`read_tree`), a ``.zip`` (:func:`read_zip`) or
    one ``.py``/``.ipynb`` file; the path itself is never followed if it is a link. Raises UnsafeSubmission."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise UnsafeSubmission(f"{shown(path.name)} cannot be read ({error.strerror})") from None
    if stat.S_ISDIR(mode):
        return read_tree(path, caps, keep)
    if stat.S_ISREG(mode) and path.suffix.lower() == ".zip":
        return read_zip(path, caps, keep)
    if stat.S_ISREG(mode) and path.suffix in (".py", ".ipynb"):
        return {path.name: read_file(path, caps.file_bytes)}
    if not stat.S_ISREG(mode):
        raise UnsafeSubmission(f"{shown(path.name)} {_not_a(mode, 'a folder, a .zip or a learner file')}")
    raise UnsafeSubmission(detail("not_a_submission", path=clean_text(str(path))))
