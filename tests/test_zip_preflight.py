"""A zip is checked from its end records before ``zipfile`` reads it (issue 51, point 4), on every path that opens one.

``zipfile.ZipFile`` parses its whole central directory into one object per entry before any cap can count
them: a directory of 1.6 M entries cost the grading process +742 MiB and +22 s for one 86 MB upload. So
:func:`graders.engine.intake.reader.check_zip_ends` reads the end record (and the ZIP64 one) itself and refuses
a zip that lists more members than the caller's cap, a directory larger than that count may take, a directory
that does not fit before its end records, or one that does not hold the members its end record lists. The
hostile zips here are made cheaply: a small valid zip with a forged end record, a real zip of 5,000 empty
members, and a directory whose count lies. Each is refused on each path (the submission reader, module
inference, LMS detection, the torch server's guess) before ``zipfile`` is constructed, beside a correct zip
read and graded in full.
"""

from __future__ import annotations

import io
import os
import struct
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.engine.intake import class_modules, reader as intake
from graders.engine.intake.reader import Caps, UnsafeSubmission, check_zip_ends
from graders.engine.intake.submission import discover
from graders.engine.judging.kit import DEFAULT_KIT
from graders.engine.outputs import lms
from graders.engine.routes import batch

STEM = "module_9_reference"
REFERENCE = DEFAULT_KIT.solution_path(STEM).read_bytes()
STEMS = {STEM: ["group_relative_advantages"], "module_9_training": ["g"]}
TRAINING = [DEFAULT_KIT.solution_path("module_9_training")]  # may_need_torch looks for its name


