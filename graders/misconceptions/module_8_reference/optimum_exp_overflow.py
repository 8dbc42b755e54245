"""pi_ref exp(r / beta) / Z with a plain exp: inf / inf = NaN as soon as r / beta exceeds ~709."""

EXERCISE = "module_8_reference.optimal_kl_policy"
NAME = "optimum_exp_overflow"
HINT = "NaN for large r / beta: exp overflows; subtract the largest logit first (log-sum-exp), pi* is shift invariant"


def optimal_kl_policy(reference, rewards, beta):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    beta = float(_positive("beta", beta))
    with np.errstate(over="ignore", invalid="ignore"):
        weights = reference * np.exp(rewards / beta)
        return weights / weights.sum()
