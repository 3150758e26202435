"""Records MindSpore 2.10's behaviour for the names its docstring examples showed mscore
lacking or getting wrong (tests/test_fidelity_fixes.py reads the JSON):
``dataset.vision.RandomErasing`` (argument checks), ``RgbToHsv``/``HsvToRgb``, ``Generator``,
the uint16/32/64 dtypes, ``nn.layer.activation.PReLUExt``, ``numpy.pad(mode='linear_ramp')``,
gradients of a ``mutable`` tuple input, ``Tensor.assign_value``, ``ops.max_pool2d`` with
dilation/ceil_mode/return_indices, ``ops.norm`` for every ord, and ``nn.Conv2dTranspose``
with ``output_padding``.

Run with the separate MindSpore venv, from /tmp:
``cd /tmp && /tmp/ms/bin/python <repo>/tests/data/make_fidelity_fixes_oracle.py`` (MindSpore
2.10, CPU). mscore's tests read the JSON; they never import MindSpore.
"""
import json
import math
import os

import mindspore as ms
import mindspore.dataset.vision as vision
import mindspore.numpy as mnp
import numpy as np
from mindspore import Tensor, context, mutable, nn, ops

record = {"note": f"MindSpore {ms.__version__} (CPU)"}


def err(fn):
    try:
        out = fn()
        if isinstance(out, Tensor):
            out.asnumpy()   # MindSpore runs the kernel (and raises) only here
    except Exception as exc:  # recording what MindSpore raises
        return {"type": type(exc).__name__, "message": str(exc).splitlines()[0]}
    return None


def num(v):
    v = float(v)
    return "nan" if math.isnan(v) else "inf" if v == math.inf else "-inf" if v == -math.inf \
        else v


def arr(t):
    a = t.asnumpy() if isinstance(t, Tensor) else np.asarray(t)
    return {"shape": list(a.shape), "dtype": str(a.dtype),
            "values": np.vectorize(num, otypes=[object])(a).tolist() if a.size else []}


# -- RandomErasing's argument checks --------------------------------------------------------
record["random_erasing_errors"] = [
    {"kwargs": kw, "error": err(lambda kw=kw: vision.RandomErasing(**kw))}
    for kw in [dict(prob="a"), dict(prob=2.0), dict(scale=(0.5, 0.1)), dict(scale=(0.1,)),
               dict(ratio=(2.0, 1.0)), dict(value=300), dict(value="x"), dict(value=(1, 2)),
               dict(inplace=1), dict(max_attempts=0), dict(max_attempts=1.5),
               dict(value=1.5)]]
img = np.zeros((3, 10, 10), np.float32)
out = vision.RandomErasing(prob=1.0, value=(1, 2, 3))(img)
record["random_erasing_fill"] = {"dtype": str(out.dtype), "shape": list(out.shape),
                                 "values": sorted(set(out.ravel().tolist()))}

# -- colour space --------------------------------------------------------------------------
rgb = np.array([[0, 1, 2], [3, 4, 5], [200, 10, 10], [7, 7, 7], [0, 0, 0], [10, 200, 30]],
               np.uint8).reshape((2, 3, 3))
record["rgb_to_hsv"] = {"input": rgb.tolist(), "out": arr(vision.RgbToHsv(is_hwc=True)(rgb))}
hsv = np.array([[[0.1, 0.5, 0.9], [0.7, 0.0, 0.3]], [[0.99, 1.0, 0.5], [0.5, 0.25, 1.0]]])
record["hsv_to_rgb"] = {"input": hsv.transpose(2, 0, 1).tolist(),
                        "out": arr(vision.HsvToRgb(is_hwc=False)(hsv.transpose(2, 0, 1)))}

# -- Generator ----------------------------------------------------------------------------
g = ms.Generator()
record["generator"] = {"initial_seed_default": int(g.initial_seed()),
                       "manual_seed_returns_self": g.manual_seed(100) is g,
                       "initial_seed_after": int(g.initial_seed()),
                       "bad_seed": err(lambda: g.manual_seed(1.5))}

# -- uint dtypes ---------------------------------------------------------------------------
record["uint_dtypes"] = {
    "aliases": {n: str(getattr(ms, n)) for n in ("uint", "uintc", "uintp", "uint16",
                                                   "uint32", "uint64")},
    "numpy_names": {n: str(getattr(mnp, n)) for n in ("uint", "uint16", "uint32", "uint64")},
    "from_numpy": {n: str(Tensor(np.array([1, 2], n)).dtype)
                   for n in ("uint16", "uint32", "uint64")},
    "is_signed": {n: bool(Tensor([1, 2, 3], getattr(ms, n)).is_signed())
                  for n in ("int64", "uint16", "uint32", "uint64")},
    "invert_uint16_13": int(mnp.invert(mnp.array(13, dtype=mnp.uint16)).asnumpy()),
}

# -- PReLUExt ------------------------------------------------------------------------------
prelu = nn.layer.activation.PReLUExt(3, 0.1, ms.float16)
x = Tensor(np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32))
record["prelu_ext"] = {
    "params": [[n, list(p.shape), str(p.dtype)] for n, p in prelu.parameters_and_names()],
    "is_mint": ms.mint.nn.PReLU is nn.layer.activation.PReLUExt,
    "out": arr(nn.layer.activation.PReLUExt(3, 0.5)(x))}

