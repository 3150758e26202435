"""``mindspore.nn.utils``: :func:`no_init_parameters`."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def no_init_parameters():
    """``with no_init_parameters(): net = Network()`` — MindSpore defers the initialisation
    of the Parameters made inside until they are loaded or compiled (deprecated there since
    2.9). mscore initialises them at once, as outside the block: the values are the same
    draws, and a checkpoint loaded afterwards replaces them; only the memory saved before
    loading differs."""
    yield
