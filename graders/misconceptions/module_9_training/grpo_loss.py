"""Wrong versions of loss = -reduce over active tokens of min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A)
(grpo_loss).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _loss(terms, new_logprobs, old_logprobs, advantages, mask, loss_type, max_length):
    """_right's masking and reductions around other per-token terms(ratio, A) than the clipped min."""
    active = mask > 0
    zeros = torch.zeros_like(new_logprobs)
    ratio = torch.exp(torch.where(active, new_logprobs - old_logprobs, zeros))
    surrogate = torch.where(active, terms(ratio, advantages.to(new_logprobs.dtype)[:, None]), zeros)
    counts = active.sum(dim=1).to(new_logprobs.dtype)
    if loss_type == "grpo":
        return -(surrogate.sum(dim=1) / counts.clamp(min=1.0)).mean()
    if loss_type == "dr_grpo":
        length = new_logprobs.shape[1] if max_length is None else max_length
        return -(surrogate.sum() / (new_logprobs.shape[0] * length))
    return -(surrogate.sum() / counts.sum().clamp(min=1.0))


def all_zero_loss(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like a loss that is always 0 (a placeholder?): nothing is learned from it

    ru: похоже на потерю, которая всегда равна 0 (заглушка?): на ней ничего не обучается
    """
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    return new_logprobs.sum() * 0.0


def dapo_per_response(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like DAPO normalised per response (that is GRPO's reduction);
    DAPO divides the sum over ALL active tokens of the batch by their total number, so long responses weigh more

    ru: похоже на DAPO с нормировкой по каждому ответу (это редукция GRPO); DAPO делит сумму по ВСЕМ активным
    токенам батча на их общее число, поэтому длинные ответы весят больше
    """
    loss_type = "grpo" if loss_type == "dapo" else loss_type  # per-response token means
    return _right(new_logprobs, old_logprobs, advantages, mask,
                  loss_type=loss_type, eps_low=eps_low, eps_high=eps_high, max_length=max_length)


def dr_grpo_padded_width(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like Dr. GRPO divided by N * T, the padded width of this batch; the constant is N * max_length,
    the generation budget (T only when max_length is None)

    ru: похоже, Dr. GRPO поделён на N * T, ширину этого батча с паддингом; константа — N * max_length, бюджет
    генерации (T только когда max_length равен None)
    """
    return _right(new_logprobs, old_logprobs, advantages, mask,
                  loss_type=loss_type, eps_low=eps_low, eps_high=eps_high)  # max_length dropped: L = T


def dr_grpo_true_length(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like Dr. GRPO divided by each response's true length;
    Dr. GRPO removes exactly that length bias and divides the token sum by the constant N * max_length

    ru: похоже, Dr. GRPO поделён на истинную длину каждого ответа; Dr. GRPO как раз убирает это смещение по длине и
    делит сумму по токенам на константу N * max_length
    """
    loss_type = "grpo" if loss_type == "dr_grpo" else loss_type  # divided by each |o_i|
    return _right(new_logprobs, old_logprobs, advantages, mask,
                  loss_type=loss_type, eps_low=eps_low, eps_high=eps_high, max_length=max_length)


def max_instead_of_min(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like max(rho*A, clip(rho)*A); the clipped surrogate takes the MIN,
    a pessimistic bound that removes the incentive to move the ratio outside [1 - eps_low, 1 + eps_high]

    ru: похоже на max(rho*A, clip(rho)*A); отсечённая суррогатная цель берёт MIN — пессимистичную оценку, которая
    убирает стимул выводить отношение за пределы [1 - eps_low, 1 + eps_high]
    """
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)

    def terms(ratio, adv):
        return torch.maximum(ratio * adv, torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv)
    return _loss(terms, new_logprobs, old_logprobs, advantages, mask, loss_type, max_length)


def no_clipping(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like rho*A without clipping; take min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A) per token,
    so a ratio that has moved far enough gets no further push

    ru: похоже на rho*A без отсечения; берите min(rho*A, clip(rho, 1 - eps_low, 1 + eps_high)*A) для каждого токена,
    чтобы отношение, ушедшее достаточно далеко, больше не подталкивалось
    """
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    return _loss(lambda ratio, adv: ratio * adv, new_logprobs, old_logprobs, advantages, mask, loss_type, max_length)


def no_mask(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like the mask is ignored: padded positions must contribute nothing (and receive zero gradient),
    and only active tokens are counted

    ru: похоже, маска игнорируется: позиции паддинга не должны ничего вносить (и получают нулевой градиент), а
    учитываются только активные токены
    """
    _check_loss_inputs(new_logprobs, old_logprobs, advantages, mask, loss_type, eps_low, eps_high, max_length)
    ratio = torch.exp(new_logprobs - old_logprobs)
    adv = advantages.to(new_logprobs.dtype)[:, None]
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv)  # padding too
    n, t = new_logprobs.shape
    if loss_type == "grpo":
        return -surrogate.mean(dim=1).mean()
    if loss_type == "dr_grpo":
        return -(surrogate.sum() / (n * (t if max_length is None else max_length)))
    return -surrogate.mean()


def sign_flipped(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like the objective itself; the loss is MINUS the clipped objective,
    so gradient descent raises tokens with positive advantage

    ru: похоже на саму цель; потеря — это МИНУС отсечённая цель, чтобы градиентный спуск повышал вероятность токенов
    с положительным преимуществом
    """
    return -_right(new_logprobs, old_logprobs, advantages, mask,
                   loss_type=loss_type, eps_low=eps_low, eps_high=eps_high, max_length=max_length)


def symmetric_clip(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high, max_length=None):
    """looks like a symmetric clip [1 - eps_low, 1 + eps_low];
    the upper end is 1 + eps_high (DAPO's clip-higher: eps_high may differ from eps_low)

    ru: похоже на симметричное отсечение [1 - eps_low, 1 + eps_low]; верхний край равен 1 + eps_high (clip-higher из
    DAPO: eps_high может отличаться от eps_low)
    """
    return _right(new_logprobs, old_logprobs, advantages, mask,
                  loss_type=loss_type, eps_low=eps_low, eps_high=eps_low, max_length=max_length)  # eps_high = eps_low


def dapo_fixed_denominator(new_logprobs, old_logprobs, advantages, mask, *, loss_type, eps_low, eps_high,
                           max_length=None):
    """looks like DAPO divided by N * max_length (Dr. GRPO's constant);
    DAPO divides the sum over all active tokens by their NUMBER, sum_i |o_i|

    ru: похоже, DAPO поделён на N * max_length (константу Dr. GRPO); DAPO делит сумму по всем активным токенам на их
    ЧИСЛО, sum_i |o_i|
    """
    loss_type = "dr_grpo" if loss_type == "dapo" else loss_type  # the fixed N * L denominator
    return _right(new_logprobs, old_logprobs, advantages, mask,
                  loss_type=loss_type, eps_low=eps_low, eps_high=eps_high, max_length=max_length)
