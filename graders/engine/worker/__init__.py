"""The processes that run learner code: the fork server and the grader's handle on it, the worker's parent and
its confined children, their plumbing, and the grader's side of the worker protocol (:mod:`.runner`).

Layer rule (tests/test_engine_layers.py): imports values, sandbox, this package, and the shared call code
(:mod:`graders.engine.judging.calls`, :mod:`graders.engine.judging.answers`); never intake, outputs or routes.
"""
