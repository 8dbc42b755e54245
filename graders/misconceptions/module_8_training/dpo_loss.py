"""Wrong versions of L = mean[(1-eps) softplus(-beta h) + eps softplus(beta h)], h = (pi_w - ref_w) - (pi_l - ref_l),
and of the rewards beta (log pi - log pi_ref) (dpo_loss).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def _logratios(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps):
    """(h, log pi_w - log pi_ref_w, log pi_l - log pi_ref_l), as _right computes them."""
    chosen_logratios = policy_chosen_logps - reference_chosen_logps
    rejected_logratios = policy_rejected_logps - reference_rejected_logps
    return chosen_logratios - rejected_logratios, chosen_logratios, rejected_logratios


def beta_missing(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                 *, beta, label_smoothing=0.0):
    """looks like beta is missing from the loss: it is softplus(-beta h),
    and beta sets how far the policy may move from the reference

    ru: похоже, в потере нет beta: она равна softplus(-beta h), и beta задаёт, насколько политика может отойти от
    референсной
    """
    logps = (policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps)
    loss, _, _ = _right(*logps, beta=1.0, label_smoothing=label_smoothing)  # softplus(-h)
    _, chosen_rewards, rejected_rewards = _right(*logps, beta=beta, label_smoothing=label_smoothing)
    return loss, chosen_rewards, rejected_rewards


def label_smoothing_ignored(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                            *, beta, label_smoothing=0.0):
    """looks like label_smoothing is ignored; with eps > 0 the loss is (1 - eps) softplus(-beta h) + eps
    softplus(beta h) (conservative DPO), which reduces to plain DPO only at eps = 0

    ru: похоже, label_smoothing игнорируется; при eps > 0 потеря равна (1 - eps) softplus(-beta h) + eps
    softplus(beta h) (консервативный DPO) и сводится к обычному DPO только при eps = 0
    """
    logps = (policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps)
    return _right(*logps, beta=beta)  # eps = 0


def label_smoothing_swapped(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                            *, beta, label_smoothing=0.0):
    """looks like the two cDPO terms are swapped (equivalently, the margin h has the wrong sign);
    the loss is (1 - eps) softplus(-beta h) + eps softplus(beta h): the label is right with probability 1 - eps

    ru: похоже, два члена cDPO перепутаны (что то же самое: у отступа h не тот знак); потеря равна (1 - eps)
    softplus(-beta h) + eps softplus(beta h): метка верна с вероятностью 1 - eps
    """
    swapped = (policy_rejected_logps, policy_chosen_logps, reference_rejected_logps, reference_chosen_logps)  # h -> -h
    loss, rejected_rewards, chosen_rewards = _right(*swapped, beta=beta, label_smoothing=label_smoothing)
    return loss, chosen_rewards, rejected_rewards


def no_reference(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                 *, beta, label_smoothing=0.0):
    """looks like the reference log-probabilities are left out;
    h = (log pi_w - log pi_ref_w) - (log pi_l - log pi_ref_l), and the rewards are beta * (log pi - log pi_ref)

    ru: похоже, логарифмы вероятностей референсной модели не учтены; h = (log pi_w - log pi_ref_w) - (log pi_l - log
    pi_ref_l), а награды равны beta * (log pi - log pi_ref)
    """
    zeros = torch.zeros_like(reference_chosen_logps), torch.zeros_like(reference_rejected_logps)
    return _right(policy_chosen_logps, policy_rejected_logps, *zeros, beta=beta, label_smoothing=label_smoothing)


def rewards_missing_beta(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                         *, beta, label_smoothing=0.0):
    """looks like the rewards lack beta; DPO's implicit reward is beta * (log pi(y|x) - log pi_ref(y|x))

    ru: похоже, в наградах нет beta; неявная награда DPO равна beta * (log pi(y|x) - log pi_ref(y|x))
    """
    logps = (policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps)
    loss, _, _ = _right(*logps, beta=beta, label_smoothing=label_smoothing)
    return (loss, *_right(*logps, beta=1.0, label_smoothing=label_smoothing)[1:])  # log pi - log pi_ref


def rewards_not_detached(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                         *, beta, label_smoothing=0.0):
    """looks like the returned rewards still carry gradient; they are for logging:
    return (beta * (log pi - log pi_ref)).detach()

    ru: похоже, возвращаемые награды всё ещё несут градиент; они нужны для логов: верните (beta * (log pi - log
    pi_ref)).detach()
    """
    logps = (policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps)
    loss, _, _ = _right(*logps, beta=beta, label_smoothing=label_smoothing)
    _margin, chosen_logratios, rejected_logratios = _logratios(*logps)
    return loss, beta * chosen_logratios, beta * rejected_logratios


def sign_flipped(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                 *, beta, label_smoothing=0.0):
    """looks like the sign is flipped (log sigmoid(beta h) without the minus);
    the loss to minimise is -log sigmoid(beta h) = softplus(-beta h), which falls as the chosen response gains
    on the rejected one

    ru: похоже, знак перевёрнут (log sigmoid(beta h) без минуса); минимизируемая потеря равна -log sigmoid(beta h) =
    softplus(-beta h) и убывает, когда выбранный ответ обгоняет отвергнутый
    """
    margin, chosen_logratios, rejected_logratios = _logratios(policy_chosen_logps, policy_rejected_logps,
                                                              reference_chosen_logps, reference_rejected_logps)
    objective = (1.0 - label_smoothing) * F.logsigmoid(beta * margin) + label_smoothing * F.logsigmoid(-beta * margin)
    return objective.mean(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()


def sum_instead_of_mean(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps,
                        *, beta, label_smoothing=0.0):
    """looks like the per-pair losses were summed;
    the DPO loss is their MEAN over the batch (a sum makes the step size grow with the batch size)

    ru: похоже, потери по парам просуммированы; потеря DPO — их СРЕДНЕЕ по батчу (при сумме размер шага растёт с
    размером батча)
    """
    margin, chosen_logratios, rejected_logratios = _logratios(policy_chosen_logps, policy_rejected_logps,
                                                              reference_chosen_logps, reference_rejected_logps)
    losses = (1.0 - label_smoothing) * F.softplus(-beta * margin) + label_smoothing * F.softplus(beta * margin)
    return losses.sum(), (beta * chosen_logratios).detach(), (beta * rejected_logratios).detach()


def beta_outside_log_sigmoid(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                             reference_rejected_logps, *, beta, label_smoothing=0.0):
    """looks like beta multiplies the loss instead of the margin; beta belongs inside the log-sigmoid:
    softplus(-beta h) = -log sigmoid(beta h), not beta softplus(-h)

    ru: похоже, beta умножает потерю, а не отступ; beta должна стоять внутри лог-сигмоиды: softplus(-beta h) = -log
    sigmoid(beta h), а не beta softplus(-h)
    """
    logps = (policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps)
    loss, _, _ = _right(*logps, beta=1.0, label_smoothing=label_smoothing)  # softplus(-h)
    _, chosen_rewards, rejected_rewards = _right(*logps, beta=beta, label_smoothing=label_smoothing)
    return beta * loss, chosen_rewards, rejected_rewards
