"""R added at position T - 1 whatever the mask: right padding or a trailing gap gets the reward."""

EXERCISE = "module_8_reference.shape_token_rewards"
NAME = "shaping_terminal_on_last_position"
HINT = "R landed on the last POSITION; with padding after the response it belongs on the last ACTIVE token"


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
    shaped = np.where(active, -beta * (policy_logp - reference_logp), 0.0).reshape(rows.shape)
    shaped[:, -1] += np.broadcast_to(terminal, (rows.shape[0],))
    return shaped.reshape(mask.shape)
