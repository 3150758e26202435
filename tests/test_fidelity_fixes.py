"""The names MindSpore's docstring examples found missing or different, against MindSpore
2.10's recorded behaviour (tests/data/fidelity_fixes_oracle.json, recorded by
tests/data/make_fidelity_fixes_oracle.py), on every installed backend:
``dataset.vision.RandomErasing``/``RgbToHsv``/``HsvToRgb``, ``Generator``, the uint16/32/64
dtypes, ``PReLUExt`` (``mint.nn.PReLU``), ``numpy.pad(mode='linear_ramp')``, gradients of a
tuple input, ``Tensor.assign_value``, ``ops.max_pool2d`` with dilation/ceil_mode/indices,
``ops.norm``, ``nn.Conv2dTranspose`` with ``output_padding`` and ``export(custom_func=)``."""
import json
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends, each_backend, numpy_context_each_test, use_backend

import mscore as ms
import mscore.numpy as mnp
from mscore import nn, ops
from mscore.common import dtype as mdt
from mscore.dataset import vision

ORACLE = json.loads((Path(__file__).parent / "data" / "fidelity_fixes_oracle.json").read_text())
BACKENDS = available_backends()
RTOL, ATOL = 1e-5, 1e-6


backend = each_backend()
_numpy_context = numpy_context_each_test()


def values(rec):
    """A recorded array (``{"shape", "dtype", "values"}``) as numpy."""
    v = np.array(rec["values"], dtype=object)
    v = np.where(v == "nan", np.nan, np.where(v == "inf", np.inf, np.where(v == "-inf",
                                                                           -np.inf, v)))
    return v.astype(np.float64).reshape(rec["shape"])


def assert_recorded(got, rec, rtol=RTOL, atol=ATOL):
    got = got.asnumpy() if isinstance(got, ms.Tensor) else np.asarray(got)
    assert list(got.shape) == rec["shape"]
    assert str(got.dtype) == rec["dtype"]
    np.testing.assert_allclose(got.astype(np.float64), values(rec), rtol=rtol, atol=atol)


# -- dataset.vision ---------------------------------------------------------------------------
@pytest.mark.parametrize("case", ORACLE["random_erasing_errors"], ids=lambda c: str(c["kwargs"]))
def test_random_erasing_checks_arguments_as_mindspore(case):
    with pytest.raises((TypeError, ValueError)) as info:
        vision.RandomErasing(**case["kwargs"])
    assert type(info.value).__name__ == case["error"]["type"]
    assert str(info.value) == case["error"]["message"]


def test_random_erasing_sets_one_rectangle_to_the_value():
    rec = ORACLE["random_erasing_fill"]
    img = np.zeros((3, 10, 10), np.float32)
    out = vision.RandomErasing(prob=1.0, value=(1, 2, 3))(img)
    assert str(out.dtype) == rec["dtype"] and list(out.shape) == rec["shape"]
    assert sorted(set(out.ravel().tolist())) == rec["values"]
    assert not img.any()                                     # not in place by default
    for c in range(3):                                        # one rectangle, channel c is c+1
        rows, cols = np.nonzero(out[c])
        assert (out[c][rows.min():rows.max() + 1, cols.min():cols.max() + 1] == c + 1).all()
        area = (rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1)
        assert 0.02 * 100 * 0.5 <= area <= 0.33 * 100 * 1.5
    same = np.arange(300, dtype=np.float32).reshape(3, 10, 10)
    np.testing.assert_array_equal(vision.RandomErasing(prob=0.0)(same), same)
    with pytest.raises(ValueError, match="RandomErasing: expected a .C, H, W. image"):
        vision.RandomErasing(prob=1.0)(np.zeros((10, 10), np.float32))


def test_rgb_hsv_conversions_match_mindspore():
    rec = ORACLE["rgb_to_hsv"]
    assert_recorded(vision.RgbToHsv(is_hwc=True)(np.array(rec["input"], np.uint8)), rec["out"],
                    rtol=1e-12, atol=1e-12)
    rec = ORACLE["hsv_to_rgb"]
    assert_recorded(vision.HsvToRgb()(np.array(rec["input"])), rec["out"], rtol=1e-12,
                    atol=1e-12)
    with pytest.raises(TypeError, match="3 channels"):
        vision.RgbToHsv(is_hwc=True)(np.zeros((2, 2, 4)))


