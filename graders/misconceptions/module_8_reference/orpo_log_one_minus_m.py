"""logodds(m) = m - log(1 - m): the log-probability m used where the probability e^m belongs."""

EXERCISE = "module_8_reference.orpo_total_loss"
NAME = "orpo_log_one_minus_m"
HINT = "looks like log(1 - m); m is a LOG-probability, so 1 - p is 1 - exp(m): logodds(m) = m - log(1 - exp(m))"


def orpo_total_loss(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    nll = _non_negative("chosen_nll", chosen_nll)
    lam = _non_negative("lam", lam)
    chosen = _as_array("chosen_mean_logp", chosen_mean_logp)
    rejected = _as_array("rejected_mean_logp", rejected_mean_logp)
    if np.any(chosen >= 0):
        raise ValueError("chosen_mean_logp must be < 0")
    if np.any(rejected >= 0):
        raise ValueError("rejected_mean_logp must be < 0")
    ratio = (chosen - np.log(1.0 - chosen)) - (rejected - np.log(1.0 - rejected))
    return _out(nll + lam * np.logaddexp(0.0, -ratio), nll, chosen, rejected, lam)
