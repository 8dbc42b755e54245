"""The values every layer shares: what a judged case, exercise, submission and worker run are (:mod:`.protocol`,
:mod:`.runs`), how values cross the process boundary (:mod:`.codec`, :mod:`.bundles`), the one door that decodes a
worker's messages (:mod:`.door`), comparison (:mod:`.compare`), the grader's texts (:mod:`.texts`) and learner
text made safe (:mod:`.scrub`, :mod:`.learner_text`).

Layer rule (tests/test_engine_layers.py): nothing here imports another engine package.
"""
