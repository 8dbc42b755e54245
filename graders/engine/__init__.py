"""The grading engine: submissions in, ``report.json`` / Gradescope / JUnit / ``grades.csv`` out.

Modules (each reads top to bottom):

- ``kit``            -- modules, learner files, exercises, reference modules
- ``submission``     -- finding learner files in a folder, a zip (safely) or a notebook
- ``codec``          -- values across the process boundary (JSON + raw arrays, never pickle)
- ``calls``          -- calling a function on one case (shared by worker and grader)
- ``sandbox``        -- audit hook, resource limits, unprivileged user
- ``forkserver``     -- the preloaded process that forks a worker per submission, in fresh namespaces
- ``worker``         -- the worker: confined children that run learner code
- ``runner``         -- the grader's side of the worker protocol (fork servers, timeouts, restarts)
- ``compare``        -- tolerant comparison and compact value descriptions
- ``misconceptions`` -- the catalogue: load entries, build mutants
- ``grading``        -- the job file, and one submission from files to report dict
- ``references``     -- reference values (and misconception outputs) in the grading process
- ``refcache``       -- the same (and the check cases) kept on disk by content
- ``feedback``       -- status, points, feedback and misconception names per exercise
- ``texts``          -- the feedback's and the scoreboard's texts in English and Russian
- ``reports``        -- report.json, results.json, junit.xml, grades.csv, scoreboard
- ``batch``          -- many submissions in parallel
- ``shards``         -- ``grade --shard I/N`` and ``rl4llm merge``
- ``demo``, ``gradescope`` -- the ``rl4llm demo`` and ``rl4llm gradescope`` commands

The check-spec API for authors of hidden checks is ``graders.checks``.
This package's ``__init__`` stays import-light: the worker imports only
``codec``, ``calls`` and ``sandbox``.
"""

from __future__ import annotations


def __getattr__(name: str):
    lazy = {
        "grade_paths": ("graders.engine.routes.batch", "grade_paths"),
        "grade_sources": ("graders.engine.routes.batch", "grade_sources"),
        "GraderError": ("graders.engine.routes.batch", "GraderError"),
        "GradeOptions": ("graders.engine.routes.grading", "GradeOptions"),
        "load_misconceptions": ("graders.engine.judging.misconceptions", "load_misconceptions"),
        "mutant_source": ("graders.engine.judging.misconceptions", "mutant_source"),
        "Kit": ("graders.engine.judging.kit", "Kit"),
        "DEFAULT_KIT": ("graders.engine.judging.kit", "DEFAULT_KIT"),
    }
    if name in lazy:
        import importlib

        module_name, attribute = lazy[name]
        return getattr(importlib.import_module(module_name), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["grade_paths", "grade_sources", "GraderError", "GradeOptions", "load_misconceptions", "mutant_source", "Kit",
           "DEFAULT_KIT"]
