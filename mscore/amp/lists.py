"""Cast-list policies of automatic mixed precision.

MindSpore 2.x's built-in lists: the white list (computed in low precision at O1) holds the
convolution, dense and recurrent cells and the primitives ``Conv2D``, ``Conv3D``,
``Conv2DTranspose``, ``Conv3DTranspose``, ``MatMul``, ``BatchMatMul``, ``PReLU``, ``ReLU``,
``Ger``; the black list (kept in float32 at O2) holds the batch and layer normalisations.
A backend plugin may recommend additions through the ``mscore_amp_cast_lists`` hook; they
apply only while that backend is active.
"""
from __future__ import annotations

from mscore import dispatch, nn
from mscore.nn.cell import Cell
from mscore.ops import operations as P
from mscore.plugin.registry import get_registry


class CastList:
    """An ordered set of Cell and/or Primitive classes with a role ("white" or "black").

    ``matches(obj)`` tells whether an instance belongs to the list (subclasses count, as a
    subclass of ``nn.Dense`` is still a dense layer).
    """

    def __init__(self, entries, role):
        if role not in ("white", "black"):
            raise ValueError(f"role: expected 'white' or 'black', got {role!r}")
        self.role = role
        self._entries = []
        for e in entries:
            self.add(e)

    def add(self, entry):
        """Add a Cell or Primitive class (black lists take Cell classes only)."""
        if not isinstance(entry, type) or not issubclass(entry, (Cell, P.Primitive)):
            raise TypeError(f"{self.role}_list: entries must be Cell or Primitive classes, "
                            f"got {entry!r}")
        if self.role == "black" and not issubclass(entry, Cell):
            raise TypeError(f"black_list: entries must be Cell classes, got {entry.__name__}")
        if entry not in self._entries:
            self._entries.append(entry)

    def matches(self, obj):
        """True when ``obj`` is an instance of a listed class."""
        return isinstance(obj, tuple(self._entries)) if self._entries else False

    @property
    def cell_classes(self):
        """The Cell classes of the list."""
        return [e for e in self._entries if issubclass(e, Cell)]

    @property
    def primitive_classes(self):
        """The Primitive classes of the list."""
        return [e for e in self._entries if issubclass(e, P.Primitive)]

    def to_list(self):
        """A new Python list of the entries."""
        return list(self._entries)

    def __iter__(self):
        return iter(list(self._entries))

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return f"CastList({self.role}: {[e.__name__ for e in self._entries]})"


def _builtin_white():
    return [nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Conv1dTranspose, nn.Conv2dTranspose,
            nn.Conv3dTranspose, nn.Dense, nn.LSTMCell, nn.RNNCell, nn.GRUCell,
            P.Conv2D, P.Conv3D, P.Conv2DTranspose, P.Conv3DTranspose, P.MatMul,
            P.BatchMatMul, P.PReLU, P.ReLU, P.Ger]


def _builtin_black():
    return [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm]


def get_white_list():
    """A copy of the built-in white list (a Python list of classes)."""
    return _builtin_white()


def get_black_list():
    """A copy of the built-in black list (a Python list of classes)."""
    return _builtin_black()


def default_policy(role):
    """The built-in list for ``role`` plus what the active backend's plugins recommend."""
    base = _builtin_white() if role == "white" else _builtin_black()
    extra = get_registry().amp_cast_list_additions(dispatch.backend().name)[role]
    return CastList(base + list(extra), role)
