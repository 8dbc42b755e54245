"""The audit of the "equivalent" label: ``rl4llm mutate --audit`` (issue 53, point 2).

A mutant is called equivalent when it agrees with the reference on every case of the checks and on the draws
(:func:`graders.mutation.draws.extra_cases`: at most :data:`~graders.mutation.draws.MAX_DRAWS` an exercise,
spread over its cases). The audit asks again, harder, of exactly those mutants: on **every** draw of every
value case (no cap, so each case's structure draws -- a batch of one, an empty batch, a square input, lists,
float32, NumPy scalars -- and each numeric variant are all there) with the random variants drawn from other
seeds (``salt``). A mutant that differs there was mislabelled: it is graded as the run grades any mutant
(killed when it loses points, else a survivor) and listed with its witness. The report never relabels a
survivor: the audit only reads the equivalent ones.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

AUDIT_SALT = 1  # the random draws of the audit come from seeds the run does not use


def audit_exercise(exercise: str) -> dict:
    """One exercise's audit: how many mutants the run calls equivalent, how many draws the audit adds, and
    each mislabelled one (its id, diff, witness, and its verdict once graded)."""
    import dataclasses

    from graders.engine.routes.inline import grade_exercise
    from graders.mutation.draws import extra_cases
    from graders.mutation.run import EQUIVALENCE_SECONDS, _Timeout, cpu_limit, mutant_function, outcome, target, witness

    started = time.perf_counter()
    goal = target(exercise)
    cases = goal.spec.cases()
    more = [(case, False) for case in extra_cases(cases, goal.spec.call, limit=None, salt=AUDIT_SALT)]
    harder = dataclasses.replace(goal, inputs=goal.inputs + more,
                                 expected=goal.expected + [outcome(goal.call, getattr(goal.module, goal.node.name),
                                                                   goal.module, case) for case, _ in more])
    equivalent, mislabelled = 0, []
    for mutant in goal.mutants:
        try:
            function, namespace = mutant_function(goal, mutant)
            with cpu_limit(EQUIVALENCE_SECONDS):
                if witness(goal, function, namespace) is not None:
                    continue  # not called equivalent by the run: not the audit's
                equivalent += 1
                found = witness(harder, function, namespace)
        except _Timeout:
            found = {"input": "", "label": "", "from_checks": False, "difference": "timeout"}
        except Exception:  # noqa: BLE001 - a mutant that does not define: the run calls it invalid
            continue
        if found is None:
            continue
        entry = grade_exercise(exercise, function, namespace, hide_hidden_inputs=False)
        killed = entry["points"] < entry["max_points"] - 1e-9
        mislabelled.append({"id": mutant.id, "diff": mutant.diff, "witness": found,
                            "status": "killed" if killed else "survived", "points": entry["points"],
                            "max_points": entry["max_points"]})
    return {"exercise": exercise, "mutants": len(goal.mutants), "equivalent": equivalent,
            "draws": len(goal.inputs) - len(cases), "audit_draws": len(more), "mislabelled": mislabelled,
            "seconds": round(time.perf_counter() - started, 1)}


def audit(exercises: list[str], jobs: int = 2, progress=print) -> dict:
    """Every exercise's audit, ``jobs`` exercises at a time."""
    started = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        for row in pool.map(audit_exercise, exercises):
            rows.append(row)
            progress(f"{row['exercise']}: {row['equivalent']} called equivalent, {len(row['mislabelled'])} "
                     f"mislabelled on {row['audit_draws']} draws ({row['seconds']} s)")
    return {"exercises": rows, "seconds": round(time.perf_counter() - started, 1)}


def write(result: dict, out: Path) -> Path:
    """``audit.json`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "audit.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path
