"""Wrong versions of q* = min(1, d/c_risky) if r_risky > r_safe else 0,
lambda* = (r_risky - r_safe)/c_risky when the budget binds (two_action_constrained_optimum).

Format: graders/engine/judging/misconceptions.py (``_right`` is the reference).
"""


def two_action_ignores_budget(safe_reward, risky_reward, risky_cost, budget):
    """the expected cost exceeds the budget: with q c_risky <= d the risky share is capped at q = d / c_risky

    ru: ожидаемая стоимость превышает бюджет: при q c_risky <= d доля рискованного действия ограничена q = d /
    c_risky
    """
    optimum = _right(safe_reward, risky_reward, 0.0, budget)  # as if the risky action cost nothing
    return {**optimum, "expected_cost": optimum["q"] * float(risky_cost)}


def two_action_ignores_rewards(safe_reward, risky_reward, risky_cost, budget):
    """the budget was spent on a risky action that is not better: q* = 0 when r_risky <= r_safe

    ru: бюджет потрачен на рискованное действие, которое не лучше: q* = 0, когда r_risky <= r_safe
    """
    safe, risky, cost, budget = (float(value) for value in (safe_reward, risky_reward, risky_cost, budget))
    q = 1.0 if cost <= budget else budget / cost  # the budget is spent whatever the rewards
    multiplier = 0.0 if cost <= budget else max(0.0, risky - safe) / cost
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky, "expected_cost": q * cost,
            "multiplier": multiplier}


def two_action_multiplier_without_slackness(safe_reward, risky_reward, risky_cost, budget):
    """a slack constraint has multiplier 0 (complementary slackness);
    lambda* = (r_risky - r_safe) / c only when it binds

    ru: у ограничения с запасом множитель равен 0 (дополняющая нежёсткость); lambda* = (r_risky - r_safe) / c только
    когда оно активно
    """
    safe, risky, cost = float(safe_reward), float(risky_reward), float(risky_cost)
    multiplier = (risky - safe) / cost if cost > 0 else 0.0  # even when the budget does not bind
    return {**_right(safe_reward, risky_reward, risky_cost, budget), "multiplier": multiplier}


def two_action_uncapped_ratio(safe_reward, risky_reward, risky_cost, budget):
    """q is a probability: q* = min(1, d / c_risky); a budget above the cost does not bind

    ru: q — вероятность: q* = min(1, d / c_risky); бюджет больше стоимости ничего не ограничивает
    """
    safe, risky, cost, budget = (float(value) for value in (safe_reward, risky_reward, risky_cost, budget))
    if risky <= safe or cost == 0.0:
        return _right(safe_reward, risky_reward, risky_cost, budget)
    q = budget / cost  # not capped at 1
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky, "expected_cost": q * cost,
            "multiplier": (risky - safe) / cost}
