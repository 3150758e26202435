"""``nn.Embedding``: a lookup table of vectors indexed by integer ids."""
from __future__ import annotations

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_dtype, check_positive_int, check_tensor
from mscore.nn.layer.basic import _make
from mscore.ops import functional as F

_wrap = Tensor._wrap


class Embedding(Cell):
    """Rows of ``embedding_table`` (vocab_size, embedding_size) picked by integer ids; the
    output has shape ``ids.shape + (embedding_size,)``.

    ``Embedding(vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
    dtype=float32, padding_idx=None)``: ``dtype`` (a number type) is the dtype of the one-hot
    values MindSpore multiplies with the table; the table is float32 whatever it is (as in
    MindSpore 2.10). ``use_one_hot`` computes ``one_hot(ids) @ table`` instead of a gather; the
    ``padding_idx`` row starts at zero.
    """

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=mdt.float32, padding_idx=None):
        super().__init__()
        cls = "Embedding"
        self.vocab_size = check_positive_int(vocab_size, "vocab_size", cls)
        self.embedding_size = check_positive_int(embedding_size, "embedding_size", cls)
        self.use_one_hot = check_bool(use_one_hot, "use_one_hot", cls)
        self.dtype = check_dtype(dtype, "dtype", cls, floating=False)
        if self.dtype.is_bool:
            raise TypeError(f"For '{cls}', 'dtype' must be a number type, got {self.dtype}")
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
                raise TypeError(f"For '{cls}', 'padding_idx' must be an int or None, got "
                                f"{type(padding_idx).__name__}")
            if not -self.vocab_size <= padding_idx < self.vocab_size:
                raise ValueError(f"For '{cls}', 'padding_idx' must be in [-{vocab_size}, "
                                 f"{vocab_size}), got {padding_idx}")
            padding_idx = int(padding_idx) % self.vocab_size
        self.padding_idx = padding_idx
        table = _make(embedding_table, (self.vocab_size, self.embedding_size), mdt.float32, cls,
                      "embedding_table")
        if padding_idx is not None:
            arr = table.asnumpy().copy()
            arr[padding_idx] = 0
            table = Tensor(arr)
        self.embedding_table = Parameter(table)

    def construct(self, ids):
        cls = "Embedding"
        check_tensor(ids, "ids", cls)
        if ids.dtype.is_floating or ids.dtype.is_bool:
            raise TypeError(f"For '{cls}', 'ids' must be an integer Tensor, got {ids.dtype}")
        table = self.cast_param(self.embedding_table)
        if self.use_one_hot:
            hot = F.cast(F.one_hot(ids, self.vocab_size), table.dtype)
            return F.matmul(hot, table)
        idx = ids._data if ids.dtype is mdt.int64 else call("cast", ids._data, mdt.int64)
        return _wrap(call("getitem", table._data, (idx,)))

    def extend_repr(self):
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, padding_idx={self.padding_idx}")
