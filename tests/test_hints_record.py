"""The hint tables' record (graders/build/hints_record.json): the build reuses the committed tables only for the
very inputs they were built from, and a fresh computation agrees with them.

Computing the tables runs every public test against solutions/ in a fresh interpreter (about 17 s); the record
names the digest of everything they are computed from and each table's SHA-256, so the build's freshness check
(tests/test_build.py) is a hash of the tree when nothing changed. The slow test below computes them anyway.
"""

from __future__ import annotations

import json
import shutil

import pytest

from graders.build import hints
from graders.build.committed import same_output
from graders.paths import REPO_ROOT, STARTER_DIR


def test_the_committed_record_names_the_current_inputs_and_tables():
    outputs = hints._recorded_outputs(hints.inputs_digest())
    assert outputs, "graders/build/hints_record.json is stale: run `rl4llm build`"
    tables = [*STARTER_DIR.glob(f"*/{hints.HINTS_NAME}"), *(REPO_ROOT / "assignments" / "source").glob(
        f"*/{hints.HINTS_NAME}")]
    assert set(outputs) == set(tables)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the folders the digest reads (and a __pycache__ and a hidden folder to ignore)."""
    root = tmp_path_factory.mktemp("tree")
    for folder in hints.INPUT_FOLDERS:
        shutil.copytree(REPO_ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    return root


@pytest.mark.parametrize("change, counts", [
    ("starter/module_09/test_module_9_reference.py", True),  # a public test
    ("solutions/module_08/module_8_reference.py", True),  # a reference
    ("graders/misconceptions/module_9_reference/group_relative_advantages.py", True),  # a catalogue entry
    ("graders/build/hints.py", True),  # the stage's own code
    ("starter/module_09/_hints.json", False),  # the table itself: its bytes are checked against the record
    ("graders/mutation/floors.json", False),  # written by `rl4llm mutate --write-floors`, a step of the recipe
    ("graders/mutation/__init__.py", True),  # the mutation package's code beside it still counts
    ("starter/module_09/__pycache__/x.cpython-311.pyc", False),
    ("starter/.pytest_cache/v/cache/lastfailed", False),
])
def test_the_digest_follows_every_input_and_nothing_else(tree, change, counts):
    before = hints.inputs_digest(tree)
    path = tree / change
    saved = path.read_bytes() if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((saved or b"") + b"\n# changed\n")
    try:
        assert (hints.inputs_digest(tree) != before) is counts
    finally:
        path.write_bytes(saved) if saved is not None else path.unlink()
    assert hints.inputs_digest(tree) == before



def test_the_records_left_out_are_exactly_the_recipes_records_in_the_input_folders():
    from graders.build.scaffold import RECORDS

    assert hints.NOT_INPUTS == {record for record in RECORDS if record.split("/", 1)[0] in hints.INPUT_FOLDERS}

def test_a_stale_record_or_a_changed_table_means_computing(tmp_path, monkeypatch):
    record = json.loads(hints.RECORD.read_text(encoding="utf-8"))
    digest = record["inputs"]
    monkeypatch.setattr(hints, "RECORD", tmp_path / "record.json")
    hints.RECORD.write_text(json.dumps(record), encoding="utf-8")
    assert hints._recorded_outputs(digest)  # control: the record as committed is used
    assert hints._recorded_outputs("0" * 64) is None  # other inputs
    first = sorted(record["outputs"])[0]
    hints.RECORD.write_text(json.dumps({**record, "outputs": {**record["outputs"], first: "0" * 64}}), "utf-8")
    assert hints._recorded_outputs(digest) is None  # a table whose bytes are not the recorded ones
    hints.RECORD.write_text("{not json", encoding="utf-8")
    assert hints._recorded_outputs(digest) is None
    computed = {}
    monkeypatch.setattr(hints, "computed_outputs", lambda calls=None: computed.setdefault("done", {}))
    assert hints.build_outputs() == {hints.RECORD: hints._record(hints.inputs_digest(), {})}
    assert computed == {"done": {}}  # a stale record: the stage computed the tables


@pytest.mark.slow  # runs every public test against solutions/ in a fresh interpreter (about 17 s)
def test_the_tables_computed_afresh_are_the_committed_ones():
    fresh = hints.build_outputs(use_record=False)
    stale = [path for path, text in fresh.items()
             if not (path.exists() and same_output(path, text, path.read_text(encoding="utf-8")))]
    assert not stale, f"run `rl4llm build`: {stale}"
