"""``ops.ctc_loss``: connectionist temporal classification, as MindSpore's CTCLossV2.

The forward (alpha) recursion runs in log space over the time steps with the functional ops,
so every backend differentiates it. Impossible alignments are carried as a large negative
number rather than -inf (whose gradients would be nan) and reported as an infinite loss.
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.array.creation import arange, full
from mscore.ops.array.indexing import gather_elements, one_hot
from mscore.ops.array.manipulation import concat, expand_dims, reshape, squeeze, stack, transpose
from mscore.ops.control import cast, stop_gradient
from mscore.ops.linalg.products import matmul
from mscore.ops.math.elementwise import (
    add,
    div,
    exp,
    greater,
    less,
    log,
    logical_and,
    maximum,
    minimum,
    mul,
    neg,
    not_equal,
    sub,
    where,
)
from mscore.ops.reduction.reduce import mean, sum

_NEG = -1e30          # log(0) inside the recursion
_IMPOSSIBLE = -1e29   # a total log-likelihood below this has no alignment


def _check(log_probs, targets, input_lengths, target_lengths, blank, reduction,
           zero_infinity):
    fn = "ctc_loss"
    if isinstance(blank, bool) or not isinstance(blank, int):
        raise TypeError(f"For '{fn}', the 'blank' must be int, but got {type(blank).__name__}.")
    if not isinstance(reduction, str):
        raise TypeError(f"For '{fn}', the 'reduction' must be str, but got "
                        f"{type(reduction).__name__}.")
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"For '{fn}', the 'reduction' must be one of ['none', 'sum', 'mean'], "
                         f"but got {reduction}.")
    if not isinstance(zero_infinity, bool):
        raise TypeError(f"For '{fn}', the 'zero_infinity' must be bool, but got "
                        f"{type(zero_infinity).__name__}.")
    for name, x in (("log_probs", log_probs), ("targets", targets),
                    ("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{fn}', the '{name}' must be a Tensor, but got "
                            f"{type(x).__name__}.")
    if log_probs.ndim != 3:
        raise ValueError(f"For '{fn}', the 'log_probs' must be 3-d (T, N, C), but got shape "
                         f"{log_probs.shape}.")
    t, n, c = log_probs.shape
    if targets.ndim != 2 or targets.shape[0] != n:
        raise ValueError(f"For '{fn}', the 'targets' must be 2-d (N, S) with N = {n}, but got "
                         f"shape {targets.shape}.")
    for name, x in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if x.shape != (n,):
            raise ValueError(f"For '{fn}', the '{name}' must have shape ({n},), but got "
                             f"{x.shape}.")
    if not 0 <= blank < c:
        raise ValueError(f"For '{fn}', the 'blank' must be in [0, {c}), but got {blank}.")


def _logsumexp3(a, b, c):
    m = stop_gradient(maximum(maximum(a, b), c))
    total = add(add(exp(sub(a, m)), exp(sub(b, m))), exp(sub(c, m)))
    return add(m, log(total))


def _shift(x, k, fill):
    """``x`` moved ``k`` places to the right along axis 1, ``fill`` coming in."""
    n, length = x.shape
    pad = full((n, k), fill, x.dtype)
    return concat([pad, x[:, :length - k]], 1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """``(loss, log_alpha)``: the negative log-likelihood of ``targets`` (N, S) under the
    per-frame log-probabilities ``log_probs`` (T, N, C), each sample using its first
    ``input_lengths[i]`` frames and ``target_lengths[i]`` labels. ``reduction`` 'mean'
    divides each loss by its target length (at least 1) before averaging; ``zero_infinity``
    turns impossible alignments (infinite loss) into 0. ``log_alpha`` (N, T, 2S+1) holds the
    forward variables (-inf where no path leads)."""
    _check(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    x = log_probs if log_probs.dtype.is_floating else cast(log_probs, mdt.float32)
    t_max, n, c = x.shape
    s_max = targets.shape[1]
    length = 2 * s_max + 1
    tg = cast(targets, mdt.int32)
    # extended labels: blank, l1, blank, l2, ..., blank
    blanks = full((n, s_max + 1), blank, mdt.int32)
    inter = reshape(stack([blanks[:, :s_max], tg], 2), (n, 2 * s_max))
    ext = concat([inter, blanks[:, s_max:]], 1) if s_max else blanks
    prev2 = concat([full((n, 2), -1, mdt.int32), ext[:, :length - 2]], 1) \
        if length > 2 else full((n, length), -1, mdt.int32)
    skip = logical_and(not_equal(ext, blank), not_equal(ext, prev2))
    hot = cast(one_hot(ext, c, 1.0, 0.0), x.dtype)       # (N, L, C)
    frames = matmul(transpose(x, (1, 0, 2)), transpose(hot, (0, 2, 1)))  # (N, T, L)
    in_len = cast(input_lengths, mdt.int32)
    tl = cast(target_lengths, mdt.int32)
    # a path starts at the first blank or (with at least one label) at the first label
    first_states = minimum(add(mul(tl, 2), 1), 2)
    start = less(expand_dims(arange(length), 0), expand_dims(first_states, 1))
    alpha = where(start, frames[:, 0], _NEG)
    alphas = [alpha]
    for step in range(1, t_max):
        a1 = _shift(alpha, 1, _NEG)
        a2 = where(skip, _shift(alpha, 2, _NEG), _NEG)
        new = add(_logsumexp3(alpha, a1, a2), frames[:, step])
        new = maximum(new, _NEG)   # keep "impossible" from drifting towards -inf
        alpha = where(expand_dims(greater(in_len, step), 1), new, alpha)
        alphas.append(alpha)
    end = mul(tl, 2)
    last = squeeze(gather_elements(alpha, 1, expand_dims(end, 1)), 1)
    before = squeeze(gather_elements(alpha, 1, expand_dims(maximum(sub(end, 1), 0),
                                                           1)), 1)
    before = where(greater(tl, 0), before, _NEG)
    ll = _logsumexp3(last, before, full(last.shape, _NEG, last.dtype))
    impossible = less(ll, _IMPOSSIBLE)
    loss = where(impossible, 0.0 if zero_infinity else float("inf"), neg(ll))
    log_alpha = stack(alphas, 1)
    log_alpha = where(less(log_alpha, _IMPOSSIBLE), float("-inf"), log_alpha)
    if reduction == "sum":
        loss = sum(loss)
    elif reduction == "mean":
        denom = maximum(cast(tl, loss.dtype), 1.0)
        loss = mean(div(loss, denom))
    return loss, log_alpha
