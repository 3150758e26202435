"""Regenerate the checked-in ``*_pb2.py`` modules from the ``.proto`` files beside this file.

Run ``python -m mscore.train.proto.generate`` (needs ``grpcio-tools``). The generated code
embeds the protoc version it came from, and protobuf refuses to import it with an older
runtime: the runtime must be at least that version (see ``GENCODE_VERSION``).
"""
from __future__ import annotations

import os
import sys
import tempfile

PROTO_FILES = ("checkpoint.proto", "node_strategy.proto", "print.proto", "mind_ir.proto")
_HERE = os.path.dirname(os.path.abspath(__file__))
# The repository root: the generated modules register their files under
# "mscore/train/proto/<name>.proto", which keeps them unique in protobuf's descriptor pool.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(_HERE)))


def generate(out_dir=None):
    """Run protoc (from grpcio-tools) over :data:`PROTO_FILES`; write ``*_pb2.py`` under
    ``out_dir`` (the source tree when None). Returns the paths written."""
    try:
        from grpc_tools import protoc
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("generate: grpcio-tools is needed (pip install grpcio-tools)") from exc
    target = _ROOT if out_dir is None else out_dir
    rel = [os.path.join("mscore", "train", "proto", name) for name in PROTO_FILES]
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    args = ["grpc_tools.protoc", f"-I{_ROOT}", f"-I{include}", f"--python_out={target}"] + rel
    if protoc.main(args) != 0:
        raise RuntimeError(f"generate: protoc failed for {rel}")
    return [os.path.join(target, r[:-len(".proto")] + "_pb2.py") for r in rel]


def main(argv=None) -> int:
    """Regenerate in place (or, with ``--check``, report whether the checked-in modules are
    what protoc generates now)."""
    argv = sys.argv[1:] if argv is None else argv
    if "--check" in argv:
        with tempfile.TemporaryDirectory() as tmp:
            stale = []
            for path in generate(tmp):
                name = os.path.basename(path)
                with open(path, "rb") as new, open(os.path.join(_HERE, name), "rb") as old:
                    if new.read() != old.read():
                        stale.append(name)
        if stale:
            print("stale generated modules: " + ", ".join(stale))
            return 1
        print("generated modules are up to date")
        return 0
    for path in generate():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
