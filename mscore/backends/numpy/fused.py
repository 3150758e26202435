"""Multi-array optimizer updates over a numpy-like array module ``xp``."""
from __future__ import annotations


class ArrayModuleFused:
    """``momentum_update`` and ``adam_update`` with ufuncs writing into their results."""

    @staticmethod
    def _own(xp, *arrays):
        # Arrays another library made (a network built on another backend) cannot be written.
        return all(isinstance(a, xp.ndarray) and getattr(a.flags, "writeable", True)
                   for a in arrays)

    # -- multi-array updates -------------------------------------------------------------
    def momentum_update(self, params, moments, grads, lr, momentum, nesterov, inplace=False):
        """Momentum SGD per parameter in four passes: ``v = momentum * v + g``,
        ``p = p - lr * v``; with ``inplace`` into the given arrays (no allocation), otherwise
        into two new arrays per parameter."""
        xp = self.xp
        new_params, new_moments = [], []
        for p, v, g in zip(params, moments, grads):
            ip = inplace and self._own(xp, p, v)
            # Every result into an array: a ufunc of 0-d arrays returns a scalar otherwise.
            nv = xp.multiply(v, momentum, out=v if ip else xp.empty_like(v))
            xp.add(nv, g, out=nv)
            step = xp.multiply(nv, momentum if nesterov else lr, out=xp.empty_like(nv))
            if nesterov:
                xp.add(step, g, out=step)
                xp.multiply(step, lr, out=step)
            new_moments.append(nv)
            new_params.append(xp.subtract(p, step, out=p if ip else step))
        return new_params, new_moments

    def adam_update(self, params, m, v, grads, lr, beta1, beta2, eps, nesterov,
                    weight_decay=None, inplace=False):
        """Adam per parameter with ufuncs writing into their results (with ``inplace`` into
        the given arrays): ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``,
        ``p -= lr (n / (sqrt(v) + eps) + wd p)``."""
        xp = self.xp
        new_p, new_m, new_v = [], [], []
        for p, mi, vi, g in zip(params, m, v, grads):
            def c(value, dt=p.dtype):
                return xp.asarray(value, dtype=dt)
            ip = inplace and self._own(xp, p, mi, vi)
            # Every result into an array: a ufunc of 0-d arrays returns a scalar otherwise.
            nm = xp.multiply(mi, c(beta1), out=mi if ip else xp.empty_like(mi))
            nm += xp.multiply(g, c(1.0 - beta1))
            nv = xp.multiply(vi, c(beta2), out=vi if ip else xp.empty_like(vi))
            g2 = xp.multiply(g, g, out=xp.empty_like(g))
            g2 *= c(1.0 - beta2)
            nv += g2
            num = nm
            if nesterov:
                num = xp.multiply(nm, c(beta1), out=xp.empty_like(nm))
                num += xp.multiply(g, c(1.0 - beta1))
            update = xp.sqrt(nv, out=g2)
            update += c(eps)
            xp.divide(num, update, out=update)
            if weight_decay is not None:
                update += xp.multiply(p, weight_decay)
            update *= lr
            new_p.append(xp.subtract(p, update, out=p if ip else update))
            new_m.append(nm)
            new_v.append(nv)
        return new_p, new_m, new_v
