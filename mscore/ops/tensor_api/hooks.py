"""``Tensor.register_hook``: a backward hook on a tensor made inside a differentiated function
(attached by :mod:`mscore.ops.tensor_api`).

The tensor is routed through a gradient boundary (:func:`mscore.autodiff.boundary.
grad_boundary`, the mechanism of the cells' backward hooks): the forward values are
unchanged, and the gradient that reaches the tensor on the backward pass is handed to the
hook, whose result (when not None) flows on instead. Boundaries exist only while
``grad``/``value_and_grad`` differentiates, so a hook is registered inside the function
being differentiated, as in MindSpore's example; registering outside one is an error (the
tensor keeps no hook list of its own).
"""
from __future__ import annotations

from mscore.autodiff.boundary import current_session, grad_boundary
from mscore.common.tensor import Tensor
from mscore.ops.tensor_api.registry import MethodRegistry

METHODS = MethodRegistry()
method = METHODS.method


class TensorHookHandle:
    """What ``register_hook`` returns: ``remove()`` stops the hook from running."""

    def __init__(self, hook):
        self.hook = hook
        self.removed = False

    def remove(self):
        """The hook no longer sees (nor changes) gradients."""
        self.removed = True

    def vjp(self, cotangents, needed):
        """The boundary's backward rule: the hook's gradient in place of the incoming one."""
        grad = cotangents[0]
        if self.removed or not needed[0]:
            return [grad if needed[0] else None]
        new = self.hook(Tensor._wrap(grad))
        if new is None:
            return [grad]
        if not isinstance(new, Tensor):
            raise TypeError(f"the hook {getattr(self.hook, '__name__', self.hook)!r} must "
                            f"return a Tensor (or None), got {type(new).__name__}")
        return [new._data]


@method
def register_hook(self, hook):
    """Registers ``hook(grad) -> new grad`` on this tensor's gradient; returns a handle
    whose ``remove()`` takes it off. Register inside the function ``grad`` differentiates."""
    if not callable(hook):
        raise TypeError(f"Expected a callable hook function, but got "
                        f"{type(hook).__name__}.")
    if current_session() is None:
        raise RuntimeError("Tensor.register_hook: mscore runs tensor hooks on tensors made "
                           "inside the function that grad/value_and_grad differentiates; "
                           "register the hook there (outside it there is no backward pass "
                           "to hook)")
    handle = TensorHookHandle(hook)
    self._data = grad_boundary([self._data], handle.vjp)[0]
    return handle
