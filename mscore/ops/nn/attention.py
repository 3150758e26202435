"""Attention: ``scaled_dot_product_attention`` and the multi-head attention forward
``nn.MultiheadAttention`` runs.

The multi-head forward follows MindSpore's ``nn.MultiheadAttention`` (in-projection, optional
key/value biases and zero attention, masks, out-projection) over sequence-first (L, N, E)
inputs. Without attention weights to return (and without attention dropout) the scores go
through :func:`scaled_dot_product_attention`, the backend's fused attention where it has one.
"""
from __future__ import annotations

import math

from mscore import dispatch, fused_reference
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops._args import _float_input
from mscore.ops.array.creation import zeros
from mscore.ops.array.indexing import getitem
from mscore.ops.array.manipulation import (
    concat,
    expand_dims,
    reshape,
    squeeze,
    swapaxes,
    tile,
    transpose,
)
from mscore.ops.control import cast
from mscore.ops.linalg.products import matmul
from mscore.ops.math.elementwise import add, mul, where
from mscore.ops.nn.activation import softmax
from mscore.ops.nn.pad_modes import pad
from mscore.ops.random.draws import dropout
from mscore.ops.reduction.reduce import mean

_wrap = Tensor._wrap


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v over the last two axes."""
    q, k, v = (_float_input(t, n) for t, n in ((query, "query"), (key, "key"),
                                               (value, "value")))
    mask = None if attn_mask is None else attn_mask._data
    if dropout_p == 0.0:
        fused = dispatch.fused("attention")
        if fused is not None:
            return _wrap(fused(q._data, k._data, v._data, mask, bool(is_causal), scale))
        return _wrap(fused_reference.attention(q._data, k._data, v._data, mask,
                                               bool(is_causal), scale)[0])
    weights, _ = fused_reference.attention_weights(q._data, k._data, mask, bool(is_causal),
                                                   scale)
    return matmul(dropout(_wrap(weights), dropout_p), v)


def _linear(x, w, b):
    out = matmul(x, transpose(w, (1, 0)))
    return out if b is None else add(out, b)


def _split_rows(t, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(None if t is None else getitem(t, (slice(start, start + n),)))
        start += n
    return out


def _check_masks(query, key, key_padding_mask, attn_mask, num_heads):
    batched = query.ndim == 3
    if query.ndim not in (2, 3):
        raise ValueError(f"The `query` should be unbatched 2D or batched 3D tensor, but got "
                         f"`query` with {query.ndim}D.")
    if key.ndim != query.ndim:
        raise ValueError(f"For {'batched' if batched else 'unbatched'} `query`, the `key` and "
                         f"`value` must be {query.ndim}D tensor, got `key` with {key.ndim}D.")
    if key_padding_mask is not None:
        want = 2 if batched else 1
        if key_padding_mask.ndim != want:
            raise ValueError(f"For {'batched' if batched else 'unbatched'} `query`, the "
                             f"`key_padding_mask` must be `None` or {want}D, got "
                             f"{key_padding_mask.ndim}D.")
        if not (key_padding_mask.dtype.is_bool or key_padding_mask.dtype.is_floating):
            raise ValueError("The `key_padding_mask` only supports bool and floating dtypes.")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise ValueError(f"The `attn_mask` must be `None`, 2-D or 3-D, got `attn_mask` "
                             f"with {attn_mask.ndim}D.")
        if not (attn_mask.dtype.is_bool or attn_mask.dtype.is_floating or
                attn_mask.dtype is mdt.uint8):
            raise ValueError(f"`attn_mask` only support float, byte, and bool types, but got "
                             f"{attn_mask.dtype}.")
    return batched


def _additive(mask, dtype):
    """A boolean mask (True: masked out) as 0 / -inf in ``dtype``; floats pass through."""
    if mask.dtype.is_bool or mask.dtype is mdt.uint8:
        return where(cast(mask, mdt.bool_), -math.inf, zeros(mask.shape, dtype))
    return cast(mask, dtype)


def _pad_last(mask, value):
    """``mask`` with one more (unmasked) key column."""
    if mask.dtype.is_bool:
        return concat([mask, zeros(mask.shape[:-1] + (1,), mdt.bool_)], -1)
    return pad(mask, (0, 1), value=value)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None,
                                 average_attn_weights=True):
    """``(attn_output (L, N, E), attn_weights or None)`` for (L, N, E) query and (S, N, *)
    key/value (or unbatched (L, E)). Boolean masks mark positions to leave out (True);
    float masks are added to the scores."""
    batched = _check_masks(query, key, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = (expand_dims(t, 1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = expand_dims(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"The `embed_dim` should be {embed_dim_to_check}, but got {embed_dim}.")
    head_dim = embed_dim // num_heads
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"The sequence length and batch dims of `key`: {key.shape[:2]} do "
                             f"not match `value`: {value.shape[:2]}.")
        b_q, b_k, b_v = _split_rows(in_proj_bias, (embed_dim,) * 3)
        q = _linear(query, q_proj_weight, b_q)
        k = _linear(key, k_proj_weight, b_k)
        v = _linear(value, v_proj_weight, b_v)
    else:
        if key.shape != value.shape:
            raise ValueError(f"The shape of `key` {key.shape} does not match `value` "
                             f"{value.shape}.")
        w_q, w_k, w_v = _split_rows(in_proj_weight, (embed_dim,) * 3)
        b_q, b_k, b_v = _split_rows(in_proj_bias, (embed_dim,) * 3)
        q, k, v = _linear(query, w_q, b_q), _linear(key, w_k, b_k), _linear(value, w_v, b_v)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise ValueError(f"The shape of the `attn_mask` should be {(tgt_len, src_len)}, "
                                 f"but got {attn_mask.shape}.")
            attn_mask = expand_dims(attn_mask, 0)
        elif attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise ValueError(f"The shape of the `attn_mask` should be "
                             f"{(bsz * num_heads, tgt_len, src_len)}, but got {attn_mask.shape}.")
    if bias_k is not None and bias_v is not None:
        k = concat([k, tile(bias_k, (1, bsz, 1))], 0)
        v = concat([v, tile(bias_v, (1, bsz, 1))], 0)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask, 0.0)
        key_padding_mask = None if key_padding_mask is None else \
            _pad_last(key_padding_mask, 0.0)
    elif bias_k is not None or bias_v is not None:
        raise ValueError("The bias_k and bias_v should be ``None`` at the same time.")
    # (S, N, E) -> (N, H, S, D)
    q = transpose(reshape(q, (tgt_len, bsz, num_heads, head_dim)), (1, 2, 0, 3))
    k = transpose(reshape(k, (k.shape[0], bsz, num_heads, head_dim)), (1, 2, 0, 3))
    v = transpose(reshape(v, (v.shape[0], bsz, num_heads, head_dim)), (1, 2, 0, 3))
    if add_zero_attn:
        zero_slot = zeros((bsz, num_heads, 1, head_dim), k.dtype)
        k = concat([k, zero_slot], 2)
        v = concat([v, zero_slot], 2)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask, 0.0)
        key_padding_mask = None if key_padding_mask is None else \
            _pad_last(key_padding_mask, 0.0)
    src_len = k.shape[2]
    mask = None
    if attn_mask is not None:
        am = _additive(attn_mask, q.dtype)
        mask = expand_dims(am, 0) if am.shape[0] == 1 else \
            reshape(am, (bsz, num_heads, tgt_len, src_len))
    if key_padding_mask is not None:
        if key_padding_mask.shape != (bsz, src_len):
            raise ValueError(f"The shape of `key_padding_mask` should be {(bsz, src_len)}, but "
                             f"got {key_padding_mask.shape}.")
        kpm = reshape(_additive(key_padding_mask, q.dtype), (bsz, 1, 1, src_len))
        mask = kpm if mask is None else add(mask, kpm)
    drop = float(dropout_p) if training else 0.0
    if need_weights or drop > 0:
        scores = mul(matmul(q, swapaxes(k, -1, -2)), 1.0 / math.sqrt(head_dim))
        if mask is not None:
            scores = add(scores, mask)
        weights = softmax(scores, -1)
        attn = dropout(weights, drop, True) if drop > 0 else weights
        out = matmul(attn, v)
    else:
        weights = None
        out = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = reshape(transpose(out, (2, 0, 1, 3)), (tgt_len, bsz, embed_dim))
    out = _linear(out, out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = mean(weights, 1)
    if not batched:
        out = squeeze(out, 1)
        weights = None if weights is None else squeeze(weights, 0)
    return out, weights
