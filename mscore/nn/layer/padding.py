"""Padding layers: ``nn.Pad`` (MindSpore's per-axis paddings, CONSTANT / REFLECT /
SYMMETRIC), ``nn.ConstantPad1d/2d/3d``, ``nn.ZeroPad2d``, ``nn.ReflectionPad1d/2d/3d`` and
``nn.ReplicationPad1d/2d/3d`` (torch-style ``(left, right, top, bottom, ...)`` padding of
the last axes). The computation is :mod:`mscore.ops.nn.pad_modes`'s."""
from __future__ import annotations

from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_tensor
from mscore.ops.nn.pad_modes import pad_axes, torch_style_widths


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Pad(Cell):
    """Pad with ``paddings`` = one ``(before, after)`` pair per input axis (first axis
    first, at most 4 axes); ``mode`` 'CONSTANT' (zeros), 'REFLECT' (mirror without the
    edge) or 'SYMMETRIC' (mirror with the edge)."""

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        cls = "Pad"
        if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"For '{cls}', the 'mode' must be str and must be in ['CONSTANT', "
                             f"'REFLECT', 'SYMMETRIC'], but got {mode!r}.")
        if not isinstance(paddings, tuple):
            raise TypeError(f"For '{cls}', the type of 'paddings' must be tuple, but got "
                            f"{type(paddings).__name__}.")
        for item in paddings:
            if len(item) != 2:
                raise ValueError(f"For '{cls}', the dimension of 'paddings' must be (n, 2), but "
                                 f"got {paddings}.")
        if len(paddings) > 4:
            raise ValueError(f"For '{cls}', only 'paddings' up to 4 dims is supported, but got "
                             f"{len(paddings)}.")
        self.mode = mode
        self.paddings = tuple((int(a), int(b)) for a, b in paddings)

    def construct(self, x):
        check_tensor(x, "x", "Pad")
        if len(self.paddings) != x.ndim:
            raise ValueError(f"For 'Pad', the length of 'paddings' must be equal to the rank of "
                             f"'input_x', but got {len(self.paddings)} vs {x.ndim}")
        if any(a < 0 or b < 0 for a, b in self.paddings):
            raise ValueError(f"For 'Pad', every padding must be >= 0, got {self.paddings}")
        mode = self.mode.lower()
        return pad_axes(x, self.paddings, mode, 0, "Pad")

    def extend_repr(self):
        return f"paddings={self.paddings}, mode={self.mode}"


class _ConstantPadNd(Cell):
    _nd = 1

    def __init__(self, padding, value, name):
        super().__init__()
        n = 2 * self._nd
        if _is_int(padding):
            padding = (padding,) * n
        elif isinstance(padding, tuple):
            if len(padding) % 2:
                raise ValueError(f"For '{name}', the length of parameter 'padding' with tuple "
                                 f"type must be a multiple of 2, but got {len(padding)}")
            if self._nd == 1 and len(padding) != 2:
                raise ValueError(f"For '{name}', the length of parameter 'padding' with tuple "
                                 f"type must equal to 2, but got {len(padding)}")
            if len(padding) > n:
                raise ValueError(f"For '{name}', the length of parameter 'padding' with tuple "
                                 f"type must be no more than {n}, but got {len(padding)}")
            if not all(_is_int(p) for p in padding):
                raise TypeError(f"For '{name}', every element of 'padding' must be an int, got "
                                f"{padding}")
        else:
            raise TypeError(f"For '{name}', the type of parameter 'padding' must be in [int, "
                            f"tuple], but got {type(padding)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"For '{name}', the type of parameter 'value' must be in [int, "
                            f"float], but got {type(value)}")
        self.padding = padding
        self.value = value
        self._name = name

    def construct(self, x):
        check_tensor(x, "x", self._name)
        if len(self.padding) // 2 > x.ndim:
            raise ValueError(f"For '{self._name}', padding {self.padding} covers more axes than "
                             f"the {x.ndim}-d input has")
        widths = torch_style_widths(self.padding, x.ndim)
        return pad_axes(x, widths, "constant", self.value, self._name)

    def extend_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last axis with ``value`` by ``padding`` (an int or (left, right));
    negative widths crop."""

    _nd = 1

    def __init__(self, padding, value):
        super().__init__(padding, value, "ConstantPad1d")


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two axes with ``value`` by ``padding`` (an int or (left, right, top,
    bottom), or a shorter even tuple); negative widths crop."""

    _nd = 2

    def __init__(self, padding, value):
        super().__init__(padding, value, "ConstantPad2d")


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three axes with ``value`` (``padding``: an int or up to 6 ints)."""

    _nd = 3

    def __init__(self, padding, value):
        super().__init__(padding, value, "ConstantPad3d")


class ZeroPad2d(_ConstantPadNd):
    """Pad the last two axes with zeros (``padding``: an int or up to 4 ints)."""

    _nd = 2

    def __init__(self, padding):
        super().__init__(padding, 0, "ZeroPad2d")


class _MirrorPadNd(Cell):
    _nd = 1
    _mode = "reflect"
    _check_negative = True

    def __init__(self, padding):
        super().__init__()
        name = type(self).__name__
        if _is_int(padding):
            padding = (padding,) * (2 * self._nd)
        if not isinstance(padding, tuple):
            raise TypeError(f"For '{name}' the input 'padding' must be an integer or tuple, but "
                            f"got {type(padding).__name__}")
        if len(padding) % 2:
            raise ValueError(f"For '{name}' the length of input 'padding' must be divisible by "
                             f"2, but got padding of length {len(padding)}.")
        if not all(_is_int(i) for i in padding):
            raise TypeError(f"For '{name}' every element in 'padding' must be integer, but got "
                            f"{padding}.")
        if self._check_negative and not all(i >= 0 for i in padding):
            raise ValueError(f"For '{name}' every element in 'padding' must be >= 0. but got "
                             f"{padding}.")
        self.padding = padding

    def construct(self, x):
        name = type(self).__name__
        check_tensor(x, "x", name)
        n = len(self.padding) // 2
        if n > x.ndim:
            raise ValueError(f"For '{name}', padding with length {2 * n} needs an input of at "
                             f"least {n} dims, but got {x.ndim}")
        widths = torch_style_widths(self.padding, x.ndim)
        return pad_axes(x, widths, self._mode, 0, name)

    def extend_repr(self):
        return f"padding={self.padding}"


class ReflectionPad1d(_MirrorPadNd):
    """Mirror-pad the last axis (the edge not repeated): ``padding`` an int or (left,
    right), each smaller than the axis."""

    _nd = 1


class ReflectionPad2d(_MirrorPadNd):
    """Mirror-pad the last two axes: ``padding`` an int or (left, right, top, bottom)."""

    _nd = 2


class ReflectionPad3d(_MirrorPadNd):
    """Mirror-pad the last three axes: ``padding`` an int or 6 ints."""

    _nd = 3


class ReplicationPad1d(_MirrorPadNd):
    """Pad the last axis by repeating its edge values: ``padding`` an int or (left,
    right)."""

    _nd = 1
    _mode = "replicate"
    _check_negative = False


class ReplicationPad2d(_MirrorPadNd):
    """Pad the last two axes by repeating the edges: ``padding`` an int or 4 ints."""

    _nd = 2
    _mode = "replicate"
    _check_negative = False


class ReplicationPad3d(_MirrorPadNd):
    """Pad the last three axes by repeating the edges: ``padding`` an int or 6 ints."""

    _nd = 3
    _mode = "replicate"
    _check_negative = False
