"""Wrong versions of L = softplus(-z), z = beta logp_w/|y_w| - beta logp_l/|y_l| - gamma (simpo_loss).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def simpo_beta_scales_gamma(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    """gamma got multiplied by beta: beta scales only the length-normalised log-probabilities,
    gamma is subtracted as is

    ru: gamma умножена на beta: beta масштабирует только нормированные на длину логарифмы вероятностей, gamma
    вычитается как есть
    """
    values = (chosen_logp_sum, rejected_logp_sum, chosen_length, rejected_length, beta, target_margin)
    chosen, rejected, chosen_len, rejected_len, beta, gamma = (np.asarray(v, dtype=np.float64) for v in values)
    z = beta * (chosen / chosen_len - rejected / rejected_len - gamma)
    return _out(np.logaddexp(0.0, -z), chosen, rejected, chosen_len, rejected_len, beta, gamma)


def simpo_lengths_swapped(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    """the lengths are swapped: normalise each response by its OWN length, logp_w / |y_w| and logp_l / |y_l|

    ru: длины перепутаны: нормируйте каждый ответ на его СОБСТВЕННУЮ длину, logp_w / |y_w| и logp_l / |y_l|
    """
    return _right(chosen_logp_sum, rejected_length, rejected_logp_sum, chosen_length, beta, target_margin)


def simpo_plus_gamma(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    """gamma has the wrong sign: the target margin is SUBTRACTED,
    z = beta logp_w/|y_w| - beta logp_l/|y_l| - gamma

    ru: у gamma не тот знак: целевой отступ ВЫЧИТАЕТСЯ, z = beta logp_w/|y_w| - beta logp_l/|y_l| - gamma
    """
    minus_gamma = np.negative(target_margin)
    return _right(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, minus_gamma)


def simpo_without_length_normalisation(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta,
                                       target_margin):
    """the lengths are unused: SimPO's implicit reward is the AVERAGE log-probability, beta logp / |y|

    ru: длины не используются: неявная награда SimPO — СРЕДНИЙ логарифм вероятности, beta logp / |y|
    """
    return _right(chosen_logp_sum, 1.0, rejected_logp_sum, 1.0, beta, target_margin)  # |y| = 1


def simpo_sign_flipped(chosen_logp_sum, chosen_length, rejected_logp_sum, rejected_length, beta, target_margin):
    """the loss grows as the chosen response gains: SimPO is -log sigma(z) = softplus(-z),
    z = beta logp_w/|y_w| - beta logp_l/|y_l| - gamma

    ru: потеря растёт, когда выбранный ответ обгоняет отвергнутый: SimPO равна -log sigma(z) = softplus(-z), z = beta
    logp_w/|y_w| - beta logp_l/|y_l| - gamma
    """
    values = (chosen_logp_sum, rejected_logp_sum, chosen_length, rejected_length, beta, target_margin)
    chosen, rejected, chosen_len, rejected_len, beta, gamma = (np.asarray(v, dtype=np.float64) for v in values)
    z = beta * chosen / chosen_len - beta * rejected / rejected_len - gamma
    return _out(np.logaddexp(0.0, z), chosen, rejected, chosen_len, rejected_len, beta, gamma)  # softplus(+z)
