"""``python -m mscore.conformance BACKEND [--report PATH] [--device CPU|GPU] [-k EXPR]``."""
import sys

from mscore.conformance.runner import main

sys.exit(main())
