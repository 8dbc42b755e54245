"""q = d / c without the cap at 1: a loose budget gives a "probability" above 1."""

EXERCISE = "module_8_reference.two_action_constrained_optimum"
NAME = "two_action_uncapped_ratio"
HINT = "q is a probability: q* = min(1, d / c_risky); a budget above the cost does not bind"


def two_action_constrained_optimum(safe_reward, risky_reward, risky_cost, budget):
    safe = float(_as_array("safe_reward", safe_reward))
    risky = float(_as_array("risky_reward", risky_reward))
    cost = float(_non_negative("risky_cost", risky_cost))
    budget = float(_non_negative("budget", budget))
    if risky <= safe:
        q, multiplier = 0.0, 0.0
    else:
        q = budget / cost if cost > 0 else 1.0
        multiplier = (risky - safe) / cost if cost > 0 else 0.0
    return {"q": q, "expected_reward": (1.0 - q) * safe + q * risky,
            "expected_cost": q * cost, "multiplier": multiplier}
