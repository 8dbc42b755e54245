"""What a grading run writes: feedback text, report files, the output folder, LMS grade files.

Layer rule (tests/test_engine_layers.py): imports values, judging, intake and this package; never a route.
"""
