"""The whole mutation run: every exercise's mutants judged in parallel, then the public tests, then the summary.

Mutants are judged (:func:`graders.mutation.run.judge_chunk`) in ``jobs``
worker processes, in chunks of :data:`CHUNK` mutants of one exercise (each
worker builds an exercise's reference outcomes once); a worker's address space
is capped (:data:`MEMORY_LIMIT`) so that a mutant that allocates without bound
fails alone. Then every point-losing mutant (or an even sample of them per
exercise, ``public_sample``) runs the public tests
(:func:`graders.mutation.public.public_runs`: one pytest process per batch of
an exercise's mutants), ``jobs`` at a time. A progress line goes to
``progress`` after every chunk and every public batch.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed

CHUNK = 12
MEMORY_LIMIT = 6 * 1024 ** 3


def _limit_worker() -> None:
    """A judging worker: one thread per numeric library, and a cap on its address space."""
    import resource

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = "1"
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass


def _mutants(exercise: str) -> list:
    from graders.engine.judging.kit import DEFAULT_KIT
    from graders.mutation.operators import function_node, mutants

    stem, name = exercise.split(".", 1)
    source = DEFAULT_KIT.solution_path(stem).read_text(encoding="utf-8")
    return mutants(function_node(source, name), exercise)


def _mutant_ids(exercise: str) -> list[str]:
    return [m.id for m in _mutants(exercise)]


def _judge(exercise: str, ids: list[str]) -> tuple[str, list[dict], float]:
    from graders.mutation.run import judge_chunk

    started = time.perf_counter()
    return exercise, judge_chunk(exercise, ids), time.perf_counter() - started


def judge_all(exercises: list[str], jobs: int = 2, progress=print) -> dict[str, list[dict]]:
    """``{exercise: [verdict row, ...]}`` in mutant order, judged in ``jobs`` processes."""
    chunks = []
    order: dict[str, list[str]] = {}
    for exercise in exercises:
        ids = order[exercise] = _mutant_ids(exercise)
        chunks += [(exercise, ids[i:i + CHUNK]) for i in range(0, len(ids), CHUNK)]
    total = sum(len(ids) for ids in order.values())
    progress(f"mutation: {len(exercises)} exercise(s), {total} mutants, {len(chunks)} chunks on {jobs} process(es)")
    rows: dict[str, dict[str, dict]] = {exercise: {} for exercise in exercises}
    done = 0
    started = time.perf_counter()
    # big chunks first would balance better, but a harness chunk's cost is unknown until it runs: course order
    # workers from a fresh server process, never forked from this one: a process whose torch has started its
    # thread pools (a pytest worker that ran other tests, say) can crash in a forked child's first torch call
    # (seen once: a segmentation fault in log_softmax in the fast tier's mutation floor test under load)
    with ProcessPoolExecutor(max_workers=max(1, jobs), initializer=_limit_worker,
                             mp_context=multiprocessing.get_context("forkserver")) as pool:
        futures = [pool.submit(_judge, exercise, ids) for exercise, ids in chunks]
        for future in as_completed(futures):
            exercise, judged, seconds = future.result()
            rows[exercise].update({row["id"]: row for row in judged})
            done += len(judged)
            counts = Counter(row["status"] for row in judged)
            progress(f"[{done}/{total} mutants, {time.perf_counter() - started:.0f} s] {exercise}: "
                     + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + f" ({seconds:.1f} s)")
    return {exercise: [rows[exercise][i] for i in order[exercise] if i in rows[exercise]] for exercise in exercises}


def sample(rows: list[dict], size: int | None) -> list[dict]:
    """An even, fixed sample of at most ``size`` rows (all when ``size`` is None)."""
    if size is None or len(rows) <= size:
        return list(rows)
    step = len(rows) / size
    return [rows[int(i * step)] for i in range(size)]


def run_public(verdicts: dict[str, list[dict]], jobs: int = 2, public_sample: int | None = None,
               progress=print) -> None:
    """Run the public tests on the point-losing mutants (a sample of them per exercise); the result goes into
    each row as ``public``."""
    from graders.mutation.public import public_runs

    tasks, rows_by_id = [], {}
    for exercise, rows in verdicts.items():
        sources = {m.id: m.source for m in _mutants(exercise)}
        for row in sample([r for r in rows if r["status"] == "killed"], public_sample):
            tasks.append((row["id"], exercise, sources[row["id"]]))
            rows_by_id[row["id"]] = row
    if not tasks:
        return
    progress(f"public tests: {len(tasks)} point-losing mutant(s), one pytest process per exercise batch, "
             f"{jobs} at a time")
    started = time.perf_counter()

    def report(done, total, exercise):
        progress(f"[{done}/{total} mutants' public tests, {time.perf_counter() - started:.0f} s] {exercise}")

    for mutant_id, result in public_runs(tasks, jobs, report).items():
        rows_by_id[mutant_id]["public"] = result


def summarise(exercise: str, rows: list[dict]) -> dict:
    """One exercise's line of the report (see :mod:`graders.mutation.report`)."""
    counts = Counter(row["status"] for row in rows)
    non_equivalent = counts["killed"] + counts["survived"]
    killed = [row for row in rows if row["status"] == "killed"]
    checked = [row for row in killed if row.get("public", {}).get("failed") is not None]
    public_failed = [row for row in checked if row["public"]["failed"]]
    grader_names = Counter(name for row in rows for name in row.get("grader_names", []))
    pytest_names = Counter(name for row in rows for name in row.get("public", {}).get("pytest_names", []))
    return {
        "exercise": exercise, "mutants": len(rows), "equivalent": counts["equivalent"],
        "invalid": counts["invalid"], "non_equivalent": non_equivalent, "killed": counts["killed"],
        "survived": counts["survived"],
        "score": round(counts["killed"] / non_equivalent, 4) if non_equivalent else None,
        "public_checked": len(checked), "public_failed": len(public_failed),
        "public_share": round(len(public_failed) / len(checked), 4) if checked else None,
        "grader_names": dict(sorted(grader_names.items())), "pytest_names": dict(sorted(pytest_names.items())),
        "survivors": [{"id": r["id"], "diff": r["diff"], "witness": r.get("witness")}
                      for r in rows if r["status"] == "survived"],
        "public_green": [{"id": r["id"], "diff": r["diff"], "grader_names": r.get("grader_names", [])}
                         for r in checked if not r["public"]["failed"]],
        "names_differ": [{"id": r["id"], "diff": r["diff"], "grader": sorted(r.get("grader_names", [])),
                          "pytest": r["public"]["pytest_names"]} for r in checked
                         if sorted(r.get("grader_names", [])) != sorted(r["public"]["pytest_names"])],
        "seconds": round(sum(row.get("seconds", 0.0) for row in rows), 2),
    }


def campaign(exercises: list[str], jobs: int = 2, public: bool = True, public_sample: int | None = None,
             progress=print) -> dict:
    """Judge every mutant of ``exercises``, run the public tests, and return the report (``mutation.json``)."""
    started = time.perf_counter()
    verdicts = judge_all(exercises, jobs, progress)
    judged = time.perf_counter() - started
    if public:
        run_public(verdicts, jobs, public_sample, progress)
    return {"jobs": jobs, "public": public, "public_sample": public_sample,
            "seconds": {"judging": round(judged, 1), "total": round(time.perf_counter() - started, 1)},
            "exercises": [summarise(exercise, verdicts[exercise]) for exercise in exercises],
            "mutants": {exercise: verdicts[exercise] for exercise in exercises}}
