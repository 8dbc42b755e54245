"""Committed numbers do not depend on the CPU: a toy outcome perturbed by a few ulps (or a zero that comes
out as 5.6e-17, as on another Xeon) leaves ``rl4llm build --check`` green and the public toy tests' comparison
passing, while a real change (a relative 1e-6) is still stale."""

from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest

from graders import course
from graders.build import committed, toys
from graders.build.committed import ZERO_SNAP, committed_float, committed_numbers, same_output
from graders.paths import STARTER_DIR

TOY_FILES = sorted(STARTER_DIR.glob("module_0*/" + toys.TOY_NAME))


def _perturbed(value, ulps: int):
    """``value`` with every float moved by ``ulps`` units in the last place (a zero becomes +-5.55e-17, the
    noise another CPU gave the DPO margin)."""
    if isinstance(value, dict):
        return {key: _perturbed(item, ulps) for key, item in value.items()}
    if isinstance(value, list):
        return [_perturbed(item, ulps) for item in value]
    if isinstance(value, float):
        if value == 0.0:
            return math.copysign(5.551115123125783e-17, ulps)
        moved = value
        for _ in range(abs(ulps)):
            moved = float(np.nextafter(moved, math.copysign(math.inf, ulps)))
        return moved
    return value


def _scaled(value, factor: float):
    if isinstance(value, dict):
        return {key: _scaled(item, factor) for key, item in value.items()}
    if isinstance(value, list):
        return [_scaled(item, factor) for item in value]
    return value * factor if isinstance(value, float) and value != 0.0 else value


def _committed(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _written(table: dict) -> str:
    """What the build writes for a toy table (toys.build_outputs' serialisation)."""
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def test_there_are_toy_files():
    assert {path.parent.name for path in TOY_FILES} == set(course.FOLDERS)


def test_a_zero_computed_as_noise_is_written_as_zero():
    assert committed_float(5.551115123e-17) == 0.0 == committed_float(-3e-16)
    assert committed_float(0.6718523253491) == 0.6718523253
    assert committed_float(2e-9) == 2e-9  # beyond the snap a small value is kept


@pytest.mark.parametrize("path", TOY_FILES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("ulps", [-4, -1, 1, 4])
def test_outcomes_a_few_ulps_off_leave_the_build_current(path, ulps):
    """The build's write-and-compare on another CPU: raw outcomes off by a few ulps are written by
    committed_numbers and compared by same_output; the committed file stays current."""
    table = _committed(path)
    fresh = _written(committed_numbers(_perturbed(table, ulps)))
    assert same_output(path, fresh, path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", TOY_FILES, ids=lambda p: p.parent.name)
def test_a_real_change_is_still_stale(path):
    """The control: a relative 1e-6 change (100 times the check's tolerance) makes the file stale."""
    fresh = _written(committed_numbers(_scaled(_committed(path), 1 + 1e-6)))
    assert not same_output(path, fresh, path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", TOY_FILES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("ulps", [-4, 4])
def test_the_public_toy_comparison_accepts_the_perturbed_outcomes(path, ulps):
    """The public toy tests compare a run with the committed outcome by the bands the file carries
    (``|got - want| <= atol + rtol * |want|``): a run a few ulps off the committed numbers passes."""
    table = _committed(path)
    for exercise, entry in table.items():
        if not isinstance(entry, dict) or "runs" not in entry:
            continue
        for run in entry["runs"]:
            got = _perturbed(run["outcome"], ulps)
            for key, rtol, atol in entry["bands"]:
                want = run["outcome"][key]
                assert abs(got[key] - want) <= atol + rtol * abs(want), (exercise, key)


def test_the_tolerances_are_far_below_every_band():
    """ZERO_SNAP and REL_TOL resolve 100 times finer than the tightest band of any toy check, so the build
    never calls two outcomes the same that a check would tell apart."""
    for stem in ("module_8_training", "module_9_training"):
        bands = importlib.import_module(f"graders.checks.{stem}").OUTCOME_BANDS
        for key, (rtol, atol, *_texts) in bands.items():
            if atol:
                assert atol / ZERO_SNAP >= 100 - 1e-9, key
            if rtol:
                assert rtol / committed.REL_TOL >= 100 - 1e-9, key
            # and the written digits are finer than the band: 10 significant digits is a relative 5e-10 at most
            assert 0.5 * 10.0 ** (1 - committed.DIGITS) * 100 <= max(rtol, atol) or (rtol, atol) == (0.0, 0.0), key


def test_a_json_file_that_is_not_json_is_stale(tmp_path):
    assert not same_output(tmp_path / "x.json", "{}", "{")
    assert not same_output(tmp_path / "x.txt", "0.0", "5.5e-17")  # only JSON is compared by its numbers
