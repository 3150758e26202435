"""Special functions: ``lgamma``, ``digamma``, ``igamma``/``igammac``, ``erfc``, ``erfinv``,
``i0``.

``lgamma`` uses Lanczos (g = 7) with the reflection formula below 1/2, ``digamma`` the
recurrence then the asymptotic series, ``igamma``/``igammac`` the power series below a + 1
and Lentz's continued fraction above. Each branch is evaluated on inputs made safe for it,
so the branch a ``where`` drops never feeds nan into a gradient.
"""
from __future__ import annotations

import math

from mscore.common import dtype as mdt
from mscore.ops._args import _check_tensor
from mscore.ops.array.manipulation import _broadcast_shape, broadcast_to
from mscore.ops.control import cast
from mscore.ops.math.elementwise import (
    abs,
    add,
    cos,
    div,
    equal,
    erf,
    exp,
    floor,
    greater,
    less,
    log,
    mul,
    sin,
    sqrt,
    sub,
    where,
)

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _float(x, name):
    x = _check_tensor(x, name)
    if not x.dtype.is_floating:
        raise TypeError(f"For '{name}', the input must be a floating-point Tensor, got "
                        f"{x.dtype}")
    return x


def _lgamma_right(z):
    """log Gamma(z) for z >= 1/2 (Lanczos)."""
    z = sub(z, 1.0)
    acc = None
    for k in range(1, len(_LANCZOS)):
        term = div(_LANCZOS[k], add(z, float(k)))
        acc = term if acc is None else add(acc, term)
    acc = add(acc, _LANCZOS[0])
    t = add(z, 7.5)
    return add(sub(mul(add(z, 0.5), log(t)), t), add(log(acc), _HALF_LOG_2PI))


def lgamma(input):
    """log |Gamma(x)| elementwise (inf at the poles 0, -1, -2, ...)."""
    x = _float(input, "lgamma")
    left = less(x, 0.5)
    right_in = where(left, sub(1.0, x), x)               # >= 1/2 on both branches
    right = _lgamma_right(right_in)
    sin_pix = abs(sin(mul(x, math.pi)))
    safe_sin = where(left, sin_pix, 1.0)
    reflected = sub(sub(math.log(math.pi), log(safe_sin)), right)
    return where(left, reflected, right)


def _digamma_right(x):
    """psi(x) for x >= 1/2: psi(x) = psi(x + 6) - sum 1 / (x + k), then the asymptotic
    series at x + 6."""
    shift = None
    for k in range(6):
        term = div(1.0, add(x, float(k)))
        shift = term if shift is None else add(shift, term)
    y = add(x, 6.0)
    inv2 = div(1.0, mul(y, y))
    # 1/(12 y^2) - 1/(120 y^4) + 1/(252 y^6) - 1/(240 y^8) + 1/(132 y^10), nested
    series = mul(inv2, 1.0 / 132)
    for coef in (1.0 / 240, 1.0 / 252, 1.0 / 120, 1.0 / 12):
        series = mul(inv2, sub(coef, series))
    return sub(sub(sub(log(y), div(0.5, y)), series), shift)


def digamma(input):
    """The digamma function psi(x) = d/dx log Gamma(x) elementwise (reflection below
    1/2: psi(x) = psi(1 - x) - pi / tan(pi x))."""
    x = _float(input, "digamma")
    left = less(x, 0.5)
    right = _digamma_right(where(left, sub(1.0, x), x))
    pix = mul(where(left, x, 0.25), math.pi)
    cot = div(cos(pix), sin(pix))
    return where(left, sub(right, mul(cot, math.pi)), right)


def lbeta(x, y):
    """log |B(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y)."""
    x = _float(x, "lbeta")
    y = _float(y, "lbeta")
    return sub(add(lgamma(x), lgamma(y)), lgamma(add(x, y)))


_STEPS = 60


