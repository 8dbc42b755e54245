"""Summing softmax probabilities instead of log-softmax log-probabilities."""

EXERCISE = "module_8_training.sequence_logprobs"
NAME = "softmax_probabilities"
HINT = ("looks like probabilities (softmax) were summed; sum LOG-probabilities (log_softmax), "
        "so that the sequence log-probability is log of the product of token probabilities")


def sequence_logprobs(logits, input_ids, mask):
    probs = F.softmax(logits[:, :-1], dim=-1)
    token_probs = probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (token_probs * mask.to(token_probs.dtype)).sum(dim=-1)
