"""The torch backend's primitive ops: elementwise, reductions, shape, indexing, linear
algebra, convolution, pooling and the overflow check."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as tnf

from mscore.plugin.rules import check_window_fits, divide_toward_zero, is_half_precision

_CONV = {1: tnf.conv1d, 2: tnf.conv2d, 3: tnf.conv3d}
_CONV_T = {1: tnf.conv_transpose1d, 2: tnf.conv_transpose2d, 3: tnf.conv_transpose3d}
_MAX_POOL = {1: tnf.max_pool1d, 2: tnf.max_pool2d, 3: tnf.max_pool3d}
_AVG_POOL = {1: tnf.avg_pool1d, 2: tnf.avg_pool2d, 3: tnf.avg_pool3d}


_EXACT_IN_FLOAT64 = 2 ** 53
_INT_MATMUL_CHUNK = 1 << 24   # elements of one int64 partial-product block (128 MiB)


def matmul_any_device(a, b):
    """``torch.matmul``, and :func:`exact_int_matmul` for integers off the CPU ("addmm_cuda"
    is not implemented for 'Int' and the other integer dtypes)."""
    if a.is_floating_point() or a.dtype == torch.bool or a.device.type == "cpu":
        return torch.matmul(a, b)
    return exact_int_matmul(a, b)


def exact_int_matmul(a, b):
    """``a @ b`` for integer tensors of one dtype, exact and wrapping around in that dtype
    (two's complement, as the CPU kernel and numpy do), on any device.

    When every partial sum is below 2**53 in magnitude (int8 and uint8 always, wider types
    with small values) one float64 GEMM computes it exactly; otherwise int64 products are
    summed block by block over the contracted axis (int64 arithmetic wraps, and wrapping
    commutes with the final narrowing)."""
    k = a.shape[-1]
    a64, b64 = a.to(torch.int64), b.to(torch.int64)
    # The bound in float64 (int64's abs overflows at its minimum); the margin of two covers
    # its rounding.
    bound = float(a64.double().abs().max()) * float(b64.double().abs().max()) * k \
        if a.numel() and b.numel() else 0.0
    if bound < _EXACT_IN_FLOAT64 / 2:
        out = torch.matmul(a64.to(torch.float64), b64.to(torch.float64)).to(torch.int64)
        return out.to(a.dtype)
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    rows, cols = a.shape[-2], b.shape[-1]
    per_k = max(1, math.prod(batch) * rows * cols)
    step = max(1, _INT_MATMUL_CHUNK // per_k)
    out = torch.zeros(batch + (rows, cols), dtype=torch.int64, device=a.device)
    for start in range(0, k, step):
        part = a64[..., :, start:start + step, None] * b64[..., None, start:start + step, :]
        out += part.sum(dim=-2)
    return out.to(a.dtype)


class TorchOps:
    """The primitive op set over ``torch.Tensor``."""

    # -- elementwise (bound to torch functions in __init__; kept for the contract) ------------
    def neg(self, a): return torch.neg(a)
    def abs(self, a): return torch.abs(a)
    def exp(self, a): return torch.exp(a)
    def log(self, a): return torch.log(a)
    def sqrt(self, a): return torch.sqrt(a)
    def sin(self, a): return torch.sin(a)
    def cos(self, a): return torch.cos(a)
    def tanh(self, a): return torch.tanh(a)
    def sign(self, a): return torch.sign(a)
    def floor(self, a): return torch.floor(a)
    def ceil(self, a): return torch.ceil(a)
    def logical_not(self, a): return torch.logical_not(a)
    def isfinite(self, a): return torch.isfinite(a)
    def add(self, a, b): return torch.add(a, b)
    def sub(self, a, b): return torch.sub(a, b)
    def mul(self, a, b): return torch.mul(a, b)
    def maximum(self, a, b): return torch.maximum(a, b)
    def minimum(self, a, b): return torch.minimum(a, b)
    def equal(self, a, b): return torch.eq(a, b)
    def not_equal(self, a, b): return torch.ne(a, b)
    def less(self, a, b): return torch.lt(a, b)
    def less_equal(self, a, b): return torch.le(a, b)
    def greater(self, a, b): return torch.gt(a, b)
    def greater_equal(self, a, b): return torch.ge(a, b)
    def logical_and(self, a, b): return torch.logical_and(a, b)
    def logical_or(self, a, b): return torch.logical_or(a, b)
    def pow(self, a, b): return torch.pow(a, b)
    def where(self, cond, x, y): return torch.where(cond, x, y)

    def erf(self, a):
        """The error function (half precision computed in float32, rounded once)."""
        if a.is_floating_point() and is_half_precision(a.element_size()):
            return torch.erf(a.float()).to(a.dtype)
        return torch.erf(a)

    def div(self, a, b):
        """True division of floats; integers divide truncating toward zero (MindSpore Div),
        ``x / 0`` is 0 and ``MIN / -1`` wraps to MIN (the contract: torch would raise, and
        the CPU would trap, on those)."""
        if a.is_floating_point():
            return torch.div(a, b)
        if a.dtype == torch.bool:
            return self.div(a.to(torch.int8), b.to(torch.int8)).to(torch.bool)
        return divide_toward_zero(a, b, trunc_divide=_trunc_divide, where=torch.where,
                                  negative=torch.neg)

    # -- reductions ----------------------------------------------------------------------
    def sum(self, a, axis, keepdims):
        """Sum in ``a``'s own dtype (torch would widen integers to int64)."""
        if axis is None:
            if keepdims:
                return torch.sum(a, dim=tuple(range(a.ndim)), keepdim=True, dtype=a.dtype)
            return torch.sum(a, dtype=a.dtype)
        return torch.sum(a, dim=axis, keepdim=keepdims, dtype=a.dtype)

    def max(self, a, axis, keepdims):
        """Largest value over ``axis`` (all axes when None)."""
        return torch.amax(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                          keepdim=keepdims)

    def min(self, a, axis, keepdims):
        """Smallest value over ``axis`` (all axes when None)."""
        return torch.amin(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                          keepdim=keepdims)

    def all(self, a, axis, keepdims):
        """True where every element over ``axis`` is true."""
        if a.dtype != torch.bool:
            a = a != 0
        return torch.all(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                         keepdim=keepdims)

    def any(self, a, axis, keepdims):
        """True where some element over ``axis`` is true."""
        if a.dtype != torch.bool:
            a = a != 0
        return torch.any(a, dim=tuple(range(a.ndim)) if axis is None else axis,
                         keepdim=keepdims)

    def argmax(self, a, axis):
        """Index (int64) of the first maximum along ``axis``."""
        return torch.argmax(a, dim=axis)

    def argmin(self, a, axis):
        """Index (int64) of the first minimum along ``axis``."""
        return torch.argmin(a, dim=axis)

    # -- shape ---------------------------------------------------------------------------
    def reshape(self, a, shape): return torch.reshape(a, shape)
    def transpose(self, a, perm): return torch.permute(a, perm)
    def broadcast_to(self, a, shape): return torch.broadcast_to(a, shape)

    def concat(self, arrays, axis):
        """Join same-dtype tensors along ``axis``."""
        return torch.cat(list(arrays), dim=axis)

    def pad(self, a, pad_width, value):
        """Constant padding; ``pad_width`` holds one ``(before, after)`` pair per axis."""
        flat = []
        for lo, hi in reversed(pad_width):
            flat.extend((int(lo), int(hi)))
        if not any(flat):
            return a
        return tnf.pad(a, flat, mode="constant", value=value)

    # -- indexing ------------------------------------------------------------------------
    def getitem(self, a, index):
        """numpy indexing (negative slice steps included, which torch lacks)."""
        if any(type(i) is slice and i.step is not None and i.step < 0 for i in index):
            a, index = _flip_negative_steps(a, index)
        return a[index]

    def scatter_add(self, a, index, updates):
        """A copy of ``a`` with ``updates`` added at ``a[index]``; repeated indices add up."""
        advanced = any(isinstance(i, torch.Tensor) for i in index)
        negative = any(type(i) is slice and i.step is not None and i.step < 0 for i in index)
        if not advanced and not negative:
            out = a.clone()
            out[index] += updates
            return out
        # Map each selected element to its flat position, then accumulate with index_add_.
        flat_ids = torch.arange(a.numel(), device=a.device).reshape(a.shape)
        picked = self.getitem(flat_ids, index)
        upd = torch.broadcast_to(updates.to(a.dtype), picked.shape).reshape(-1)
        out = a.reshape(-1).clone()
        out.index_add_(0, picked.reshape(-1), upd)
        return out.reshape(a.shape)

    # -- linear algebra, convolution, pooling --------------------------------------------
    def matmul(self, a, b):
        """``torch.matmul``; on CUDA, which has no integer GEMM, integer operands go
        through :func:`exact_int_matmul` (wrapping around like the CPU kernel). The backend
        binds the fastest form for its device over it (``_bind_matmul``)."""
        return matmul_any_device(a, b)

    def conv(self, x, w, stride, padding, dilation, groups):
        """N-d cross-correlation (N = 1, 2, 3) with torch's convolution kernels."""
        return self._convolve("conv", x, w, None, stride, padding, dilation, groups)

    def _convolve(self, op, x, w, b, stride, padding, dilation, groups):
        nd = w.ndim - 2
        fn = _CONV.get(nd)
        if fn is None:
            raise ValueError(f"{op}: backend 'torch' supports 1-, 2- and 3-d convolution, got "
                             f"{nd}-d")
        sym = _symmetric(padding)
        if sym is None:
            x = self.pad(x, ((0, 0), (0, 0)) + tuple(padding), 0)
            sym = (0,) * nd
        return fn(x, w, b, tuple(stride), sym, tuple(dilation), groups)

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        """N-d transposed convolution (the input-gradient of :meth:`conv`)."""
        nd = w.ndim - 2
        fn = _CONV_T.get(nd)
        if fn is None:
            raise ValueError(f"conv_transpose: backend 'torch' supports 1-, 2- and 3-d, got "
                             f"{nd}-d")
        stride, dilation, output_padding = tuple(stride), tuple(dilation), tuple(output_padding)
        sym = _symmetric(padding)
        if sym is not None and all(op < max(s, d) for op, s, d in
                                   zip(output_padding, stride, dilation)):
            return fn(x, w, None, stride, sym, output_padding, groups, dilation)
        # General case: the full (unpadded) result, cropped by the padding and extended by
        # the output padding (zeros past the full extent, where nothing contributes).
        full = fn(x, w, None, stride, 0, 0, groups, dilation)
        index = [slice(None), slice(None)]
        extend = []
        for ax, ((lo, hi), op) in enumerate(zip(padding, output_padding)):
            size = full.shape[2 + ax]
            stop = size - hi + op
            index.append(slice(lo, min(stop, size)))
            extend.append(max(stop - size, 0))
        out = full[tuple(index)]
        if any(extend):
            out = self.pad(out, ((0, 0), (0, 0)) + tuple((0, e) for e in extend), 0)
        return out

    def max_pool(self, x, kernel, stride, padding):
        """Max over windows; padding counts as -inf."""
        nd = len(kernel)
        sym = _symmetric(padding)
        fn = _MAX_POOL.get(nd)
        if fn is not None and sym is not None and x.is_floating_point() and \
                all(2 * p <= k for p, k in zip(sym, kernel)):
            try:
                return fn(x, tuple(kernel), tuple(stride), sym)
            except NotImplementedError:  # no kernel for this dtype on this device
                pass
        low = -math.inf if x.is_floating_point() else torch.iinfo(x.dtype).min
        win = _windows(self.pad(x, ((0, 0), (0, 0)) + tuple(padding), low), kernel, stride)
        return torch.amax(win, dim=tuple(range(-nd, 0)))

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        """Mean over windows; zero padding counted or not by ``count_include_pad``."""
        nd = len(kernel)
        sym = _symmetric(padding)
        fn = _AVG_POOL.get(nd)
        if fn is not None and sym is not None and x.is_floating_point() and \
                all(2 * p <= k for p, k in zip(sym, kernel)):
            try:
                return fn(x, tuple(kernel), tuple(stride), sym, False, bool(count_include_pad))
            except NotImplementedError:  # no kernel for this dtype on this device
                pass
        acc = torch.float64 if not x.is_floating_point() or x.dtype == torch.float64 \
            else torch.float32
        pads = ((0, 0), (0, 0)) + tuple(padding)
        axes = tuple(range(-nd, 0))
        total = torch.sum(_windows(self.pad(x.to(acc), pads, 0), kernel, stride), dim=axes)
        if count_include_pad:
            res = total / math.prod(kernel)
        else:
            ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=acc, device=x.device)
            res = total / torch.sum(_windows(self.pad(ones, pads, 0), kernel, stride), dim=axes)
        return res.to(x.dtype)

    # -- overflow check ------------------------------------------------------------------
    def all_finite(self, arrays):
        """True when no floating array holds inf or nan, with one host synchronisation.

        CUDA: one fused ``torch._foreach_norm(inf)`` launch over all arrays of a device
        (multi-tensor apply). CPU: ``torch.aminmax`` per array (one vectorised pass each;
        inf and nan reach the min or the max), 10x faster there than the foreach norm.
        """
        floats = [a.detach() for a in arrays if a.is_floating_point() and a.numel()]
        if not floats:
            return True
        by_device = {}
        for a in floats:
            by_device.setdefault(a.device, []).append(a)
        flags = []
        for device, group in by_device.items():
            if device.type == "cuda":
                extremes = [n.double() for n in torch._foreach_norm(group, math.inf)]
            else:
                extremes = [torch.stack(torch.aminmax(a)).double() for a in group]
            flags.append(torch.isfinite(torch.cat([e.reshape(-1) for e in extremes])).all())
        ok = flags[0] if len(flags) == 1 else torch.stack([f.cpu() for f in flags]).all()
        return bool(ok.item())


