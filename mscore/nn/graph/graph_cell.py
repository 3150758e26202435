"""``GraphCell``: run a graph loaded from a MindIR file as a Cell."""
from __future__ import annotations

from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.graph.func_graph import FuncGraph


class GraphCell(Cell):
    """A Cell running a :class:`FuncGraph` that :func:`mscore.load` read from a MindIR file.

    ``GraphCell(graph, params_init=None, obf_random_seed=None)`` as in MindSpore: the cell's
    parameters carry the network's parameter names (``"conv1.weight"``) and start from the
    file's values (each GraphCell has its own copies); ``params_init`` maps names to Tensors
    or Parameters of the same shape and dtype that replace them (unknown names are ignored).
    Inputs must have the dtypes the graph was exported with. ``obf_random_seed`` (dynamic
    obfuscation) is not supported, as in MindSpore.
    """

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__(auto_prefix=True)
        if obf_random_seed is not None:
            raise NotImplementedError("Dynamic structure obfuscation is not supported now.")
        if not isinstance(graph, FuncGraph):
            raise TypeError(f"For 'GraphCell', the argument 'graph' must be a FuncGraph loaded "
                            f"from MindIR, but got type {type(graph).__name__}.")
        params_init = {} if params_init is None else params_init
        if not isinstance(params_init, dict):
            raise TypeError(f"For 'GraphCell', the argument 'params_init' must be a dict, but "
                            f"got {type(params_init).__name__}.")
        for name, value in params_init.items():
            if not isinstance(name, str) or not isinstance(value, Tensor):
                raise TypeError("For 'GraphCell', the key of the 'params_init' must be str, and "
                                "the value must be Tensor or Parameter, but got the key type: "
                                f"{type(name).__name__}, and the value type: "
                                f"{type(value).__name__}")
        object.__setattr__(self, "graph", graph)
        object.__setattr__(self, "_value_names", {})
        for value_name, (name, value) in graph.parameters.items():
            param = Parameter(Tensor(value), name=name)
            update = params_init.get(name)
            if update is not None:
                if update.shape != param.shape or update.dtype is not param.dtype:
                    raise ValueError(
                        f"For 'GraphCell', the parameter {name!r} has shape {param.shape} and "
                        f"dtype {param.dtype}, but params_init gives shape {update.shape} and "
                        f"dtype {update.dtype}")
                param.set_data(Tensor(update.asnumpy()))
            self._params[name] = param
            self._value_names[value_name] = name

    def construct(self, *inputs):
        parameters = {value_name: self._params[name]
                      for value_name, name in self._value_names.items()}
        return self.graph.run(inputs, parameters)
