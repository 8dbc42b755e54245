"""Wrong versions of log pi(y|x) = sum_t mask_t log softmax(logits[:, t])[input_ids[:, t+1]] (sequence_logprobs).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def ignore_mask(logits, input_ids, mask):
    """looks like every position was summed; only the positions where mask is True (the response tokens and
    eos) belong to log pi(y|x), not the prompt or the padding

    ru: похоже, просуммированы все позиции; в log pi(y|x) входят только позиции, где mask равна True (токены ответа
    и eos), а не промпт и не паддинг
    """
    return _right(logits, input_ids, torch.ones_like(mask))  # every position


def mean_instead_of_sum(logits, input_ids, mask):
    """looks like the mean over the response tokens;
    log pi(y|x) is the SUM of the token log-probabilities (a mean is SimPO's length-normalised score, not DPO's)

    ru: похоже на среднее по токенам ответа; log pi(y|x) — это СУММА логарифмов вероятностей токенов (среднее —
    нормированная на длину оценка SimPO, а не DPO)
    """
    summed = _right(logits, input_ids, mask)
    return summed / mask.to(summed.dtype).sum(dim=-1).clamp(min=1.0)


def no_causal_shift(logits, input_ids, mask):
    """looks like the logits at position t were scored against the token AT t; they predict the NEXT token:
    use logits[:, :-1] against input_ids[:, 1:]

    ru: похоже, логиты в позиции t сопоставлены с токеном В позиции t; они предсказывают СЛЕДУЮЩИЙ токен:
    используйте logits[:, :-1] против input_ids[:, 1:]
    """
    unshifted = torch.cat([input_ids[:, :1], input_ids[:, :-1]], dim=1)  # _right's targets [:, 1:] become [:, :-1]
    return _right(logits, unshifted, mask)


def softmax_probabilities(logits, input_ids, mask):
    """looks like probabilities (softmax) were summed; sum LOG-probabilities (log_softmax),
    so that the sequence log-probability is log of the product of token probabilities

    ru: похоже, просуммированы вероятности (softmax); суммируйте ЛОГАРИФМЫ вероятностей (log_softmax), чтобы
    логарифм вероятности последовательности был логарифмом произведения вероятностей токенов
    """
    probs = F.softmax(logits[:, :-1], dim=-1)
    token_probs = probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (token_probs * mask.to(token_probs.dtype)).sum(dim=-1)


def log_softmax_over_time(logits, input_ids, mask):
    """looks like the log-softmax normalised over the positions (dim=1); each position's logits are a
    distribution over the VOCABULARY: log_softmax(logits[:, :-1], dim=-1)

    ru: похоже, log-softmax нормирован по позициям (dim=1); логиты каждой позиции — распределение по СЛОВАРЮ:
    log_softmax(logits[:, :-1], dim=-1)
    """
    log_probs = F.log_softmax(logits[:, :-1], dim=1)  # over T - 1, not V
    token_logps = log_probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (token_logps * mask.to(token_logps.dtype)).sum(dim=-1)
