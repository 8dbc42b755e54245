"""The structure classes (issue 53, points 1 and 5): shapes, Python types and dtypes, and checks that test the
formula rather than the rounding.

- Hand-written structural mistakes (source strings, each the reference learner file with one function
  redefined after it, the reference kept as ``_right``) that only inputs of another STRUCTURE show: a broadcast
  along the wrong axis that agrees on 1-D rows, a squeezed batch of one, a refused group of one, an empty batch
  that crashes a guard, an ndarray changed in place, a float32 or NumPy-scalar result, in-place arithmetic that
  breaks on int lists. Each loses points on its exercise, and every check it fails is a case of a structure
  class (``shapes``, ``python_types``, ``dtypes``): the checks without those classes gave it full marks.
- The references keep full marks on the same route.
- A sweep of correct variants of ``synthetic_mode_training`` written differently (through the softmax
  Jacobian, by row sums, by Python loops, accumulating in float32) keeps full marks: the regime where rounding
  decides the trajectory (beta 500, lr 180) is checked for what the spec guarantees there, not for one
  trajectory; and correct variants of two other exercises keep full marks on the structure cases.

Graded in-process (:func:`graders.engine.routes.inline.grade_exercise`), the engine's own judging.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

from graders.checks import Case, spec_for
from graders.checks.edges import STRUCTURE_CLASSES
from graders.engine.routes.inline import grade_exercise
from graders.loader import load_module
from graders.paths import SOLUTIONS_DIR


@dataclass(frozen=True)
class Variant:
    name: str
    exercise: str  # "<stem>.<function>"
    body: str  # the function's new definition; `_right` is the reference's

    @property
    def stem(self) -> str:
        return self.exercise.split(".", 1)[0]

    @property
    def function(self) -> str:
        return self.exercise.split(".", 1)[1]


# --------------------------------------------------------------------------- structural mistakes
MISTAKES = [
    Variant("advantages-per-row", "module_9_reference.clipped_surrogate_terms", '''
def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    ratios, advantages = np.asarray(ratios, dtype=float), np.asarray(advantages, dtype=float)
    if ratios.ndim == 2 and advantages.ndim == 1:  # "one advantage per response": not NumPy broadcasting
        advantages = advantages[:, None]
    return _right(ratios, advantages, eps_low, eps_high)
'''),
    Variant("entropy-squeezed", "module_9_reference.categorical_entropy", '''
def categorical_entropy(probabilities):
    p = np.asarray(probabilities, dtype=float)
    out = _right(p)
    return float(np.squeeze(out)) if np.size(out) == 1 else out  # a batch of one loses its axis
'''),
    Variant("advantages-refuse-a-group-of-one", "module_9_reference.group_relative_advantages", '''
def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    if np.shape(rewards)[-1] < 2:
        raise ValueError("rewards: a group needs two answers")
    return _right(rewards, scale, eps=eps, ddof=ddof)
'''),
    Variant("advantages-crash-on-an-empty-batch", "module_9_reference.group_relative_advantages", '''
def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):
    r = np.asarray(rewards, dtype=float)
    if r.max() - r.min() > 1e6:  # a guard that reduces over the whole batch: no identity on (0, G)
        raise ValueError("rewards out of range")
    return _right(r, scale, eps=eps, ddof=ddof)
'''),
    Variant("orpo-max-guard", "module_8_reference.orpo_total_loss", '''
def orpo_total_loss(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    if np.max(chosen_mean_logp) >= 0 or np.max(rejected_mean_logp) >= 0:  # crashes on an empty batch
        raise ValueError("mean log-probabilities must be < 0")
    return _right(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam)
'''),
    Variant("mode-training-in-place", "module_9_reference.synthetic_mode_training", '''
def synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    z = np.asarray(DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits, dtype=float)
    state = _right(beta_entropy, learning_rate, steps, rewards=rewards, initial_logits=initial_logits)
    z += state["logits"] - z  # the caller's ndarray is overwritten (a list is copied by asarray: unseen)
    return state
'''),
    Variant("token-rewards-in-the-input-dtype", "module_8_reference.shape_token_rewards", '''
def shape_token_rewards(policy_logp, reference_logp, terminal_reward, beta, mask):
    out = _right(policy_logp, reference_logp, terminal_reward, beta, mask)
    return out.astype(np.result_type(np.asarray(policy_logp).dtype, np.float32))  # float32 in, float32 out
'''),
    Variant("k3-in-place-difference", "module_9_reference.k3_kl", '''
def k3_kl(logprobs, ref_logprobs):
    _right(logprobs, ref_logprobs)  # its refusals
    d = np.array(ref_logprobs)
    d -= np.asarray(logprobs, dtype=float)  # an int array cannot hold the float difference
    return np.exp(d) - d - 1.0
'''),
    Variant("dpo-numpy-scalar-result", "module_8_reference.dpo_loss_from_margin", '''
def dpo_loss_from_margin(h, beta):
    out = _right(h, beta)
    return np.logaddexp(0.0, -h * beta) if np.ndim(h) == 0 else out  # np.float32 for a float32 beta
'''),
    Variant("constraints-refuse-no-constraint", "module_8_reference.dual_ascent_step", '''
def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):
    if np.size(multipliers) == 0:
        raise ValueError("multipliers: at least one constraint")
    return _right(multipliers, observed_costs, limits, learning_rate)
'''),
]

# --------------------------------------------------------------------------- correct variants
CORRECT = [
    Variant("mode-training-jacobian", "module_9_reference.synthetic_mode_training", '''
def synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    if beta_entropy < 0 or learning_rate < 0 or steps < 0:
        raise ValueError("beta_entropy, learning_rate and steps must be >= 0")
    r = np.array(DEFAULT_MODE_REWARDS if rewards is None else rewards, dtype=float)
    z = np.array(DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits, dtype=float)
    if r.shape != z.shape:
        raise ValueError("rewards and initial_logits must have one shape")

    def softmax(v):
        e = np.exp(v - v.max())
        return e / e.sum()
    for _ in range(int(steps)):
        pi = softmax(z)
        jacobian = np.diag(pi) - np.outer(pi, pi)  # d pi / d z
        log_pi = np.log(np.where(pi > 0, pi, 1.0))
        z = z + learning_rate * (jacobian @ r - beta_entropy * (jacobian @ (log_pi + 1.0)))
    pi = softmax(z)
    return {"probabilities": pi, "expected_reward": float(pi @ r), "successful_mass": float(pi[r > 0].sum()),
            "entropy": categorical_entropy(pi), "logits": z}
'''),
    Variant("mode-training-jacobian-rows", "module_9_reference.synthetic_mode_training", '''
def synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    if beta_entropy < 0 or learning_rate < 0 or steps < 0:
        raise ValueError("beta_entropy, learning_rate and steps must be >= 0")
    r = np.array(DEFAULT_MODE_REWARDS if rewards is None else rewards, dtype=float)
    z = np.array(DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits, dtype=float)
    if r.shape != z.shape:
        raise ValueError("rewards and initial_logits must have one shape")
    k = len(z)
    for _ in range(int(steps)):
        e = np.exp(z - z.max())
        pi = e / e.sum()
        g = [r[j] - beta_entropy * (np.log(pi[j]) + 1.0) if pi[j] > 0 else 0.0 for j in range(k)]
        grad = [sum(((pi[i] if i == j else 0.0) - pi[i] * pi[j]) * g[j] for j in range(k)) for i in range(k)]
        z = z + learning_rate * np.array(grad)
    e = np.exp(z - z.max())
    pi = e / e.sum()
    return {"probabilities": pi, "expected_reward": float(pi @ r), "successful_mass": float(pi[r > 0].sum()),
            "entropy": categorical_entropy(pi), "logits": z}
'''),
    Variant("mode-training-loops", "module_9_reference.synthetic_mode_training", '''
def synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    import math
    if beta_entropy < 0 or learning_rate < 0 or steps < 0:
        raise ValueError("beta_entropy, learning_rate and steps must be >= 0")
    r = [float(x) for x in (DEFAULT_MODE_REWARDS if rewards is None else rewards)]
    z = [float(x) for x in (DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits)]
    if len(r) != len(z):
        raise ValueError("rewards and initial_logits must have one length")

    def softmax(v):
        top = max(v)
        e = [math.exp(x - top) for x in v]
        total = sum(e)
        return [x / total for x in e]
    for _ in range(int(steps)):
        pi = softmax(z)
        mean = sum(p * x for p, x in zip(pi, r))
        h = -sum(p * math.log(p) for p in pi if p > 0)
        z = [zk + learning_rate * (p * (rk - mean) - beta_entropy * (p * (math.log(p) + h) if p > 0 else 0.0))
             for zk, p, rk in zip(z, pi, r)]
    pi = softmax(z)
    return {"probabilities": np.array(pi), "expected_reward": float(sum(p * x for p, x in zip(pi, r))),
            "successful_mass": float(sum(p for p, x in zip(pi, r) if x > 0)),
            "entropy": categorical_entropy(np.array(pi)), "logits": np.array(z)}
'''),
    Variant("mode-training-float32", "module_9_reference.synthetic_mode_training", '''
def synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    if beta_entropy < 0 or learning_rate < 0 or steps < 0:
        raise ValueError("beta_entropy, learning_rate and steps must be >= 0")
    r = np.array(DEFAULT_MODE_REWARDS if rewards is None else rewards, dtype=np.float32)
    z = np.array(DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits, dtype=np.float32)
    if r.shape != z.shape:
        raise ValueError("rewards and initial_logits must have one shape")
    lr, beta = np.float32(learning_rate), np.float32(beta_entropy)
    for _ in range(int(steps)):  # accumulated in float32, returned in float64
        shifted = z - z.max()
        log_pi = shifted - np.log(np.exp(shifted).sum())
        pi = np.exp(log_pi)
        h = -(pi * log_pi).sum()
        z = z + lr * (pi * (r - pi @ r) - beta * pi * (log_pi + h))
    z, r = z.astype(np.float64), r.astype(np.float64)
    e = np.exp(z - z.max())
    pi = e / e.sum()
    return {"probabilities": pi, "expected_reward": float(pi @ r), "successful_mass": float(pi[r > 0].sum()),
            "entropy": categorical_entropy(pi), "logits": z}
'''),
    Variant("clipping-by-where", "module_9_reference.clipped_surrogate_terms", '''
def clipped_surrogate_terms(ratios, advantages, eps_low=0.2, eps_high=0.2):
    rho, a = np.asarray(ratios, dtype=np.float64), np.asarray(advantages, dtype=np.float64)
    if np.any(rho < 0) or not (eps_low >= 0 and eps_high >= 0):
        raise ValueError("ratios must be >= 0 and eps_low, eps_high >= 0")
    rho, a = np.broadcast_arrays(rho, a)  # raises ValueError on shapes that do not broadcast
    clipped = np.where(rho > 1 + eps_high, 1 + eps_high, np.where(rho < 1 - eps_low, 1 - eps_low, rho))
    return np.where(rho * a < clipped * a, rho * a, clipped * a)
'''),
    Variant("entropy-by-rows", "module_9_reference.categorical_entropy", '''
def categorical_entropy(probabilities):
    p = np.array(probabilities, dtype=np.float64)
    if p.ndim == 0 or p.shape[-1] == 0:
        raise ValueError("probabilities: a non-empty last axis")
    if np.any(p < 0) or np.any(p > 1) or np.any(np.abs(p.sum(axis=-1) - 1.0) > 1e-6):
        raise ValueError("probabilities: rows in [0, 1] summing to 1")
    rows = p.reshape(-1, p.shape[-1])
    out = np.array([-sum(x * np.log(x) for x in row if x > 0) for row in rows], dtype=np.float64)
    return float(out[0]) if p.ndim == 1 else out.reshape(p.shape[:-1]) + 0.0
'''),
]

_NAMES = itertools.count()


def _load(variant: Variant | None, exercise: str, tmp_path):
    """The reference learner file of ``exercise`` (with ``variant``'s function redefined after it)."""
    stem, function = exercise.split(".", 1)
    folder = "module_08" if stem.startswith("module_8") else "module_09"
    source = (SOLUTIONS_DIR / folder / f"{stem}.py").read_text(encoding="utf-8")
    if variant is not None:
        source += f"\n\n_right = {function}\n\n{variant.body}"
    path = tmp_path / f"v{next(_NAMES)}" / f"{stem}.py"
    path.parent.mkdir()
    path.write_text(source, encoding="utf-8")
    return load_module(path, f"structure_variant_{next(_NAMES)}")


def _grade(variant: Variant | None, exercise: str, tmp_path) -> dict:
    module = _load(variant, exercise, tmp_path)
    return grade_exercise(exercise, getattr(module, exercise.split(".", 1)[1]), namespace=module,
                          detect_misconceptions=False)


def _failed_labels(entry: dict) -> set[str]:
    """The labels of the checks a report entry lists as failed (its feedback lines "- '<label>' ...")."""
    found = set()
    for line in entry["feedback"].splitlines():
        if line.startswith("- '") and "'" in line[3:]:
            found.add(line[3:line.index("'", 3)])
    return found


def _structure_labels(exercise: str) -> set[str]:
    cases = [case for case in spec_for(exercise).make_cases() if isinstance(case, Case)]
    return {str(case.label) for case in cases if set(case.edge) & set(STRUCTURE_CLASSES)}


def test_the_structure_classes_are_in_the_vocabulary():
    from graders.checks.edges import CLASSES
    assert set(STRUCTURE_CLASSES) <= set(CLASSES)
    assert 8 <= len(MISTAKES) <= 12


@pytest.mark.parametrize("variant", MISTAKES, ids=lambda v: v.name)
def test_a_structural_mistake_loses_points_on_structure_cases_only(variant, tmp_path):
    entry = _grade(variant, variant.exercise, tmp_path)
    assert entry["status"] != "passed" and entry["points"] < entry["max_points"], entry["feedback"]
    failed = _failed_labels(entry)
    assert failed, entry["feedback"]
    # every check it fails is a structure case: the checks without the structure classes gave full marks
    assert failed <= _structure_labels(variant.exercise), (failed - _structure_labels(variant.exercise), entry["feedback"])


@pytest.mark.parametrize("exercise", sorted({v.exercise for v in MISTAKES + CORRECT}))
def test_the_reference_keeps_full_marks(exercise, tmp_path):
    entry = _grade(None, exercise, tmp_path)
    assert entry["status"] == "passed" and entry["points"] == entry["max_points"], entry["feedback"]


@pytest.mark.parametrize("variant", CORRECT, ids=lambda v: v.name)
def test_a_correct_variant_written_differently_keeps_full_marks(variant, tmp_path):
    entry = _grade(variant, variant.exercise, tmp_path)
    assert entry["status"] == "passed" and entry["points"] == entry["max_points"], entry["feedback"]


def test_the_chaotic_regime_is_checked_for_the_spec_s_guarantees_not_one_trajectory(tmp_path):
    """At beta 500 and lr 180 a one-ulp difference between two tied logits decides the end state; the check
    there accepts either end state that is finite, normalised and self-consistent, and refuses one that is not."""
    from graders.checks.module_9_reference.training import CHAOTIC, _consistent_state

    case = Case(kwargs={"beta_entropy": 500.0, "learning_rate": 180.0, "steps": 60}, label=CHAOTIC)
    reference = _load(None, "module_9_reference.synthetic_mode_training", tmp_path)
    state = reference.synthetic_mode_training(**case.kwargs)
    assert _consistent_state(state, case) is None
    # the other end state (the tie broken the other way: one mode holds the mass)
    logits = np.array([-1e4, -1e4, 1e4, 9.8e3])
    pi = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    other = {"probabilities": pi, "logits": logits, "expected_reward": 0.0, "successful_mass": 0.0,
             "entropy": float(-(pi[pi > 0] * np.log(pi[pi > 0])).sum())}
    assert _consistent_state(other, case) is None
    broken = dict(other, probabilities=np.array([0.0, 0.0, np.nan, np.nan]))
    assert _consistent_state(broken, case) is not None
    unnormalised = dict(other, probabilities=np.array([0.0, 0.0, 0.7, 0.7]))
    assert _consistent_state(unnormalised, case) is not None
    wrong_entropy = dict(other, entropy=0.69)
    assert _consistent_state(wrong_entropy, case) is not None


def test_the_mutation_draws_hold_the_structure_classes():
    from graders.mutation.draws import STRUCTURE_VARIANTS, extra_cases, structure_draws
    from graders.text import Text

    case = Case(args=(np.array([[0.5, 1.5, 1.1], [1.1, 0.9, 2.0]]), np.array([[1.0], [-1.0]]), 0.2),
                label=Text("rows", "rows"))
    draws = {str(d.label).split("[")[-1].rstrip("]"): d for d in structure_draws(case, "rows")}
    assert set(draws) == set(STRUCTURE_VARIANTS) - {"as_arrays"}  # no list to turn into an array
    assert isinstance(draws["as_lists"].args[0], list)
    assert draws["float32"].args[0].dtype == np.float32
    assert isinstance(draws["numpy_scalars"].args[2], np.floating)
    assert draws["batch_of_one"].args[0].shape == (1, 3) and draws["batch_of_one"].args[1].shape == (1, 1)
    assert draws["empty_batch"].args[0].shape == (0, 3) and draws["empty_batch"].args[1].shape == (0, 1)
    assert draws["square"].args[0].shape == (2, 2) and draws["square"].args[1].shape == (2, 1)
    lists = Case(kwargs={"rewards": [1.0, 0.0], "steps": 3}, label=Text("lists", "lists"))
    kinds = {str(d.label).split("[")[-1].rstrip("]") for d in extra_cases([lists], harness=False)}
    assert {"as_arrays", "numpy_scalars"} <= kinds


def test_a_harness_s_float64_tensors_are_drawn_as_float32_too():
    # a training exercise's inputs are tensors (TensorSpec): the float32 class retypes them, data and
    # requires_grad kept, so a mutant that hard-codes float64 (`.double()`, a float64 constant that promotes)
    # is no longer equal to the reference on every draw
    from graders.checks import spec_for
    from graders.engine.values.codec import TensorSpec
    from graders.mutation.draws import extra_cases, structure_draws
    from graders.text import Text

    tensor = TensorSpec(np.array([[-1.0, -2.0], [-0.5, -3.0]]), "float64", True)
    mask = TensorSpec(np.array([[1, 1], [1, 0]]), "int64", False)
    case = Case(args=(tensor, mask), label=Text("t", "t"))
    (drawn,) = [d for d in structure_draws(case, "t") if str(d.label).endswith("[float32]")]
    retyped, kept = drawn.args
    assert retyped.dtype == "float32" and retyped.data.dtype == np.float32 and retyped.requires_grad
    np.testing.assert_array_equal(retyped.data, tensor.data.astype(np.float32))
    assert kept is mask  # an integer tensor keeps its dtype
    for exercise in ("module_9_training.grpo_loss", "module_8_training.dpo_loss", "module_8_training.sequence_logprobs"):
        spec = spec_for(exercise)
        assert [d for d in extra_cases(list(spec.cases()), spec.call) if str(d.label).endswith("[float32]")], exercise
