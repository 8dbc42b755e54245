"""q = min(1, d / c) always: the budget is spent even when the risky action is not better."""

EXERCISE = "module_8_reference.two_action_constrained_optimum"
NAME = "two_action_ignores_rewards"
HINT = "the budget was spent on a risky action that is not better: q* = 0 when r_risky <= r_safe"


def two_action_constrained_optimum(safe_reward, risky_reward, risky_cost, budget):
    safe = float(_as_array("safe_reward", safe_reward))
    risky = float(_as_array("risky_reward", risky_reward))
    cost = float(_non_negative("risky_cost", risky_cost))
    budget = float(_non_negative("budget", budget))
    q = 1.0 if cost <= budget else budget / cost
    multiplier = 0.0 if cost <= budget else max(0.0, risky - safe) / cost
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky,
            "expected_cost": q * cost, "multiplier": multiplier}
