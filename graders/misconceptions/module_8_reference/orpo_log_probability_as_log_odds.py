"""softplus(-(m_w - m_l)): the mean log-probabilities used as if they were log-odds."""

EXERCISE = "module_8_reference.orpo_total_loss"
NAME = "orpo_log_probability_as_log_odds"
HINT = "the log(1 - exp(m)) part of the log-odds is missing: logodds(m) = m - log(1 - exp(m)), not m"


def orpo_total_loss(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    nll = _non_negative("chosen_nll", chosen_nll)
    lam = _non_negative("lam", lam)
    chosen = _as_array("chosen_mean_logp", chosen_mean_logp)
    rejected = _as_array("rejected_mean_logp", rejected_mean_logp)
    if np.any(chosen >= 0):
        raise ValueError("chosen_mean_logp must be < 0")
    if np.any(rejected >= 0):
        raise ValueError("rejected_mean_logp must be < 0")
    ratio = chosen - rejected
    return _out(nll + lam * np.logaddexp(0.0, -ratio), nll, chosen, rejected, lam)