def _igamma_series(a, x):
    """P(a, x) by its power series (converges quickly for x < a + 1)."""
    term = div(1.0, a)
    total = term
    ap = a
    for _ in range(_STEPS):
        ap = add(ap, 1.0)
        term = mul(term, div(x, ap))
        total = add(total, term)
    log_pref = sub(sub(mul(a, log(x)), x), lgamma(a))
    return mul(total, exp(log_pref))


def _igammac_fraction(a, x):
    """Q(a, x) by Lentz's continued fraction (converges for x >= a + 1)."""
    tiny = 1e-30
    b = sub(add(x, 1.0), a)
    c = add(mul(x, 0.0), 1.0 / tiny)
    d = div(1.0, b)
    h = d
    for i in range(1, _STEPS):
        an = mul(sub(a, float(i)), float(i))     # -i (i - a)
        b = add(b, 2.0)
        d = add(mul(an, d), b)
        d = where(less(abs(d), tiny), tiny, d)
        c = add(b, div(an, c))
        c = where(less(abs(c), tiny), tiny, c)
        d = div(1.0, d)
        h = mul(h, mul(d, c))
    log_pref = sub(sub(mul(a, log(x)), x), lgamma(a))
    return mul(h, exp(log_pref))


def igamma(input, other):
    """Regularized lower incomplete gamma P(a, x) with a = ``input``, x = ``other``
    (broadcast); P(a, 0) = 0."""
    a = _float(input, "igamma")
    x = _float(other, "igamma")
    a, x = broadcast_to(a, _shape(a, x)), broadcast_to(x, _shape(a, x))
    use_series = less(x, add(a, 1.0))
    positive = greater(x, 0.0)
    xs = where(positive, x, 1.0)
    series = _igamma_series(a, where(use_series, xs, mul(a, 0.5)))
    frac = _igammac_fraction(a, where(use_series, add(a, 2.0), xs))
    p = where(use_series, series, sub(1.0, frac))
    return where(positive, p, 0.0)


def igammac(input, other):
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    return sub(1.0, igamma(input, other))


def _shape(a, b):
    return tuple(_broadcast_shape(a.shape, b.shape))


# Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing Gems,
# 2011): a polynomial in w = -log(1 - x^2) on two ranges, then Newton steps on erf.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs, t):
    acc = None
    for c in coefs:
        acc = add(mul(acc, t), c) if acc is not None else mul(add(mul(t, 0.0), 1.0), c)
    return acc


def erfinv(input):
    """The inverse error function elementwise: y with erf(y) = x on (-1, 1), +-inf at +-1,
    nan outside."""
    x = _check_tensor(input, "input")
    if not x.dtype.is_floating:
        raise TypeError(f"For 'Erfinv', the input must be a floating-point Tensor, got "
                        f"{x.dtype}")
    inside = less(abs(x), 1.0)
    xs = where(inside, x, 0.0)
    w = sub(0.0, log(mul(sub(1.0, xs), add(1.0, xs))))
    central = where(less(w, 5.0), w, 2.5)
    tail = where(less(w, 5.0), 5.0, w)
    p = where(less(w, 5.0), _horner(_ERFINV_CENTRAL, sub(central, 2.5)),
              _horner(_ERFINV_TAIL, sub(sqrt(tail), 3.0)))
    y = mul(p, xs)
    for _ in range(2 if x.dtype == mdt.float64 else 1):   # quadratic: one step per ~7 digits
        y = sub(y, div(sub(erf(y), xs), mul(exp(mul(mul(y, y), -1.0)), 2.0 / math.sqrt(math.pi))))
    edge = where(greater(x, 0.0), math.inf, -math.inf)
    return where(inside, y, where(equal(abs(x), 1.0), edge, math.nan))


