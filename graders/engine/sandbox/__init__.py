"""The worker's fences: the C library's system calls (:mod:`.libc`), Landlock, seccomp, the closed root, the
child's own confinement (:mod:`.confine`), cgroups, the outer wall of bubblewrap (:mod:`.wall`), and which of
them this machine has (:mod:`.layers`).

Layer rule (tests/test_engine_layers.py): imports only :mod:`graders.engine.values` and this package.
"""
