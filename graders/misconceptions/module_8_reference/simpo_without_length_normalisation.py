"""z = beta (logp_w - logp_l) - gamma: the summed log-probabilities not divided by the lengths."""

EXERCISE = "module_8_reference.simpo_loss"
NAME = "simpo_without_length_normalisation"
HINT = "the lengths are unused: SimPO's implicit reward is the AVERAGE log-probability, beta logp / |y|"


def simpo_loss(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    chosen = _as_array("chosen_logp_sum", chosen_logp_sum)
    rejected = _as_array("rejected_logp_sum", rejected_logp_sum)
    chosen_len = _positive("chosen_length", chosen_length)
    rejected_len = _positive("rejected_length", rejected_length)
    beta = _positive("beta", beta)
    gamma = _as_array("target_margin", target_margin)
    z = beta * chosen - beta * rejected - gamma
    return _out(np.logaddexp(0.0, -z), chosen, rejected, chosen_len, rejected_len, beta, gamma)
