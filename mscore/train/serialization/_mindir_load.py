"""``load``: read a MindIR file (as MindSpore 2.x writes it) into a :class:`FuncGraph`.

The file is parsed as one ``ModelProto`` of ``mind_ir.proto`` (mscore's generated module;
nothing is unpickled) and checked before anything runs: every node calls a primitive mscore
implements (else ``NotImplementedError`` naming it), every operand is defined, every parameter
and tensor constant holds exactly the bytes its shape and data type need. A file that is not a
MindIR model, or is damaged, raises ``ValueError`` naming the file.
"""
from __future__ import annotations

import math
import os
from collections import OrderedDict

import numpy as np

from mscore.nn.graph.func_graph import (
    MAX_ELEMENTS_ENV,
    FuncGraph,
    Node,
    max_elements,
    shape_elements,
)
from mscore.nn.graph.mindir_types import DTYPE_OF_DATA_TYPE
from mscore.nn.graph.primitives import MONAD, PRIMITIVES
from mscore.train.proto import mind_ir_pb2 as pb
from mscore.train.serialization import _crypto

_A = pb.AttributeProto
_INTEGER_TYPES = {_A.INT8, _A.INT16, _A.INT32, _A.INT64, _A.UINT8, _A.UINT16, _A.UINT32,
                  _A.UINT64}
# Node attributes that annotate rather than configure (shapes, scopes, recompute marks).
_ANNOTATIONS = {"shape", "input_names", "output_names"}


class _BadFile(ValueError):
    """A structural problem; :func:`load` adds the file name."""


def _tensor_value(tensor, what):
    """The numpy array a TensorProto holds (raw little-endian bytes)."""
    dtype = DTYPE_OF_DATA_TYPE.get(tensor.data_type)
    if dtype is None:
        raise NotImplementedError(f"{what} has TensorProto data type {tensor.data_type}, which "
                                  f"mscore does not support")
    if tensor.HasField("external_data") or tensor.compression_type != pb.TensorProto.NO_COMPRESSION:
        raise NotImplementedError(f"{what} is stored externally or compressed, which mscore "
                                  f"does not support")
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise _BadFile(f"{what} has a dynamic shape {shape}")
    count = math.prod(shape)
    np_dtype = dtype.np_dtype.newbyteorder("<")
    # numpy refuses a shape whose non-zero dimensions span more bytes than an index holds,
    # even with a zero among them: such a file is corrupt, whatever its data
    if math.prod(d for d in shape if d) * np_dtype.itemsize > np.iinfo(np.intp).max:
        raise _BadFile(f"{what} has shape {shape}, larger than any array can be")
    if len(tensor.raw_data) != count * np_dtype.itemsize:
        raise _BadFile(f"{what} holds {len(tensor.raw_data)} bytes, but shape {shape} of "
                       f"{dtype} needs {count * np_dtype.itemsize}")
    return np.frombuffer(tensor.raw_data, dtype=np_dtype).astype(dtype.np_dtype).reshape(shape)


def _attribute_value(attr, what):
    """The Python value of an AttributeProto (a scalar, tuple, string, None, array, monad)."""
    kind = attr.type
    if kind in _INTEGER_TYPES:
        return int(attr.ints[0]) if len(attr.ints) == 1 else \
            (tuple(int(i) for i in attr.ints) if attr.ints else int(attr.i))
    if kind == _A.BOOL:
        return bool(attr.ints[0]) if len(attr.ints) == 1 else bool(attr.i)
    if kind in (_A.FLOAT, _A.FLOAT16, _A.BFLOAT16):
        return float(attr.floats[0]) if len(attr.floats) == 1 else float(attr.f)
    if kind == _A.DOUBLE:
        return float(attr.doubles[0]) if len(attr.doubles) == 1 else float(attr.d)
    if kind == _A.STRING:
        raw = attr.strings[0] if len(attr.strings) == 1 else attr.s
        return raw.decode("utf-8", errors="replace")
    if kind in (_A.TUPLE, _A.LIST):
        return tuple(_attribute_value(v, what) for v in attr.values)
    if kind == _A.NONE:
        return None
    if kind in (_A.UMONAD, _A.IOMONAD):
        return MONAD
    if kind == _A.TENSORS:
        if len(attr.tensors) != 1:
            raise _BadFile(f"{what} holds {len(attr.tensors)} tensors, expected one")
        return _tensor_value(attr.tensors[0], what)
    if kind == _A.TENSOR:
        return _tensor_value(attr.t, what)
    name = _A.AttributeType.Name(kind) if kind in _A.AttributeType.values() else str(kind)
    raise NotImplementedError(f"{what} is of attribute type {name}, which mscore does not "
                              f"support")


