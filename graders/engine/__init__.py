"""The grading engine: submissions in, ``report.json`` / Gradescope / JUnit / ``grades.csv`` out.

Packages, lowest layer first (each imports only the ones above it: ``tests/test_engine_layers.py``; each
package's ``__init__`` maps its own modules):

- ``values/``   -- what a judged case, exercise, submission and worker run are; values and arrays across the
  process boundary (never pickle); the door every worker message is decoded by; the comparator; the texts
- ``sandbox/``  -- the worker's fences: the outer wall, namespaces, the closed root, Landlock, seccomp,
  cgroups, limits, the audit hook
- ``intake/``   -- the one capped reader of every input from outside the kit; submissions and notebooks
- ``judging/``  -- the kit as the grader sees it, calling a function on one case, references (and their
  store), the misconception catalogue, hide mode's parts, and the judge that decides status and points
- ``worker/``   -- the processes that run learner code: the fork server, the worker's parent and its
  confined children, the trusted process of the toy runs, the grader's side of the protocol
- ``outputs/``  -- feedback text, report files, the output folder, the LMS grade files
- ``routes/``   -- the ways in: one submission, a batch, the in-process tool, the demo, Gradescope, shards
- ``nbgrader/`` -- nbgrader's route: scores from the engine outside the student's kernel

The check-spec API for authors of hidden checks is ``graders.checks``.
This package's ``__init__`` stays import-light: a worker imports only what its own modules import.
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
