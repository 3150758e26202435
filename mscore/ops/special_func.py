"""Special functions from elementwise primitives: ``ops.lgamma`` (Lanczos, g = 7, with the
reflection formula below 1/2), ``ops.digamma`` (recurrence then the asymptotic series),
``ops.igamma``/``ops.igammac`` (regularized incomplete gamma: power series below a + 1,
Lentz's continued fraction above) and ``lbeta``. Each branch is evaluated on inputs made safe
for it, so the branch a ``where`` drops never feeds nan into a gradient."""
from __future__ import annotations

import math

from mscore.ops import functional as F

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _float(x, name):
    x = F._check_tensor(x, name)
    if not x.dtype.is_floating:
        raise TypeError(f"For '{name}', the input must be a floating-point Tensor, got "
                        f"{x.dtype}")
    return x


def _lgamma_right(z):
    """log Gamma(z) for z >= 1/2 (Lanczos)."""
    z = F.sub(z, 1.0)
    acc = None
    for k in range(1, len(_LANCZOS)):
        term = F.div(_LANCZOS[k], F.add(z, float(k)))
        acc = term if acc is None else F.add(acc, term)
    acc = F.add(acc, _LANCZOS[0])
    t = F.add(z, 7.5)
    return F.add(F.sub(F.mul(F.add(z, 0.5), F.log(t)), t), F.add(F.log(acc), _HALF_LOG_2PI))


def lgamma(input):  # noqa: A002
    """log |Gamma(x)| elementwise (inf at the poles 0, -1, -2, ...)."""
    x = _float(input, "lgamma")
    left = F.less(x, 0.5)
    right_in = F.where(left, F.sub(1.0, x), x)               # >= 1/2 on both branches
    right = _lgamma_right(right_in)
    sin_pix = F.abs(F.sin(F.mul(x, math.pi)))
    safe_sin = F.where(left, sin_pix, 1.0)
    reflected = F.sub(F.sub(math.log(math.pi), F.log(safe_sin)), right)
    return F.where(left, reflected, right)


def _digamma_right(x):
    """psi(x) for x >= 1/2: psi(x) = psi(x + 6) - sum 1 / (x + k), then the asymptotic
    series at x + 6."""
    shift = None
    for k in range(6):
        term = F.div(1.0, F.add(x, float(k)))
        shift = term if shift is None else F.add(shift, term)
    y = F.add(x, 6.0)
    inv2 = F.div(1.0, F.mul(y, y))
    # 1/(12 y^2) - 1/(120 y^4) + 1/(252 y^6) - 1/(240 y^8) + 1/(132 y^10), nested
    series = F.mul(inv2, 1.0 / 132)
    for coef in (1.0 / 240, 1.0 / 252, 1.0 / 120, 1.0 / 12):
        series = F.mul(inv2, F.sub(coef, series))
    return F.sub(F.sub(F.sub(F.log(y), F.div(0.5, y)), series), shift)


def digamma(input):  # noqa: A002
    """The digamma function psi(x) = d/dx log Gamma(x) elementwise (reflection below
    1/2: psi(x) = psi(1 - x) - pi / tan(pi x))."""
    x = _float(input, "digamma")
    left = F.less(x, 0.5)
    right = _digamma_right(F.where(left, F.sub(1.0, x), x))
    pix = F.mul(F.where(left, x, 0.25), math.pi)
    cot = F.div(F.cos(pix), F.sin(pix))
    return F.where(left, F.sub(right, F.mul(cot, math.pi)), right)


def lbeta(x, y):
    """log |B(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y)."""
    x = _float(x, "lbeta")
    y = _float(y, "lbeta")
    return F.sub(F.add(lgamma(x), lgamma(y)), lgamma(F.add(x, y)))


_STEPS = 60


def _igamma_series(a, x):
    """P(a, x) by its power series (converges quickly for x < a + 1)."""
    term = F.div(1.0, a)
    total = term
    ap = a
    for _ in range(_STEPS):
        ap = F.add(ap, 1.0)
        term = F.mul(term, F.div(x, ap))
        total = F.add(total, term)
    log_pref = F.sub(F.sub(F.mul(a, F.log(x)), x), lgamma(a))
    return F.mul(total, F.exp(log_pref))


def _igammac_fraction(a, x):
    """Q(a, x) by Lentz's continued fraction (converges for x >= a + 1)."""
    tiny = 1e-30
    b = F.sub(F.add(x, 1.0), a)
    c = F.add(F.mul(x, 0.0), 1.0 / tiny)
    d = F.div(1.0, b)
    h = d
    for i in range(1, _STEPS):
        an = F.mul(F.sub(a, float(i)), float(i))     # -i (i - a)
        b = F.add(b, 2.0)
        d = F.add(F.mul(an, d), b)
        d = F.where(F.less(F.abs(d), tiny), tiny, d)
        c = F.add(b, F.div(an, c))
        c = F.where(F.less(F.abs(c), tiny), tiny, c)
        d = F.div(1.0, d)
        h = F.mul(h, F.mul(d, c))
    log_pref = F.sub(F.sub(F.mul(a, F.log(x)), x), lgamma(a))
    return F.mul(h, F.exp(log_pref))


def igamma(input, other):  # noqa: A002
    """Regularized lower incomplete gamma P(a, x) with a = ``input``, x = ``other``
    (broadcast); P(a, 0) = 0."""
    a = _float(input, "igamma")
    x = _float(other, "igamma")
    a, x = F.broadcast_to(a, _shape(a, x)), F.broadcast_to(x, _shape(a, x))
    use_series = F.less(x, F.add(a, 1.0))
    positive = F.greater(x, 0.0)
    xs = F.where(positive, x, 1.0)
    series = _igamma_series(a, F.where(use_series, xs, F.mul(a, 0.5)))
    frac = _igammac_fraction(a, F.where(use_series, F.add(a, 2.0), xs))
    p = F.where(use_series, series, F.sub(1.0, frac))
    return F.where(positive, p, 0.0)


def igammac(input, other):  # noqa: A002
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    return F.sub(1.0, igamma(input, other))


def _shape(a, b):
    from mscore.ops.nn_func import _broadcast_shape
    return tuple(_broadcast_shape(a.shape, b.shape))


__all__ = ["lgamma", "digamma", "igamma", "igammac"]
