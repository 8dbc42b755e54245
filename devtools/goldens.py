"""Golden numbers: the kit's own pinned results, regenerable by one command.

    python -m devtools.goldens            # regenerate every golden file
    python -m devtools.goldens module09   # just one

Each producer runs a reference experiment from ``solutions/`` under its pinned
profile and seed and keeps the JSON-able summary a golden test compares with.
Files live in ``tests/golden/<name>.json``. Tolerances live in the tests, sized
to what changes across torch thread counts and platforms.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from graders.loader import load_module
from graders.paths import REPO_ROOT, SOLUTIONS_DIR

GOLDEN_DIR = REPO_ROOT / "tests" / "golden"


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    raise TypeError(f"not JSON-able in a golden file: {type(value).__name__}")


def module09_summary() -> dict:
    """Smoke-profile metrics of the reference toy GRPO experiment (seed 9, DAPO).

    Before/after metrics on train and held-out prompts, plus the first update's
    history entry: its rollouts do not depend on the loss, so its ratio and clip
    statistics fingerprint the loss function itself.
    """
    folder = SOLUTIONS_DIR / "module_09"
    training = load_module(folder / "module_9_training.py", "_golden_module_9_training",
                           given={name: folder / f"{name}.py" for name in ("arithmetic_toy", "grpo_toy")})
    result = training.run_toy_grpo_experiment(profile="smoke", seed=9, loss_type="dapo")
    keys = ("before_train", "after_train", "before_heldout", "after_heldout")
    return _jsonable({**{key: result[key] for key in keys}, "first_update": result["history"][0]})


def module08_summary() -> dict:
    """Smoke-profile metrics of the reference toy DPO experiment (seed 7)."""
    folder = SOLUTIONS_DIR / "module_08"
    training = load_module(folder / "module_8_training.py", "_golden_module_8_training",
                           given={"dpo_toy": folder / "dpo_toy.py"})
    result = training.run_toy_dpo_experiment(profile="smoke", seed=7)
    keys = ("before", "after", "stress", "reference_generation_match", "policy_generation_match",
            "stress_generation_match", "teacher_forced_kl_chosen", "teacher_forced_kl_rejected")
    return _jsonable({key: result[key] for key in keys})


PRODUCERS: dict[str, Callable[[], dict]] = {
    "module09_smoke": module09_summary,
    "module08_smoke": module08_summary,
}


def load_golden(name: str) -> dict:
    return json.loads((GOLDEN_DIR / f"{name}.json").read_text(encoding="utf-8"))


def regenerate(names: list[str] | None = None) -> None:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for name in names or sorted(PRODUCERS):
        data = PRODUCERS[name]()
        target = GOLDEN_DIR / f"{name}.json"
        target.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {target.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    wanted = [n if n.endswith("_smoke") else f"{n}_smoke" for n in sys.argv[1:]]
    unknown = [n for n in wanted if n not in PRODUCERS]
    if unknown:
        sys.exit(f"unknown golden(s) {unknown}; known: {sorted(PRODUCERS)}")
    regenerate(wanted or None)
