"""The fast tier's share of the sweep "every catalogued mistake fails a public test of its own function": it
runs for the exercises whose inputs changed since the sweep last passed (tests/public_sweep.py names them;
tests/sweep_record.json records each exercise's digest), and a passing sweep with a stale record fails, so the
record a change commits is one this sweep produced. The exhaustive tier still sweeps every exercise
(tests/test_public_means_full.py).

After changing an exercise (its reference, checks, catalogue, public tests or the starter's conftest):
``pytest tests/test_sweep_record.py --update-sweep-record``, then commit tests/sweep_record.json.
"""

from __future__ import annotations

import pytest

import public_sweep as sweep

UPDATE = "run `pytest tests/test_sweep_record.py --update-sweep-record` and commit tests/sweep_record.json"
CHEAP = "module_9_reference.group_relative_advantages"  # a small exercise, quick public tests


def test_every_exercise_a_change_touches_has_each_mistake_fail_its_own_public_test(tmp_path, request):
    current, record = sweep.digests(), sweep.read_record()
    missed, changed = sweep.sweep_changed(tmp_path, record, current)
    assert not missed, f"{len(missed)} mistakes pass the public tests:\n\n" + "\n\n".join(missed)
    gone = sorted(set(record) - set(current))
    if (changed or gone) and request.config.getoption("--update-sweep-record"):
        sweep.write_record(current)  # the changed exercises' sweeps passed just now; the others' digests match
        return
    assert not changed, f"the sweep passed for {changed}, which the record does not hold: {UPDATE}"
    assert not gone, f"the record names exercises that no longer exist {gone}: {UPDATE}"


def test_a_planted_stale_exercise_is_swept_and_fails_until_recorded(tmp_path):
    current = sweep.digests()
    planted = {**current, CHEAP: "0" * 64}
    del planted["module_8_reference.ipo_loss"]
    swept = []

    def run(root, stem, chosen):
        swept.extend(mistake[0] for mistake in chosen)
        return []

    missed, changed = sweep.sweep_changed(tmp_path, planted, current, run=run)
    assert changed == sorted([CHEAP, "module_8_reference.ipo_loss"]) and missed == []
    assert set(swept) == set(changed) and len(swept) == sum(  # every mistake of the two, and only theirs
        1 for stem in sweep.STEMS for mistake in sweep.mistakes(stem) if mistake[0] in changed)
    assert sweep.stale(current, current) == []  # control: the current digests vouch for themselves


def test_the_digest_follows_an_exercises_mistakes():
    before = sweep.digests()
    after = sweep.digests(lambda stem: [(e, n, t + "\n# changed\n" if e == CHEAP else t)
                                        for e, n, t in sweep.mistakes(stem)])
    assert [e for e in before if before[e] != after[e]] == [CHEAP]  # one exercise's mistake: that exercise


def _planted(changes: dict):
    """A ``read`` for :func:`public_sweep.digests` that sees ``changes`` (path -> new text) over the tree, and a
    ``find`` whose mistakes are the reference files as planted (what the catalogue gives after such a change)."""
    real = lambda path: path.read_bytes().decode("utf-8", "surrogateescape")  # noqa: E731

    def read(path):
        return changes.get(path, real(path)) if path in changes else real(path)

    def find(stem):
        path = sweep.SOLUTIONS_DIR / sweep.course.module_of(stem).folder / f"{stem}.py"
        before, after = real(path).rstrip("\n"), read(path).rstrip("\n")
        return [(e, n, after + t[len(before):] if t.startswith(before) else t) for e, n, t in sweep.mistakes(stem)]

    return read, find


M9 = sweep.SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
M9_TESTS = sweep.STARTER_DIR / "module_09" / "test_module_9_reference.py"
M9_REFUSED = sweep.STARTER_DIR / "module_09" / "_refused.json"


def test_adding_an_exercise_re_sweeps_that_exercise_only():
    """What a contributor adds for a new exercise (its function in the reference, its public tests, its refusal
    rows) changes no other exercise's digest: the record step sweeps the new one alone (issue 54, point 2)."""
    import json

    refused = json.loads(M9_REFUSED.read_text(encoding="utf-8"))
    read, find = _planted({
        M9: M9.read_text(encoding="utf-8") + "\n\ndef rloo_baseline(rewards):\n    return _float_array(rewards, 'r')\n",
        M9_TESTS: M9_TESTS.read_text(encoding="utf-8") + "\n\ndef test_rloo_baseline_rows():\n"
                                                          "    assert m9.rloo_baseline([1.0]).shape == (1,)\n",
        M9_REFUSED: json.dumps({**refused, "module_9_reference.rloo_baseline": [["a row"]]}),
    })
    assert sweep.digests(find, read) == sweep.digests()


