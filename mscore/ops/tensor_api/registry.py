"""The registry each ``mscore.ops.tensor_api*`` module fills with its Tensor methods
(:func:`mscore.ops.tensor_api.attach` puts them on :class:`mscore.Tensor`)."""
from __future__ import annotations


class MethodRegistry(dict):
    """Tensor methods by name: :meth:`method` registers a function as the method of its
    name, :meth:`bind` one that is a functional op applied to ``self``."""

    def method(self, fn):
        """Registers ``fn`` as the Tensor method of its name; returns ``fn``."""
        self[fn.__name__] = fn
        return fn

    def bind(self, name, op, doc, binary=False):
        """Registers the method ``self.name()`` that is ``op(self)`` (``binary``:
        ``self.name(other)`` that is ``op(self, other)``); returns it."""
        if binary:
            def bound(self, other):
                return op(self, other)
        else:
            def bound(self):
                return op(self)
        bound.__name__ = bound.__qualname__ = name
        bound.__doc__ = doc
        return self.method(bound)
