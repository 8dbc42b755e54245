"""NLL + softplus(-log odds ratio): the weight lambda of the odds-ratio term forgotten."""

EXERCISE = "module_8_reference.orpo_total_loss"
NAME = "orpo_lambda_missing"
HINT = "lambda is missing: the odds-ratio term is weighted, L = NLL_w + lambda softplus(-(logodds_w - logodds_l))"


def orpo_total_loss(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    nll = _non_negative("chosen_nll", chosen_nll)
    lam = _non_negative("lam", lam)
    chosen = _as_array("chosen_mean_logp", chosen_mean_logp)
    rejected = _as_array("rejected_mean_logp", rejected_mean_logp)
    if np.any(chosen >= 0):
        raise ValueError("chosen_mean_logp must be < 0")
    if np.any(rejected >= 0):
        raise ValueError("rejected_mean_logp must be < 0")
    ratio = (chosen - np.log1p(-np.exp(chosen))) - (rejected - np.log1p(-np.exp(rejected)))
    return _out(nll + np.logaddexp(0.0, -ratio), nll, chosen, rejected, lam)