class _Unreadable:
    """An attribute of a kind mscore does not decode (no implemented primitive reads one)."""

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return f"<unreadable attribute: {self.reason}>"


def _attributes(attributes, owner):
    """``{name: value}`` of a primitive's attributes; kinds mscore does not decode are kept as
    :class:`_Unreadable` (MindSpore records many attributes no implementation here reads)."""
    values = {}
    for attr in attributes:
        if attr.name in _ANNOTATIONS:
            continue
        try:
            values[attr.name] = _attribute_value(attr, f"attribute {attr.name!r} of {owner}")
        except NotImplementedError as exc:
            values[attr.name] = _Unreadable(str(exc))
    return values


def _primitives(model):
    """``{primitive name: (op type, attributes)}`` of ``ModelProto.primitives``."""
    table = {}
    for prim in model.primitives:
        if prim.name in table:
            raise _BadFile(f"the primitive name {prim.name!r} is used twice (nodes referring "
                           f"to it are ambiguous)")
        table[prim.name] = (prim.op_type, _attributes(prim.attribute, f"primitive {prim.name!r}"))
    return table


def _unique(names, what):
    """Raise _BadFile naming the first of ``names`` that appears twice."""
    seen = set()
    for name in names:
        if name in seen:
            raise _BadFile(f"the {what} {name!r} is used twice")
        seen.add(name)


def _node_op(node, primitives, functions):
    """(op type, attributes) of a NodeProto: a reference into the primitive table (MindIR
    version 2 and later) or an op type with its attributes on the node (older files)."""
    op_type = node.op_type
    if op_type.startswith("REF::"):
        ref = op_type[len("REF::"):]
        if ref in primitives:
            return primitives[ref]
        if ref in functions:
            raise NotImplementedError(f"node {node.name!r} calls the sub-graph {ref!r}; mscore "
                                      f"loads single-graph MindIR files only (no control flow)")
        raise _BadFile(f"node {node.name!r} refers to the unknown primitive {ref!r}")
    return op_type, _attributes(node.attribute, f"node {node.name!r}")