# -- Generator ------------------------------------------------------------------------------
def test_generator_seeds_as_mindspore_and_replays_its_state(backend):
    rec = ORACLE["generator"]
    g = ms.Generator()
    assert g.initial_seed() == rec["initial_seed_default"]
    assert (g.manual_seed(100) is g) is rec["manual_seed_returns_self"]
    assert g.initial_seed() == rec["initial_seed_after"]
    with pytest.raises(TypeError, match="^" + rec["bad_seed"]["message"] + "$"):
        g.manual_seed(1.5)
    ms.set_seed(7)
    plain = ops.rand(3).asnumpy()
    ms.set_seed(7)
    state = g.get_state()
    a = ops.ones((4, 2)).uniform_(1.0, 2.0, generator=g).asnumpy()
    b = ops.zeros(5).normal_(generator=g).asnumpy()
    np.testing.assert_array_equal(ops.rand(3).asnumpy(), plain)   # the global stream untouched
    assert ((a >= 1) & (a < 2)).all() and np.unique(a).size == a.size
    g.set_state(state)
    np.testing.assert_array_equal(ops.ones((4, 2)).uniform_(1.0, 2.0, generator=g).asnumpy(), a)
    np.testing.assert_array_equal(ops.zeros(5).normal_(generator=g).asnumpy(), b)
    g.manual_seed(100)
    np.testing.assert_array_equal(ops.ones((4, 2)).uniform_(1.0, 2.0, generator=g).asnumpy(), a)
    with pytest.raises(TypeError, match="generator: expected an mscore.Generator"):
        ops.ones(2).uniform_(generator=3)


# -- dtypes -----------------------------------------------------------------------------------
def test_uint_dtypes_have_mindspores_names():
    rec = ORACLE["uint_dtypes"]
    for name in ("uint16", "uint32", "uint64", "uintc", "uintp"):
        assert getattr(ms, name).tensor_type == rec["aliases"][name]
    for name, want in rec["numpy_names"].items():
        assert getattr(mnp, name).tensor_type == want
    assert mdt.uint16.tensor_type == "UInt16" and mdt.from_tensor_type("UInt64") is ms.uint64


def test_uint_promotion_follows_numpy_below_uint64():
    ints = [mdt.bool_, mdt.int8, mdt.uint8, mdt.int16, mdt.uint16, mdt.int32, mdt.uint32,
            mdt.int64, mdt.uint64]
    for a in ints:
        for b in ints:
            want = np.promote_types(a.np_dtype, b.np_dtype)
            got = mdt.promote(a, b)
            if want.kind == "f":     # numpy gives float64 for uint64 with a signed type
                assert got is mdt.int64, (a, b)
            else:
                assert got.np_dtype == want, (a, b, got)


def test_uint_tensors_or_a_clear_refusal(backend):
    rec = ORACLE["uint_dtypes"]
    if backend == "torch":
        with pytest.raises(TypeError, match="the torch backend does not support uint64 "
                                            r"\(torch has no arithmetic kernels"):
            ms.Tensor([1, 2, 3], ms.uint64)
        with pytest.raises(TypeError, match="does not support uint16"):
            ms.Tensor(np.array([1, 2], np.uint16))
        return
    for name, want in rec["is_signed"].items():
        assert ms.Tensor([1, 2, 3], getattr(ms, name)).is_signed() is want
    for name, want in rec["from_numpy"].items():
        assert ms.Tensor(np.array([1, 2], name)).dtype.tensor_type == want
    assert int(mnp.invert(mnp.array(13, dtype=mnp.uint16)).asnumpy()) == rec["invert_uint16_13"]


# -- nn / mint ------------------------------------------------------------------------------
def test_prelu_ext_is_mint_prelu(backend):
    rec = ORACLE["prelu_ext"]
    assert (ms.mint.nn.PReLU is nn.layer.activation.PReLUExt) is rec["is_mint"]
    net = nn.layer.activation.PReLUExt(3, 0.1, ms.float16)
    assert [[n, list(p.shape), p.dtype.tensor_type] for n, p in net.parameters_and_names()] \
        == rec["params"]
    x = ms.Tensor(np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32))
    assert_recorded(nn.layer.activation.PReLUExt(3, 0.5)(x), rec["out"])


@pytest.mark.parametrize("i", range(len(ORACLE["conv2d_transpose"]["cases"])))
def test_conv2d_transpose_output_padding_as_mindspore(backend, i):
    rec = ORACLE["conv2d_transpose"]
    case = rec["cases"][i]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    net = nn.Conv2dTranspose(2, 3, 3, weight_init=ms.Tensor(np.array(rec["weight"],
                                                                     np.float32)),
                             bias_init="ones", **kw)
    x = ms.Tensor(np.array(rec["x"], np.float32))
    if case["error"]:
        with pytest.raises(ValueError) as info:
            net(x)
        assert str(info.value) == case["error"]["message"]
        return
    assert_recorded(net(x), case["out"], rtol=1e-5, atol=1e-5)


# -- numpy / ops --------------------------------------------------------------------------------
@pytest.mark.parametrize("i", range(len(ORACLE["pad_linear_ramp"])))
def test_numpy_pad_linear_ramp(backend, i):
    case = ORACLE["pad_linear_ramp"][i]
    data = values(case["input"]).astype(case["input"]["dtype"])
    width = case["pad_width"] if isinstance(case["pad_width"], int) else \
        np.array(case["pad_width"]).tolist()
    out = mnp.pad(ms.Tensor(data), width, mode="linear_ramp", end_values=case["end_values"])
    assert_recorded(out, case["out"])


