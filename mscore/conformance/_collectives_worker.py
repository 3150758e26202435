"""Worker of the kit's collectives level (``tests/test_collectives.py``), started twice by
``mscore run``: joins the job on the backend under test and writes what every collective
returned to ``OUT/rank{R}.json``. Inputs are a function of the rank (:func:`rank_input`), so
the test computes the expected values with numpy.

Usage (by the kit)::

    python -m mscore.launch --worker_num=2 --local_worker_num=2 --master_port=P \\
        python -m mscore.conformance._collectives_worker --backend NAME --device CPU \\
        --dtypes float32,int32 --out DIR [--graph] [--plugin MODULE ...]
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

import numpy as np

import mscore as ms
from mscore import nn
from mscore.common import dtype as mdt
from mscore.communication import comm_func, get_group_size, get_rank, init, management
from mscore.plugin.registry import get_registry

SHAPE = (3, 4)
# the reductions run per dtype (every other dtype: sum only)
REDUCTIONS = {"float32": ("sum", "max", "min", "avg"), "int32": ("sum", "max", "min")}


def rank_input(rank, dtype):
    """The array rank ``rank`` contributes (numpy, ``dtype`` an mscore dtype name)."""
    base = np.arange(12, dtype=np.float64).reshape(SHAPE) - 5.0
    values = base * (rank + 1) + 10 * rank
    if dtype == "bool":
        return (values > 3 * rank).astype(np.bool_)
    return values.astype(mdt.as_dtype(dtype).np_dtype)


def scatter_input(rank, dtype):
    """The array rank ``rank`` reduce-scatters: :func:`rank_input` as 4 rows of 3 (axis 0 a
    multiple of the job's 2 processes)."""
    return rank_input(rank, dtype).reshape(4, 3)


def _eager(ms, comm_func, dtypes):
    out = {}
    for dtype in dtypes:
        x = ms.Tensor(rank_input(_rank(), dtype))
        for op in REDUCTIONS.get(dtype, ("sum",)):
            out[f"all_reduce/{op}/{dtype}"] = _record(comm_func.all_reduce(x, op)[0])
        if dtype in ("float32", "int32"):
            out[f"broadcast/{dtype}"] = _record(comm_func.broadcast(x, 1))
            out[f"all_gather/{dtype}"] = _record(comm_func.all_gather_into_tensor(x)[0])
            rows = ms.Tensor(scatter_input(_rank(), dtype))
            for op in ("sum", "max"):
                out[f"reduce_scatter/{op}/{dtype}"] = _record(
                    comm_func.reduce_scatter_tensor(rows, op)[0])
    coll = management.collectives()
    if coll.all_reduce_coalesced is not None:   # optional: several arrays, one collective
        arrays = [ms.Tensor(rank_input(_rank(), "float32")),
                  ms.Tensor(rank_input(_rank(), "float32")[0])]
        reduced = coll.all_reduce_coalesced([a._data for a in arrays], "sum", None)
        out["all_reduce_coalesced"] = [_record(ms.Tensor._wrap(r)) for r in reduced]
    scalar = ms.Tensor(np.float32(_rank() + 0.5))
    out["all_gather/scalar"] = _record(comm_func.all_gather_into_tensor(scalar)[0])
    comm_func.barrier()
    out["barrier"] = True
    return out


def _graph(ms, comm_func):

    class Collect(nn.Cell):
        def construct(self, x):
            total, _ = comm_func.all_reduce(x)
            top, _ = comm_func.all_reduce(x, "max")
            mean, _ = comm_func.all_reduce(x, "avg")
            gathered, _ = comm_func.all_gather_into_tensor(x)
            root = comm_func.broadcast(x, 1)
            block, _ = comm_func.reduce_scatter_tensor(x.reshape(4, 3))
            return total * 2.0, top, mean, gathered, root, block

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        outs = Collect()(ms.Tensor(rank_input(_rank(), "float32")))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    names = ("sum_times_2", "max", "mean", "all_gather", "broadcast", "reduce_scatter")
    return {f"graph/{n}": _record(t) for n, t in zip(names, outs)}


def _record(tensor):
    a = tensor.asnumpy()
    return {"dtype": str(a.dtype), "shape": list(a.shape),
            "values": a.astype(np.float64).ravel().tolist()}


def _rank():
    return get_rank()


def main(argv=None):
    """Join the job, run the collectives, write the results; returns the exit status."""
    p = argparse.ArgumentParser(prog="mscore.conformance._collectives_worker")
    p.add_argument("--backend", required=True)
    p.add_argument("--device", default="CPU")
    p.add_argument("--dtypes", default="float32")
    p.add_argument("--out", required=True)
    p.add_argument("--graph", action="store_true", help="also inside a GRAPH_MODE Cell")
    p.add_argument("--plugin", action="append", default=[])
    args = p.parse_args(argv)
    for name in args.plugin:
        get_registry().register_plugin(importlib.import_module(name), name.rsplit(".", 1)[-1])
    ms.set_context(backend=args.backend, device_target=args.device.split(":")[0])
    init()
    results = {"size": get_group_size(), "rank": _rank()}
    results.update(_eager(ms, comm_func, args.dtypes.split(",")))
    if args.graph:
        results.update(_graph(ms, comm_func))
    path = os.path.join(args.out, f"rank{_rank()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(results, f)
    os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
