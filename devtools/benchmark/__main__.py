"""``python -m devtools.benchmark``: the same as ``python -m devtools.benchmark.cli``."""

import sys

from devtools.benchmark.cli import main

if __name__ == "__main__":
    sys.exit(main())