def test_gradients_of_a_tuple_input(backend):
    rec = ORACLE["mutable_grad"]
    a, b, w = (ms.Tensor(np.array(rec[k], np.float32)) for k in "abw")

    class MatMulSum(nn.Cell):
        def construct(self, z, w):
            return ops.sum(ops.matmul(z[0], z[1]) * w)

    g0 = ms.grad(MatMulSum(), grad_position=0)(ms.mutable((a, b)), w)
    assert isinstance(g0, tuple) and len(g0) == len(rec["grad_0"])
    for got, want in zip(g0, rec["grad_0"]):
        assert_recorded(got, want, rtol=1e-5, atol=1e-5)
    (ga, gb), gw = ms.grad(MatMulSum(), grad_position=(0, 1))(ms.mutable((a, b)), w)
    for got, want in zip((ga, gb), rec["grad_01"][0]):
        assert_recorded(got, want, rtol=1e-5, atol=1e-5)
    assert_recorded(gw, rec["grad_01"][1], rtol=1e-5, atol=1e-5)
    # against finite differences of the sum (float64)
    x = np.array(rec["a"])
    eps, f = 1e-6, lambda x: float((x @ np.array(rec["b"]) * np.array(rec["w"])).sum())
    fd = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        fd[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(ga.asnumpy(), fd, rtol=1e-4, atol=1e-4)
    with pytest.raises(TypeError, match="input 0 must be a Tensor, or a tuple or list of "
                                        "Tensors"):
        ms.grad(lambda z: z[0])((1.0, 2.0))


def test_assign_value_takes_the_values_shape_and_dtype(backend):
    first, second = ORACLE["assign_value"]
    t = ms.Tensor([1, 2, 3, 4])
    source = ms.Tensor(np.array([[1.5, 2], [3, 4]], np.float32))
    assert t.assign_value(source) is t
    assert_recorded(t, first)
    t2 = ms.Tensor([1.0, 2.0])
    t2.assign_value(ms.Tensor([7, 8, 9]))
    assert_recorded(t2, second)


# every case on numpy, two elsewhere (JAX compiles each new window layout: seconds a case)
POOL_CASES = [pytest.param(b, i, id=f"{b}-{i}") for b in BACKENDS
              for i in range(len(ORACLE["max_pool2d"]["cases"])) if b == "numpy" or i < 2]


@pytest.mark.parametrize("name,i", POOL_CASES)
def test_max_pool2d_dilation_ceil_mode_and_indices(name, i):
    use_backend(name)
    case = ORACLE["max_pool2d"]["cases"][i]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    out, idx = ops.max_pool2d(ms.Tensor(np.array(ORACLE["max_pool2d"]["x"], np.float32)), **kw)
    assert_recorded(out, case["out"])
    assert_recorded(idx, case["indices"], rtol=0, atol=0)


def _norm_cases():
    return [pytest.param(c, id=f"{c['input']}-{c['ord']}-{c['dim']}-{c['keepdim']}")
            for c in ORACLE["norm"]["cases"]]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 ** negative ord is inf on purpose
@pytest.mark.parametrize("case", _norm_cases())
def test_norm_every_ord(case):
    x = ms.Tensor(np.array(ORACLE["norm"]["inputs"][case["input"]], np.float32))
    ord_ = float(case["ord"]) if case["ord"] in ("inf", "-inf") else case["ord"]
    dim = tuple(case["dim"]) if isinstance(case["dim"], list) else case["dim"]
    if case["error"]:
        with pytest.raises((TypeError, ValueError)) as info:
            ops.norm(x, ord=ord_, dim=dim, keepdim=case["keepdim"])
        assert type(info.value).__name__ == case["error"]["type"]
        if case["error"]["message"].startswith("For norm,"):
            assert str(info.value) == case["error"]["message"]
        return
    assert_recorded(ops.norm(x, ord=ord_, dim=dim, keepdim=case["keepdim"]), case["out"],
                    rtol=2e-5, atol=1e-5)


def test_norm_on_every_backend(backend):
    a = ms.Tensor(np.array(ORACLE["norm"]["inputs"]["A"], np.float32))
    want = {c["ord"]: c["out"] for c in ORACLE["norm"]["cases"]
            if c["input"] == "A" and c["dim"] is None and not c["error"]}
    for o in ("nuc", 1, "inf") if backend != "numpy" else ("nuc", 2, -2, 1, "inf", None):
        assert_recorded(ops.norm(a, ord=float(o) if o == "inf" else o), want[o], rtol=2e-5,
                        atol=1e-5)


# -- export --------------------------------------------------------------------------------------
def test_export_custom_func_edits_the_model(tmp_path):
    from mscore.train.proto import mind_ir_pb2

    def custom(model):
        model.producer_name = "test11111"
        model.user_info["version"] = "11.0"

    path = tmp_path / "net"
    ms.export(nn.Dense(3, 2), ms.Tensor(np.ones((1, 3), np.float32)), file_name=str(path),
              file_format="MINDIR", custom_func=custom)
    model = mind_ir_pb2.ModelProto()
    model.ParseFromString((tmp_path / "net.mindir").read_bytes())
    assert model.producer_name == "test11111" and dict(model.user_info) == {"version": "11.0"}
    with pytest.raises(TypeError, match="custom_func: expected a callable"):
        ms.export(nn.Dense(3, 2), ms.Tensor(np.ones((1, 3), np.float32)),
                  file_name=str(path), file_format="MINDIR", custom_func=3)
