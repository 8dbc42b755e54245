"""sum pi* log(pi_ref / pi*): the log-ratio upside down, so the "KL" comes out negative."""

EXERCISE = "module_8_reference.reward_kl_frontier"
NAME = "frontier_kl_ratio_inverted"
HINT = "the KL is negative: the log-ratio is upside down; KL(pi* || pi_ref) = sum pi* log(pi* / pi_ref) >= 0"


def reward_kl_frontier(reference, rewards, betas):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    betas = _positive("betas", betas).reshape(-1)
    policies = np.stack([optimal_kl_policy(reference, rewards, b) for b in betas])
    ratio = np.divide(reference, policies, out=np.ones_like(policies), where=policies > 0)
    kl = (policies * np.log(ratio)).sum(axis=1)
    return {"beta": betas.copy(), "reward": policies @ rewards, "kl": kl, "policies": policies}
