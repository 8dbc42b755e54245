"""The optimum with exp(beta r) instead of exp(r / beta): the KL coefficient on the wrong side."""

EXERCISE = "module_8_reference.optimal_kl_policy"
NAME = "optimum_beta_times_reward"
HINT = "looks like exp(beta * r); the KL-regularised optimum tilts pi_ref by exp(r / beta)"


def optimal_kl_policy(reference, rewards, beta):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    beta = float(_positive("beta", beta))
    support = reference > 0
    logits = np.full(reference.shape, -np.inf)
    logits[support] = np.log(reference[support]) + beta * rewards[support]
    weights = np.exp(logits - logits[support].max())
    return weights / weights.sum()
