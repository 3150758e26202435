"""Runnable examples; ``python -m mscore.examples.amp_digits`` is ``mscore demo``."""
