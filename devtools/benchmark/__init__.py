"""The timings ``docs/timings.md`` quotes: ``python -m devtools.benchmark`` (:mod:`.cli`)."""
