"""The tilted weights pi_ref exp(r / beta) returned without dividing by the partition function Z."""

EXERCISE = "module_8_reference.optimal_kl_policy"
NAME = "optimum_not_normalised"
HINT = "the result does not sum to 1: divide pi_ref * exp(r / beta) by Z = sum_y pi_ref(y) exp(r(y) / beta)"


def optimal_kl_policy(reference, rewards, beta):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    beta = float(_positive("beta", beta))
    return reference * np.exp(rewards / beta)
