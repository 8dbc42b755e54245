"""DAPO normalised per response (A_i / (G * |o_i|)): that is original GRPO's sample-level mean."""

EXERCISE = "module_9_reference.dapo_token_weights"
NAME = "per_response_normalisation"
HINT = "looks like a normalisation per response (A_i / (G |o_i|)); DAPO divides by the group's TOTAL token count"


def dapo_token_weights(rewards, lengths, *, eps=1e-6):
    rewards = np.asarray(rewards, dtype=np.float64)
    sizes = [int(size) for size in lengths]
    group = rewards.size  # G
    advantages = group_relative_advantages(rewards, eps=eps)  # standardised
    return [np.full(size, a / (group * size)) for a, size in zip(advantages, sizes)]
