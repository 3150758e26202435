"""``Tensor``: an n-d array of the active backend with MindSpore's interface."""
from __future__ import annotations

import numbers

import numpy as np

from mscore.autodiff.tracer import Tracer, unwrap
from mscore.common import dtype as mdt
from mscore import dispatch


def _infer_numpy(data, dtype):
    """A numpy array for constructor input ``data`` with MindSpore's default dtypes:
    Python floats become float32, Python ints int64, numpy arrays keep their dtype."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.asarray(data)
    elif isinstance(data, bool):
        arr = np.asarray(data, dtype=np.bool_)
    elif isinstance(data, numbers.Integral):
        arr = np.asarray(data, dtype=np.int64)
    elif isinstance(data, numbers.Real):
        arr = np.asarray(data, dtype=np.float32)
    elif isinstance(data, (list, tuple)):
        arr = np.asarray([x.asnumpy() if isinstance(x, Tensor) else x for x in data])
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and arr.dtype.kind == "i":
            arr = arr.astype(np.int64)
    else:
        raise TypeError(f"input_data: expected a Tensor, numpy array, list, tuple, bool, int "
                        f"or float, got {type(data).__name__}")
    if arr.dtype.kind not in "biuf" and arr.dtype != mdt.bfloat16.np_dtype:
        raise TypeError(f"input_data: numpy dtype {arr.dtype} is not supported")
    if dtype is not None:
        arr = arr.astype(dtype.np_dtype)
    return arr


class Tensor:
    """An n-d array on the active backend.

    ``Tensor(input_data=None, dtype=None, shape=None, init=None)`` takes numpy arrays, lists,
    scalars, other Tensors or a native array of the active backend; with ``init`` (an
    initializer name or object) and ``shape`` it is filled by that initializer.
    """

    __slots__ = ("_data", "__weakref__")
    __array_priority__ = 100

    def __init__(self, input_data=None, dtype=None, shape=None, init=None, const_arg=False):
        dtype = None if dtype is None else mdt.as_dtype(dtype)
        if init is not None:
            if input_data is not None:
                raise ValueError("Tensor: give either input_data or init with shape, not both")
            # initializer (a layer above: it makes Tensors) is imported where it is used.
            from mscore.common.initializer import initializer
            self._data = initializer(init, shape, dtype or mdt.float32)._data
            return
        if input_data is None:
            if shape is None:
                raise ValueError("Tensor: input_data is None; give shape and dtype (zeros) or "
                                 "init")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            self._data = dispatch.call("full", shape, 0, dtype or mdt.float32)
            return
        if isinstance(input_data, Tensor):
            data = input_data._data
            self._data = data if dtype is None else dispatch.call("cast", data, dtype)
            return
        if _is_native(input_data):
            self._data = input_data if dtype is None else dispatch.call("cast", input_data,
                                                                        dtype)
            return
        arr = _infer_numpy(input_data, dtype)
        self._data = dispatch.backend().from_numpy(arr)

    @classmethod
    def _wrap(cls, data):
        """A Tensor around the native array (or tracer) ``data``, without copying."""
        t = object.__new__(Tensor)
        t._data = data
        return t

    # -- metadata ------------------------------------------------------------------------
    @property
    def shape(self):
        """The shape as a tuple of ints."""
        return dispatch.shape(self._data)

    @property
    def dtype(self):
        """The mscore dtype."""
        return dispatch.dtype(self._data)

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self):
        """Number of elements."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self):
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self):
        """Bytes of the whole tensor."""
        return self.size * self.itemsize

    def dim(self):
        """Number of dimensions (torch spelling)."""
        return self.ndim

    # -- host transfer -----------------------------------------------------------------
    def asnumpy(self):
        """A numpy copy of the values (bfloat16 as ``ml_dtypes.bfloat16``)."""
        return dispatch.backend().to_numpy(unwrap(self._data))

    numpy = asnumpy

    def __array__(self, dtype=None, copy=None):
        arr = self.asnumpy()
        return arr if dtype is None else arr.astype(dtype)

    def item(self):
        """The single value as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"item: only a tensor with one element can be converted, got "
                             f"shape {self.shape}")
        return self.asnumpy().reshape(()).item()

    def tolist(self):
        """Values as nested Python lists."""
        return self.asnumpy().tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        return bool(self.item())

    def __index__(self):
        if self.dtype.is_floating or self.dtype.is_bool:
            raise TypeError("only integer tensors can be used as an index")
        return int(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __hash__(self):
        return id(self)

    def __repr__(self):
        arr = self.asnumpy()
        body = np.array2string(arr.astype(np.float32) if self.dtype is mdt.bfloat16 else arr,
                               separator=", ")
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=\n{body})"

    __str__ = __repr__

    # -- conversion ----------------------------------------------------------------------
    def astype(self, dtype):
        """A copy converted to ``dtype`` (``ms.float16``, ``"float32"``, ...)."""
        return F.cast(self, dtype)

    def to(self, dtype):
        """Alias of :meth:`astype`."""
        return F.cast(self, dtype)

    def float(self):
        """Converted to float32."""
        return F.cast(self, mdt.float32)

    def half(self):
        """Converted to float16."""
        return F.cast(self, mdt.float16)

    def copy(self):
        """A copy with its own storage."""
        return Tensor._wrap(dispatch.call("add", self._data,
                                          dispatch.call("full", (), 0, self.dtype)))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return Tensor(self.asnumpy())

    def init_data(self):
        """MindSpore compatibility: data is materialised eagerly, so this returns self."""
        return self

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, o): return F.add(self, o)                   # noqa: E704
    def __radd__(self, o): return F.add(o, self)                  # noqa: E704
    def __sub__(self, o): return F.sub(self, o)                   # noqa: E704
    def __rsub__(self, o): return F.sub(o, self)                  # noqa: E704
    def __mul__(self, o): return F.mul(self, o)                   # noqa: E704
    def __rmul__(self, o): return F.mul(o, self)                  # noqa: E704
    def __truediv__(self, o): return F.div(self, o)               # noqa: E704
    def __rtruediv__(self, o): return F.div(o, self)              # noqa: E704
    def __floordiv__(self, o): return F.floor_divide(self, o)     # noqa: E704
    def __mod__(self, o): return F.remainder(self, o)             # noqa: E704
    def __pow__(self, o): return F.pow(self, o)                   # noqa: E704
    def __rpow__(self, o): return F.pow(o, self)                  # noqa: E704
    def __matmul__(self, o): return F.matmul(self, o)             # noqa: E704
    def __rmatmul__(self, o): return F.matmul(o, self)            # noqa: E704
    def __neg__(self): return F.neg(self)                         # noqa: E704
    def __pos__(self): return self                                # noqa: E704
    def __abs__(self): return F.abs(self)                         # noqa: E704
    def __invert__(self): return F.logical_not(self)              # noqa: E704
    def __and__(self, o): return F.logical_and(self, o)           # noqa: E704
    def __or__(self, o): return F.logical_or(self, o)             # noqa: E704
    def __eq__(self, o): return F.equal(self, o)                  # noqa: E704
    def __ne__(self, o): return F.not_equal(self, o)              # noqa: E704
    def __lt__(self, o): return F.less(self, o)                   # noqa: E704
    def __le__(self, o): return F.less_equal(self, o)             # noqa: E704
    def __gt__(self, o): return F.greater(self, o)                # noqa: E704
    def __ge__(self, o): return F.greater_equal(self, o)          # noqa: E704

    # -- indexing --------------------------------------------------------------------------
    def __getitem__(self, index):
        return F.getitem(self, index)

    def __setitem__(self, index, value):
        self._data = F.setitem(self, index, value)._data

    # -- shape and reductions (methods as in MindSpore) ------------------------------------
    @property
    def T(self):  # noqa: N802  (MindSpore's name)
        """The transpose (axes reversed)."""
        return F.transpose(self, tuple(reversed(range(self.ndim))))

    def reshape(self, *shape):
        """Same values in a new shape (one -1 is inferred)."""
        return F.reshape(self, shape[0] if len(shape) == 1 and
                         isinstance(shape[0], (tuple, list)) else shape)

    view = reshape

    def transpose(self, *axes):
        """Axes permuted (reversed when none are given)."""
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return F.transpose(self, axes)

    def flatten(self, order="C", *, start_dim=0, end_dim=-1):
        """Flattened to 1-d (or the axes start_dim..end_dim merged)."""
        return F.flatten_dims(self, start_dim, end_dim)

    def squeeze(self, axis=None): return F.squeeze(self, axis)                # noqa: E704
    def expand_dims(self, axis): return F.expand_dims(self, axis)             # noqa: E704
    def unsqueeze(self, dim): return F.expand_dims(self, dim)                 # noqa: E704
    def broadcast_to(self, shape): return F.broadcast_to(self, shape)         # noqa: E704
    def sum(self, axis=None, keepdims=False, dtype=None):                     # noqa: E704
        return F.sum(self, axis, keepdims, dtype=dtype)
    def mean(self, axis=None, keep_dims=False): return F.mean(self, axis, keep_dims)  # noqa
    def max(self, axis=None, keepdims=False): return F.amax(self, axis, keepdims)     # noqa
    def min(self, axis=None, keepdims=False): return F.amin(self, axis, keepdims)     # noqa
    def argmax(self, axis=None): return F.argmax(self, axis)                  # noqa: E704
    def argmin(self, axis=None): return F.argmin(self, axis)                  # noqa: E704
    def abs(self): return F.abs(self)                                         # noqa: E704
    def exp(self): return F.exp(self)                                         # noqa: E704
    def log(self): return F.log(self)                                         # noqa: E704
    def sqrt(self): return F.sqrt(self)                                       # noqa: E704
    def square(self): return F.square(self)                                   # noqa: E704
    def all(self, axis=None, keep_dims=False): return F.all(self, axis, keep_dims)  # noqa
    def any(self, axis=None, keep_dims=False): return F.any(self, axis, keep_dims)  # noqa
    def clip(self, xmin, xmax): return F.clip_by_value(self, xmin, xmax)      # noqa: E704
    def var(self, axis=None, ddof=0, keepdims=False):                        # noqa: E704
        return F.var(self, axis, ddof, keepdims)
    def std(self, axis=None, ddof=0, keepdims=False):                        # noqa: E704
        return F.sqrt(F.var(self, axis, ddof, keepdims))

    def set_dtype(self, dtype):
        """Convert in place to ``dtype`` (MindSpore's ``Tensor.set_dtype``)."""
        self._data = F.cast(self, dtype)._data
        return self

    def assign_value(self, value):
        """Replace the values in place with those of ``value`` (same shape)."""
        value = value if isinstance(value, Tensor) else Tensor(value, dtype=self.dtype)
        if value.shape != self.shape:
            raise ValueError(f"assign_value: expected shape {self.shape}, got {value.shape}")
        self._data = dispatch.call("cast", value._data, self.dtype)
        return self


def _is_native(obj):
    """True when ``obj`` is a native array of the active backend (or a tracer)."""
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (np.ndarray, np.generic, list, tuple, numbers.Number)):
        return False
    try:
        dispatch.dtype(obj)
        dispatch.shape(obj)
    except Exception:
        return False
    return True


class _BindFunctionalLate:
    """Stands in for ``mscore.ops.functional`` until a Tensor method first needs an op, then
    replaces itself by the module: functional imports this module, so importing it here at
    load time would make an import cycle."""

    def __getattr__(self, name):
        global F
        from mscore.ops import functional
        F = functional
        return getattr(functional, name)


F = _BindFunctionalLate()


def tensor(input_data=None, dtype=None, shape=None, init=None, const_arg=False, device=None):
    """``Tensor(input_data, dtype, shape, init, const_arg)`` in MindSpore 2.x's function
    spelling; ``device`` other than None or 'CPU' is ``NotImplementedError`` (the backend
    places Tensors: ``set_context(device_target=...)``)."""
    if device not in (None, "CPU"):
        raise NotImplementedError(f"tensor: device={device!r} is not supported; select the "
                                  f"device with set_context(device_target=...)")
    return Tensor(input_data, dtype, shape, init, const_arg)
