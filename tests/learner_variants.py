"""Learner files with one exercise returning the right values in the wrong TYPE (the spec's types).

Each variant is the reference learner file with one function redefined after it: the same values, but a
float32 array, a float array for a bool one, a list for an array, a bool for an int, detached or NumPy
results for tensors. The grader must fail each on exactly its exercise (tests/test_judge_truth.py) and a
public test of that function must fail too (tests/test_public_means_full.py): green public tests mean
full marks.
"""

from __future__ import annotations

from dataclasses import dataclass

from graders.paths import SOLUTIONS_DIR


@dataclass(frozen=True)
class TypeVariant:
    name: str
    exercise: str  # "<stem>.<function>"
    body: str  # the function's new definition; `_right` is the reference's
    named: str = ""  # the one catalogue entry the grader may name for it ("" : none)

    @property
    def stem(self) -> str:
        return self.exercise.split(".", 1)[0]

    @property
    def function(self) -> str:
        return self.exercise.split(".", 1)[1]


TYPE_VARIANTS = [
    TypeVariant("float32-advantages", "module_9_reference.group_relative_advantages",
                "def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):\n"
                "    return _right(rewards, scale, eps=eps, ddof=ddof).astype(np.float32)\n"),
    TypeVariant("float-clip-activity", "module_9_reference.clip_activity",
                "def clip_activity(ratios, advantages, eps_low=0.2, eps_high=0.2):\n"
                "    return _right(ratios, advantages, eps_low, eps_high).astype(float)\n"),
    TypeVariant("list-contributions", "module_9_reference.response_contributions",
                "def response_contributions(token_weights):\n"
                "    return [float(x) for x in _right(token_weights)]\n"),
    TypeVariant("bool-verifier", "module_9_reference.verify_numeric_answer",
                "def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):\n"
                "    return bool(_right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol))\n"),
    TypeVariant("bool-accuracy", "module_9_reference.verify_detailed",
                "def verify_detailed(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):\n"
                "    result = _right(text, reference, rel_tol=rel_tol, abs_tol=abs_tol)\n"
                "    return VerifierResult(reward=result.reward, accuracy=bool(result.accuracy),\n"
                "                          status=result.status, extracted=result.extracted)\n"),
    TypeVariant("float32-k3", "module_9_reference.k3_kl",
                "def k3_kl(logprobs, ref_logprobs):\n"
                "    return _right(logprobs, ref_logprobs).astype(np.float32)\n"),
    TypeVariant("list-policy", "module_8_reference.optimal_kl_policy",
                "def optimal_kl_policy(reference, rewards, beta):\n"
                "    return _right(reference, rewards, beta).tolist()\n"),
    TypeVariant("numpy-rewards", "module_8_training.dpo_loss",
                "def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,\n"
                "             reference_rejected_logps, *, beta, label_smoothing=0.0):\n"
                "    loss, chosen, rejected = _right(policy_chosen_logps, policy_rejected_logps,\n"
                "                                    reference_chosen_logps, reference_rejected_logps,\n"
                "                                    beta=beta, label_smoothing=label_smoothing)\n"
                "    return loss, chosen.numpy(), rejected.numpy()\n"),
    TypeVariant("undetached-rewards", "module_8_training.dpo_loss",
                "def dpo_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,\n"
                "             reference_rejected_logps, *, beta, label_smoothing=0.0):\n"
                "    loss, _, _ = _right(policy_chosen_logps, policy_rejected_logps,\n"
                "                        reference_chosen_logps, reference_rejected_logps,\n"
                "                        beta=beta, label_smoothing=label_smoothing)\n"
                "    return (loss, beta * (policy_chosen_logps - reference_chosen_logps),\n"
                "            beta * (policy_rejected_logps - reference_rejected_logps))\n"),
]


def variant_source(variant: TypeVariant) -> str:
    """The reference learner file with ``variant``'s function redefined after it (the reference's kept as
    ``_right``)."""
    folder = "module_08" if variant.stem.startswith("module_8") else "module_09"
    reference = (SOLUTIONS_DIR / folder / f"{variant.stem}.py").read_text(encoding="utf-8")
    return f"{reference}\n\n_right = {variant.function}\n\n\n{variant.body}"


# ---------------------------------------------------------------------------
# Realistic mistakes found outside the catalogue: the grader claims no name for them, or only the one
# entry that was catalogued for exactly that mistake since (``named``)
# ---------------------------------------------------------------------------
OUTSIDE_MISTAKES = [
    TypeVariant("boxes-ignored", "module_9_reference.verify_numeric_answer",
                "def verify_numeric_answer(text, reference, *, rel_tol=1e-6, abs_tol=1e-6):\n"
                "    return _right(text.replace('boxed', 'b'), reference, rel_tol=rel_tol, abs_tol=abs_tol)\n"),
    TypeVariant("batch-std-group-mean", "module_9_reference.group_relative_advantages",
                "def group_relative_advantages(rewards, scale=True, *, eps=1e-6, ddof=0):\n"
                "    centred = _right(rewards, False, eps=eps, ddof=ddof)\n"
                "    if not scale:\n"
                "        return centred\n"
                "    r = np.asarray(rewards, dtype=np.float64)\n"
                "    return np.where(centred == 0.0, 0.0, centred / (r.std(ddof=ddof) + eps))\n",
                named="batch_std"),  # catalogued since: the right name, and only it
    TypeVariant("minimum-for-maximum", "module_8_reference.dual_ascent_step",
                "def dual_ascent_step(multipliers, observed_costs, limits, learning_rate):\n"
                "    _right(multipliers, observed_costs, limits, learning_rate)  # its argument checks\n"
                "    step = np.asarray(multipliers, dtype=np.float64) + learning_rate * (\n"
                "        np.asarray(observed_costs, dtype=np.float64) - np.asarray(limits, dtype=np.float64))\n"
                "    return np.minimum(0.0, step)\n"),
]


def outside_source(mistake: TypeVariant) -> str:
    """The reference learner file with an outside mistake's function redefined after it."""
    return variant_source(mistake)
