"""Green public tests mean full marks: a mistake that loses hidden points fails a public test of its function.

For every catalogue entry (each loses hidden points on its exercise: tests/test_catalogue.py), every
wrong-type variant and every mistake outside the catalogue of tests/learner_variants.py (each loses points
on its exercise: tests/test_judge_truth.py), the learner's public
tests are run on a learner file with exactly that one mistake (``RL4LLM_IMPL_ROOT`` points them at it),
selected with ``-k <function>``; at least one failing test must be a test OF that function (named
``test_<function>_...``; a test of another function that happens to call it does not count). So a learner
whose public tests of a function are green cannot hold any of these mistakes in it.
"""

from __future__ import annotations

import pytest

from public_sweep import RECORD, STEMS, digests, mistakes, owner, read_record, slipped, write_record

pytestmark = pytest.mark.slow  # one public-test run per catalogue entry: a few minutes


def test_a_test_is_owned_by_the_longest_function_name_it_starts_with():
    functions = ["dpo_loss", "dpo_loss_from_margin", "ipo_loss"]
    assert owner("test_dpo_loss_from_margin_rows", functions) == "dpo_loss_from_margin"
    assert owner("test_dpo_loss_rewards_detached", functions) == "dpo_loss"
    assert owner("test_ipo_loss", functions) == "ipo_loss" and owner("test_simpo_rows", functions) is None


@pytest.mark.exhaustive
@pytest.mark.parametrize("stem", STEMS)
def test_every_mistake_that_loses_hidden_points_fails_a_public_test_of_its_function(tmp_path, stem, request):
    found = mistakes(stem)
    assert found, f"no catalogued mistake for {stem}"
    missed = slipped(tmp_path, stem, found)
    assert not missed, f"{len(missed)} of {len(found)} mistakes pass the public tests:\n\n" + "\n\n".join(missed)
    if request.config.getoption("--update-sweep-record"):  # this file's exercises swept: recorded as passing
        current = digests()
        write_record({**read_record(RECORD), **{e: d for e, d in current.items() if e.startswith(f"{stem}.")}})
