"""Einstein summation (``einsum`` and its Primitive ``Einsum``): the equation is parsed once
and evaluated as a chain of pairwise contractions, each a batched matrix product, so the
gradient is that of ``transpose``, ``reshape``, ``matmul``, ``sum`` and ``diagonal``.
"""
from __future__ import annotations

import builtins
import math
import string

from mscore.common.tensor import Tensor
from mscore.ops.array.manipulation import broadcast_to, diagonal, reshape, transpose
from mscore.ops.linalg.products import matmul
from mscore.ops.primitive_base import Primitive
from mscore.ops.reduction.reduce import sum

__all__ = ["einsum", "Einsum"]

_LETTERS = frozenset(string.ascii_letters)
# Axes an ellipsis stands for get labels outside the letters, numbered from the right so that
# operands of different ranks broadcast as numpy aligns them.
_ELLIPSIS_BASE = 0x100


def _ellipsis_labels(count):
    return [chr(_ELLIPSIS_BASE + count - 1 - i) for i in range(count)]


def _operand_labels(term, ndim, index):
    """The axis labels of one operand's term (``...`` expanded to its broadcast axes)."""
    if term.count("...") > 1 or term.replace("...", "").count(".") or \
            not set(term.replace("...", "")) <= _LETTERS:
        raise ValueError(f"For 'einsum', the subscripts of operand {index} must be letters "
                         f"with at most one '...', but got '{term}'.")
    named = len(term.replace("...", ""))
    if "..." not in term:
        if named != ndim:
            raise ValueError(f"For 'einsum', operand {index} has {ndim} dimensions but its "
                             f"subscripts '{term}' name {named}.")
        return list(term)
    if named > ndim:
        raise ValueError(f"For 'einsum', operand {index} has {ndim} dimensions but its "
                         f"subscripts '{term}' name {named}.")
    head, tail = term.split("...")
    return list(head) + _ellipsis_labels(ndim - named) + list(tail)


def parse_equation(equation, ranks):
    """``(input_labels, output_labels)`` of an einsum equation for operands of ``ranks``:
    one list of axis labels per operand and one for the result (numpy's implicit output,
    the broadcast axes then the letters used once in alphabetical order, without ``->``)."""
    if not isinstance(equation, str):
        raise TypeError(f"For 'einsum', 'equation' must be a str, but got "
                        f"{type(equation).__name__}.")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"For 'einsum', the equation '{equation}' names {len(terms)} "
                         f"operands but {len(ranks)} were given.")
    inputs = [_operand_labels(t, r, i) for i, (t, r) in enumerate(zip(terms, ranks))]
    broadcast = max((builtins.sum(ord(c) >= _ELLIPSIS_BASE for c in labels)
                     for labels in inputs), default=0)
    if arrow:
        if rhs.count("...") > 1 or rhs.replace("...", "").count(".") or \
                not set(rhs.replace("...", "")) <= _LETTERS:
            raise ValueError(f"For 'einsum', the output subscripts must be letters with at "
                             f"most one '...', but got '{rhs}'.")
        head, dots, tail = rhs.partition("...")
        rhs_labels = list(head) + (_ellipsis_labels(broadcast) if dots else []) + list(tail)
        letters = [c for c in rhs_labels if ord(c) < _ELLIPSIS_BASE]
        if len(set(letters)) != len(letters):
            raise ValueError(f"For 'einsum', the output subscripts '{rhs}' repeat a letter.")
        used = {c for labels in inputs for c in labels}
        missing = [c for c in letters if c not in used]
        if missing:
            raise ValueError(f"For 'einsum', the output subscript '{missing[0]}' appears in "
                             f"no operand.")
        return inputs, rhs_labels
    counts = {}
    for labels in inputs:
        for c in labels:
            counts[c] = counts.get(c, 0) + 1
    once = sorted(c for c, n in counts.items() if n == 1 and ord(c) < _ELLIPSIS_BASE)
    return inputs, _ellipsis_labels(broadcast) + once


