"""``Cell``: the base of every layer and network, with MindSpore's interface."""
from __future__ import annotations

from collections import OrderedDict

from mscore import context
from mscore.common import cast_cache
from mscore.common import dtype as mdt
from mscore.common import graph
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.ops import functional as F

_DEFAULT_PARAM_NAME = "Parameter"


class Cell:
    """Base class of layers and networks: subclasses define ``construct``.

    Parameters and sub-cells assigned as attributes are registered in order; parameter names
    become their attribute paths ("features.0.weight") unless ``auto_prefix=False``.
    ``to_float(dtype)`` makes the cell (and its sub-cells) compute in ``dtype``: floating
    inputs are cast on entry and layers cast their float32 parameters where they use them.
    """

    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_param_tuples", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_auto_prefix", bool(auto_prefix))
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_compute_dtype", None)
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_hook_id", 0)
        object.__setattr__(self, "_amp_level", None)
        object.__setattr__(self, "requires_grad", False)

    # -- attribute registration --------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before "
                               f"assigning attributes")
        params, cells, tuples = self._params, self._cells, self._param_tuples
        for registry in (params, cells, tuples):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            if value.name == _DEFAULT_PARAM_NAME and not value._user_named:
                value.name = name
            params[name] = value
            self.__dict__.pop(name, None)
        elif isinstance(value, Cell):
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
            cells[name] = value
            self.__dict__.pop(name, None)
        elif isinstance(value, ParameterTuple):
            tuples[name] = value
            self.__dict__.pop(name, None)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for registry in ("_params", "_cells", "_param_tuples"):
            reg = d.get(registry)
            if reg is not None and name in reg:
                return reg[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name):
        for registry in (self._params, self._cells, self._param_tuples):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def insert_child_to_cell(self, child_name, child_cell):
        """Add ``child_cell`` as attribute ``child_name``."""
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError(f"child_name: expected a non-empty name without '.', got "
                           f"{child_name!r}")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(f"child_cell: expected a Cell, got {type(child_cell).__name__}")
        if hasattr(self, child_name) and child_name not in self._cells:
            raise KeyError(f"child_name: attribute {child_name!r} already exists")
        setattr(self, child_name, child_cell)

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        """Add Parameter ``param`` as attribute ``param_name``."""
        if not isinstance(param_name, str) or not param_name:
            raise KeyError(f"param_name: expected a non-empty str, got {param_name!r}")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"param_name: {param_name!r} must not contain '.'")
        if not isinstance(param, Parameter):
            raise TypeError(f"param: expected a Parameter, got {type(param).__name__}")
        setattr(self, param_name, param)

    def update_parameters_name(self, prefix="", recurse=True):
        """Prefix the names of this cell's parameters with ``prefix``."""
        if not isinstance(prefix, str):
            raise TypeError(f"prefix: expected a str, got {type(prefix).__name__}")
        for _, p in self.parameters_and_names(expand=recurse):
            p.name = prefix + p.name

    # -- traversal ------------------------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        """``(name, cell)`` for this cell and every sub-cell, depth first, each once."""
        seen = set() if cells is None else cells
        if id(self) not in seen:
            seen.add(id(self))
            yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is None or id(cell) in seen:
                continue
            prefix = f"{name_prefix}.{name}" if name_prefix else name
            yield from cell.cells_and_names(seen, prefix)

    def cells(self):
        """The direct sub-cells."""
        return [c for c in self._cells.values() if c is not None]

    def name_cells(self):
        """The direct sub-cells by attribute name."""
        return OrderedDict((n, c) for n, c in self._cells.items() if c is not None)

    def parameters_and_names(self, name_prefix="", expand=True):
        """``(path, Parameter)`` for each distinct parameter (sub-cells when ``expand``)."""
        seen = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else \
            [(name_prefix, self)]
        for cell_name, cell in cells:
            for pname, p in list(cell._params.items()):
                if id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{cell_name}.{pname}" if cell_name else pname), p
            for tname, tup in cell._param_tuples.items():
                for i, p in enumerate(tup):
                    if id(p) in seen:
                        continue
                    seen.add(id(p))
                    path = f"{tname}.{i}"
                    yield (f"{cell_name}.{path}" if cell_name else path), p

    def get_parameters(self, expand=True):
        """Every distinct Parameter (an iterator, as in MindSpore)."""
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse=True):
        """Parameters with ``requires_grad=True``, as a list."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True):
        """Parameters with ``requires_grad=False`` (buffers), as a list."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse=True):
        """``{parameter.name: Parameter}`` in registration order."""
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def apply(self, fn):
        """Call ``fn(cell)`` on every sub-cell and this one (children first); returns self."""
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    # -- modes ----------------------------------------------------------------------------------
    def set_train(self, mode=True):
        """Training mode (Dropout active, BatchNorm uses batch statistics) or not."""
        if not isinstance(mode, bool):
            raise TypeError(f"mode: expected a bool, got {type(mode).__name__}")
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", mode)
        return self

    def set_grad(self, requires_grad=True):
        """MindSpore compatibility: marks the cell as used for gradients; returns self."""
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    @property
    def phase(self):
        """'train' or 'eval'."""
        return "train" if self.training else "eval"

    def to_float(self, dst_type):
        """Compute in ``dst_type`` (float16, bfloat16 or float32) here and in every sub-cell;
        parameters keep their dtype and are cast where used. Returns self."""
        dtype = mdt.as_dtype(dst_type, "dst_type")
        if dtype not in (mdt.float16, mdt.bfloat16, mdt.float32):
            raise ValueError(f"dst_type: expected float16, bfloat16 or float32, got {dtype}")
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "_compute_dtype", dtype)
        return self

    @property
    def compute_dtype(self):
        """The dtype ``to_float`` set, or None (compute in the inputs' dtype)."""
        return self._compute_dtype

    def cast_param(self, param):
        """``param`` in this cell's compute dtype (unchanged when none is set); a Parameter's
        copy is made once per value (see :mod:`mscore.common.cast_cache`)."""
        dtype = self._compute_dtype
        if dtype is None or not param.dtype.is_floating or param.dtype is dtype:
            return param
        if isinstance(param, Parameter):
            return cast_cache.cast_param(param, dtype, lambda: F.cast(param, dtype))
        return F.cast(param, dtype)

    # -- hooks ----------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook_fn):
        """``hook_fn(cell, inputs)`` before construct; may return new inputs. Returns a handle
        with ``remove()``."""
        return self._add_hook(self._forward_pre_hooks, hook_fn)

    def register_forward_hook(self, hook_fn):
        """``hook_fn(cell, inputs, output)`` after construct; may return a new output."""
        return self._add_hook(self._forward_hooks, hook_fn)

    def _add_hook(self, table, fn):
        if not callable(fn):
            raise TypeError(f"hook_fn: expected a callable, got {type(fn).__name__}")
        key = self._hook_id
        object.__setattr__(self, "_hook_id", key + 1)
        table[key] = fn
        return _HookHandle(table, key)

    # -- calling --------------------------------------------------------------------------------
    def construct(self, *args, **kwargs):
        """The computation; subclasses override it."""
        raise NotImplementedError(f"{type(self).__name__}.construct is not defined")

    def __call__(self, *args, **kwargs):
        if context._context["mode"] == context.GRAPH_MODE:
            if graph.should_compile(self):
                return graph.compiled_call(self, args, kwargs)
        return self._run(args, kwargs)

    def _run(self, args, kwargs):
        dtype = self._compute_dtype
        if dtype is not None:
            args = self._cast_inputs(args, dtype)
        for hook in list(self._forward_pre_hooks.values()):
            new = hook(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        out = self.construct(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            new = hook(self, args, out)
            if new is not None:
                out = new
        return out

    def _cast_inputs(self, args, dtype):
        """The call's arguments as ``construct`` sees them in compute dtype ``dtype``:
        floating Tensors cast to it (a layer that handles other dtypes itself overrides)."""
        return tuple(_cast_input(a, dtype) for a in args)

    # -- display --------------------------------------------------------------------------------
    def extend_repr(self):
        """Extra text inside ``repr`` (layers show their configuration)."""
        return ""

    def __repr__(self):
        extra = self.extend_repr()
        children = self.name_cells()
        if not children:
            return f"{type(self).__name__}<{extra}>"
        lines = [f"{type(self).__name__}<{extra}"]
        for name, cell in children.items():
            body = repr(cell).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        lines.append(">")
        return "\n".join(lines)

    def __reduce__(self):
        raise TypeError("Cell objects are not picklable; save parameters with "
                        "mscore.save_checkpoint")


class _HookHandle:
    """Returned by ``register_forward_*hook``; ``remove()`` unregisters the hook."""

    def __init__(self, table, key):
        self._table, self._key = table, key

    def remove(self):
        self._table.pop(self._key, None)


def _cast_input(a, dtype):
    if isinstance(a, Tensor) and a.dtype.is_floating and a.dtype is not dtype:
        return F.cast(a, dtype)
    if isinstance(a, (tuple, list)):
        return type(a)(_cast_input(x, dtype) for x in a)
    return a


class SequentialCell(Cell):
    """Cells run one after another: ``SequentialCell(c1, c2)``, ``SequentialCell([c1, c2])``
    or ``SequentialCell(OrderedDict(name=cell))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            items = list(args[0].items())
        elif len(args) == 1 and isinstance(args[0], list):
            items = [(str(i), c) for i, c in enumerate(args[0])]
        else:
            items = [(str(i), c) for i, c in enumerate(args)]
        for name, cell in items:
            if not isinstance(cell, Cell):
                raise TypeError(f"SequentialCell: expected Cells, got {type(cell).__name__} "
                                f"for {name!r}")
            self.insert_child_to_cell(name, cell)

    def __getitem__(self, index):
        cells = list(self._cells.values())
        if isinstance(index, slice):
            return SequentialCell(cells[index])
        return cells[index]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        """Add ``cell`` at the end."""
        if not isinstance(cell, Cell):
            raise TypeError(f"cell: expected a Cell, got {type(cell).__name__}")
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def construct(self, x):
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    """A list of Cells registered as sub-cells (``CellList([c1, c2])``)."""

    def __init__(self, args=None):
        super().__init__()
        for cell in args or []:
            self.append(cell)

    def append(self, cell):
        """Add ``cell`` at the end."""
        if not isinstance(cell, Cell):
            raise TypeError(f"cell: expected a Cell, got {type(cell).__name__}")
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def extend(self, cells):
        """Add every cell of ``cells``."""
        for c in cells:
            self.append(c)
        return self

    def __getitem__(self, index):
        cells = list(self._cells.values())
        return CellList(cells[index]) if isinstance(index, slice) else cells[index]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def construct(self, *args):
        raise NotImplementedError("CellList has no construct; iterate over it instead")
