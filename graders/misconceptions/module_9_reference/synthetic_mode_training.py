"""Wrong versions of z <- z + lr * dJ/dz, dJ/dz_k = pi_k (r_k - sum_j pi_j r_j) - beta pi_k (log pi_k + H(pi))
(synthetic_mode_training).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _train(ascent, beta_entropy, learning_rate, steps, rewards, initial_logits):
    """``steps`` updates z <- z + lr * ascent(pi, log_pi, entropy, r, beta) from the given start, then the results."""
    beta, lr = float(beta_entropy), float(learning_rate)
    r = np.array(DEFAULT_MODE_REWARDS if rewards is None else rewards, dtype=np.float64)
    z = np.array(DEFAULT_MODE_LOGITS if initial_logits is None else initial_logits, dtype=np.float64)

    def log_softmax(logits):
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum())

    for _ in range(int(steps)):
        log_pi = log_softmax(z)
        pi = np.exp(log_pi)
        entropy = -(pi * log_pi).sum()
        z = z + lr * ascent(pi, log_pi, entropy, r, beta)
    log_pi = log_softmax(z)
    pi = np.exp(log_pi)
    return {"probabilities": pi, "expected_reward": float(pi @ r), "successful_mass": float(pi[r > 0].sum()),
            "entropy": float(-(pi * log_pi).sum()), "logits": z}


def entropy_gradient_missing_h(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    """looks like dH/dz_k = -pi_k log pi_k; through the softmax it is -pi_k (log pi_k + H)

    ru: похоже на dH/dz_k = -pi_k log pi_k; через softmax получается -pi_k (log pi_k + H)
    """
    def ascent(pi, log_pi, entropy, r, beta):
        return pi * (r - pi @ r) - beta * pi * log_pi  # no + H
    return _train(ascent, beta_entropy, learning_rate, steps, rewards, initial_logits)


def entropy_gradient_sign(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    """looks like the entropy term added with the wrong sign; dH/dz_k = -pi_k (log pi_k + H),
    so dJ/dz_k = pi_k (r_k - pi.r) - beta pi_k (log pi_k + H)

    ru: похоже, энтропийный член добавлен с неверным знаком; dH/dz_k = -pi_k (log pi_k + H), поэтому dJ/dz_k = pi_k
    (r_k - pi.r) - beta pi_k (log pi_k + H)
    """
    def ascent(pi, log_pi, entropy, r, beta):
        return pi * (r - pi @ r) + beta * pi * (log_pi + entropy)  # the entropy term added
    return _train(ascent, beta_entropy, learning_rate, steps, rewards, initial_logits)


def gradient_descent(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    """looks like gradient DESCENT: J is a reward to maximise, so z <- z + lr * dJ/dz

    ru: похоже на градиентный СПУСК: J — награда, которую максимизируют, поэтому z <- z + lr * dJ/dz
    """
    def ascent(pi, log_pi, entropy, r, beta):
        return -(pi * (r - pi @ r) - beta * pi * (log_pi + entropy))  # z <- z - lr * dJ/dz
    return _train(ascent, beta_entropy, learning_rate, steps, rewards, initial_logits)


def no_baseline_term(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    """looks like dJ/dz_k = pi_k r_k; through the softmax, dJ/dz_k = pi_k (r_k - sum_j pi_j r_j)

    ru: похоже на dJ/dz_k = pi_k r_k; через softmax dJ/dz_k = pi_k (r_k - sum_j pi_j r_j)
    """
    def ascent(pi, log_pi, entropy, r, beta):
        return pi * r - beta * pi * (log_pi + entropy)  # pi_k r_k, without - pi_k sum_j pi_j r_j
    return _train(ascent, beta_entropy, learning_rate, steps, rewards, initial_logits)


def probability_gradient(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
    """looks like z <- z + lr * r (the gradient w.r.t. probabilities); w.r.t. logits it is pi_k (r_k - pi.r)

    ru: похоже на z <- z + lr * r (градиент по вероятностям); по логитам он равен pi_k (r_k - pi.r)
    """
    def ascent(pi, log_pi, entropy, r, beta):
        return r - beta * (log_pi + 1.0)  # dJ/dpi, the softmax Jacobian skipped
    return _train(ascent, beta_entropy, learning_rate, steps, rewards, initial_logits)
