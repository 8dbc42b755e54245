"""The grader's judgement: the kit's modules (:mod:`.kit`), calling a function on one case (:mod:`.calls`, shared
with the worker), answered dependencies (:mod:`.answers`), reference values and their cache, the misconception
catalogue, and the one decision of status and points (:mod:`.judge`).

Layer rule (tests/test_engine_layers.py): imports values and this package only; never the workers.
"""
