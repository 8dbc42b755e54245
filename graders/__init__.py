"""rl4llm-kit's tooling: the course registry, the one-source build, the grading engine, the checks and
the misconception catalogue, walkthroughs and the CLI (``CONTRIBUTING.md`` draws how they fit).

Import names are the folder names: ``graders`` (this package) and
``solutions`` (the hidden reference). Learner files such as
``module_9_reference.py`` are plain top-level modules, imported from the
folder that holds them, exactly as the course notebooks do.
"""

__version__ = "0.1.0"
