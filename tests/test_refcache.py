"""The reference store (graders.engine.judging.refcache): what a batch computed, read back by the next one.

A second batch on an unchanged kit must give byte-identical reports without
running any reference code; anything the outcomes depend on must change the
key; a damaged record is recomputed, never trusted.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from graders import checks
from graders.engine.judging import refcache
from graders.engine.values import bundles, codec
from graders.engine.routes.batch import grade_paths
from graders.engine.routes.grading import GradeOptions, prepare_job
from graders.engine.judging.kit import DEFAULT_KIT, Kit
from graders.engine.judging.misconceptions import mutant_source
from graders.engine.judging.references import ReferenceBook

STEM = "module_9_reference"
OPTIONS = GradeOptions(modules=("9",), timeout=20.0)


@pytest.fixture
def store(tmp_path, monkeypatch):
    folder = tmp_path / "store"
    monkeypatch.setenv("RL4LLM_CACHE", str(folder))
    return folder


def _submissions(root: Path) -> list[Path]:
    """A correct submission and one with a catalogued mistake (its misconception needs wrong outcomes)."""
    reference = DEFAULT_KIT.solution_path(STEM).read_text(encoding="utf-8")
    texts = {"correct": reference,
             "sample_std": mutant_source(f"{STEM}.group_relative_advantages", "sample_std")}
    paths = []
    for name, text in texts.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / f"{STEM}.py").write_text(text, encoding="utf-8")
        paths.append(folder)
    return paths


def _grade(paths, out: Path, kit: Kit) -> dict[str, str]:
    grade_paths(paths, out, OPTIONS, jobs=2, kit=kit, progress=False, log=lambda _m: None)
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_second_batch_reads_every_reference_outcome_and_runs_no_reference_code(store, tmp_path, monkeypatch):
    paths = _submissions(tmp_path / "in")
    first = _grade(paths, tmp_path / "first", Kit())
    assert any(store.glob("*.arrays")), "the first batch kept nothing"
    report = json.loads(first["sample_std/report.json"])
    named = {e["id"]: e.get("misconceptions") for e in report["exercises"]}
    assert "sample_std" in json.dumps(named[f"{STEM}.group_relative_advantages"])

    def refuse(*_args, **_kwargs):
        raise AssertionError("the second batch ran reference code")

    monkeypatch.setattr(Kit, "reference_module", refuse)
    monkeypatch.setattr("graders.engine.judging.references.load_misconceptions", refuse)
    second = _grade(paths, tmp_path / "second", Kit())  # a new kit object: nothing in memory
    assert second == first


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_damaged_record_is_recomputed(store, tmp_path):
    paths = _submissions(tmp_path / "in")
    first = _grade(paths, tmp_path / "first", Kit())
    records = sorted(store.glob("*.arrays"))
    for path in records:
        path.write_bytes(b"not a record")
    second = _grade(paths, tmp_path / "second", Kit())
    assert second == first
    store_view = refcache.ReferenceStore(store)
    assert all(store_view.read(path.stem) is not None for path in records), "damaged records were not rewritten"


def _record_key(kit: Kit, exercise_id: str, job_dir: Path) -> str:
    job = prepare_job(kit, OPTIONS, job_dir)
    exercise = next(e for e in job.exercises if e.id == exercise_id)
    return ReferenceBook(kit, refcache.ReferenceStore(job_dir / "store"))._record(exercise).key


def test_the_key_follows_the_solutions_the_catalogue_and_the_cases(tmp_path):
    exercise_id = f"{STEM}.group_relative_advantages"
    copied = tmp_path / "kit"
    shutil.copytree(DEFAULT_KIT.solutions_dir, copied / "solutions")
    shutil.copytree(DEFAULT_KIT.misconceptions_dir, copied / "misconceptions")
    kit = Kit(solutions_dir=copied / "solutions", misconceptions_dir=copied / "misconceptions")
    base = _record_key(kit, exercise_id, tmp_path / "a")
    assert _record_key(Kit(solutions_dir=copied / "solutions", misconceptions_dir=copied / "misconceptions"),
                       exercise_id, tmp_path / "b") == base  # same content, same key

    given = copied / "solutions" / "module_09" / "grpo_toy.py"  # a file of the same module folder
    given.write_text(given.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    after_given = _record_key(kit, exercise_id, tmp_path / "c")
    assert after_given != base

    catalogue = copied / "misconceptions" / STEM / "group_relative_advantages.py"
    catalogue.write_text(catalogue.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    after_catalogue = _record_key(kit, exercise_id, tmp_path / "d")
    assert after_catalogue not in (base, after_given)

    entry = {"id": exercise_id, "cases": [{"args": [1.0], "kwargs": {}}]}
    assert refcache.cases_digest(entry, {}) != refcache.cases_digest({**entry, "cases": []}, {})
    assert refcache.cases_digest(entry, {"i0": np.zeros(2)}) != refcache.cases_digest(entry, {"i0": np.ones(2)})


def _encoded(cases) -> tuple[list, dict]:
    encoder = codec.Encoder("x")
    rows = [[encoder.encode((tuple(c.args), dict(c.kwargs))), c.label, c.hidden,
             c.raises.__name__ if c.raises else None, c.weight, c.rtol, c.atol] for c in cases]
    return rows, encoder.arrays


def test_kept_cases_are_the_generated_cases(tmp_path):
    store = refcache.ReferenceStore(tmp_path / "store")
    for exercise_id in DEFAULT_KIT.exercises():
        spec = checks.spec_for(exercise_id)
        fresh = dataclasses.replace(spec, _cases=None)
        refcache.kept_cases(store, fresh)  # generated, and kept
        kept = dataclasses.replace(spec, _cases=None)
        refcache.kept_cases(store, kept)  # read back
        rows, arrays = _encoded(fresh.cases())
        kept_rows, kept_arrays = _encoded(kept.cases())
        assert kept_rows == rows, exercise_id
        assert sorted(kept_arrays) == sorted(arrays), exercise_id
        for key, array in arrays.items():
            assert kept_arrays[key].dtype == array.dtype and np.array_equal(kept_arrays[key], array, equal_nan=True)


def test_a_spec_made_outside_the_checks_files_is_never_kept(tmp_path):
    store = refcache.ReferenceStore(tmp_path / "store")
    spec = checks.ExerciseSpec(f"{STEM}.k3_kl", 1.0, lambda: [checks.Case(args=(1.0,))])
    refcache.kept_cases(store, spec)
    assert spec.cases()[0].args == (1.0,)
    assert not any((tmp_path / "store").glob("*.arrays")) if (tmp_path / "store").exists() else True


@pytest.mark.parametrize("value", ["off", "OFF", "0"])
def test_the_store_can_be_switched_off(monkeypatch, value):
    monkeypatch.setenv("RL4LLM_CACHE", value)
    assert refcache.ReferenceStore.default() is None


def test_the_store_defaults_to_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("RL4LLM_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert refcache.ReferenceStore.default().folder == tmp_path / "rl4llm"


# ---------------------------------------------------------------------------
# A given module's kept state (grpo_toy's warm-ups)
# ---------------------------------------------------------------------------
def _bit_identical(a, b) -> bool:
    """Two normalised values (dicts, lists, arrays) equal bit for bit."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_bit_identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_bit_identical, a, b))
    return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)


