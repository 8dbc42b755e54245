"""``rl4llm run``: a seed notebook run unchanged on the learner's (or the reference's) implementation.

- :mod:`.run`: the walkthrough itself (what it executes, what it reports);
- :mod:`.lines`, :mod:`.seed`, :mod:`.values`: the seed's cells, its folder discovery, the values it checks;
- :mod:`.figures`: the titled, labelled PNG figures.
"""
