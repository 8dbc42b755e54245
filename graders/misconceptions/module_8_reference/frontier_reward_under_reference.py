"""The expected reward taken under pi_ref instead of under the optimum pi*."""

EXERCISE = "module_8_reference.reward_kl_frontier"
NAME = "frontier_reward_under_reference"
HINT = "the expected reward does not change with beta: take E[r] under pi* (policies @ rewards), not under pi_ref"


def reward_kl_frontier(reference, rewards, betas):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    betas = _positive("betas", betas).reshape(-1)
    policies = np.stack([optimal_kl_policy(reference, rewards, b) for b in betas])
    ratio = np.divide(policies, reference, out=np.ones_like(policies), where=policies > 0)
    kl = np.maximum((policies * np.log(ratio)).sum(axis=1), 0.0)
    expected = np.full(betas.shape, float(reference @ rewards))
    return {"beta": betas.copy(), "reward": expected, "kl": kl, "policies": policies}
