"""logp_w / |y_l| and logp_l / |y_w|: each sum divided by the OTHER response's length."""

EXERCISE = "module_8_reference.simpo_loss"
NAME = "simpo_lengths_swapped"
HINT = "the lengths are swapped: normalise each response by its OWN length, logp_w / |y_w| and logp_l / |y_l|"


def simpo_loss(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    chosen = _as_array("chosen_logp_sum", chosen_logp_sum)
    rejected = _as_array("rejected_logp_sum", rejected_logp_sum)
    chosen_len = _positive("chosen_length", chosen_length)
    rejected_len = _positive("rejected_length", rejected_length)
    beta = _positive("beta", beta)
    gamma = _as_array("target_margin", target_margin)
    z = beta * chosen / rejected_len - beta * rejected / chosen_len - gamma
    return _out(np.logaddexp(0.0, -z), chosen, rejected, chosen_len, rejected_len, beta, gamma)
