"""The ways in: one submission (:mod:`.grading`), a batch, the in-process tool, the demo, Gradescope, shards and
the merge. Routes may import every other package; nothing but routes and nbgrader imports a route.
"""
