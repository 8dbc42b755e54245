"""KL(pi_ref || pi*) instead of KL(pi* || pi_ref): the arguments of the divergence swapped."""

EXERCISE = "module_8_reference.reward_kl_frontier"
NAME = "frontier_reverse_kl"
HINT = "looks like the reverse KL(pi_ref || pi*); the regulariser is KL(pi* || pi_ref) = sum pi* log(pi* / pi_ref)"


def reward_kl_frontier(reference, rewards, betas):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    betas = _positive("betas", betas).reshape(-1)
    policies = np.stack([optimal_kl_policy(reference, rewards, b) for b in betas])
    support = reference > 0
    kl = (reference[support] * np.log(reference[support] / policies[:, support])).sum(axis=1)
    return {"beta": betas.copy(), "reward": policies @ rewards, "kl": kl, "policies": policies}
