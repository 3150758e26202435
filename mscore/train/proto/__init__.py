"""Protobuf schemas of mscore's file formats and their generated modules.

``checkpoint.proto`` (the ``.ckpt`` file), ``node_strategy.proto`` (parallel strategy files),
``print.proto`` (print files) and ``mind_ir.proto`` (``.mindir`` files; rebuilt from the
descriptor MindSpore ships by ``tests/data/make_mind_ir_proto.py``) follow MindSpore's schemas
field for field, so the bytes on disk are
the same; only the package names differ (they never reach the wire). The ``*_pb2.py`` modules are
generated and checked in; regenerate them with ``python tools/gen_protos.py`` after editing a
``.proto`` file (it uses an old protoc, so the modules import on every protobuf from 3.19 on).
"""


def unknown_field_numbers(message):
    """The sorted field numbers in ``message`` that its schema does not declare (bytes of some
    other protobuf parse without error, their fields land here)."""
    try:
        from google.protobuf.unknown_fields import UnknownFieldSet
    except ImportError:  # protobuf before 4.22: the message's own (later removed) accessor
        fields = message.UnknownFields()
    else:
        fields = UnknownFieldSet(message)
    return sorted({field.field_number for field in fields})
