"""``Cell``: the base of every layer and network, with MindSpore's interface.

Hooks live in :mod:`mscore.nn._hooks`, the containers (``SequentialCell``, ``CellList``,
``CellDict``) in :mod:`mscore.nn.layer.container`.
"""
from __future__ import annotations

import copy
import re
from collections import OrderedDict

from mscore import context
from mscore.common import cast_cache
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.dispatch import recast_float
from mscore.nn._hooks import HookMixin, run_hooked
from mscore.nn._shard import shard_cell

_context_keys = context._context
_GRAPH_MODE = context.GRAPH_MODE
_DEFAULT_PARAM_NAME = "Parameter"
_PREFIX_PATTERN = re.compile(r"^\w*[0-9a-zA-Z_.\-]*$", re.ASCII)
_RECOMPUTE_KWARGS = ("mp_comm_recompute", "parallel_optimizer_comm_recompute",
                     "recompute_slice_activation")
_NO_INIT = ("'{cls}' object has no attribute {name!r}: its __init__ did not call "
            "super().__init__() (an nn.Cell subclass must call it before using the cell)")


class Cell(HookMixin):
    """Base class of layers and networks: subclasses define ``construct``.

    Parameters and sub-cells assigned as attributes are registered in order; parameter names
    become their attribute paths ("features.0.weight") unless ``auto_prefix=False``.
    ``to_float(dtype)`` makes the cell (and its sub-cells) compute in ``dtype``: floating
    inputs are cast on entry and layers cast their float32 parameters where they use them.
    """

    # How a call runs in GRAPH_MODE: an object with ``should_compile(cell)`` and
    # ``compiled_call(cell, args, kwargs)``. :mod:`mscore.compile` (a layer above nn) installs
    # :mod:`mscore.compile.graph` here when it is imported; None runs every call eagerly.
    _graph_runner = None
    # How a call of a cell placed on a pipeline stage runs while an ``nn.PipelineCell`` of a
    # pipeline job runs (mscore.nn.wrap.pipeline installs it then); None runs it here.
    _stage_runner = None
    _pipeline_stage = -1   # the stage ``pipeline_stage`` placed this cell on; -1: none

    def __init__(self, auto_prefix=True, flags=None):
        setter = object.__setattr__
        setter(self, "_params", OrderedDict())
        setter(self, "_param_tuples", OrderedDict())
        setter(self, "_cells", OrderedDict())
        setter(self, "_auto_prefix", auto_prefix)
        setter(self, "training", False)
        setter(self, "_compute_dtype", None)
        setter(self, "_hooks", None)
        setter(self, "_amp_level", None)
        setter(self, "requires_grad", False)
        if flags:
            self.add_flags(**flags)

    # -- attribute registration --------------------------------------------------------------
    def __setattr__(self, name, value):
        d = self.__dict__
        if "_params" not in d:
            if isinstance(value, (Parameter, ParameterTuple, Cell)):
                raise AttributeError(f"{type(self).__name__}: cannot assign {name!r} before "
                                     f"Cell.__init__(); call super().__init__() first")
            object.__setattr__(self, name, value)
            return
        if isinstance(value, Parameter):
            d.pop(name, None)
            self._param_tuples.pop(name, None)
            self.insert_param_to_cell(name, value)
        elif isinstance(value, ParameterTuple):
            if name in self._params or name in self._cells:
                raise KeyError(f"{type(self).__name__}: {name!r} already names a "
                               f"{'Parameter' if name in self._params else 'sub-cell'}")
            d.pop(name, None)
            self._param_tuples[name] = value
        elif isinstance(value, Cell):
            d.pop(name, None)
            self._param_tuples.pop(name, None)
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
            self.insert_child_to_cell(name, value)
        else:
            self._set_plain(name, value)

    def _set_plain(self, name, value):
        params, cells = self._params, self._cells
        if name in params:
            if value is None:
                params[name] = None
            elif isinstance(value, Tensor) and params[name] is not None:
                params[name].set_data(value)
            else:
                raise TypeError(f"Parameter {name!r} already exists in {type(self).__name__}: "
                                f"assign a Parameter, a Tensor (sets its data) or None, "
                                f"not {type(value).__name__}")
        elif name in cells:
            if value is not None:
                raise TypeError(f"Sub-cell {name!r} already exists in {type(self).__name__}: "
                                f"assign a Cell or None, not {type(value).__name__}")
            cells[name] = None
        else:
            self._param_tuples.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_params" not in d:
            raise AttributeError(_NO_INIT.format(cls=type(self).__name__, name=name))
        for registry in ("_params", "_cells", "_param_tuples"):
            reg = d[registry]
            if name in reg:
                return reg[name]
        raise AttributeError(f"The {type(self).__name__!r} object has no attribute {name!r}.")

    def __delattr__(self, name):
        for registry in (self._params, self._cells, self._param_tuples):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def insert_child_to_cell(self, child_name, child_cell):
        """Register ``child_cell`` (a Cell or None) as sub-cell ``child_name``."""
        if not isinstance(child_name, str):
            raise TypeError(f"insert_child_to_cell: child_name must be a str, got "
                            f"{type(child_name).__name__}")
        if not child_name or "." in child_name:
            raise KeyError(f"insert_child_to_cell: child_name must be non-empty and contain "
                           f"no '.', got {child_name!r}")
        if hasattr(self, child_name) and child_name not in self._cells:
            raise KeyError(f"insert_child_to_cell: {type(self).__name__} already has an "
                           f"attribute {child_name!r}")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(f"insert_child_to_cell: child_cell must be a Cell or None, got "
                            f"{type(child_cell).__name__}")
        self._cells[child_name] = child_cell

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        """Register ``param`` (a Parameter or None) as parameter ``param_name``."""
        if not param_name:
            raise KeyError("insert_param_to_cell: param_name must not be empty")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"insert_param_to_cell: param_name must not contain '.', got "
                           f"{param_name!r}")
        if "_params" not in self.__dict__:
            raise AttributeError("insert_param_to_cell: call Cell.__init__() first")
        if hasattr(self, param_name) and param_name not in self._params:
            raise KeyError(f"insert_param_to_cell: {type(self).__name__} already has an "
                           f"attribute {param_name!r}")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"insert_param_to_cell: param must be a Parameter or None, got "
                            f"{type(param).__name__}")
        if param is not None and param.name == _DEFAULT_PARAM_NAME and not param._user_named:
            param.name = param_name
        self._params[param_name] = param

    def update_parameters_name(self, prefix="", recurse=True):
        """Name every parameter ``prefix`` + its path in this cell ("fc.weight")."""
        if not isinstance(prefix, str):
            raise TypeError(f"update_parameters_name: prefix must be a str, got "
                            f"{type(prefix).__name__}")
        if not _PREFIX_PATTERN.match(prefix):
            raise ValueError(f"update_parameters_name: prefix {prefix!r} may contain only "
                             f"letters, digits, '_', '.' and '-'")
        cells = self.cells_and_names() if recurse else [("", self)]
        tupled = {id(q) for _, c in cells for tup in c._param_tuples.values() for q in tup}
        for path, p in self.parameters_and_names(expand=recurse):
            # Items of a ParameterTuple (optimizer states) keep their own names as their path.
            p.name = prefix + (p.name if id(p) in tupled else path)

    # -- traversal ------------------------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        """``(name, cell)`` for this cell and every sub-cell, depth first, each once."""
        seen = cells if cells else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            if cell:  # as MindSpore: None and empty containers are not walked
                prefix = f"{name_prefix}.{name}" if name_prefix else name
                yield from cell.cells_and_names(seen, prefix)

    def cells(self):
        """The direct sub-cells, each once."""
        return list(self.name_cells().values())

    def name_cells(self):
        """The direct sub-cells by attribute name (each cell once, None skipped)."""
        seen, out = set(), OrderedDict()
        for name, cell in self._cells.items():
            if cell is not None and id(cell) not in seen:
                seen.add(id(cell))
                out[name] = cell
        return out

    def parameters_and_names(self, name_prefix="", expand=True):
        """``(path, Parameter)`` for each distinct parameter (sub-cells when ``expand``)."""
        seen = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else \
            [(name_prefix, self)]
        for cell_name, cell in cells:
            for pname, p in list(cell._params.items()):
                if p is None or id(p) in seen:
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

    def init_parameters_data(self, auto_parallel_mode=False):
        """``{parameter: initialised parameter}`` for every parameter. mscore initialises a
        Parameter's data when it is created, so each maps to itself."""
        return {p: p for _, cell in self.cells_and_names()
                for p in cell._params.values() if p is not None}

    def apply(self, fn):
        """Call ``fn(cell)`` on every sub-cell and this one (children first); returns self."""
        for cell in self.cells():
            cell.apply(fn)
        fn(self)
        return self

    # -- flags and modes ------------------------------------------------------------------------
    def get_flags(self):
        """The flags set by :meth:`add_flags` (a dict)."""
        flags = self.__dict__.get("_func_graph_flags")
        if flags is None:
            flags = {}
            object.__setattr__(self, "_func_graph_flags", flags)
        return flags

    def add_flags(self, **flags):
        """Record ``flags`` (also set as attributes of the cell); returns self."""
        self.get_flags().update(flags)
        self.__dict__.update(flags)
        return self

    def add_flags_recursive(self, **flags):
        """:meth:`add_flags` on this cell and every sub-cell; returns self."""
        self.add_flags(**flags)
        for cell in self.cells():
            cell.add_flags_recursive(**flags)
        return self

    def recompute(self, *, use_reentrant=True, output_recompute=False, early_stop=True,
                  context_fn=None, **kwargs):
        """Accepted for MindSpore compatibility: mscore keeps the activations (the results
        are the same; no memory is traded for time). Unknown keywords are ``ValueError``."""
        for key in kwargs:
            if key not in _RECOMPUTE_KWARGS:
                raise ValueError(f"recompute: unknown keyword {key!r}; expected one of "
                                 f"{', '.join(_RECOMPUTE_KWARGS)}")

    def set_train(self, mode=True):
        """Training mode (Dropout active, BatchNorm uses batch statistics) or not."""
        if not isinstance(mode, bool):
            raise TypeError(f"mode: expected a bool, got {type(mode).__name__}")
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", mode)
            object.__setattr__(cell, "_phase", "train" if mode else "predict")
        return self

    def set_grad(self, requires_grad=True):
        """MindSpore compatibility: marks the cell as used for gradients; returns self."""
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    @property
    def pipeline_stage(self):
        """The pipeline stage this cell runs on (set it in a job of
        ``set_auto_parallel_context(pipeline_stages=N)``; ``nn.PipelineCell`` runs the
        stages)."""
        if self._pipeline_stage < 0:
            raise AttributeError(f"The '{type(self).__name__}' object has no attribute "
                                 f"'pipeline_stage'.")
        return self._pipeline_stage

    @pipeline_stage.setter
    def pipeline_stage(self, value):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"For 'Cell', the property 'pipeline_stage' must be int type, but "
                            f"got type : {type(value)}")
        if value < 0:
            raise ValueError(f"For 'Cell', the property 'pipeline_stage' can not be less than "
                             f"0, but got {value}")
        object.__setattr__(self, "_pipeline_stage", value)

    def shard(self, in_strategy, out_strategy=None, parameter_plan=None):
        """The layout of this cell's inputs (``in_strategy``: per input, pieces per axis)
        and of the parameters in ``parameter_plan`` over the devices, effective in
        SEMI_AUTO_PARALLEL mode (:mod:`mscore.nn._shard`); returns self."""
        return shard_cell(self, in_strategy, out_strategy, parameter_plan)

    @property
    def phase(self):
        """MindSpore's phase name: ``'train'`` until ``set_train(False)`` makes it
        ``'predict'`` (``set_train(True)``: ``'train'`` again); assignable, as MindSpore's
        examples do (``update.phase = "update_param"``)."""
        return self.__dict__.get("_phase", "train")

    @phase.setter
    def phase(self, value):
        object.__setattr__(self, "_phase", value)

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
        """``param`` in this cell's compute dtype (unchanged when none is set, or when it is
        not floating); a Parameter's copy is made once per value (see
        :mod:`mscore.common.cast_cache`)."""
        dtype = self._compute_dtype
        if dtype is None:
            return param
        if isinstance(param, Parameter):
            return cast_cache.cast_param(param, dtype)
        return cast_cache.recast_tensor(param, dtype)

    # -- calling --------------------------------------------------------------------------------
    def construct(self, *args, **kwargs):
        """The computation; subclasses override it (AttributeError here, as in MindSpore)."""
        raise AttributeError("For 'Cell', the method 'construct' is not defined.")

    def __call__(self, *args, **kwargs):
        if self._pipeline_stage >= 0 and Cell._stage_runner is not None:
            return Cell._stage_runner(self, args, kwargs)
        if _context_keys["mode"] == _GRAPH_MODE:
            runner = Cell._graph_runner
            if runner is not None and runner.should_compile(self):
                return runner.compiled_call(self, args, kwargs)
            out = self._run(args, kwargs)
            # a graph never hands out a ParameterTuple (MindSpore: a plain tuple), also
            # where GRAPH_MODE runs eagerly
            return tuple(out) if isinstance(out, ParameterTuple) else out
        # _run inlined: this runs once per cell per step
        dtype = self._compute_dtype
        if dtype is not None:
            args = self._cast_inputs(args, dtype)
        hooks = self._hooks
        if hooks is None:
            return self.construct(*args, **kwargs)
        return run_hooked(self, hooks, args, kwargs)

    def _run(self, args, kwargs):
        dtype = self._compute_dtype
        if dtype is not None:
            args = self._cast_inputs(args, dtype)
        hooks = self._hooks
        if hooks is None:
            return self.construct(*args, **kwargs)
        return run_hooked(self, hooks, args, kwargs)

    def _cast_inputs(self, args, dtype):
        """The call's arguments as ``construct`` sees them in compute dtype ``dtype``:
        floating Tensors cast to it (a layer that handles other dtypes itself overrides)."""
        if len(args) == 1:
            a = args[0]
            if isinstance(a, Tensor):   # the common call: one Tensor, often of that dtype
                native = recast_float(a._data, dtype)
                if native is None:
                    return args
                out = object.__new__(Tensor)   # Tensor._wrap inlined: once per cell per step
                out._data = native
                return (out,)
            return (_cast_input(a, dtype),)
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

    def __deepcopy__(self, memo):
        """An independent copy: sub-cells and Parameters copied (same names, own data),
        as ``copy.deepcopy`` of a MindSpore Cell."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            object.__setattr__(new, key, copy.deepcopy(value, memo))
        return new


def _cast_input(a, dtype):
    if isinstance(a, Tensor):
        return cast_cache.recast_tensor(a, dtype)
    if isinstance(a, (tuple, list)):
        return type(a)(_cast_input(x, dtype) for x in a)
    return a
