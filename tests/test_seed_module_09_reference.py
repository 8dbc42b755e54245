"""The Module 9 seed notebook's reference part runs unchanged against solutions/module_09.

Everything before the toy experiment (``experiment = run_toy_grpo_experiment(``)
needs only module_9_reference: the verifier table and its assert, the
informative-group plot and table, the advantage and clipping table with its
assert, the token-weight table and the exact mode-training plot.
"""

from __future__ import annotations

import hashlib

import pytest

from graders.paths import SEEDS_DIR, SOLUTIONS_DIR
from graders.walkthrough.run import EXPERIMENT_MARKERS, run_seed_subprocess

def test_bundled_seed_is_the_course_notebook_verbatim():
    """The course's Module 9 notebook as it was given to the kit (its SHA-256 recorded when it was copied in,
    graders/seeds/SHA256SUMS): nothing in it may be edited to make the kit pass."""
    sums = dict(line.split()[::-1] for line in (SEEDS_DIR / "SHA256SUMS").read_text(encoding="utf-8").splitlines())
    bundled = SEEDS_DIR / "module_09_seed.txt"
    assert hashlib.sha256(bundled.read_bytes()).hexdigest() == sums[bundled.name]


@pytest.mark.slow
def test_seed_reference_part_runs_against_the_solutions(tmp_path):
    if not (SOLUTIONS_DIR / "module_09" / "module_9_training.py").exists():
        pytest.skip("the seed's imports need solutions/module_09/module_9_training.py")
    completed = run_seed_subprocess("module09", out_dir=tmp_path, stop_before=EXPERIMENT_MARKERS["module_09"],
                                    capture=True, timeout=300)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    figures = sorted(path.name for path in tmp_path.glob("figure_*.png"))
    assert figures == ["figure_01.png", "figure_02.png"]  # P_info curves; reward, entropy, pass@4 per step
    assert all((tmp_path / name).stat().st_size > 1000 for name in figures)
    assert "draws for 100 informative prompts" in completed.stdout
    assert "absolute_token_weight_sum" in completed.stdout
