"""Array functions under the import path ``mscore.ops.array_func`` (kept for code that imports
it; they live in :mod:`mscore.ops.indexing`, :mod:`mscore.ops.manipulation`,
:mod:`mscore.ops.creation` and :mod:`mscore.ops.linalg`)."""
from mscore.ops.creation import tril, triu
from mscore.ops.indexing import (
    chunk, flip, gather_d, gather_elements, masked_fill, narrow, slice, strided_slice, unbind,
    unstack)
from mscore.ops.linalg import bias_add
from mscore.ops.manipulation import swapdims, t, unsqueeze
