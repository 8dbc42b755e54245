"""The public toy tests' reference outcomes: ``starter/module_0X/_toy_reference.json``.

The grader runs short toy trainings with a learner's function plugged in (the
``check="toy experiment"`` cases of the harnesses in
``graders/checks/module_8_training.py`` and ``module_9_training.py``) and
compares the outcome with the reference's run, computed in the grading
process. The public tests make the same runs on the learner's machine
(``test_grpo_loss_trains_the_toy_like_the_reference``,
``test_sequence_logprobs_and_dpo_loss_train_the_toy_like_the_reference``); they
compare with what this module writes: per exercise, the reference outcome of
each toy case (the same harness called with the reference function, and its
result measured by the same grader-side ``score``, exactly as the grader's
reference side does) and the grader's bands.

Module 9's run also needs group-relative advantages, which the grader takes
from a trusted copy and the public test must not take from the learner's
``module_9_reference`` (a mistake there would show up as a ``grpo_loss``
failure). The toy's rewards are 0 or 1, so an advantage depends only on the
reward and the number of successes c in its group: the file carries the
reference's ``group_relative_advantages`` of a group with c successes, for
every c, scaled and not (``advantages``).

The GRPO run samples, so it is only comparable on a torch that samples as the
build's did: the file also carries the run's ``fingerprint``, what the
experiment measures before its first update (train accuracy, overall and by
prompt, after the warm-up: the loss plays no part in it). Where a learner's
run measures something else there, the public test says so and skips: the
reference outcomes were computed on another numeric stack, and the
autograder computes its reference on its own machine.

Outcomes and advantages are written by :func:`graders.build.committed.committed_numbers`
(within 1e-9 of zero: 0.0; else 10 significant digits) and compared by the build's
tolerance (:mod:`graders.build.committed`), so a machine that differs in the last bits,
or computes 5.6e-17 for a margin that is 0 in exact arithmetic, finds the file current.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np

from graders import course
from graders.build.committed import committed_numbers
from graders.checks import spec_for
from graders.engine.values import codec
from graders.engine.judging.kit import Kit
from graders.engine.judging.references import scored
from graders.paths import SOLUTIONS_DIR, STARTER_DIR

TOY_NAME = "_toy_reference.json"
TOY_CHECK = "toy experiment"


def toy_references(solutions_dir: Path = SOLUTIONS_DIR) -> dict[str, dict]:
    """Module folder -> {exercise id: {"bands": [[key, rtol, atol], ...], "runs": [{"kwargs", "outcome"}]}}.

    The bands in the grader's order (the most telling first); a value matches when
    ``|got - expected| <= atol + rtol * |expected|``."""
    # a kit whose "starter" is solutions/: the given modules from their source (the starter's copies are
    # verbatim, and may be stale while `rl4llm build --check` runs), loaded once, as the grader loads them
    kit = Kit(solutions_dir=solutions_dir, starter_dir=solutions_dir)
    starter = kit.starter_module
    tables: dict[str, dict] = {}
    for exercise in kit.exercises():
        spec = spec_for(exercise)
        toy_cases = [case for case in spec.cases() if case.kwargs.get("check") == TOY_CHECK]
        if not toy_cases:
            continue
        stem, function = exercise.split(".")
        harness = spec.call.run
        reference = getattr(kit.reference_module(stem), function)
        bands = importlib.import_module(f"graders.checks.{stem}").OUTCOME_BANDS
        runs = []
        for case in toy_cases:
            # measured by the harness's grader-side score, as the grader measures its reference run
            outcome = scored(spec, codec.normalise(harness(reference, None, starter, *case.args, **case.kwargs)),
                             case, kit)
            runs.append({"kwargs": {k: v for k, v in case.kwargs.items() if k != "check"},
                         "outcome": committed_numbers(outcome)})
        used = sorted({key for run in runs for key in run["outcome"]}, key=list(bands).index)
        tables.setdefault(course.module_of(stem).folder, {})[exercise] = {
            "bands": [[key, *bands[key][:2]] for key in used], "runs": runs}
    if "module_09" in tables:
        tables["module_09"]["advantages"] = committed_numbers(_binary_group_advantages(kit))
        tables["module_09"]["fingerprint"] = _grpo_fingerprint(kit)
    return tables


def _grpo_fingerprint(kit: Kit) -> dict:
    """What the GRPO toy's check run measures before its first update (the warm-up's policy, sampled)."""
    from types import SimpleNamespace

    toy = kit.starter_module("grpo_toy")
    reference = kit.reference_module("module_9_reference")
    formulas = SimpleNamespace(group_relative_advantages=reference.group_relative_advantages,
                               clip_activity=reference.clip_activity,
                               categorical_entropy=reference.categorical_entropy,
                               pass_at_k_unbiased=reference.pass_at_k_unbiased)
    out = toy.run_toy_grpo_experiment(toy.profile_config("check"),
                                      loss_fn=kit.reference_module("module_9_training").grpo_loss,
                                      formulas=formulas)
    return {"before_train_accuracy": out["before_train"]["accuracy"],
            "before_train_by_prompt": {str(k): v for k, v in sorted(out["before_train_by_prompt"].items())}}


def _binary_group_advantages(kit: Kit) -> dict:
    """{"scaled"|"unscaled": {c: [A of a 0 reward, A of a 1 reward]}} in a group of the check profile's size with
    c successes (the reference's group_relative_advantages; None where no such reward is in the group)."""
    config = kit.starter_module("grpo_toy").profile_config("check")
    formula = kit.reference_module("module_9_reference").group_relative_advantages
    size, table = config.group_size, {}
    for name, scale in (("scaled", True), ("unscaled", False)):
        rows = {}
        for successes in range(size + 1):
            rewards = np.array([[1.0] * successes + [0.0] * (size - successes)])
            values = np.asarray(formula(rewards, scale=scale, eps=config.adv_eps), dtype=np.float64)[0]
            rows[str(successes)] = [float(values[-1]) if successes < size else None,
                                    float(values[0]) if successes > 0 else None]
        table[name] = rows
    return {"group_size": size, **table}


def build_outputs(solutions_dir: Path = SOLUTIONS_DIR, starter_dir: Path = STARTER_DIR) -> dict[Path, str]:
    """Every starter/module_0X/_toy_reference.json and its expected content."""
    return {starter_dir / folder / TOY_NAME: json.dumps(table, indent=1, sort_keys=True) + "\n"
            for folder, table in toy_references(solutions_dir).items()}
