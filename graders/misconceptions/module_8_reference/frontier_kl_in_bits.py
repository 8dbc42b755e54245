"""The KL measured in bits (log2) instead of nats."""

EXERCISE = "module_8_reference.reward_kl_frontier"
NAME = "frontier_kl_in_bits"
HINT = "the KL is off by a factor 1/ln 2 = 1.4427: use natural logarithms (nats), not log2"


def reward_kl_frontier(reference, rewards, betas):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    betas = _positive("betas", betas).reshape(-1)
    policies = np.stack([optimal_kl_policy(reference, rewards, b) for b in betas])
    ratio = np.divide(policies, reference, out=np.ones_like(policies), where=policies > 0)
    kl = np.maximum((policies * np.log2(ratio)).sum(axis=1), 0.0)
    return {"beta": betas.copy(), "reward": policies @ rewards, "kl": kl, "policies": policies}
