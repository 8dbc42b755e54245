"""Wrong versions of L = NLL_w + lam softplus(-(logodds(m_w) - logodds(m_l))),
logodds(m) = m - log(1 - e^m) (orpo_total_loss).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam, log_odds):
    """NLL_w + lam softplus(-(log_odds(m_w) - log_odds(m_l))) with the given log_odds, without _right's checks."""
    nll, chosen, rejected, lam = (np.asarray(value, dtype=np.float64)
                                  for value in (chosen_nll, chosen_mean_logp, rejected_mean_logp, lam))
    ratio = log_odds(chosen) - log_odds(rejected)
    return _out(nll + lam * np.logaddexp(0.0, -ratio), nll, chosen, rejected, lam)


def orpo_lambda_missing(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """lambda is missing: the odds-ratio term is weighted, L = NLL_w + lambda softplus(-(logodds_w - logodds_l))

    ru: нет lambda: член отношения шансов взвешен, L = NLL_w + lambda softplus(-(logodds_w - logodds_l))
    """
    return _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, np.ones(np.shape(lam)),  # lam = 1
                 lambda m: m - np.log1p(-np.exp(m)))


def orpo_log_one_minus_m(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """looks like log(1 - m); m is a LOG-probability, so 1 - p is 1 - exp(m): logodds(m) = m - log(1 - exp(m))

    ru: похоже на log(1 - m); m — ЛОГАРИФМ вероятности, поэтому 1 - p равно 1 - exp(m): logodds(m) = m - log(1 -
    exp(m))
    """
    return _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam, lambda m: m - np.log(1.0 - m))


def orpo_log_probability_as_log_odds(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """the log(1 - exp(m)) part of the log-odds is missing: logodds(m) = m - log(1 - exp(m)), not m

    ru: в логарифме шансов нет части log(1 - exp(m)): logodds(m) = m - log(1 - exp(m)), а не m
    """
    return _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam, lambda m: m)


def orpo_probability_difference(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """looks like a difference of probabilities; ORPO compares LOG-ODDS, logodds(m) = m - log(1 - exp(m))

    ru: похоже на разность вероятностей; ORPO сравнивает ЛОГАРИФМЫ ШАНСОВ, logodds(m) = m - log(1 - exp(m))
    """
    return _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam, np.exp)  # e^m_w - e^m_l


def orpo_log_one_plus_exp(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """looks like log(1 + e^m); the odds are p / (1 - p) with p = e^m: logodds(m) = m - log(1 - e^m)
    (log1p(-exp(m)), or log(-expm1(m)) near 0)

    ru: похоже на log(1 + e^m); шансы равны p / (1 - p) при p = e^m: logodds(m) = m - log(1 - e^m)
    (log1p(-exp(m)), а около 0 — log(-expm1(m)))
    """
    return _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam, lambda m: m - np.log1p(np.exp(m)))


def orpo_log_odds_unstable_near_zero(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam):
    """wrong (or not finite) for m close to 0: 1 - exp(m) loses its digits there; compute log(1 - e^m) as
    log(-expm1(m)) near 0 (and log1p(-exp(m)) far from 0), finite down to m = -1e-300

    ru: неверно (или не конечно) при m около 0: в 1 - exp(m) там теряются цифры; вычисляйте log(1 - e^m) как
    log(-expm1(m)) около 0 (и log1p(-exp(m)) вдали от 0), конечно вплоть до m = -1e-300
    """
    return _orpo(chosen_nll, chosen_mean_logp, rejected_mean_logp, lam, lambda m: m - np.log1p(-np.exp(m)))
