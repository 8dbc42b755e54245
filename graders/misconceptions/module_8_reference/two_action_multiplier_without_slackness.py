"""lambda* = (r_risky - r_safe) / c even when the budget does not bind (complementary slackness missed)."""

EXERCISE = "module_8_reference.two_action_constrained_optimum"
NAME = "two_action_multiplier_without_slackness"
HINT = "a slack constraint has multiplier 0 (complementary slackness); lambda* = (r_risky - r_safe) / c only when it binds"


def two_action_constrained_optimum(safe_reward, risky_reward, risky_cost, budget):
    safe = float(_as_array("safe_reward", safe_reward))
    risky = float(_as_array("risky_reward", risky_reward))
    cost = float(_non_negative("risky_cost", risky_cost))
    budget = float(_non_negative("budget", budget))
    if risky <= safe:
        q = 0.0
    else:
        q = 1.0 if cost <= budget else budget / cost
    multiplier = (risky - safe) / cost if cost > 0 else 0.0
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky,
            "expected_cost": q * cost, "multiplier": multiplier}
