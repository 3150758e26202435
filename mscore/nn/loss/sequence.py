"""Sequence and large-vocabulary losses: ``nn.CTCLoss`` and ``nn.SampledSoftmaxLoss``."""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore import context
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.loss.base import LossBase, check_tensor
from mscore.ops import functional as F
from mscore.ops.nn.ctc import ctc_loss


class CTCLoss(LossBase):
    """Connectionist temporal classification loss (:func:`mscore.ops.ctc_loss`): called as
    ``loss(log_probs, targets, input_lengths, target_lengths)`` with ``log_probs`` (T, N, C)
    or, for one sequence, (T, C) with ``targets`` (S,) or (1, S).

    ``CTCLoss(blank=0, reduction='mean', zero_infinity=False)``.
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank = blank
        self.reduction = reduction
        self.zero_infinity = zero_infinity

    def construct(self, log_probs, targets, input_lengths, target_lengths):
        check_tensor(log_probs, "log_probs", "CTCLoss")
        check_tensor(targets, "targets", "CTCLoss")
        if log_probs.ndim == 2:
            if targets.ndim > 2:
                raise ValueError(f"For CTCLoss, when the shape of log_probs is (T, C), the "
                                 f"dimension of targets should be 1 or 2, but got "
                                 f"{targets.ndim}.")
            if targets.ndim == 2 and targets.shape[0] != 1:
                raise ValueError(f"For CTCLoss, the first dimension of 2-D targets should be "
                                 f"1, but got {targets.shape[0]}.")
            if targets.ndim == 1:
                targets = F.expand_dims(targets, 0)
            loss, _ = ctc_loss(F.expand_dims(log_probs, -2), targets,
                               _lengths(input_lengths), _lengths(target_lengths), self.blank,
                               self.reduction, self.zero_infinity)
            return F.squeeze(loss, 0) if loss.ndim else loss
        loss, _ = ctc_loss(log_probs, targets, _lengths(input_lengths),
                           _lengths(target_lengths), self.blank, self.reduction,
                           self.zero_infinity)
        return loss


def _lengths(x):
    """A length given as a Tensor, or (for one sequence) as an int or a tuple of ints."""
    if isinstance(x, Tensor):
        return x if x.ndim else F.reshape(x, (1,))
    if isinstance(x, numbers.Integral):
        x = (int(x),)
    return Tensor(np.asarray(x, np.int32).reshape(-1))


class SampledSoftmaxLoss(LossBase):
    """Softmax cross entropy over the true classes and ``num_sampled`` sampled ones
    (uniformly, each once, excluding the true classes when ``remove_accidental_hits``),
    with the logits corrected by ``log`` of the expected sample counts.

    ``SampledSoftmaxLoss(num_sampled, num_classes, num_true=1, sampled_values=None,
    remove_accidental_hits=True, seed=0, reduction='none')``; called as
    ``loss(weights, biases, labels, logits)`` with ``weights`` (num_classes, dim),
    ``biases`` (num_classes,), ``labels`` (batch, num_true) int32/int64 and ``logits``
    (batch, dim); returns the per-sample loss (``reduction`` is accepted and, as in
    MindSpore, not applied). ``sampled_values`` = ``(sampled, true_expected_count,
    sampled_expected_count)`` skips the sampler. The sampler draws from its own stream
    (``seed``, or the global seed), not MindSpore's.
    """

    def __init__(self, num_sampled, num_classes, num_true=1, sampled_values=None,
                 remove_accidental_hits=True, seed=0, reduction="none"):
        super().__init__(reduction)
        cls = "SampledSoftmaxLoss"
        if num_true < 1:
            raise ValueError(f"For '{cls}', the 'num_true' must be greater than or equal to 1, "
                             f"but got {num_true}.")
        if seed < 0:
            raise ValueError(f"For '{cls}', the 'seed' must be greater than or equal to 0, but "
                             f"got {seed}.")
        if num_sampled > num_classes:
            raise ValueError(f"For '{cls}', the 'num_sampled' must be smaller than or equal to "
                             f"'num_classes', but got 'num_sampled': {num_sampled} and "
                             f"'num_classes': {num_classes}.")
        if num_true > num_classes:
            raise ValueError(f"For '{cls}', the 'num_true' must be smaller than or equal to "
                             f"'num_classes', but got 'num_true': {num_true} and "
                             f"'num_classes': {num_classes}.")
        if sampled_values is not None:
            if not isinstance(sampled_values, (list, tuple)):
                raise TypeError(f"For '{cls}', the type of 'sampled_values' must be a list or "
                                f"tuple, but got {type(sampled_values).__name__}.")
            if len(sampled_values) != 3:
                raise ValueError(f"For '{cls}', the length of 'sampled_values' must be equal to "
                                 f"3, but got {len(sampled_values)}.")
        self.num_sampled = num_sampled
        self.num_classes = num_classes
        self.num_true = num_true
        self.sampled_values = sampled_values
        self.remove_accidental_hits = remove_accidental_hits
        self.seed = seed
        self._rng = None

    def construct(self, weights, biases, labels, logits):
        cls = "SampledSoftmaxLoss"
        for name, v in (("weights", weights), ("biases", biases), ("labels", labels),
                        ("logits", logits)):
            check_tensor(v, name, cls)
        if labels.dtype not in (mdt.int32, mdt.int64):
            raise TypeError(f"For '{cls}', the 'labels' must be int32 or int64, but got "
                            f"{labels.dtype}.")
        out_logits, out_labels = self._sampled_logits(weights, biases, labels, logits)
        shifted = F.sub(out_logits, F.stop_gradient(F.amax(out_logits, 1, True)))
        exp = F.exp(shifted)
        pred = F.div(exp, F.sum(exp, 1, keepdim=True))
        return F.neg(F.sum(F.mul(out_labels, F.log(F.add(pred, 1e-20))), 1))

    def _sampled_logits(self, weights, biases, labels, logits):
        labels = F.reshape(F.cast(labels, mdt.int32), (-1, self.num_true))
        flat = F.reshape(labels, (-1,))
        sampled, true_count, sampled_count = self.sampled_values if \
            self.sampled_values is not None else self._sample(flat)
        sampled = F.cast(sampled, mdt.int32)
        n_true = flat.shape[0]
        all_ids = F.concat([flat, sampled], 0)
        all_w = F.gather(weights, all_ids, 0)
        all_b = F.gather(biases, all_ids, 0)
        true_w, sampled_w = all_w[:n_true], all_w[n_true:]
        true_b, sampled_b = all_b[:n_true], all_b[n_true:]
        dim = all_w.shape[1]
        sampled_logits = F.add(F.matmul(logits, F.transpose(sampled_w, (1, 0))), sampled_b)
        rows = F.mul(F.expand_dims(logits, 1), F.reshape(true_w, (-1, self.num_true, dim)))
        true_logits = F.add(F.sum(rows, 2), F.reshape(true_b, (-1, self.num_true)))
        true_logits = F.sub(true_logits, F.log(F.cast(true_count, true_logits.dtype)))
        sampled_logits = F.sub(sampled_logits,
                               F.log(F.cast(sampled_count, sampled_logits.dtype)))
        out_logits = F.concat([true_logits, sampled_logits], 1)
        out_labels = F.concat([F.div(F.ones_like(true_logits), float(self.num_true)),
                               F.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels

    def _sample(self, flat_labels):
        """``(sampled, true_expected_count, sampled_expected_count)``: ``num_sampled``
        distinct classes drawn uniformly on the host (the true classes excluded when
        ``remove_accidental_hits``) and the expected counts ``1 - (1 - 1/num_classes)^tries``
        (``num_sampled / num_classes`` without removal), as MindSpore's sampler gives."""
        if self._rng is None:
            base = self.seed or context.get_seed()
            self._rng = np.random.default_rng(base)
        true = set(np.asarray(flat_labels.asnumpy()).reshape(-1).tolist()) \
            if self.remove_accidental_hits else set()
        if self.num_sampled > self.num_classes - len(true):
            raise ValueError(f"For 'SampledSoftmaxLoss', cannot draw {self.num_sampled} "
                             f"classes outside the {len(true)} true ones among "
                             f"{self.num_classes}")
        picked, seen, tries = [], set(true), 0
        while len(picked) < self.num_sampled:
            c = int(self._rng.integers(self.num_classes))
            tries += 1
            if c not in seen:
                seen.add(c)
                picked.append(c)
        p = 1.0 / self.num_classes
        expected = -math.expm1(tries * math.log1p(-p)) if self.remove_accidental_hits \
            else self.num_sampled * p
        shape = (flat_labels.shape[0] // self.num_true, self.num_true)
        return (Tensor(np.asarray(picked, np.int32)),
                Tensor(np.full(shape, expected, np.float32)),
                Tensor(np.full((self.num_sampled,), expected, np.float32)))


__all__ = ["CTCLoss", "SampledSoftmaxLoss"]
