"""Always the better action: q = 1 whenever r_risky > r_safe, the budget ignored."""

EXERCISE = "module_8_reference.two_action_constrained_optimum"
NAME = "two_action_ignores_budget"
HINT = "the expected cost exceeds the budget: with q c_risky <= d the risky share is capped at q = d / c_risky"


def two_action_constrained_optimum(safe_reward, risky_reward, risky_cost, budget):
    safe = float(_as_array("safe_reward", safe_reward))
    risky = float(_as_array("risky_reward", risky_reward))
    cost = float(_non_negative("risky_cost", risky_cost))
    budget = float(_non_negative("budget", budget))
    q = 1.0 if risky > safe else 0.0
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky,
            "expected_cost": q * cost, "multiplier": 0.0}