def test_a_change_re_sweeps_the_exercises_it_reaches():
    before = sweep.digests()
    text = M9.read_text(encoding="utf-8")
    helper = "def _last_box(text: str)"  # the verifier's: verify_detailed and verify_numeric_answer reach it
    assert helper in text
    read, find = _planted({M9: text.replace(helper, "def _last_box(text: str, _planted=None)", 1)})
    after = sweep.digests(find, read)
    changed = sorted(e for e in before if before[e] != after[e])
    assert "module_9_reference.verify_detailed" in changed and "module_9_reference.verify_numeric_answer" in changed
    assert "module_9_reference.group_relative_advantages" not in changed and all(
        e.startswith("module_9_reference.") for e in changed), changed
    # a public test of one exercise: that exercise; the starter's conftest: every exercise
    tests = M9_TESTS.read_text(encoding="utf-8")
    marker = "def test_informative_group_probability_rows("
    assert marker in tests
    read, find = _planted({M9_TESTS: tests.replace(marker, "def test_informative_group_probability_rows_x(", 1)})
    after = sweep.digests(find, read)
    assert sorted(e for e in before if before[e] != after[e]) == ["module_9_reference.informative_group_probability"]
    conftest = sweep.STARTER_DIR / "conftest.py"
    read, find = _planted({conftest: conftest.read_text(encoding="utf-8") + "\n# changed\n"})
    after = sweep.digests(find, read)
    assert all(before[e] != after[e] for e in before)


def test_the_slice_keeps_what_a_name_reaches_and_every_statement_that_names_nothing():
    text = ("import numpy as np\nfrom math import sqrt, pi\nLIMIT = 3\nprint('loaded')\n"
            "def helper(x):\n    return sqrt(x) + LIMIT\n\ndef exercise(x):\n    return helper(x)\n\n"
            "def other(x):\n    return np.pi + pi\n")
    kept = sweep.name_slice(text, {"exercise"})
    assert "def exercise" in kept and "def helper" in kept and "LIMIT = 3" in kept and "print('loaded')" in kept
    assert "sqrt as sqrt" in kept and "def other" not in kept and "numpy" not in kept and "pi as pi" not in kept


def test_what_a_run_of_the_starter_tests_leaves_is_not_an_input(tmp_path, monkeypatch):
    """A contributor who runs the starter's tests (learner-style) leaves .hypothesis/, .pytest_cache/ and bytecode
    in the module folder; the digests, so the fast tier, must not change with them."""
    folder = tmp_path / "starter" / "module_09"
    folder.mkdir(parents=True)
    (folder / "test_x.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(sweep, "REPO_ROOT", tmp_path)
    before = sweep._files_digest(folder.rglob("*"))
    for left in (".hypothesis/examples/ab/cd", ".pytest_cache/v/cache/nodeids", "__pycache__/test_x.cpython-311.pyc"):
        (folder / left).parent.mkdir(parents=True, exist_ok=True)
        (folder / left).write_bytes(b"left behind")
    assert sweep._files_digest(folder.rglob("*")) == before
    (folder / "test_x.py").write_text("x = 2\n", encoding="utf-8")
    assert sweep._files_digest(folder.rglob("*")) != before  # the control: a real input still counts


@pytest.mark.slow  # two learner pytest runs from a fresh driver (torch imported): the mechanism, not the record
def test_a_green_but_wrong_public_test_is_caught(tmp_path):
    stem = CHEAP.split(".")[0]
    real = next(mistake for mistake in sweep.mistakes(stem) if mistake[0] == CHEAP)
    reference = sweep.DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
    planted = (CHEAP, "planted_no_mistake", reference)  # a "mistake" every public test passes
    failures = sweep.own_failures(tmp_path, stem, [real, planted])
    (real_failed, real_output), (planted_failed, planted_output) = failures
    assert real_failed, real_output[-3000:]  # the catalogued mistake fails a public test of its function
    assert not planted_failed, planted_output[-3000:]  # the reference fails none: slipped() names it
    missed = sweep.unfailed([real, planted], failures)  # what slipped() returns for these two runs
    assert len(missed) == 1 and missed[0].startswith(f"{CHEAP} planted_no_mistake: every public test"), missed
