"""+beta (log pi - log pi_ref): the KL term rewards drifting away from the reference."""

EXERCISE = "module_8_reference.shape_token_rewards"
NAME = "shaping_kl_sign_flipped"
HINT = "the KL term has the wrong sign: r_t = -beta (log pi - log pi_ref) penalises moving away from pi_ref"


def shape_token_rewards(policy_logp, reference_logp, terminal_reward, beta, mask):
    mask = _as_array("mask", mask)
    if not np.all((mask == 0) | (mask == 1)):
        raise ValueError("mask must hold only 0 and 1")
    active = mask == 1
    policy_logp = np.array(policy_logp, dtype=np.float64)
    reference_logp = np.array(reference_logp, dtype=np.float64)
    _same_shape(("policy_logp", "reference_logp", "mask"), policy_logp, reference_logp, mask)
    beta = float(_non_negative("beta", beta))
    rows = active.reshape(-1, active.shape[-1])
    if not np.all(rows.any(axis=1)):
        raise ValueError("mask must have at least one active token in every row")
    terminal = _as_array("terminal_reward", terminal_reward).reshape(-1)
    shaped = np.where(active, beta * (policy_logp - reference_logp), 0.0).reshape(rows.shape)
    last = rows.shape[1] - 1 - np.argmax(rows[:, ::-1], axis=1)
    shaped[np.arange(rows.shape[0]), last] += np.broadcast_to(terminal, (rows.shape[0],))
    return shaped.reshape(mask.shape)
