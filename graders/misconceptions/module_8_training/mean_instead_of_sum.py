"""Averaging the token log-probabilities over the response instead of summing them."""

EXERCISE = "module_8_training.sequence_logprobs"
NAME = "mean_instead_of_sum"
HINT = ("looks like the mean over the response tokens; log pi(y|x) is the SUM of the token "
        "log-probabilities (a mean is SimPO's length-normalised score, not DPO's)")


def sequence_logprobs(logits, input_ids, mask):
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)
    token_logps = log_probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    weights = mask.to(token_logps.dtype)
    return (token_logps * weights).sum(dim=-1) / weights.sum(dim=-1).clamp(min=1.0)