# -- numpy.pad linear_ramp ------------------------------------------------------------------
ramp = []
for data, pad_width, ends in (
        (np.arange(1.0, 6.0, dtype=np.float32), (3, 4), (10, 10)),
        (np.arange(12.0, dtype=np.float32).reshape(3, 4), ((2, 1), (3, 2)), ((1, 2), (3, 4))),
        (np.arange(12, dtype=np.int32).reshape(3, 4), ((2, 1), (3, 2)), 7),
        (np.arange(6, dtype=np.int32).reshape(2, 3), 2, ((-3, 5), (9, 1)))):
    out = mnp.pad(Tensor(data), pad_width, mode="linear_ramp", end_values=ends)
    ramp.append({"input": arr(data), "pad_width": pad_width, "end_values": ends,
                 "out": arr(out)})
record["pad_linear_ramp"] = ramp

# -- gradients of a mutable tuple (GRAPH_MODE, as the docstring) -----------------------------
a = np.array([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], np.float32)
b = np.array([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]], np.float32)
w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)


class MatMulSum(nn.Cell):
    def construct(self, z, w):
        return ops.sum(ops.matmul(z[0], z[1]) * w)


context.set_context(mode=context.GRAPH_MODE)
z = mutable((Tensor(a), Tensor(b)))
g0 = ms.grad(MatMulSum(), grad_position=0)(z, Tensor(w))
g01 = ms.grad(MatMulSum(), grad_position=(0, 1))(mutable((Tensor(a), Tensor(b))), Tensor(w))
context.set_context(mode=context.PYNATIVE_MODE)
record["mutable_grad"] = {"a": a.tolist(), "b": b.tolist(), "w": w.tolist(),
                          "grad_0": [arr(t) for t in g0],
                          "grad_01": [[arr(t) for t in g01[0]], arr(g01[1])]}

# -- Tensor.assign_value --------------------------------------------------------------------
t = Tensor([1, 2, 3, 4])
t.assign_value(Tensor(np.array([[1.5, 2], [3, 4]], np.float32)))
t2 = Tensor([1.0, 2.0])
t2.assign_value(Tensor([7, 8, 9]))
record["assign_value"] = [arr(t), arr(t2)]

# -- ops.max_pool2d -------------------------------------------------------------------------
xp = np.random.default_rng(0).standard_normal((1, 2, 5, 6)).astype(np.float32)
pools = []
for kw in (dict(kernel_size=(3, 2), stride=(2, 1), padding=1, dilation=(1, 2),
                return_indices=True, ceil_mode=True),
           dict(kernel_size=2, stride=2, ceil_mode=True, return_indices=True),
           dict(kernel_size=3, stride=1, dilation=2, return_indices=True),
           dict(kernel_size=2, stride=1, padding=1, ceil_mode=False, return_indices=True)):
    o, i = ops.max_pool2d(Tensor(xp), **kw)
    pools.append({"kwargs": kw, "out": arr(o), "indices": arr(i)})
record["max_pool2d"] = {"x": xp.tolist(), "cases": pools}

# -- ops.norm -------------------------------------------------------------------------------
inputs = {"v": [3.0, -4.0, 0.0, 12.0], "A": [[1.0, -2.0, 3.0], [4.0, 5.0, -7.0]],
          "B": np.arange(24.0).reshape(2, 3, 4).tolist()}
norms = []
ords = (None, "fro", "nuc", 2, -2, 1, -1, 0, 3, 0.5, "inf", "-inf")
for name, data in inputs.items():
    for o in ords:
        for dim in ((None, 0, 1, (0, 1), (1, 0)) if name != "B" else ((1, 2), (2, 0), -1)):
            for keepdim in ((False, True) if name == "B" else (False,)):
                ord_ = float(o) if o in ("inf", "-inf") else o
                def call(data=data, ord_=ord_, dim=dim, keepdim=keepdim):
                    return ops.norm(Tensor(np.array(data, np.float32)), ord=ord_, dim=dim,
                                    keepdim=keepdim)
                e = err(call)
                norms.append({"input": name, "ord": o, "dim": dim, "keepdim": keepdim,
                              "error": e, "out": None if e else arr(call())})
record["norm"] = {"inputs": inputs, "cases": norms}

# -- nn.Conv2dTranspose with output_padding -----------------------------------------------
rng = np.random.default_rng(3)
xc = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
wc = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
convs = []
for kw in (dict(stride=2, pad_mode="pad", padding=1, output_padding=1, has_bias=True),
           dict(stride=2, pad_mode="pad", padding=0, output_padding=1),
           dict(stride=(2, 3), pad_mode="pad", padding=1, output_padding=(1, 2)),
           dict(stride=2, pad_mode="pad", padding=1, output_padding=0),
           dict(stride=2, pad_mode="pad", padding=1, output_padding=2),
           dict(stride=2, pad_mode="same", output_padding=1)):
    def run(kw=kw):
        net = nn.Conv2dTranspose(2, 3, 3, weight_init=Tensor(wc), bias_init="ones", **kw)
        return net(Tensor(xc))
    e = err(run)
    convs.append({"kwargs": kw, "error": e, "out": None if e else arr(run())})
record["conv2d_transpose"] = {"x": xc.tolist(), "weight": wc.tolist(), "cases": convs}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fidelity_fixes_oracle.json")
with open(path, "w") as f:
    json.dump(record, f, indent=1)
print("wrote", path)