# slow: toy runs with and without the kept warm-ups (about 1.3 s); the store's key and cases stay fast above
@pytest.mark.slow
def test_kept_warm_ups_give_bit_identical_toy_runs_without_warming_up(tmp_path, monkeypatch):
    from graders.checks.module_9_training import grpo_toy_run
    from graders.loader import load_module

    kit = Kit()
    files = {name: kit.starter_path(name) for name in kit.given_modules(("9",))}
    fresh = lambda tag: load_module(files["grpo_toy"], f"_test_kept_{tag}", given=files)  # noqa: E731
    loss = kit.reference_module("module_9_training").grpo_loss
    first = fresh("first")
    warmed = grpo_toy_run(loss, lambda _name: first, check="toy experiment", loss_type="dapo")
    assert len(first.WARMED_UP) == 1
    store = refcache.ReferenceStore(tmp_path / "store")
    assert refcache.save_given_state(store, kit, "grpo_toy", first)
    assert not refcache.save_given_state(store, kit, "grpo_toy", first)  # once
    second = fresh("second")
    bundles.fill_kept_state(second, *refcache.read_given_state(store, kit, "grpo_toy"))

    def refuse(*_args, **_kwargs):
        raise AssertionError("warmed up again")

    monkeypatch.setattr(second, "supervised_warmup", refuse)
    again = grpo_toy_run(loss, lambda _name: second, check="toy experiment", loss_type="dapo")
    assert _bit_identical(codec.normalise(again), codec.normalise(warmed))  # the trained parameters
    assert refcache.read_given_state(None, kit, "grpo_toy") is None
    assert refcache.read_given_state(store, kit, "no_such_module") is None


