"""softplus(-(p_w - p_l)) with p = e^m: probabilities compared instead of log-odds."""

EXERCISE = "module_8_reference.orpo_total_loss"
NAME = "orpo_probability_difference"
HINT = "looks like a difference of probabilities; ORPO compares LOG-ODDS, logodds(m) = m - log(1 - exp(m))"


def orpo_total_loss(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    nll = _non_negative("chosen_nll", chosen_nll)
    lam = _non_negative("lam", lam)
    chosen = _as_array("chosen_mean_logp", chosen_mean_logp)
    rejected = _as_array("rejected_mean_logp", rejected_mean_logp)
    if np.any(chosen >= 0):
        raise ValueError("chosen_mean_logp must be < 0")
    if np.any(rejected >= 0):
        raise ValueError("rejected_mean_logp must be < 0")
    ratio = np.exp(chosen) - np.exp(rejected)
    return _out(nll + lam * np.logaddexp(0.0, -ratio), nll, chosen, rejected, lam)