# Cody's rational Chebyshev fits of erfc ("Rational Chebyshev approximations for the error
# function", Math. Comp. 1969): exp(-x^2) * P(x) / Q(x) on [0.46875, 4] and
# exp(-x^2) / x * (1/sqrt(pi) - R(1/x^2)) above 4, relative error near float64's epsilon.
_ERFC_MID_P = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
               6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
               1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERFC_MID_Q = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
               1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
               3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_FAR_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
               1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFC_FAR_Q = (1.0, 2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
               6.05183413124413191e-2, 2.33520497626869185e-3)
_ERFC_NEAR = 0.46875   # below: 1 - erf(x) loses nothing (erf(x) < 0.5)
_ERFC_ZERO = 30.0      # erfc underflows to 0 in every float type well before


def _exp_minus_square(y):
    """``exp(-y*y)`` without the rounding of ``y*y``: y = a + b with a a multiple of 1/16, so
    ``a*a`` is exact and the rest ``(y - a)(y + a)`` small."""
    a = div(floor(mul(y, 16.0)), 16.0)
    return mul(exp(mul(mul(a, a), -1.0)), exp(mul(mul(sub(y, a), add(y, a)), -1.0)))


def erfc(input):
    """The complementary error function ``1 - erf(x)`` elementwise, accurate in the tail
    (erfc(10) = 2.09e-45 in float32, not 0): ``1 - erf`` near 0, Cody's fits beyond (float16
    computed in float32 and rounded once). Integer and bool inputs are a ``TypeError``, as in
    MindSpore."""
    x = _check_tensor(input, "input")
    if not x.dtype.is_floating:
        raise TypeError(f"For 'Erfc', the input must be a Tensor of float16, float32 or "
                        f"float64, but got {x.dtype}.")
    half = x.dtype.itemsize == 2
    xf = cast(x, mdt.float32) if half else x
    y = abs(xf)
    mid = where(less(y, 4.0), where(greater(y, _ERFC_NEAR), y, 1.0), 4.0)
    mid_value = div(_horner(_ERFC_MID_P, mid), _horner(_ERFC_MID_Q, mid))
    far = where(less(y, 4.0), 4.0, where(less(y, _ERFC_ZERO), y, _ERFC_ZERO))
    z = div(1.0, mul(far, far))
    far_value = div(sub(1.0 / math.sqrt(math.pi),
                        div(mul(z, _horner(_ERFC_FAR_P, z)), _horner(_ERFC_FAR_Q, z))), far)
    tail = mul(where(less(y, 4.0), mid_value, far_value),
               _exp_minus_square(where(less(y, 4.0), mid, far)))
    # near 0 from x itself, not |x|: |x|'s gradient at 0 is 0
    out = where(greater(y, _ERFC_NEAR), where(less(xf, 0.0), sub(2.0, tail), tail),
                sub(1.0, erf(xf)))
    return cast(out, x.dtype) if half else out


# Abramowitz & Stegun 9.8.1 and 9.8.2 (relative error below 2e-7).
_I0_SMALL = (0.0045813, 0.0360768, 0.2659732, 1.2067492, 3.0899424, 3.5156229, 1.0)
_I0_LARGE = (0.00392377, -0.01647633, 0.02635537, -0.02057706, 0.00916281, -0.00157565,
             0.00225319, 0.01328592, 0.39894228)


def i0(input):
    """The modified Bessel function of the first kind of order 0, elementwise."""
    x = _check_tensor(input, "input")
    if not x.dtype.is_floating:
        raise TypeError(f"For primitive[BesselI0], the input argument[x] must be a type of "
                        f"{{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got "
                        f"Tensor[{str(x.dtype).capitalize()}].")
    ax = abs(x)
    small = less(ax, 3.75)
    t = div(where(small, ax, 3.75), 3.75)
    near = _horner(_I0_SMALL, mul(t, t))
    big = where(small, 3.75, ax)
    far = mul(div(exp(big), sqrt(big)), _horner(_I0_LARGE, div(3.75, big)))
    return where(small, near, far)
