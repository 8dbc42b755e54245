"""Summing over every position (prompt and padding included) instead of the masked response tokens."""

EXERCISE = "module_8_training.sequence_logprobs"
NAME = "ignore_mask"
HINT = ("looks like every position was summed; only the positions where mask is True (the response "
        "tokens and eos) belong to log pi(y|x), not the prompt or the padding")


def sequence_logprobs(logits, input_ids, mask):
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)
    token_logps = log_probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return token_logps.sum(dim=-1)
