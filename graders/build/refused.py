"""The public refusal rows: ``starter/module_0X/_refused.json``.

A function that accepts an input the grader refuses loses the points of that
``raises=`` case; so every public ``raises=`` case of the checks
(``graders/checks/<file>.py``, ``Case(..., raises=ValueError, hidden=False)``)
becomes a row the public tests make too: ``test_<function>_refuses_what_the_grader_refuses``
reads the rows of its function from this file (``_refused("<function>")`` in the
public test file) and expects the same exception.

Only public cases ship: a hidden case's input is never published. The file is
JSON: exercise id -> [{"label", "args", "kwargs", "raises"}], the inputs in the
learner conftest's exact tagged form (``conftest.tagged(value, None)``: arrays
with dtype and shape, ``{"float": "nan"}`` for a non-finite float), which the
public test file turns back into values.

``PUBLISHED`` is temporary: hidden ``raises=`` cases whose inputs the public
tests already published by hand before the file was generated (the old
``REFUSED`` tables). They ship as if public until the checks say
``hidden=False`` on them (then the entry is dropped here; ``tests/test_recipe.py``
refuses an entry whose case is already public or gone).
"""

from __future__ import annotations

import json
from pathlib import Path

from graders import course
from graders.paths import STARTER_DIR

REFUSED_NAME = "_refused.json"

_R8 = "module_8_reference."
_R9 = "module_9_reference."
# exercise id -> labels of hidden raises= cases whose inputs the public tests publish (temporary; see above)
PUBLISHED: dict[str, tuple[str, ...]] = {
    _R8 + "optimal_kl_policy": ("beta = 0 is refused", "rewards of another length are refused"),
    _R8 + "reward_kl_frontier": ("a beta of 0 is refused", "a reference with a negative entry is refused"),
    _R8 + "shape_token_rewards": ("an all-zero mask is refused", "a mask value other than 0/1 is refused",
                                  "mismatched shapes are refused", "beta < 0 is refused"),
    _R8 + "constrained_lagrangian": ("a negative multiplier is refused", "limits of another length are refused"),
    _R8 + "dual_ascent_step": ("a negative multiplier is refused", "learning_rate = 0 is refused",
                               "observed_costs of another length are refused"),
    _R8 + "two_action_constrained_optimum": ("a negative cost is refused",),
    _R8 + "dpo_loss_from_margin": ("beta = 0 is refused", "a NaN margin is refused"),
    _R8 + "dpo_gradient_weight": ("beta = 0 is refused", "an infinite margin is refused"),
    _R8 + "conservative_dpo_loss": ("eps = 0.5 is refused", "beta < 0 is refused"),
    _R8 + "ipo_loss": ("tau = 0 is refused",),
    _R8 + "simpo_loss": ("a zero length is refused",),
    _R8 + "orpo_total_loss": ("lam < 0 is refused",),
    _R8 + "likelihood_displacement_curve": ("a NaN t is refused",),
    _R9 + "verify_detailed": ("a reference without a number is refused", "a negative rel_tol is refused"),
    _R9 + "verify_numeric_answer": ("a reference without a number is refused", "a negative rel_tol is refused"),
    _R9 + "informative_group_probability": ("NaN p is refused",),
    _R9 + "expected_draws_for_informative_groups": ("negative num_informative is refused", "p above 1 is refused"),
    _R9 + "group_relative_advantages": ("3-D rewards are refused", "NaN rewards are refused", "ddof >= G is refused",
                                        "negative eps is refused"),
    _R9 + "leave_one_out_baseline": ("3-D rewards are refused", "infinite rewards are refused"),
    _R9 + "clipped_surrogate_terms": ("negative ratios are refused", "shapes that do not broadcast are refused",
                                      "negative eps_low is refused", "NaN eps_high is refused"),
    _R9 + "clip_activity": ("negative ratios are refused", "shapes that do not broadcast are refused",
                            "negative eps_low is refused", "NaN eps_high is refused"),
    _R9 + "gspo_sequence_ratios": ("mismatched shapes are refused", "1-D inputs are refused",
                                   "a mask entry of 2 is refused"),
    _R9 + "original_grpo_token_weights": ("fewer lengths than rewards are refused",
                                          "2-D rewards are refused (one group)", "negative eps is refused"),
    _R9 + "dr_grpo_token_weights": ("fixed_length 0 is refused", "fewer lengths than rewards are refused",
                                    "2-D rewards are refused (one group)"),
    _R9 + "dapo_token_weights": ("a zero length is refused", "fewer lengths than rewards are refused",
                                 "2-D rewards are refused (one group)", "negative eps is refused"),
    _R9 + "response_contributions": ("a 2-D weight array is refused", "NaN weights are refused"),
    _R9 + "flatten_token_weights": ("a 2-D weight array is refused", "NaN weights are refused"),
    _R9 + "k3_kl": ("NaN log-probs are refused",),
    _R9 + "categorical_entropy": ("a row that does not sum to 1 is refused", "an empty distribution is refused"),
    _R9 + "synthetic_mode_training": ("negative learning_rate is refused", "negative steps is refused",
                                      "mismatched shapes is refused"),
}


def shipped_cases(exercise_id: str, spec) -> list:
    """The raises= cases of an exercise that ship: the public ones, and the ``PUBLISHED`` hidden ones, in check order."""
    published = set(PUBLISHED.get(exercise_id, ()))
    return [case for case in spec.cases() if case.raises is not None and (not case.hidden or case.label in published)]


def refused_tables(exercises: list[str] | None = None) -> dict[str, dict]:
    """module folder -> {exercise id: [{"label", "args", "kwargs", "raises"}, ...]} (every folder, maybe empty)."""
    from graders.build.hints import starter_conftest
    from graders.checks import spec_for
    from graders.engine.judging.references import fresh_inputs

    conftest = starter_conftest()
    tables: dict[str, dict] = {m.folder: {} for m in course.MODULES}
    for exercise_id in course.exercises() if exercises is None else exercises:
        spec = spec_for(exercise_id)
        if spec is None:
            continue
        rows = []
        for case in shipped_cases(exercise_id, spec):
            args, kwargs = fresh_inputs(case)
            rows.append({"label": str(case.label), "args": conftest.tagged(tuple(args), None),
                         "kwargs": conftest.tagged(dict(kwargs), None), "raises": case.raises.__name__})
        if rows:
            tables[course.module_of(spec.stem).folder][exercise_id] = rows
    return tables


def build_outputs(starter_dir: Path = STARTER_DIR) -> dict[Path, str]:
    """Every starter/module_0X/_refused.json and its expected content (byte-deterministic)."""
    return {starter_dir / folder / REFUSED_NAME:
            json.dumps(table, indent=1, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
            for folder, table in refused_tables().items()}
