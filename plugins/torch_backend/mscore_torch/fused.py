"""The torch backend's fused ops: one torch kernel (or multi-tensor pass) for what the
core would otherwise compose from several primitives."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as tnf

from mscore.plugin.rules import is_half_precision

from ._casts import FLOAT_METHODS

_DTYPE_OF = torch.Tensor.dtype.__get__  # type: ignore[attr-defined]  # a C getset
# ``torch.backends.cudnn.enabled``'s own getter (F.batch_norm passes it to the kernel)
_cudnn_enabled = getattr(torch._C, "_get_cudnn_enabled", lambda: torch.backends.cudnn.enabled)


def _divide_all(arrays, scalar):
    """``[a / scalar]`` in one multi-tensor call, each result in its array's dtype: torch
    promotes a 0-d array divided by a 0-d scalar of a wider dtype (both "dimensionless"), so
    those results are rounded back to theirs."""
    out = list(torch._foreach_div(arrays, scalar))
    if set(map(_DTYPE_OF, arrays)) <= {_DTYPE_OF(scalar)}:
        return out
    return [o if _DTYPE_OF(o) == _DTYPE_OF(a) else o.to(_DTYPE_OF(a))
            for o, a in zip(out, arrays)]


class TorchFused:
    """Fused ops (see :class:`mscore.plugin.backend.Backend` for each contract)."""

    # -- fused ops -----------------------------------------------------------------------
    def addcmul(self, a, b, c): return torch.addcmul(a, b, c)
    def relu(self, x): return torch.relu(x)
    def dense(self, x, w, b): return tnf.linear(x, w, b)
    def gelu(self, x, approximate): return tnf.gelu(x, approximate=approximate)

    def foreach_div(self, arrays, scalar):
        """``[a / scalar]`` in one multi-tensor call (``torch._foreach_div``)."""
        return _divide_all(list(arrays), scalar)

    def unscale_check(self, arrays, scale):
        """``(arrays / scale, finite)`` in one fused pass, in place (the kernel
        ``torch.amp.GradScaler`` unscales with: multiplies by the float32 reciprocal);
        arrays that share storage or are not contiguous are copied first; float64 arrays are
        divided (two passes)."""
        arrays = list(arrays)
        if torch.float64 in set(map(_DTYPE_OF, arrays)):
            # The fused kernel's reciprocal is float32: divide float64 exactly instead.
            out = _divide_all(arrays, scale)
            return out, torch.stack([torch.isfinite(a).all() for a in out]).all()
        if not _own_dense_storage(arrays):
            arrays = [a.clone() for a in arrays]
        found = torch.zeros(1, dtype=torch.float32, device=scale.device)
        inverse = torch.reciprocal(scale.to(torch.float32)).reshape(1)
        torch._amp_foreach_non_finite_check_and_unscale_(arrays, found, inverse)
        return arrays, found[0] == 0

    def momentum_update(self, params, moments, grads, lr, momentum, nesterov, inplace=False):
        """Momentum SGD over lists in a few multi-tensor calls (``torch._foreach_*``):
        ``v = momentum * v + g``, ``p = p - lr * v`` (Nesterov: ``g + momentum * v``); with
        ``inplace`` into the given tensors, as ``torch.optim.SGD`` does (three passes on the
        host: ``p += v * -lr`` in one; on CUDA two multi-tensor launches for it instead)."""
        params, moments, grads = list(params), list(moments), list(grads)
        if inplace:
            torch._foreach_mul_(moments, momentum)
            new_moments = moments
        else:
            new_moments = list(torch._foreach_mul(moments, momentum))
        torch._foreach_add_(new_moments, grads)
        step = new_moments
        if nesterov:
            step = torch._foreach_mul(new_moments, momentum)
            torch._foreach_add_(step, grads)
        if inplace and params[0].device.type == "cpu":
            torch._foreach_addcmul_(params, step, [torch.neg(lr)] * len(params))
            return params, new_moments
        step = torch._foreach_mul(step, lr)
        if inplace:
            torch._foreach_sub_(params, step)
            return params, new_moments
        return list(torch._foreach_sub(params, step)), new_moments

    def adam_update(self, params, m, v, grads, lr, beta1, beta2, eps, nesterov,
                    weight_decay=None, inplace=False):
        """Adam over lists in multi-tensor calls (``torch._foreach_*``), out of place or, with
        ``inplace``, into the given tensors as ``torch.optim.Adam(foreach=True)`` does."""
        params, m, v, grads = list(params), list(m), list(v), list(grads)
        fe = torch
        if inplace:
            fe._foreach_mul_(m, beta1)
            fe._foreach_mul_(v, beta2)
            new_m, new_v = m, v
        else:
            new_m = list(fe._foreach_mul(m, beta1))
            new_v = list(fe._foreach_mul(v, beta2))
        fe._foreach_add_(new_m, grads, alpha=1.0 - beta1)
        fe._foreach_addcmul_(new_v, grads, grads, value=1.0 - beta2)
        num = new_m
        if nesterov:
            num = fe._foreach_mul(new_m, beta1)
            fe._foreach_add_(num, grads, alpha=1.0 - beta1)
        denom = fe._foreach_sqrt(new_v)
        fe._foreach_add_(denom, eps)
        update = fe._foreach_div(num, denom)
        if weight_decay is not None:
            fe._foreach_add_(update, fe._foreach_mul(params, weight_decay))
        fe._foreach_mul_(update, lr)
        if inplace:
            fe._foreach_sub_(params, update)
            return params, new_m, new_v
        return list(fe._foreach_sub(params, update)), new_m, new_v

    def conv_bias(self, x, w, b, stride, padding, dilation, groups):
        """``conv`` with the bias added by the convolution kernel itself."""
        return self._convolve("conv_bias", x, w, b, stride, padding, dilation, groups)
    def softmax(self, x, axis): return torch.softmax(x, axis)
    def log_softmax(self, x, axis): return torch.log_softmax(x, axis)

    def layer_norm(self, x, normalized_shape, weight, bias, eps):
        """``torch.nn.functional.layer_norm``. Inputs narrower than float32 are normalised
        in float32 with float32 parameters and the output rounded once to their dtype
        (MindSpore's rule); otherwise the parameters take the input's dtype."""
        dt = x.dtype
        if dt == torch.float32 and (weight is None or weight.dtype == dt) and \
                (bias is None or bias.dtype == dt):
            return torch.layer_norm(x, normalized_shape, weight, bias, eps)
        work = torch.float32 if is_half_precision(dt.itemsize) else dt
        to_work = FLOAT_METHODS[work]
        xc = x if dt == work else to_work(x)
        weight = weight if weight is None or weight.dtype == work else to_work(weight)
        bias = bias if bias is None or bias.dtype == work else to_work(bias)
        out = torch.layer_norm(xc, tuple(normalized_shape), weight, bias, eps)
        return out if out.dtype == dt else FLOAT_METHODS[dt](out)

    def batch_norm(self, x, running_mean, running_var, weight, bias, training, momentum, eps):
        """Batch normalisation over axis 1: ``(out, new_running_mean, new_running_var)``.

        Functional: the running statistics given are not modified. In training the new ones
        are fresh tensors, ``(1 - momentum) * running + momentum * batch`` with the unbiased
        batch variance (as in MindSpore and torch); otherwise both are None. Half-precision
        inputs normalise with float32 statistics and parameters, as cuDNN does.
        """
        pdt = torch.float64 if x.dtype == torch.float64 else torch.float32

        weight = weight if weight is None or weight.dtype == pdt else weight.to(pdt)
        bias = bias if bias is None or bias.dtype == pdt else bias.to(pdt)
        if running_mean is None:
            return tnf.batch_norm(x, None, None, weight, bias, True, momentum, eps), None, None
        if not training:
            rm = running_mean.detach()
            rv = running_var.detach()
            rm = rm if rm.dtype == pdt else rm.to(pdt)
            rv = rv if rv.dtype == pdt else rv.to(pdt)
            return tnf.batch_norm(x, rm, rv, weight, bias, False, momentum, eps), None, None
        # torch updates the statistics it is handed in place: hand it copies.
        rm = running_mean.detach().to(pdt, copy=True)
        rv = running_var.detach().to(pdt, copy=True)
        out = tnf.batch_norm(x, rm, rv, weight, bias, True, momentum, eps)
        return out, rm.to(running_mean.dtype), rv.to(running_var.dtype)

    def batch_norm_inplace(self, x, running_mean, running_var, weight, bias, momentum, eps):
        """Training :meth:`batch_norm` that updates ``running_mean`` and ``running_var`` in
        place (one kernel, no copies of the statistics), or None unless they already hold
        the statistics' dtype (float32; float64 for float64 inputs) outside autograd."""
        pdt = torch.float64 if x.dtype == torch.float64 else torch.float32
        if running_mean.dtype != pdt or running_var.dtype != pdt or \
                running_mean.requires_grad or running_var.requires_grad:
            return None
        weight = weight if weight is None or weight.dtype == pdt else weight.to(pdt)
        bias = bias if bias is None or bias.dtype == pdt else bias.to(pdt)
        if x.numel() == x.shape[1]:   # one value per channel: F.batch_norm's error
            return tnf.batch_norm(x, running_mean, running_var, weight, bias, True, momentum,
                                  eps)
        # torch's kernel itself, without F.batch_norm's Python checks (the one above aside)
        return torch.batch_norm(x, weight, bias, running_mean, running_var, True, momentum,
                                eps, _cudnn_enabled())

    def cross_entropy(self, logits, target, ignore_index=-100, reduction="mean",
                      label_smoothing=0.0):
        """``torch.nn.functional.cross_entropy`` of logits (N, C) and class indices (N,)."""
        if target.dtype != torch.int64:
            target = target.long()
        return tnf.cross_entropy(logits, target, ignore_index=ignore_index,
                                 reduction=reduction, label_smoothing=label_smoothing)

    def attention(self, q, k, v, mask, is_causal, scale):
        """``scaled_dot_product_attention``; a boolean mask keeps the True positions, a
        float mask is added to the scores. Causal masking is top-left aligned."""
        if mask is not None:
            if mask.dtype != torch.bool and mask.dtype != q.dtype:
                mask = mask.to(q.dtype)
            if is_causal:  # torch refuses both at once: fold the causal mask in
                lq, lk = q.shape[-2], k.shape[-2]
                causal = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril()
                if mask.dtype == torch.bool:
                    mask = mask & causal
                else:
                    mask = mask.masked_fill(~causal, -math.inf)
                is_causal = False
        return tnf.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0,
                                                is_causal=bool(is_causal), scale=scale)

    def rnn_sequence(self, mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        """One direction of one recurrent layer through torch's own RNN kernels
        (``torch._VF.lstm``/``gru``/``rnn_tanh``/``rnn_relu``, one layer, no dropout); the
        gate orders are torch's (LSTM i, f, g, o; GRU r, z, n), as mscore's."""
        params = [w_ih, w_hh] if b_ih is None else [w_ih, w_hh, b_ih, b_hh]
        has_bias = b_ih is not None
        if mode == "LSTM":
            out, h, c = torch._VF.lstm(x, (h0[None], c0[None]), params, has_bias, 1, 0.0,
                                       False, False, False)
            return out, h[0], c[0]
        out, h = _RNN_KERNELS[mode](x, h0[None], params, has_bias, 1, 0.0, False, False,
                                    False)
        return out, h[0], None


_RNN_KERNELS = {"GRU": torch._VF.gru, "RNN_TANH": torch._VF.rnn_tanh,
                "RNN_RELU": torch._VF.rnn_relu}


def _own_dense_storage(arrays):
    """Whether each tensor is contiguous and alone on its storage (so an in-place pass over
    the list writes each element once; autograd returns one gradient tensor for several
    inputs, or views of one buffer, in some graphs). Mapped C methods: no Python frame per
    tensor."""
    storages = set(map(torch.UntypedStorage.data_ptr,
                       map(torch.Tensor.untyped_storage, arrays)))
    return len(storages) == len(arrays) and all(map(torch.Tensor.is_contiguous, arrays))