def _take_diagonals(x, labels):
    """An operand with each repeated label reduced to its diagonal (``'ii'`` -> ``'i'``)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        seen = {}
        for j, c in enumerate(labels):
            if c in seen:
                i = seen[c]
                break
            seen[c] = j
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"For 'einsum', the repeated subscript '{c}' spans axes of "
                             f"sizes {x.shape[i]} and {x.shape[j]}.")
        x = diagonal(x, 0, i, j)
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [c]
    return x, labels


def _sum_labels(x, labels, drop):
    axes = tuple(i for i, c in enumerate(labels) if c in drop)
    if not axes:
        return x, labels
    return sum(x, axes), [c for c in labels if c not in drop]


def _permute(x, labels, order):
    perm = tuple(labels.index(c) for c in order)
    return (x if perm == tuple(range(len(perm))) else transpose(x, perm)), list(order)


def _common_sizes(a, la, b, lb):
    """Both operands with the size-1 axes of shared labels broadcast to the other's size."""
    size = {}
    for x, labels in ((a, la), (b, lb)):
        for c, n in zip(labels, x.shape):
            if c not in size or size[c] == 1:
                size[c] = n
            elif n not in (1, size[c]):
                raise ValueError(f"For 'einsum', the subscript '{c}' spans axes of sizes "
                                 f"{size[c]} and {n}.")
    out = []
    for x, labels in ((a, la), (b, lb)):
        target = tuple(size[c] if c in la and c in lb else n for c, n in zip(labels, x.shape))
        out.append(x if target == x.shape else broadcast_to(x, target))
    return out


def _contract(a, la, b, lb, keep):
    """``a`` and ``b`` multiplied and summed over the labels they share that ``keep`` does
    not hold, as one batched matrix product."""
    a, b = _common_sizes(a, la, b, lb)
    batch = [c for c in la if c in lb and c in keep]
    inner = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    a, la = _permute(a, la, batch + left + inner)
    b, lb = _permute(b, lb, batch + inner + right)
    sizes = dict(zip(la, a.shape)) | dict(zip(lb, b.shape))

    def prod(labels):
        return math.prod(sizes[c] for c in labels)
    nb, nl, ni, nr = prod(batch), prod(left), prod(inner), prod(right)
    out = matmul(reshape(a, (nb, nl, ni)), reshape(b, (nb, ni, nr)))
    labels = batch + left + right
    return reshape(out, tuple(sizes[c] for c in labels)), labels


def einsum(equation, *operands):
    """MindSpore's ``ops.einsum``: the sum of products of ``operands`` over the subscripts
    ``equation`` names (numpy's and PyTorch's rules: ``'ij,jk->ik'``, ``'ii->i'`` for a
    diagonal, ``'...'`` for broadcast axes, the implicit output without ``->``); operands may
    also come as one list or tuple."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("For 'einsum', at least one operand is required.")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"For 'einsum', operand {i} must be a Tensor, but got "
                            f"{type(t).__name__}.")
    inputs, output = parse_equation(equation, [t.ndim for t in operands])
    pending = []
    for t, labels in zip(operands, inputs):
        pending.append(_take_diagonals(t, labels))
    x, labels = pending[0]
    rest = pending[1:]

    def needed_after(k):
        return set(output).union(*(set(lab) for _, lab in rest[k:]))
    x, labels = _sum_labels(x, labels, set(labels) - needed_after(0))
    for k, (y, ly) in enumerate(rest):
        keep = needed_after(k + 1)
        y, ly = _sum_labels(y, ly, set(ly) - keep - set(labels))
        x, labels = _contract(x, labels, y, ly, keep)
    x, labels = _sum_labels(x, labels, set(labels) - set(output))
    x, _ = _permute(x, labels, output)
    return x


class Einsum(Primitive):
    """``Einsum(equation)(operands)``: :func:`einsum` with the equation fixed."""

    def __init__(self, equation):
        super().__init__()
        if not isinstance(equation, str):
            raise TypeError(f"For 'Einsum', 'equation' must be a str, but got "
                            f"{type(equation).__name__}.")
        self.equation = equation

    def compute(self, operands):
        return einsum(self.equation, *operands)
