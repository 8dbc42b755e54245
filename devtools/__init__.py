"""The kit's own development tools, outside the installed package: the benchmark and the golden numbers.

Run from the kit's folder: ``python -m devtools.benchmark`` (the timings of ``docs/timings.md``),
``python -m devtools.goldens`` (the golden files of ``tests/golden/``).
"""
