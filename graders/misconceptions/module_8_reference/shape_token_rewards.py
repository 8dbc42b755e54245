"""Wrong versions of r_t = -beta (log pi - log pi_ref) on active tokens,
+ R on the last active token (shape_token_rewards).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def shaping_kl_on_masked_tokens(policy_logp, reference_logp, terminal_reward, beta, mask):
    """inactive (mask 0) tokens got a KL penalty; prompt and padding tokens must get exactly 0

    ru: неактивные токены (mask 0) получили KL-штраф; токены промпта и паддинга должны получать ровно 0
    """
    with np.errstate(invalid="ignore"):  # padding may hold -inf
        kl = -float(beta) * (np.asarray(policy_logp, dtype=np.float64) - np.asarray(reference_logp, dtype=np.float64))
    return np.where(np.asarray(mask) == 1, _right(policy_logp, reference_logp, terminal_reward, beta, mask), kl)


def shaping_kl_sign_flipped(policy_logp, reference_logp, terminal_reward, beta, mask):
    """the KL term has the wrong sign: r_t = -beta (log pi - log pi_ref) penalises moving away from pi_ref

    ru: у KL-члена не тот знак: r_t = -beta (log pi - log pi_ref) штрафует за удаление от pi_ref
    """
    return _right(reference_logp, policy_logp, terminal_reward, beta, mask)  # +beta (log pi - log pi_ref)


def shaping_terminal_on_first_token(policy_logp, reference_logp, terminal_reward, beta, mask):
    """R sits on the first response token; the sequence reward arrives at the END: add R to the LAST active token

    ru: R стоит на первом токене ответа; награда за последовательность приходит в КОНЦЕ: прибавьте R к ПОСЛЕДНЕМУ
    активному токену
    """
    flipped = [np.flip(np.asarray(x), axis=-1) for x in (policy_logp, reference_logp, mask)]  # time reversed
    return np.flip(_right(flipped[0], flipped[1], terminal_reward, beta, flipped[2]), axis=-1)


def shaping_terminal_on_last_position(policy_logp, reference_logp, terminal_reward, beta, mask):
    """R landed on the last POSITION; with padding after the response it belongs on the last ACTIVE token

    ru: R попала на последнюю ПОЗИЦИЮ; если после ответа идёт паддинг, R относится к последнему АКТИВНОМУ токену
    """
    active = np.asarray(mask, dtype=np.float64) == 1
    kl = -float(beta) * (np.asarray(policy_logp, dtype=np.float64) - np.asarray(reference_logp, dtype=np.float64))
    shaped = np.where(active, kl, 0.0).reshape(-1, active.shape[-1])
    shaped[:, -1] += np.broadcast_to(np.reshape(terminal_reward, -1), (shaped.shape[0],))  # position T - 1
    return shaped.reshape(active.shape)
