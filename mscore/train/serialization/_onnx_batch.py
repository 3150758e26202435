"""A dynamic batch axis for exported ONNX models.

The tracer records the shapes of the example inputs, so a traced model runs at that batch size
only. To free the leading axis, the network is traced twice, at batch ``b`` and ``b + 1``: the
two graphs are the same but for the integer constants that hold batch-dependent sizes (the
shapes given to ``Reshape``, ``Expand``, ...). Each such constant is linear in the batch size,
``c(B) = c(b) + (c(b + 1) - c(b)) (B - b)``, and is replaced by nodes computing it from the
input's leading dimension at run time; inputs and outputs get the symbolic dimension
``"batch"``. A network whose two traces differ in anything else (an attribute, a float
constant, a constant's shape) is exported at its example batch size, with a warning.
"""
from __future__ import annotations

import warnings

import numpy as np

BATCH_DIM = "batch"


def _differences(model_a, model_b):
    """``{initializer name: (value at b, value at b + 1)}`` of the int64 constants that
    differ, or None when the graphs differ in something else."""
    from onnx import numpy_helper
    ga, gb = model_a.graph, model_b.graph
    if len(ga.node) != len(gb.node) or len(ga.initializer) != len(gb.initializer):
        return None
    for na, nb in zip(ga.node, gb.node):
        if (na.op_type, list(na.input), list(na.output), list(na.attribute)) != \
                (nb.op_type, list(nb.input), list(nb.output), list(nb.attribute)):
            return None
    changed = {}
    for ia, ib in zip(ga.initializer, gb.initializer):
        if ia.name != ib.name:
            return None
        va, vb = numpy_helper.to_array(ia), numpy_helper.to_array(ib)
        if va.shape == vb.shape and np.array_equal(va, vb):
            continue
        if va.dtype != np.int64 or vb.dtype != np.int64 or va.shape != vb.shape or va.ndim != 1:
            return None
        changed[ia.name] = (va, vb)
    return changed


def with_dynamic_batch(model_a, model_b, batch):
    """``model_a`` (traced at batch ``batch``) with its leading input and output axis made
    ``"batch"``, using ``model_b`` (traced at ``batch + 1``) to find the batch-dependent
    constants; ``model_a`` unchanged, with a warning, when that cannot be done."""
    from onnx import helper, numpy_helper
    changed = _differences(model_a, model_b)
    if changed is None:
        warnings.warn(f"export: the network's ONNX graph changes with the batch size in more "
                      f"than its shapes; it is exported for batch {batch} only",
                      RuntimeWarning, stacklevel=4)
        return model_a
    graph = model_a.graph
    kept = [init for init in graph.initializer if init.name not in changed]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = []
    if changed:
        first = graph.input[0].name
        nodes.append(helper.make_node("Shape", [first], ["batch_size"], start=0, end=1,
                                      name="batch_size"))
        for name, (at_b, at_b1) in changed.items():
            per_item = at_b1 - at_b
            offset = at_b - per_item * batch
            graph.initializer.extend([
                numpy_helper.from_array(per_item, f"{name}_per_item"),
                numpy_helper.from_array(offset, f"{name}_offset")])
            nodes.append(helper.make_node("Mul", ["batch_size", f"{name}_per_item"],
                                          [f"{name}_scaled"], name=f"{name}_scaled"))
            nodes.append(helper.make_node("Add", [f"{name}_scaled", f"{name}_offset"], [name],
                                          name=f"{name}_at_batch"))
    existing = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + existing)
    outputs_b = {out.name: out for out in model_b.graph.output}
    for value in graph.input:
        value.type.tensor_type.shape.dim[0].dim_param = BATCH_DIM
    for value in graph.output:
        dims_a = value.type.tensor_type.shape.dim
        dims_b = outputs_b[value.name].type.tensor_type.shape.dim
        if len(dims_a) and dims_a[0].dim_value != dims_b[0].dim_value:
            dims_a[0].dim_param = BATCH_DIM
    return model_a
