"""The one capped reader of every input from outside the kit (:mod:`.reader`), and what it yields: a
submission's learner files (:mod:`.submission`), notebooks reduced once in a budgeted child, a class's modules.

Layer rule (tests/test_engine_layers.py): imports values and this package only.
"""
