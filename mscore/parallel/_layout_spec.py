"""``mindspore.parallel.Layout``: a device matrix with a name for each of its axes, and a
tensor's layout over it (``layout("dp", "mp")``: per tensor axis the named device axes that
cut it, ``"None"`` for none).

mscore runs strategies as pieces per axis (:mod:`mscore.ops._sharded_ops` places the pieces
on the ranks itself), so a Layout enters ``Cell.shard`` / ``mscore.parallel.shard`` as
:meth:`Layout.pieces_per_axis`: each tensor axis cut into the product of its device axes'
sizes. The numbers are the same; which rank holds which piece follows mscore's order.
"""
from __future__ import annotations

import math


class Layout:
    """``Layout(device_matrix, alias_name, rank_list=None)``: ``device_matrix`` a tuple of
    ints, ``alias_name`` a name for each of its axes; calling it with one entry per tensor
    axis (an alias, a tuple of aliases, or ``"None"``) gives the tensor's layout."""

    def __init__(self, device_matrix, alias_name, rank_list=None):
        if not isinstance(device_matrix, tuple):
            raise TypeError(f"device_matrix must be tuple type, but got:{type(device_matrix)}")
        if not isinstance(alias_name, tuple):
            raise TypeError(f"alias_name must be tuple type, but got:{type(alias_name)}")
        if len(device_matrix) != len(alias_name):
            raise ValueError("device_matrix length should be equal to alias_name length")
        for name in alias_name:
            if not isinstance(name, str):
                raise TypeError(f"alias_name must be a tuple of str, but got:{type(name)}")
            if name == "None":
                raise ValueError("The element of alias_name can not set 'None', because "
                                 "'None' means no sharding.")
        if len(set(alias_name)) != len(alias_name):
            raise ValueError(f"Each element of alias_name {alias_name} should be different")
        if rank_list is not None and (not isinstance(rank_list, list) or any(
                isinstance(r, bool) or not isinstance(r, int) for r in rank_list)):
            raise TypeError(f"rank_list must be a list of int, but got:{type(rank_list)}")
        self._device_matrix = device_matrix
        self._alias_name = alias_name
        self._rank_list = list(range(math.prod(device_matrix))) if rank_list is None \
            else list(rank_list)
        self._tensor_map = None

    def __call__(self, *tensor_map):
        """The layout of a tensor: for each of its axes an alias, a tuple of aliases or
        ``"None"``."""
        last = len(self._alias_name) - 1
        seen = set()

        def index(name):
            if name == "None":
                return -1
            if name not in self._alias_name:
                raise ValueError(f"The axis {name} is not found in {self._alias_name}")
            if name in seen:
                raise ValueError(f"The axis {name} has been set more than one in "
                                 f"{self._alias_name}")
            seen.add(name)
            return last - self._alias_name.index(name)
        mapped = tuple(tuple(index(n) for n in entry) if isinstance(entry, tuple)
                       else index(entry) for entry in tensor_map)
        out = Layout(self._device_matrix, self._alias_name, self._rank_list)
        out._tensor_map = mapped
        return out

    def to_dict(self):
        """``device_matrix``, ``tensor_map`` (device axes counted from the right),
        ``interleaved_parallel``, ``alias_name`` and ``rank_list``."""
        if self._tensor_map is None:
            raise ValueError("The tensor_map of layout is None")
        return {"device_matrix": self._device_matrix, "tensor_map": self._tensor_map,
                "interleaved_parallel": False, "alias_name": self._alias_name,
                "rank_list": list(self._rank_list)}

    def pieces_per_axis(self):
        """How many pieces each tensor axis is cut into (a strategy's entry)."""
        if self._tensor_map is None:
            raise ValueError("The tensor_map of layout is None")
        last = len(self._device_matrix) - 1

        def size(m):
            return 1 if m == -1 else self._device_matrix[last - m]
        return tuple(math.prod(size(m) for m in entry) if isinstance(entry, tuple)
                     else size(entry) for entry in self._tensor_map)

    def __repr__(self):
        return (f"Layout(device_matrix={self._device_matrix}, alias_name={self._alias_name}, "
                f"tensor_map={self._tensor_map})")
