"""The numbers MindIR files use for dtypes and enum-valued operands (MindSpore 2.10).

``DATA_TYPES``: ``TensorProto.data_type`` of parameters, tensor constants and shape
annotations. ``TYPE_IDS``: MindSpore's ``TypeId`` values, which ``Cast`` (its ``dst_type``
operand) and ``Argmax``/``Argmin`` (``output_type``) take as plain integers. Both were read
from files that MindSpore 2.10 exported.
"""
from mscore.common import dtype as mdt

DATA_TYPES = {
    mdt.float32: 1, mdt.uint8: 2, mdt.int8: 3, mdt.int16: 5, mdt.int32: 6, mdt.int64: 7,
    mdt.bool_: 9, mdt.float16: 10, mdt.float64: 11, mdt.bfloat16: 16,
}
DTYPE_OF_DATA_TYPE = {number: dtype for dtype, number in DATA_TYPES.items()}
DTYPE_OF_DATA_TYPE[17] = mdt.float64  # FLOAT64, an alias of DOUBLE in the schema

TYPE_IDS = {
    mdt.bool_: 30, mdt.int8: 32, mdt.int16: 33, mdt.int32: 34, mdt.int64: 35, mdt.uint8: 37,
    mdt.float16: 42, mdt.float32: 43, mdt.float64: 44, mdt.bfloat16: 45,
}
DTYPE_OF_TYPE_ID = {number: dtype for dtype, number in TYPE_IDS.items()}

# The integer operands of the 2.10 primitive functions (AvgPool's pad_mode, data_format).
PAD_MODES = {"PAD": 0, "SAME": 1, "VALID": 2}
PAD_MODE_NAMES = {number: name for name, number in PAD_MODES.items()}
FORMAT_NCHW = 0


def same_pad_pairs(spatial, kernel, stride):
    """``(before, after)`` padding per spatial axis of pad_mode SAME (output ``ceil(size /
    stride)``, the odd pixel after), as MindSpore's MaxPool/AvgPool/Conv2D compute it."""
    pairs = []
    for size, k, st in zip(spatial, kernel, stride):
        total = max((-(-size // st) - 1) * st + k - size, 0)
        pairs.append((total // 2, total - total // 2))
    return tuple(pairs)
