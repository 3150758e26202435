"""``auto_mixed_precision`` and ``custom_mixed_precision``: network conversion by level.

* O0: unchanged.
* O1: white-listed cells compute in low precision (``to_float``) with their outputs cast
  back to float32; white-listed Primitive instances held by cells do the same.
* O2: the whole network computes in low precision; black-listed cells compute in float32
  with their outputs cast back to low precision; the network's output is float32.
* O3: everything in low precision; the network's output is float32.
* auto: the op-level policy of :mod:`mscore.amp.autocast`.

Parameters stay float32 (master weights); layers cast them where they compute.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from mscore.amp.autocast import autocast
from mscore.amp.lists import CastList, default_policy
from mscore.common import dtype as mdt
from mscore.nn.cell import Cell
from mscore.ops import operations as P
from mscore.ops.primitive_base import cast_floating

AMP_LEVELS = ("O0", "O1", "O2", "O3", "auto")


def check_amp_level(level):
    """``level`` if it is one of :data:`AMP_LEVELS`, else MindSpore's ValueError (of ``Model``
    and ``build_train_network``)."""
    if not isinstance(level, str) or level not in AMP_LEVELS:
        raise ValueError(f"The 'level' should be in : {list(AMP_LEVELS)}, but got {level}.")
    return level


class _OutputCast(Cell):
    """Runs ``cell`` and casts its floating outputs to ``dtype`` (MindSpore's _OutputTo16/32).

    It adds no parameter-name prefix and forwards attribute reads to the wrapped cell, so
    code that reaches into a converted network (``net.fc.weight``) keeps working.
    """

    def __init__(self, cell, dtype):
        super().__init__(auto_prefix=False)
        self._cells["_backbone"] = cell
        object.__setattr__(self, "_output_dtype", dtype)
        object.__setattr__(self, "training", cell.training)

    @property
    def backbone(self):
        """The wrapped cell."""
        return self._cells["_backbone"]

    def __getattr__(self, name):
        try:
            return Cell.__getattr__(self, name)
        except AttributeError:
            return getattr(self._cells["_backbone"], name)

    def construct(self, *args, **kwargs):
        return cast_floating(self._cells["_backbone"](*args, **kwargs), self._output_dtype)

    def extend_repr(self):
        return f"output_dtype={self._output_dtype}"


class _AutocastCell(_OutputCast):
    """Runs the wrapped network inside an op-level autocast region; outputs in float32."""

    def __init__(self, cell, low_dtype):
        super().__init__(cell, mdt.float32)
        object.__setattr__(self, "_low_dtype", low_dtype)

    def construct(self, *args, **kwargs):
        with autocast(self._low_dtype):
            out = self._cells["_backbone"](*args, **kwargs)
        return cast_floating(out, mdt.float32)


def _autocast_function(fn, low_dtype):
    """``fn`` running inside an op-level autocast region computing in ``low_dtype``."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with autocast(low_dtype):
            return fn(*args, **kwargs)
    run._amp_level = "auto"
    return run


def _check_network(network):
    if not isinstance(network, Cell):
        raise TypeError(f"network: expected a mscore.nn.Cell, got {type(network).__name__}")


def _check_low_dtype(dtype):
    dtype = mdt.as_dtype(dtype)
    if dtype not in (mdt.float16, mdt.bfloat16):
        raise ValueError(f"dtype: expected ms.float16 or ms.bfloat16, got {dtype}")
    return dtype


def _replace_children(parent, predicate, make_wrapper):
    """Replace, depth first, every sub-cell matching ``predicate`` by
    ``make_wrapper(cell)``; returns how many were replaced."""
    count = 0
    for name, child in list(parent._cells.items()):
        if child is None:
            continue
        if isinstance(child, _OutputCast):
            count += _replace_children(child, predicate, make_wrapper)
            continue
        if predicate(child):
            parent._cells[name] = make_wrapper(child)
            count += 1
        else:
            count += _replace_children(child, predicate, make_wrapper)
    return count


def _mark_primitives(network, white, dtype):
    """Set the compute dtype of white-listed Primitive instances held by any cell."""
    count = 0
    for _, cell in network.cells_and_names():
        for value in list(vars(cell).values()):
            candidates = value if isinstance(value, (list, tuple)) else (value,)
            for prim in candidates:
                if isinstance(prim, P.Primitive) and white.matches(prim):
                    prim.set_compute_dtype(dtype)
                    count += 1
    return count


def _apply_white(network, white, dtype):
    def wrap(cell):
        cell.to_float(dtype)
        return _OutputCast(cell, mdt.float32)

    if white.matches(network):
        network = wrap(network)
    else:
        _replace_children(network, white.matches, wrap)
    _mark_primitives(network, white, dtype)
    return network


def _apply_black(network, black, dtype):
    network.to_float(dtype)

    def wrap(cell):
        cell.to_float(mdt.float32)
        # the wrapper rounds the cell's output to ``dtype``: a normalisation may then take
        # a ``dtype`` input uncast (mscore.nn.layer.normalization._takes_half_uncast)
        object.__setattr__(cell, "_amp_output_dtype", dtype)
        return _OutputCast(cell, dtype)

    if black.matches(network):
        return wrap(network)
    _replace_children(network, black.matches, wrap)
    return network


def _mark_level(network, level):
    if getattr(network, "_amp_level", None) not in (None, "O0"):
        warnings.warn(f"auto_mixed_precision: the network was already converted at level "
                      f"{network._amp_level}; converting it again stacks casts — build the "
                      f"network afresh or use level 'O0'", UserWarning, stacklevel=3)


def auto_mixed_precision(network, amp_level="O0", dtype=mdt.float16):
    """The network converted for mixed precision at ``amp_level`` ('O0', 'O1', 'O2', 'O3',
    'auto') computing in ``dtype`` (float16 or bfloat16). O1 changes cells in place;
    O2, O3 and auto return a wrapper whose output is float32. At 'auto' a plain function (or
    method) is accepted too, as in MindSpore: it comes back as a function running in the
    autocast region, its outputs as the ops left them."""
    if not isinstance(network, Cell):
        if amp_level != "auto":
            raise TypeError(f"For amp_level '{amp_level}', the network type should be Cell.")
        if not inspect.isfunction(network) and not inspect.ismethod(network):
            raise TypeError("For amp_level 'auto', the network type should be Cell or "
                            "function.")
        return _autocast_function(network, _check_low_dtype(dtype))
    if not isinstance(amp_level, str) or amp_level not in AMP_LEVELS:
        raise ValueError(f"The amp level {amp_level} is not supported")
    return convert_checked(network, amp_level, _check_low_dtype(dtype))


def convert_checked(network, amp_level, dtype):
    """:func:`auto_mixed_precision` of arguments already checked (``build_train_network``
    converts with the level it checked)."""
    if amp_level == "O0":
        return network
    _mark_level(network, amp_level)
    if amp_level == "O1":
        out = _apply_white(network, default_policy("white"), dtype)
    elif amp_level == "O2":
        out = _OutputCast(_apply_black(network, default_policy("black"), dtype), mdt.float32)
    elif amp_level == "O3":
        network.to_float(dtype)
        out = _OutputCast(network, mdt.float32)
    else:
        out = _AutocastCell(network, dtype)
    object.__setattr__(out, "_amp_level", amp_level)
    object.__setattr__(network, "_amp_level", amp_level)
    return out


def custom_mixed_precision(network, *, white_list=None, black_list=None, dtype=mdt.float16):
    """Convert with a user's cast list: exactly one of ``white_list`` (Cell or Primitive
    classes computed in ``dtype``, like O1) or ``black_list`` (Cell classes kept in float32
    while the rest computes in ``dtype``, like O2)."""
    _check_network(network)
    if (white_list is None) == (black_list is None):
        raise ValueError("custom_mixed_precision: give exactly one of white_list and "
                         "black_list")
    dtype = _check_low_dtype(dtype)
    for name, lst in (("white_list", white_list), ("black_list", black_list)):
        if lst is not None and not isinstance(lst, (list, tuple, CastList)):
            raise TypeError(f"{name}: expected a list of classes, got {type(lst).__name__}")
    _mark_level(network, "custom")
    if white_list is not None:
        out = _apply_white(network, CastList(white_list, "white"), dtype)
    else:
        out = _OutputCast(_apply_black(network, CastList(black_list, "black"), dtype),
                          mdt.float32)
    object.__setattr__(out, "_amp_level", "custom")
    object.__setattr__(network, "_amp_level", "custom")
    return out
