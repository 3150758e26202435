"""Rebuild ``mscore/train/proto/mind_ir.proto`` from MindSpore's own schema.

MindSpore ships no ``mind_ir.proto``, only the generated ``mindspore/train/mind_ir_pb2.py``,
which embeds the serialized ``FileDescriptorProto``. This script prints that descriptor back
as ``.proto`` text, field for field (names, numbers, labels, types, declaration order), under
mscore's package name (the package never reaches the wire). Run it with the MindSpore venv::

    /tmp/ms/bin/python tests/data/make_mind_ir_proto.py > mscore/train/proto/mind_ir.proto

then regenerate the Python module with ``python -m mscore.train.proto.generate``.
"""
import sys

from google.protobuf import descriptor_pb2
from mindspore.train import mind_ir_pb2

PACKAGE = "mscore.mind_ir"

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    _F.TYPE_DOUBLE: "double", _F.TYPE_FLOAT: "float", _F.TYPE_INT64: "int64",
    _F.TYPE_UINT64: "uint64", _F.TYPE_INT32: "int32", _F.TYPE_FIXED64: "fixed64",
    _F.TYPE_FIXED32: "fixed32", _F.TYPE_BOOL: "bool", _F.TYPE_STRING: "string",
    _F.TYPE_BYTES: "bytes", _F.TYPE_UINT32: "uint32", _F.TYPE_SFIXED32: "sfixed32",
    _F.TYPE_SFIXED64: "sfixed64", _F.TYPE_SINT32: "sint32", _F.TYPE_SINT64: "sint64",
}
_LABELS = {_F.LABEL_OPTIONAL: "optional", _F.LABEL_REQUIRED: "required",
           _F.LABEL_REPEATED: "repeated"}

HEADER = """\
// MindSpore's MindIR schema (mind_ir.proto), rebuilt field for field from the descriptor that
// MindSpore 2.10 embeds in mindspore/train/mind_ir_pb2.py (it ships no .proto file); made by
// tests/data/make_mind_ir_proto.py. A .mindir file is one serialized ModelProto.
//
// The package name is not on the wire; mscore uses its own so that it never clashes with
// MindSpore's generated module in the same process.
"""


def _type_name(field, package):
    if field.type in (_F.TYPE_MESSAGE, _F.TYPE_ENUM):
        name = field.type_name.lstrip(".")
        prefix = package + "."
        return name[len(prefix):] if name.startswith(prefix) else "." + name
    return _SCALARS[field.type]


def _enum(enum, indent, out):
    pad = "  " * indent
    out.append(f"{pad}enum {enum.name} {{")
    for value in enum.value:
        out.append(f"{pad}  {value.name} = {value.number};")
    out.append(f"{pad}}}")


def _message(msg, indent, package, out):
    pad = "  " * indent
    out.append(f"{pad}message {msg.name} {{")
    maps = {n.name: n for n in msg.nested_type if n.options.map_entry}
    for nested in msg.enum_type:
        _enum(nested, indent + 1, out)
    for nested in msg.nested_type:
        if not nested.options.map_entry:
            _message(nested, indent + 1, package, out)
    for field in msg.field:
        entry = maps.get(field.type_name.rsplit(".", 1)[-1]) \
            if field.type == _F.TYPE_MESSAGE else None
        if entry is not None:
            key, value = entry.field
            out.append(f"{pad}  map<{_type_name(key, package)}, {_type_name(value, package)}> "
                       f"{field.name} = {field.number};")
            continue
        out.append(f"{pad}  {_LABELS[field.label]} {_type_name(field, package)} {field.name} = "
                   f"{field.number};")
    out.append(f"{pad}}}")


def render():
    """The .proto text of MindSpore's mind_ir schema under :data:`PACKAGE`."""
    fd = descriptor_pb2.FileDescriptorProto()
    mind_ir_pb2.DESCRIPTOR.CopyToProto(fd)
    if fd.syntax not in ("", "proto2") or fd.dependency or fd.options.ByteSize():
        raise SystemExit("unexpected descriptor features; extend this script")
    out = [HEADER.rstrip("\n"), 'syntax = "proto2";', "", f"package {PACKAGE};", ""]
    for enum in fd.enum_type:
        _enum(enum, 0, out)
        out.append("")
    for msg in fd.message_type:
        _message(msg, 0, fd.package, out)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
