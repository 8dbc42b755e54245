"""Adding dJ/dpi = r to the logits, skipping the softmax Jacobian."""

EXERCISE = "module_9_reference.synthetic_mode_training"
NAME = "probability_gradient"
HINT = 'looks like z <- z + lr * r (the gradient w.r.t. probabilities); w.r.t. logits it is pi_k (r_k - pi.r)'


def synthetic_mode_training(beta_entropy=0.0, learning_rate=0.18, steps=60, *, rewards=None, initial_logits=None):
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
        z = z + lr * (r - beta * (log_pi + 1.0))
    log_pi = log_softmax(z)
    pi = np.exp(log_pi)
    return {"probabilities": pi, "expected_reward": float(pi @ r), "successful_mass": float(pi[r > 0].sum()),
            "entropy": float(-(pi * log_pi).sum()), "logits": z}
