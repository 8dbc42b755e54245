# Typical mistakes, appended to the reference module_8_reference.py by `rl4llm demo`.


def simpo_loss(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    # mistake: the summed log-probabilities are used as they are -- SimPO divides each by its length
    z = beta * np.asarray(chosen_logp_sum, dtype=float) - beta * np.asarray(rejected_logp_sum, dtype=float)
    z = z - target_margin
    loss = np.logaddexp(0.0, -z)
    return float(loss) if np.ndim(loss) == 0 else loss
