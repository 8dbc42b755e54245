"""softmax(r / beta): the reference policy is forgotten (a Boltzmann policy instead of a tilted pi_ref)."""

EXERCISE = "module_8_reference.optimal_kl_policy"
NAME = "optimum_without_reference"
HINT = "looks like softmax(r / beta) alone; the optimum is pi_ref(y) exp(r(y) / beta) / Z (weighted by pi_ref)"


def optimal_kl_policy(reference, rewards, beta):
    reference = _distribution("reference", reference)
    rewards = _as_array("rewards", rewards)
    _same_shape(("reference", "rewards"), reference, rewards)
    beta = float(_positive("beta", beta))
    logits = rewards / beta
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()