POISON_WARM_UPS = '''

import gc as _gc

for _module in [o for o in _gc.get_objects() if type(o).__name__ == "module" and hasattr(o, "WARMED_UP")]:
    for _state in _module.WARMED_UP.values():  # the harness's copy too: it is filled before this file runs
        for _tensor in _state.values():
            _tensor.zero_()
    _module.WARMED_UP["junk"] = {}
'''


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_submission_that_poisons_the_kept_warm_ups_hurts_only_itself(store, tmp_path):
    """A warm batch hands the kept warm-ups to its workers (the correct submission's report is the cold one's);
    a learner file that zeroes every kept warm-up it can reach changes nothing: the toy runs in the worker's
    trusted process, whose copy it cannot reach (it keeps full marks), a correct submission of the same batch
    keeps full marks, and the store keeps the grader's."""
    reference = DEFAULT_KIT.solution_path("module_9_training").read_text(encoding="utf-8")
    paths = []
    for name, text in (("correct", reference), ("poisoner", reference + POISON_WARM_UPS)):
        (tmp_path / "in" / name).mkdir(parents=True)
        (tmp_path / "in" / name / "module_9_training.py").write_text(text, encoding="utf-8")
        paths.append(tmp_path / "in" / name)
    options = GradeOptions(modules=("9",), timeout=60.0)
    clean = grade_paths(paths[:1], tmp_path / "clean", options, jobs=1, kit=Kit(), progress=False,
                        log=lambda _m: None)
    kept, kept_arrays = refcache.read_given_state(refcache.ReferenceStore.default(), DEFAULT_KIT, "grpo_toy")
    # the next batch is warm: its job hands the kept warm-ups to the workers
    kit = Kit()
    job = prepare_job(kit, options, tmp_path / "job", refcache.ReferenceStore.default())
    assert job.given_state == ["grpo_toy"] and (tmp_path / "job" / "given_grpo_toy.arrays").is_file()
    warm = grade_paths(paths, tmp_path / "warm", options, jobs=2, kit=kit, progress=False, log=lambda _m: None)
    assert warm.reports[0] == clean.reports[0]  # the correct submission: the same report, warm or cold
    loss_entries = {report["submission"]: e for report in warm.reports for e in report["exercises"]
                    if e["id"] == "module_9_training.grpo_loss"}
    assert loss_entries["correct"]["status"] == "passed" and loss_entries["correct"]["points"] == 6.0
    assert loss_entries["poisoner"]["points"] == 6.0  # the trusted process's copy is out of its reach
    after, after_arrays = refcache.read_given_state(refcache.ReferenceStore.default(), DEFAULT_KIT, "grpo_toy")
    assert after == kept and after_arrays.keys() == kept_arrays.keys()
    assert all(np.array_equal(after_arrays[k], kept_arrays[k]) for k in kept_arrays)
