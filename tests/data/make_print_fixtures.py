"""Print-file fixtures (``tests/data/print/``), judged by MindSpore 2.10's own print schema.

MindSpore 2.10 on CPU writes no print file (``print_file_path`` is an Ascend option there) and
no longer has ``parse_print``; what it still ships is the schema, ``mindspore/train/
print_pb2.py`` (package ``mindspore.prntpb``). So the check is at the wire level, both ways::

    /tmp/ms/bin/python tests/data/make_print_fixtures.py           # 1. MindSpore's classes write
    python tests/data/make_print_fixtures.py --mscore              # 2. mscore's Print writes
    /tmp/ms/bin/python tests/data/make_print_fixtures.py --verify  # 3. MindSpore's classes read

Step 1 writes ``ms_print.pb``: two serialized ``mindspore.prntpb.Print`` messages (two
``Print`` calls, appended, as the Ascend writer does) built with MindSpore's generated classes
from :func:`calls`, and ``expected.json``, the values in order. Step 2 runs ``ops.Print`` on
the same values with ``set_context(print_file_path=...)`` into ``mscore_print.pb``. Step 3
parses ``mscore_print.pb`` with MindSpore's classes and records each value in
``ms_read_mscore.json``.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "print")
_TYPE_NAMES = {"float32": "Float32", "float16": "Float16", "int32": "Int32", "int64": "Int64",
               "bool": "Bool", "uint8": "UInt8", "float64": "Float64"}


def calls():
    """The arguments of two Print calls (numpy arrays stand for Tensors)."""
    return [["loss is", np.array(0.25, np.float32), "weights:",
             np.arange(6, dtype=np.float32).reshape(2, 3) / 4],
            [np.array([[1, -2], [3, 4]], np.int32), "mask", np.array([True, False]),
             np.array(7, np.int64), np.array([1.5, -0.5], np.float16)]]


def expected():
    out = []
    for call in calls():
        for v in call:
            if isinstance(v, str):
                out.append({"str": v})
            else:
                out.append({"dtype": str(v.dtype), "shape": list(v.shape),
                            "value": v.astype(np.float64).tolist()})
    return out


def mindspore_writes():
    from mindspore.train import print_pb2
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "ms_print.pb"), "wb") as f:
        for call in calls():
            msg = print_pb2.Print()
            for v in call:
                item = msg.value.add()
                if isinstance(v, str):
                    item.desc = v
                else:
                    item.tensor.dims.extend(v.shape)
                    item.tensor.tensor_type = _TYPE_NAMES[str(v.dtype)]
                    item.tensor.tensor_content = v.astype(v.dtype.newbyteorder("<")).tobytes()
            f.write(msg.SerializeToString())
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected(), f, indent=1)
        f.write("\n")


def mscore_writes():
    import mscore as ms
    from mscore.ops import operations as P
    path = os.path.join(OUT, "mscore_print.pb")
    if os.path.exists(path):
        os.remove(path)
    ms.set_context(backend="numpy", print_file_path=path)
    for call in calls():
        P.Print()(*[v if isinstance(v, str) else ms.Tensor(v) for v in call])
    ms.set_context(print_file_path=None)


def mindspore_reads():
    import mindspore as ms
    from mindspore.train import print_pb2
    msg = print_pb2.Print()
    with open(os.path.join(OUT, "mscore_print.pb"), "rb") as f:
        msg.ParseFromString(f.read())
    names = {v: k for k, v in _TYPE_NAMES.items()}
    read = []
    for item in msg.value:
        if item.HasField("desc"):
            read.append({"str": item.desc})
            continue
        dtype = np.dtype(names[item.tensor.tensor_type]).newbyteorder("<")
        arr = np.frombuffer(item.tensor.tensor_content, dtype).reshape(list(item.tensor.dims))
        read.append({"dtype": str(arr.dtype.newbyteorder("=")), "shape": list(arr.shape),
                     "value": arr.astype(np.float64).tolist(),
                     "tensor_type": item.tensor.tensor_type})
    assert [{k: v for k, v in r.items() if k != "tensor_type"} for r in read] == expected()
    with open(os.path.join(OUT, "ms_read_mscore.json"), "w") as f:
        json.dump({"mindspore_version": ms.__version__, "values": read}, f, indent=1)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mscore", action="store_true", help="step 2 (mscore's venv)")
    parser.add_argument("--verify", action="store_true", help="step 3 (MindSpore's venv)")
    args = parser.parse_args()
    if args.mscore:
        mscore_writes()
    elif args.verify:
        mindspore_reads()
    else:
        mindspore_writes()
    print("done")


if __name__ == "__main__":
    sys.exit(main())