def _symmetric(padding):
    """The per-axis padding when every ``(before, after)`` pair is equal, else None
    (remembered per padding: a network convolves with the same few every step)."""
    try:
        return _symmetric_known[padding]
    except (KeyError, TypeError):   # new, or a list (not hashable)
        pass
    out = _symmetric_of(padding)
    if isinstance(padding, tuple) and len(_symmetric_known) < 256:
        _symmetric_known[padding] = out
    return out


_symmetric_known: dict = {}


def _symmetric_of(padding):
    out = []
    for lo, hi in padding:
        if lo != hi:
            return None
        out.append(int(lo))
    return tuple(out)


def _trunc_divide(a, b):
    return torch.div(a, b, rounding_mode="trunc")


def _windows(x, kernel, stride):
    """A view (N, C, *out, *kernel) of the pooling windows of an already-padded ``x``."""
    check_window_fits(tuple(x.shape[2:]), kernel)
    for ax, (k, s) in enumerate(zip(kernel, stride)):
        x = x.unfold(2 + ax, k, s)  # appends this window axis last, so they stay in order
    return x


def _flip_negative_steps(a, index):
    """Rewrite slices with a negative step as flips plus positive-step slices."""
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    new, axis = [], 0
    flips = []
    for item in index:
        if item is Ellipsis:
            axis += a.ndim - consumed
            new.append(item)
            continue
        if item is None:
            new.append(item)
            continue
        if type(item) is slice and item.step is not None and item.step < 0:
            size = a.shape[axis]
            start, stop, step = item.indices(size)
            count = len(range(start, stop, step))
            flips.append(axis)
            # Element j of the result is a[start + j*step] = flipped[size-1-start - j*step].
            first = size - 1 - start
            new.append(slice(first, first + count * (-step), -step) if count else slice(0, 0))
        else:
            new.append(item)
        axis += 1
    return torch.flip(a, flips), tuple(new)