def _sorted_nodes(nodes, defined, output):
    """The nodes ``output`` depends on, in an order where every operand comes first; checks
    that every operand is defined and that there is no cycle."""
    producers = {n.name: n for n in nodes}
    order, state = [], {}
    for root in (output,):
        stack = [(root, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(producers[name])
                continue
            if name in defined or state.get(name) == 2:
                continue
            if name not in producers:
                raise _BadFile(f"value {name!r} is used but never defined")
            if state.get(name) == 1:
                raise _BadFile(f"the graph has a cycle through {name!r}")
            state[name] = 1
            stack.append((name, True))
            stack.extend((i, False) for i in reversed(producers[name].inputs)
                         if i not in defined and state.get(i) != 2)
    return order


def _value_info(info, what):
    if len(info.tensor) != 1:
        raise NotImplementedError(f"{what} is not a single tensor, which mscore does not "
                                  f"support as a graph input")
    tensor = info.tensor[0]
    dtype = DTYPE_OF_DATA_TYPE.get(tensor.data_type)
    if dtype is None:
        raise NotImplementedError(f"{what} has TensorProto data type {tensor.data_type}, which "
                                  f"mscore does not support")
    return tuple(int(d) for d in tensor.dims), dtype


def _check_shape_size(value, node_name):
    """A constant shape with more elements than :func:`max_elements` allows is refused at
    load: a file of a few bytes could ask for terabytes when it runs."""
    elements = shape_elements(value)
    if elements is not None and elements > max_elements():
        raise _BadFile(f"constant node {node_name!r} holds the shape {value}, "
                       f"{elements} elements, over the bound of {max_elements()} (set "
                       f"{MAX_ELEMENTS_ENV} to allow more)")


def _graph(model, file_name):
    """The FuncGraph of a parsed ModelProto."""
    graph = model.graph
    if not model.producer_name or not graph.output:
        raise _BadFile("it has no producer or no graph output (is it a MindIR file?)")
    if model.HasField("little_endian") and not model.little_endian:
        raise _BadFile("it declares little_endian=False; mscore reads little-endian tensor "
                       "data only (as MindSpore writes it)")
    primitives = _primitives(model)
    functions = {f.name for f in model.functions}
    inputs = []
    for info in graph.input:
        shape, dtype = _value_info(info, f"graph input {info.name!r}")
        inputs.append((info.name, shape, dtype))
    _unique([name for name, _, _ in inputs], "graph input name")
    input_names = {name for name, _, _ in inputs}
    parameters = OrderedDict()
    for tensor in graph.parameter:
        name = tensor.ref_key or tensor.name.rsplit(":", 1)[-1]
        if tensor.name in input_names:
            raise _BadFile(f"the parameter {name!r} has the value name {tensor.name!r} of a "
                           f"graph input")
        if tensor.name in parameters:
            raise _BadFile(f"the parameter value name {tensor.name!r} is used twice")
        parameters[tensor.name] = (name, _tensor_value(tensor, f"parameter {name!r}"))
    _unique([name for name, _ in parameters.values()], "parameter name (ref_key)")
    defined = input_names | set(parameters)
    constants, nodes = {}, []
    seen = set(defined)
    for node in graph.node:
        if len(node.output) != 1:
            raise _BadFile(f"node {node.name!r} has {len(node.output)} outputs, expected one")
        name = node.output[0]
        if name in seen:
            raise _BadFile(f"value {name!r} is defined twice")
        seen.add(name)
        if node.op_type == "Constant":
            values = [a for a in node.attribute if a.name == "value"]
            if len(values) != 1:
                raise _BadFile(f"constant {name!r} has no value")
            constants[name] = _attribute_value(values[0], f"constant {name!r}")
            _check_shape_size(constants[name], name)
            continue
        op, attrs = _node_op(node, primitives, functions)
        if op not in PRIMITIVES:
            raise NotImplementedError(
                f"load: {file_name!r} uses the MindSpore primitive {op!r} (node {node.name!r}), "
                f"which mscore cannot run yet; supported: {', '.join(sorted(PRIMITIVES))}")
        nodes.append(Node(name, op, attrs, node.input))
    if len(graph.output) != 1:
        raise NotImplementedError(f"the graph has {len(graph.output)} outputs; MindSpore "
                                  f"writes one (a tuple for several)")
    output = graph.output[0].name
    nodes = _sorted_nodes(nodes, defined | set(constants), output)
    return FuncGraph(graph.name, inputs, parameters, constants, nodes, output, file_name)


def _is_repeated(field):
    flag = getattr(field, "is_repeated", None)  # protobuf >= 5.28; ``label`` before
    return flag if flag is not None else field.label == field.LABEL_REPEATED


def _check_text(message, path="model"):
    """Raise _BadFile when a string field holds bytes that are not UTF-8 (protobuf hands
    those back as ``bytes``, and no name may be one)."""
    for field, value in message.ListFields():
        if field.type == field.TYPE_MESSAGE:
            items = value if _is_repeated(field) else [value]
            if field.message_type.GetOptions().map_entry:
                items = []
            for item in items:
                _check_text(item, f"{path}.{field.name}")
        elif field.type == field.TYPE_STRING:
            items = value if _is_repeated(field) else [value]
            if any(isinstance(item, bytes) for item in items):
                raise _BadFile(f"{path}.{field.name} is not UTF-8 text")


def _check_file_name(file_name):
    if not isinstance(file_name, str):
        raise ValueError(f"For 'load', the argument 'file_name' must be string, but got "
                         f"{type(file_name).__name__}.")
    if not file_name.endswith(".mindir"):
        raise ValueError(f"For 'load', the argument 'file_name'(MindIR file) should end with "
                         f"'.mindir', got {file_name!r}.")
    if not os.path.exists(file_name):
        raise ValueError(f"For 'load', the argument 'file_name'(MindIR file) {file_name!r} does "
                         f"not exist.")
    if not os.path.isfile(file_name):
        raise ValueError(f"For 'load', the argument 'file_name'(MindIR file) {file_name!r} is "
                         f"not a file.")


def _decryption(kwargs):
    """``decrypt(file_name, data)`` for the ``dec_key``/``dec_mode`` of ``kwargs``
    (MindSpore's checks and words): the plain bytes, or a ValueError naming the file for an
    encrypted file without a key, a wrong key or mode, a damaged file."""
    if "dec_key" not in kwargs:
        def plain(file_name, data):
            found = _crypto.cipher_mode(data)
            if found is not None:
                raise ValueError(f"load: {file_name!r} is encrypted ({found}); pass dec_key "
                                 f"(and dec_mode={found!r})")
            return data
        return plain
    key = kwargs["dec_key"]
    if not isinstance(key, bytes):
        raise ValueError(f"The parameter 'dec_key' must be isinstance of {bytes}, but got "
                         f"{key}.")
    mode = kwargs.get("dec_mode", "AES-GCM")
    if callable(mode):
        return lambda file_name, data: mode(data, key)
    if not isinstance(mode, str):
        raise ValueError(f"The parameter 'dec_mode' must be isinstance of {str}, but got "
                         f"{mode}.")
    _crypto.check_key_and_mode(key, mode, "dec_key", "dec_mode", "load")

    def decrypt(file_name, data):
        return _crypto.decrypt(data, key, mode,
                               lambda why: ValueError(f"load: {file_name!r}: {why}"))
    return decrypt


def load(file_name, **kwargs):
    """Read the MindIR file ``file_name`` into a :class:`~mscore.nn.FuncGraph`; run it with
    ``mscore.nn.GraphCell(graph)`` on any backend.

    MindSpore's signature: ``file_name`` must be a str ending in ``.mindir`` naming an
    existing file (else ``ValueError``). ``dec_key``/``dec_mode`` read a file encrypted as
    MindSpore encrypts it (a wrong key, mode or a damaged file: ``ValueError`` naming it);
    ``obf_func`` raises ``NotImplementedError``. A file that does not parse as MindIR, or whose
    graph is inconsistent, raises ``ValueError`` naming it; one that uses a primitive mscore
    does not implement raises ``NotImplementedError`` naming the primitive.
    """
    if "obf_func" in kwargs:
        raise NotImplementedError("Dynamic model structure obfuscation is no longer supported.")
    for key in kwargs:
        if key not in ("dec_key", "dec_mode"):
            raise TypeError(f"load() got an unexpected keyword argument {key!r}")
    _check_file_name(file_name)
    decrypt = _decryption(kwargs)
    try:
        with open(file_name, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ValueError(f"load: cannot read {file_name!r}: {exc}") from None
    data = decrypt(file_name, data)
    model = pb.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception:  # protobuf's DecodeError (or a RuntimeWarning-free C error): not MindIR
        raise ValueError(f"load: {file_name!r} is not a MindIR file (it does not parse as "
                         f"MindSpore's ModelProto; truncated or damaged?)") from None
    try:
        _check_text(model)
        return _graph(model, file_name)
    except _BadFile as exc:
        raise ValueError(f"load: {file_name!r} is not a valid MindIR file: {exc}") from None
    except NotImplementedError as exc:
        message = str(exc)
        if file_name in message:
            raise
        raise NotImplementedError(f"load: {file_name!r}: {message}") from None
