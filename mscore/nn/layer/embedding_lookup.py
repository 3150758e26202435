"""``nn.EmbeddingLookup`` and ``nn.MultiFieldEmbeddingLookup``: embedding tables read by
integer ids (ids outside the table read zeros, as MindSpore's CPU kernel), optionally
clipped to ``max_norm``, and for the multi-field variant weighted and merged per field
(SUM, MEAN or MAX). The host-side sharding options (``slice_mode``, ``manual_shapes``,
``target``) are checked and otherwise have no effect: one process holds the whole table."""
from __future__ import annotations

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.initializer import initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_dtype, check_positive_int, check_tensor
from mscore.ops import functional as F

_SLICE_MODES = ("field_slice", "table_row_slice", "table_column_slice", "batch_slice")


class EmbeddingLookup(Cell):
    """Rows of ``embedding_table`` (vocab_size, embedding_size) picked by ``indices``;
    output ``indices.shape + (embedding_size,)``. With ``max_norm`` each looked-up vector
    is scaled down to at most that L2 norm."""

    BATCH_SLICE = "batch_slice"
    FIELD_SLICE = "field_slice"
    TABLE_ROW_SLICE = "table_row_slice"
    TABLE_COLUMN_SLICE = "table_column_slice"

    def __init__(self, vocab_size, embedding_size, param_init="normal", target="CPU",
                 slice_mode="batch_slice", manual_shapes=None, max_norm=None, sparse=True,
                 dtype=mdt.float32):
        super().__init__()
        cls = type(self).__name__
        if not isinstance(sparse, bool):
            raise TypeError(f"For '{cls}', the type of 'sparse' should be 'bool', but got type "
                            f"'{type(sparse).__name__}'.")
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", cls)
        if target not in ("CPU", "DEVICE"):
            raise ValueError(f"For '{cls}', the 'target' must be str and must be in ['CPU', "
                             f"'DEVICE'], but got {target!r}.")
        if not sparse and target == "CPU":
            raise ValueError(f"For '{cls}', 'sparse' must be True when 'target' is \"CPU\", but "
                             f"got 'sparse': {sparse} and 'target': {target}")
        if slice_mode not in _SLICE_MODES:
            raise ValueError(f"For '{cls}', the 'slice_mode' must be in {list(_SLICE_MODES)}, "
                             f"but got {slice_mode!r}.")
        if manual_shapes is not None and not isinstance(manual_shapes, tuple):
            raise TypeError(f"For '{cls}', the type of 'manual_shapes' must be tuple(int), but "
                            f"got {type(manual_shapes).__name__}!")
        self.embedding_size = check_positive_int(embedding_size, "embedding_size", cls)
        self.target = target
        self.sparse = sparse
        self.slice_mode = slice_mode
        dtype = check_dtype(dtype, "dtype", cls)
        self.embedding_table = Parameter(initializer(param_init, (self.vocab_size,
                                                                  self.embedding_size), dtype),
                                         name="embedding_table")
        if max_norm is not None:
            if isinstance(max_norm, bool) or not isinstance(max_norm, float) or max_norm <= 0:
                raise (TypeError if not isinstance(max_norm, float) else ValueError)(
                    f"For '{cls}', 'max_norm' must be a positive float, got {max_norm!r}")
        self.max_norm = max_norm

    def _lookup(self, indices):
        cls = type(self).__name__
        check_tensor(indices, "indices", cls)
        if indices.dtype.is_floating or indices.dtype.is_bool:
            raise TypeError(f"For '{cls}', 'indices' must be an int32 or int64 Tensor, got "
                            f"{indices.dtype}")
        idx = F.cast(indices, mdt.int64)
        inside = F.logical_and(F.greater_equal(idx, 0), F.less(idx, self.vocab_size))
        table = self.cast_param(self.embedding_table)
        out = F.getitem(table, (F.where(inside, idx, 0),))
        out = F.where(F.expand_dims(inside, -1), out, 0.0)
        if self.max_norm is not None:
            norm = F.sqrt(F.sum(F.mul(out, out), -1, True))
            out = F.div(F.mul(out, self.max_norm), F.maximum(norm, self.max_norm))
        return out

    def construct(self, indices):
        return self._lookup(indices)

    def extend_repr(self):
        return f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}"


class MultiFieldEmbeddingLookup(EmbeddingLookup):
    """Look up (batch, n) ids, weight each vector by ``input_values`` and merge the vectors
    of each of ``field_size`` fields (``field_ids``) with ``operator`` 'SUM', 'MEAN'
    (divided by the sum of |weights|, 0 for an empty field) or 'MAX' (vectors with weight 0
    left out, 0 for an empty field); output (batch, field_size, embedding_size)."""

    OPERATOR_SUM = "SUM"
    OPERATOR_MEAN = "MEAN"
    OPERATOR_MAX = "MAX"

    def __init__(self, vocab_size, embedding_size, field_size, param_init="normal",
                 target="CPU", slice_mode="batch_slice", feature_num_list=None, max_norm=None,
                 sparse=True, operator="SUM", dtype=mdt.float32):
        super().__init__(vocab_size, embedding_size, param_init, target, slice_mode,
                         feature_num_list, max_norm, sparse, dtype)
        cls = type(self).__name__
        self.field_size = check_positive_int(field_size, "field_size", cls)
        if operator not in ("SUM", "MAX", "MEAN"):
            raise ValueError(f"For '{cls}', the 'operator' must be str and must be in ['SUM', "
                             f"'MAX', 'MEAN'], but got {operator!r}.")
        self.operator = operator

    def construct(self, input_indices, input_values, field_ids):
        cls = type(self).__name__
        for name, t in (("input_indices", input_indices), ("input_values", input_values),
                        ("field_ids", field_ids)):
            check_tensor(t, name, cls)
            if t.ndim != 2:
                raise ValueError(f"For '{cls}', the dimension of '{name}' must be 2d, but got "
                                 f"{t.ndim}.")
        if input_values.dtype is not mdt.float32:
            raise TypeError(f"For '{cls}', 'input_values' must be float32, got "
                            f"{input_values.dtype}")
        if field_ids.dtype is not mdt.int32:
            raise TypeError(f"For '{cls}', 'field_ids' must be int32, got {field_ids.dtype}")
        out = self._lookup(input_indices)                                      # (B, n, E)
        weights = F.expand_dims(F.cast(input_values, out.dtype), -1)
        embedding = F.mul(weights, out)
        fields = Tensor(np.arange(self.field_size, dtype=np.int64).reshape(1, -1, 1))
        member = F.equal(F.expand_dims(F.cast(field_ids, mdt.int64), 1), fields)  # (B, F, n)
        if self.operator == "MAX":
            present = F.logical_and(member, F.expand_dims(F.not_equal(input_values, 0.0), 1))
            candidates = F.where(F.expand_dims(present, -1), F.expand_dims(embedding, 1),
                                 -3.402823466e+38)                               # (B, F, n, E)
            merged = F.amax(candidates, 2)
            return F.where(F.expand_dims(F.any(present, 2), -1), merged, 0.0)
        mask = F.cast(member, out.dtype)
        merged = F.matmul(mask, embedding)                                       # (B, F, E)
        if self.operator == "MEAN":
            count = F.expand_dims(F.matmul(mask, F.expand_dims(F.abs(F.cast(
                input_values, out.dtype)), -1))[..., 0], -1)
            merged = F.where(F.equal(count, 0.0), 0.0, F.div(merged, F.where(
                F.equal(count, 0.0), 1.0, count)))
        return merged
