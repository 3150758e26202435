"""``python -m mscore``: the ``mscore`` command (``python -m mscore demo``, ...)."""
import sys

from mscore.cli import main

if __name__ == "__main__":
    sys.exit(main())
