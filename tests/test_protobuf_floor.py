"""The generated protobuf modules run on the oldest protobuf runtime in pyproject.toml's floor:
their style is the one old runtimes import, they match the .proto files, and the file formats
round-trip with that runtime installed (pip, into a temporary folder, in a child process)."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOS = sorted(ROOT.joinpath("mscore").rglob("*.proto"))


def _gen_protos():
    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "tools" / "gen_protos.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _floor():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (floor,) = [re.fullmatch(r"protobuf\s*>=\s*([\d.]+)", d).group(1) for d in deps
                if d.replace(" ", "").startswith("protobuf")]
    return floor


def test_the_floor_is_the_generators():
    assert _floor() == _gen_protos().PROTOBUF_FLOOR


@pytest.mark.parametrize("proto", PROTOS, ids=lambda p: p.name)
def test_every_proto_has_a_module_an_old_runtime_imports(proto):
    from google.protobuf import descriptor_pb2
    module = proto.with_name(proto.stem + "_pb2.py")
    assert module.exists(), f"{module} missing: run python tools/gen_protos.py"
    text = module.read_text()
    for marker in _gen_protos().NEWER_RUNTIME_MARKERS:
        assert marker not in text, f"{module.name} needs a newer runtime ({marker!r}): " \
                                   f"regenerate with python tools/gen_protos.py"
    # The embedded schema is this .proto's: its file name and every message it declares.
    serialized = re.search(r"AddSerializedFile\((b'.*?')\)\n", text, re.S).group(1)
    fdp = descriptor_pb2.FileDescriptorProto.FromString(eval(serialized))
    assert fdp.name == proto.relative_to(ROOT).as_posix()

    def names(messages, prefix=""):
        for m in messages:
            if m.options.map_entry:  # protoc's own entry type for a `map<k, v>` field
                continue
            yield prefix + m.name
            yield from names(m.nested_type, prefix + m.name + ".")
    declared = set(re.findall(r"^\s*message\s+(\w+)", proto.read_text(), re.M))
    embedded = {n.rsplit(".", 1)[-1] for n in names(fdp.message_type)}
    assert declared == embedded, f"{proto.name} changed: run python tools/gen_protos.py"


def test_generated_modules_are_what_the_pinned_protoc_writes():
    gen = _gen_protos()
    if not (gen.CACHE / f"protoc-{gen.PROTOC}").is_dir() and \
            os.environ.get("MSCORE_SLOW_TESTS") != "1":
        pytest.skip(f"protoc {gen.PROTOC} is not in {gen.CACHE} (python tools/gen_protos.py "
                    f"--check fetches it; MSCORE_SLOW_TESTS=1 lets this test do so)")
    assert gen.main(["--check"]) == 0


def test_file_formats_round_trip_on_the_oldest_protobuf(tmp_path):
    floor = _floor()
    target = tmp_path / "protobuf"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--disable-pip-version-check", "--only-binary=:all:", "--target",
                          str(target), f"protobuf=={floor}"], capture_output=True, text=True,
                         timeout=300)
    assert pip.returncode == 0, pip.stderr[-2000:]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(target), str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "protobuf_roundtrip.py"),
                           str(work)], capture_output=True, text=True, timeout=300, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == f"protobuf {floor} python ok", proc.stdout
