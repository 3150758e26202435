"""``Tensor``: an n-d array of the active backend with MindSpore's interface."""
from __future__ import annotations

import numbers

import numpy as np

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.autodiff.tracer import Tracer, unwrap
from mscore.common import dtype as mdt
from mscore.common import tensor_text

_dtype_of = dispatch.dtype


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


def copier(backend):
    """A function making an exact copy of a native array of ``backend`` in a buffer of its
    own: the backend's ``copy``, else a select of the array against itself (a new array in
    every library). Protects values from donation, and frees a large buffer whose views
    would otherwise keep it alive."""
    copy = getattr(backend, "copy", None)
    if callable(copy):
        return copy

    def select_copy(a):
        return backend.where(backend.full((), True, mdt.bool_), a, a)
    return select_copy


class Tensor:
    """An n-d array on the active backend.

    ``Tensor(input_data=None, dtype=None, shape=None, init=None)`` takes numpy arrays, lists,
    scalars, other Tensors or a native array of the active backend; with ``init`` (an
    initializer name or object) and ``shape`` it is filled by that initializer.
    """

    __slots__ = ("_data", "__weakref__")
    # ``initializer(init, shape, dtype)`` of mscore.common.initializer, for ``Tensor(init=...)``
    _initializer = None

    def __init__(self, input_data=None, dtype=None, shape=None, init=None, const_arg=False):
        dtype = None if dtype is None else mdt.as_dtype(dtype)
        if init is not None:
            if input_data is not None:
                raise ValueError("Tensor: give either input_data or init with shape, not both")
            # mscore.common.initializer makes Tensors, so it binds itself here on import
            # (mscore.common loads it).
            self._data = Tensor._initializer(init, shape, dtype or mdt.float32)._data
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

    @staticmethod
    def _wrap_all(arrays):
        """``[Tensor._wrap(a) for a in arrays]`` without a call per array (a step's
        gradients); through ``_wrap`` while a program is traced (tracers follow those)."""
        if _thread.compiled_depth:
            return [Tensor._wrap(a) for a in arrays]
        out = []
        append = out.append
        for a in arrays:   # a plain loop: slot stores are specialised, faster than map()
            t = _new_object(Tensor)
            t._data = a
            append(t)
        return out

    # -- metadata ------------------------------------------------------------------------
    @property
    def shape(self):
        """The shape as a tuple of ints."""
        return dispatch.shape(self._data)

    @property
    def dtype(self):
        """The mscore dtype."""
        return _dtype_of(self._data)

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
        if _thread.deferred_checks:   # a host read: deferred device checks speak now
            dispatch.settle_checks()
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
        return tensor_text.tensor_repr(self.asnumpy(), self.dtype)

    def __str__(self):
        return tensor_text.tensor_str(self.asnumpy(), self.dtype)

    # The methods that compute (operators, astype, reshape, sum, ...) are ops: the ops layer
    # attaches them (mscore/ops/tensor_api/).
    # -- copies ------------------------------------------------------------------------------
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

    def assign_value(self, value):
        """Take the values of ``value`` in place, with its shape and dtype, as MindSpore's
        ``Tensor.assign_value`` does (an array or list becomes a Tensor of this dtype)."""
        value = value if isinstance(value, Tensor) else Tensor(value, dtype=self.dtype)
        self._data = value.copy()._data
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


def tensor(input_data=None, dtype=None, shape=None, init=None, const_arg=False, device=None):
    """``Tensor(input_data, dtype, shape, init, const_arg)`` in MindSpore 2.x's function
    spelling; ``device`` other than None or 'CPU' is ``NotImplementedError`` (the backend
    places Tensors: ``set_context(device_target=...)``)."""
    if device not in (None, "CPU"):
        raise NotImplementedError(f"tensor: device={device!r} is not supported; select the "
                                  f"device with set_context(device_target=...)")
    return Tensor(input_data, dtype, shape, init, const_arg)


_new_object = object.__new__
