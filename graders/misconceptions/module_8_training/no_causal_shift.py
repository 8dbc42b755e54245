"""Scoring each position's own input token (no causal shift): logits[:, t] against input_ids[:, t]."""

EXERCISE = "module_8_training.sequence_logprobs"
NAME = "no_causal_shift"
HINT = ("looks like the logits at position t were scored against the token AT t; they predict the NEXT "
        "token: use logits[:, :-1] against input_ids[:, 1:]")


def sequence_logprobs(logits, input_ids, mask):
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)
    token_logps = log_probs.gather(-1, input_ids[:, :-1].unsqueeze(-1)).squeeze(-1)  # no shift
    return (token_logps * mask.to(token_logps.dtype)).sum(dim=-1)
