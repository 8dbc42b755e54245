"""z = beta logp_w/|y_w| - beta logp_l/|y_l| + gamma: the target margin added instead of subtracted."""

EXERCISE = "module_8_reference.simpo_loss"
NAME = "simpo_plus_gamma"
HINT = "gamma has the wrong sign: the target margin is SUBTRACTED, z = beta logp_w/|y_w| - beta logp_l/|y_l| - gamma"


def simpo_loss(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    chosen = _as_array("chosen_logp_sum", chosen_logp_sum)
    rejected = _as_array("rejected_logp_sum", rejected_logp_sum)
    chosen_len = _positive("chosen_length", chosen_length)
    rejected_len = _positive("rejected_length", rejected_length)
    beta = _positive("beta", beta)
    gamma = _as_array("target_margin", target_margin)
    z = beta * chosen / chosen_len - beta * rejected / rejected_len + gamma
    return _out(np.logaddexp(0.0, -z), chosen, rejected, chosen_len, rejected_len, beta, gamma)