def _zip_bytes(members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def _correct(path: Path) -> Path:
    path.write_bytes(_zip_bytes([(f"{STEM}.py", REFERENCE)]))
    return path


def _forged(path: Path, *, count: int, size: int | None = None, zip64: bool = False) -> Path:
    """A valid small zip (the correct file and the training file's name) whose end record lists ``count``
    members and a directory of ``size`` bytes (ZIP64 records when ``zip64``, as a 1.6 M-entry zip has)."""
    data = _zip_bytes([(f"{STEM}.py", REFERENCE), ("module_9_training.py", b"")])
    at = len(data) - 22
    _, disk, start, _, _, real_size, offset, comment = struct.unpack("<4s4H2LH", data[at:])
    size = real_size if size is None else size
    if not zip64:
        return _write(path, data[:at] + struct.pack("<4s4H2LH", b"PK\x05\x06", disk, start, count, count, size,
                                                     offset, comment))
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, at, 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return _write(path, data[:at] + record + locator + end)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _many(path: Path, members: int = 5000) -> Path:
    """A real zip of ``members`` empty members (about 0.3 MB): over the 2,000-member cap."""
    return _write(path, _zip_bytes([(f"empty_{index}.txt", b"") for index in range(members)]))


def _count_lies(path: Path) -> Path:
    """5,000 real entries under an end record that lists 2,000: ``zipfile`` parses by size, so all 5,000."""
    data = _many(path).read_bytes()
    at = len(data) - 22
    fields = list(struct.unpack("<4s4H2LH", data[at:]))
    fields[3] = fields[4] = 2000
    return _write(path, data[:at] + struct.pack("<4s4H2LH", *fields))


def _fat_extras(path: Path) -> Path:
    """Ten members whose directory entries carry 6,000-byte comments: a real directory over 10 x 5,166 bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index in range(10):
            info = zipfile.ZipInfo(f"f{index}.py")
            info.comment = b"c" * 6000
            archive.writestr(info, b"")
    return _write(path, buffer.getvalue())


HOSTILE = {  # name -> (how to make it, what its refusal says)
    "forged_count": (lambda p: _forged(p, count=1_600_000, zip64=True), "the zip has 1600000 members; the limit is 2000"),
    "forged_16bit": (lambda p: _forged(p, count=65535), "the zip has 65535 members; the limit is 2000"),
    "forged_size": (lambda p: _forged(p, count=2, size=90_000_000), "passes byte"),
    "five_thousand": (_many, "the zip has 5000 members; the limit is 2000"),
    "count_lies": (_count_lies, "its directory lacks the 2000 members listed"),
    "fat_extras": (_fat_extras, "over the 51660 that 10 members may take"),
    "not_a_zip": (lambda p: _write(p, b"PK\x03\x04 not a zip at all"), "no end-of-directory record"),
}


@pytest.fixture
def constructed(monkeypatch):
    """The zips ``zipfile.ZipFile`` was constructed on (by name): a refused zip must never be among them."""
    made: list[str] = []
    real = zipfile.ZipFile.__init__

    def spy(self, file, mode="r", *args, **kwargs):
        if mode == "r":  # read, not the test's own writing
            name = getattr(file, "name", file)  # a handle of open_zip's descriptor: its name is the descriptor
            made.append(os.readlink(f"/proc/self/fd/{name}") if isinstance(name, int) else os.fspath(name))
        return real(self, file, mode, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", spy)
    return made


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_each_hostile_zip_is_refused_before_zipfile_on_every_path(tmp_path, constructed, kind):
    make, words = HOSTILE[kind]
    path = make(tmp_path / f"{kind}.zip")
    tracemalloc.start()
    try:
        found = discover(path, STEMS)  # the submission's reader: that submission's own clear error
        assert class_modules.file_names(path) == []  # module inference: no names, and no crash
        assert not batch.may_need_torch([path], TRAINING)  # the reader refuses it: no torch for it
        assert constructed == [], constructed  # refused before zipfile.ZipFile was ever constructed
        assert not lms.looks_like_download(path)  # LMS detection: not a download (then graded, and refused)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.problem and words in found.problem and "\n" not in found.problem, found.problem
    assert not found.raw and not found.sources
    # LMS detection checks against a whole class's cap (50,000 members): 5,000 empty members are read there
    assert constructed == ([str(path)] if kind == "five_thousand" else []), constructed
    assert peak < 4 << 20, peak  # what the checks allocated: a few reads, never the directory's entries


def test_a_correct_zip_beside_them_is_read_whole_on_every_path(tmp_path, constructed):
    path = _correct(tmp_path / "correct.zip")
    found = discover(path, STEMS)
    assert found.problem is None and found.raw[STEM] == REFERENCE
    assert class_modules.file_names(path) == [f"{STEM}.py"]
    assert not lms.looks_like_download(path)
    assert len(constructed) >= 3 and {Path(made).name for made in constructed} == {"correct.zip"}  # after the check
    training = _write(tmp_path / "training.zip", _zip_bytes([("hw/module_9_training.py", b"x = 1\n")]))
    assert batch.may_need_torch([training], TRAINING)


def test_a_download_over_the_submission_cap_is_still_detected_within_its_own(tmp_path):
    """LMS detection checks a download against the download's cap (50,000), not a submission's (2,000)."""
    names = [(f"Ann Lee {index}_{1000 + index}_assignsubmission_file_module_9_reference.py", b"")
             for index in range(2500)]
    path = _write(tmp_path / "download.zip", _zip_bytes(names))
    assert class_modules.file_names(path) == []  # as a submission, too many members
    assert lms.looks_like_download(path)


def test_the_control_zipfile_alone_parses_every_entry_a_lying_count_hides(tmp_path):
    """Without the check: ``zipfile`` reads all 5,000 entries of a directory whose end record lists 2,000."""
    path = _count_lies(tmp_path / "lies.zip")
    with zipfile.ZipFile(path) as archive:
        assert len(archive.infolist()) == 5000
    with open(path, "rb") as handle, pytest.raises(UnsafeSubmission, match="lacks the 2000"):
        check_zip_ends(handle.fileno(), path.name)


def test_the_check_costs_reads_not_entries(tmp_path):
    """A 1.6 M-entry end record costs the check one tail read: no time or memory that grows with the count."""
    path = _forged(tmp_path / "big.zip", count=1_600_000, zip64=True)
    with open(path, "rb") as handle:
        start = time.process_time()
        for _ in range(100):
            with pytest.raises(UnsafeSubmission):
                check_zip_ends(handle.fileno(), path.name)
        assert (time.process_time() - start) / 100 < 0.005


def test_a_zip64_zip_within_the_caps_passes_and_zipfile_agrees(tmp_path):
    path = _forged(tmp_path / "z64.zip", count=2, zip64=True)  # the real count, in ZIP64 records
    with open(path, "rb") as handle:
        assert check_zip_ends(handle.fileno(), path.name) == 2
    with zipfile.ZipFile(path) as archive:
        assert len(archive.infolist()) == 2


@pytest.mark.slow  # one engine batch, end to end (about 5 s); each refusal has its own fast test above
def test_a_batch_grades_the_correct_zip_in_full_beside_every_hostile_zip(tmp_path):
    from graders.engine.routes.batch import grade_paths
    from graders.engine.routes.grading import GradeOptions

    root = tmp_path / "batch"
    root.mkdir()
    paths = [_correct(root / "correct.zip")] + [make(root / f"{kind}.zip") for kind, (make, _) in HOSTILE.items()]
    result = grade_paths(paths, root / "out", GradeOptions(modules=("9",), timeout=5.0, memory_mb=512,
                                                           load_timeout=8.0), jobs=2, progress=False)
    reports = {report["submission"]: report for report in result.reports}
    mine = [e for e in reports["correct"]["exercises"] if e["id"].startswith(f"{STEM}.")]
    assert mine and all(e["points"] == e["max_points"] for e in mine), mine
    for kind, (_, words) in HOSTILE.items():
        assert reports[kind]["score"] == 0
        assert all(words in e["feedback"] for e in reports[kind]["exercises"]), (kind, reports[kind]["exercises"][0])
    assert not result.internal_errors


# ----------------------------------------------------------------------------- fuzz: random tails
CAPS = Caps(files=20, path_chars=64)
BASE = _zip_bytes([(f"{STEM}.py", b"x = 1\n"), ("a/b.txt", b"hello"), ("c/", b"")])


def _tail_variants(draw) -> bytes:
    """The small zip with its last bytes replaced, an end record with random fields, or random bytes."""
    how = draw(st.sampled_from(["cut", "fields", "random", "zip64"]))
    if how == "random":
        return draw(st.binary(max_size=300))
    if how == "cut":
        keep = draw(st.integers(0, len(BASE)))
        return BASE[:keep] + draw(st.binary(max_size=60))
    numbers = st.integers(0, 0xFFFF)
    if how == "fields":
        end = struct.pack("<4s4H2LH", b"PK\x05\x06", draw(numbers), draw(numbers), draw(numbers), draw(numbers),
                          draw(st.integers(0, 0xFFFFFFFF)), draw(st.integers(0, 0xFFFFFFFF)), draw(numbers))
        return BASE[:draw(st.integers(0, len(BASE)))] + end + draw(st.binary(max_size=40))
    big = st.integers(0, (1 << 64) - 1)
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, draw(big), draw(big), draw(big), draw(big))
    locator = struct.pack("<4sLQL", b"PK\x06\x07", draw(st.integers(0, 2)), draw(big), draw(st.integers(0, 3)))
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return BASE[:draw(st.integers(0, len(BASE)))] + record + locator + end


def _fuzz_one(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.zip"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        try:
            count = check_zip_ends(handle.fileno(), path.name, CAPS)
        except UnsafeSubmission as refusal:
            assert "\n" not in str(refusal)
            return
        assert 0 <= count <= CAPS.files
        try:  # what passed the check: zipfile parses exactly the members it counted, or refuses the zip itself
            with zipfile.ZipFile(handle) as archive:
                assert len(archive.infolist()) == count
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, struct.error):
            pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_the_end_records_give_a_count_or_a_refusal(tmp_path, data):
    _fuzz_one(tmp_path, _tail_variants(data.draw))


def test_the_fuzz_would_see_a_raise(tmp_path, monkeypatch):
    """The control: a check that raises anything but its refusal fails the fuzz's property."""
    monkeypatch.setattr(intake, "_not_readable", lambda *args, **kwargs: KeyError("boom"))
    with pytest.raises(KeyError):
        _fuzz_one(tmp_path, b"not a zip")


@pytest.mark.parametrize("key, fields", [("no_end", {}), ("large", {"size": 9, "limit": 8, "count": 1}),
                                         ("outside", {"size": 9, "offset": 3, "end": 10}), ("entries", {"count": 5})])
def test_each_zip_refusal_is_said_in_russian_whole(key, fields):
    from graders.engine.values.texts import DETAILS, translated

    said = intake._not_readable("x.zip", key, **fields).args[0]  # as the preflight raises it: data, never English
    assert said == DETAILS["zip_not_readable"].in_("en", name="'x.zip'", reason=DETAILS[f"zip_{key}"].in_("en", **fields))
    russian = translated(said, "ru")
    assert russian == DETAILS["zip_not_readable"].in_("ru", name="'x.zip'", reason=DETAILS[f"zip_{key}"].in_("ru", **fields))
    assert not any("a" <= char <= "z" for char in russian.replace("zip", "").replace("x.", "")), russian


@pytest.mark.parametrize("key, fields", [("cpu", {"seconds": "1.27"}), ("wall", {"seconds": 30}),
                                         ("memory", {"mib": 2048}), ("stopped", {"code": -9}), ("silent", {})])
def test_each_notebook_refusal_is_said_in_russian_whole(key, fields):
    from graders.engine.intake import notebook_reader
    from graders.engine.values.texts import translated

    said = notebook_reader._unreadable(key, **fields)
    assert said == notebook_reader.UNREADABLE.in_("en", reason=notebook_reader.WHY[key].in_("en", **fields))
    assert translated(said, "ru") == notebook_reader.UNREADABLE.in_(
        "ru", reason=notebook_reader.WHY[key].in_("ru", **fields))
