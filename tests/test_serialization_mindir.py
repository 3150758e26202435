"""MINDIR: files written by MindSpore 2.10 run in mscore like they run in MindSpore, and files
written by mscore are the ones MindSpore loaded and ran (tests/data/mindir, made by the
``tests/data/make_mindir_*.py`` scripts), on every backend."""
import os
import sys

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn, ops
from mscore.train.proto import mind_ir_pb2 as pb
from mscore.train.serialization._mindir_export import build_mindir_model

DATA = os.path.join(os.path.dirname(__file__), "data")
FIXTURES = os.path.join(DATA, "mindir")
sys.path.insert(0, DATA)
import mindir_nets  # noqa: E402

BACKENDS = available_backends()
NETS = ("mlp", "mlp_o2", "lenet_bn", "lenet_bn_o2", "many_ops")
RECORD = np.load(os.path.join(FIXTURES, "outputs.npz"))
SLOW = bool(os.environ.get("MSCORE_SLOW_TESTS"))
# JAX compiles each op for each new shape when it runs eagerly: these cost ~1-8 s each, so the
# default run keeps the fp32 networks on it and MSCORE_SLOW_TESTS=1 adds the rest.
SLOW_CASES = {("jax", "mlp_o2"), ("jax", "lenet_bn_o2"), ("jax", "many_ops")}
CASES = [pytest.param(b, n, marks=pytest.mark.skipif(
    (b, n) in SLOW_CASES and not SLOW, reason="MSCORE_SLOW_TESTS=1 runs it (slow to compile)"))
    for b in BACKENDS for n in NETS]


_numpy_context = numpy_context_each_test()


def _recorded(net, key):
    values, i = [], 0
    while f"{net}/{key}{i}" in RECORD:
        values.append(RECORD[f"{net}/{key}{i}"])
        i += 1
    return values


def _inputs(net):
    return [ms.Tensor(x) for x in _recorded(net, "input")]


def _int64_stored():
    return ms.Tensor(np.zeros(1, np.int64)).dtype is ms.int64


def _assert_matches(got, want, net):
    """mscore's outputs against MindSpore's: 1e-5 (relative to the largest value) for float32
    networks, 2e-3 for the O2 ones and float16 outputs (both compute in float16)."""
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g = g.asnumpy()
        assert g.shape == w.shape, (i, g.shape, w.shape)
        if w.dtype == np.int64 and not _int64_stored():
            assert g.dtype == np.int32  # the backend keeps int64 as int32 (jax without x64)
        else:
            assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        half = net.endswith("_o2") or w.dtype == np.float16
        tol = (2e-3 if half else 1e-5) * max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=0, atol=tol)


@pytest.mark.parametrize("backend, net", CASES)
def test_mindspore_file_runs_like_mindspore(backend, net):
    use_backend(backend)
    cell = nn.GraphCell(ms.load(os.path.join(FIXTURES, f"ms_{net}.mindir")))
    _assert_matches(cell(*_inputs(net)), _recorded(net, "ms_file"), net)


@pytest.mark.parametrize("backend, net", CASES)
def test_mscore_file_runs_like_mindspore_runs_it(backend, net):
    use_backend(backend)
    load = ms.train.load if net == "mlp" else ms.train.serialization.load  # MindSpore's names
    cell = nn.GraphCell(load(os.path.join(FIXTURES, f"mscore_{net}.mindir")))
    _assert_matches(cell(*_inputs(net)), _recorded(net, "ms_on_mscore"), net)


def _without_producer_version(data):
    model = pb.ModelProto()
    model.ParseFromString(data)
    model.ClearField("producer_version")
    return model


@pytest.mark.parametrize("backend, net", CASES)
def test_export_writes_the_file_mindspore_ran_and_loads_back(backend, net, tmp_path):
    use_backend(backend)
    make_net, make_inputs = mindir_nets.build(ms)[net]
    model, inputs = make_net(), make_inputs()
    want = model(*inputs)
    _assert_matches(want, _recorded(net, "ms_net"), net)  # the same network as MindSpore's
    ms.export(model, *inputs, file_name=str(tmp_path / net), file_format="MINDIR")
    assert os.listdir(tmp_path) == [f"{net}.mindir"]
    path = str(tmp_path / f"{net}.mindir")
    got = nn.GraphCell(ms.load(path))(*inputs)
    want = list(want) if isinstance(want, tuple) else [want]
    _assert_matches(got, [w.asnumpy() for w in want], net)
    if net == "many_ops" and not _int64_stored():
        pytest.skip(f"backend {backend!r} keeps int64 as int32, so its argmax is int32 in the "
                    f"file")
    with open(path, "rb") as f, open(os.path.join(FIXTURES, f"mscore_{net}.mindir"), "rb") as g:
        assert _without_producer_version(f.read()) == _without_producer_version(g.read())


@pytest.mark.parametrize("backend", available_backends())
def test_export_after_eager_calls_records_the_weights(backend, tmp_path):
    """At O2 an eager call keeps a float16 copy of each weight; an export after it still
    records the float32 Parameters and their casts, byte for byte as a fresh network."""
    use_backend(backend)
    files = []
    for calls in (0, 2):
        make_net, make_inputs = mindir_nets.build(ms)["lenet_bn_o2"]
        model, inputs = make_net(), make_inputs()
        for _ in range(calls):
            model(*inputs)
        ms.export(model, *inputs, file_name=str(tmp_path / f"after{calls}"),
                  file_format="MINDIR")
        with open(tmp_path / f"after{calls}.mindir", "rb") as f:
            files.append(_without_producer_version(f.read()))
    assert len(files[1].graph.parameter) == len(files[0].graph.parameter) > 0
    assert files[1] == files[0]


def test_public_names():
    assert ms.load is ms.train.load is ms.train.serialization.load
    assert ms.nn.GraphCell is nn.graph.GraphCell
    assert ms.export is ms.train.export


def test_graph_cell_parameters_are_named_as_in_mindspore():
    for net in NETS:
        cell = nn.GraphCell(ms.load(os.path.join(FIXTURES, f"ms_{net}.mindir")))
        names = [name for name, _ in cell.parameters_and_names()]
        assert names == list(RECORD[f"{net}/ms_file_params"])
        mine = nn.GraphCell(ms.load(os.path.join(FIXTURES, f"mscore_{net}.mindir")))
        assert sorted(n for n, _ in mine.parameters_and_names()) == sorted(names)


def _attributes(model, op):
    return sorted(tuple(a.SerializeToString(deterministic=True) for a in p.attribute)
                  for p in model.primitives if p.op_type == op)


def test_exported_layout_follows_mindspore():
    """Graph inputs, parameters (name, ref_key, dtype), the primitives the layers become and
    the Cast type ids, compared with MindSpore's own file of the same network."""
    def parse(name):
        model = pb.ModelProto()
        with open(os.path.join(FIXTURES, name), "rb") as f:
            model.ParseFromString(f.read())
        return model

    for net in ("lenet_bn_o2", "mlp"):
        ours, theirs = parse(f"mscore_{net}.mindir"), parse(f"ms_{net}.mindir")
        assert (ours.ir_version, ours.mind_ir_version, ours.little_endian) == \
            (theirs.ir_version, theirs.mind_ir_version, theirs.little_endian)
        assert [p.ref_key for p in ours.graph.parameter] == \
            [p.ref_key for p in theirs.graph.parameter]
        for a, b in zip(ours.graph.parameter, theirs.graph.parameter):
            assert (list(a.dims), a.data_type, a.raw_data) == (list(b.dims), b.data_type,
                                                               b.raw_data)
        assert [list(t.dims) for i in ours.graph.input for t in i.tensor] == \
            [list(t.dims) for i in theirs.graph.input for t in i.tensor]
        side_effects = {"Load", "UpdateState", "Depend", "MakeTuple"}
        kinds = {p.op_type for p in theirs.primitives} - side_effects
        assert {p.op_type for p in ours.primitives} == kinds
        for op in ("Conv2D", "MaxPool"):  # configured by attributes: the same ones
            assert _attributes(ours, op) == _attributes(theirs, op)

        def casts(model):
            consts = {n.output[0]: n.attribute[0].i for n in model.graph.node
                      if n.op_type == "Constant"}
            prims = {p.name for p in model.primitives if p.op_type == "Cast"}
            return sorted(consts[n.input[1]] for n in model.graph.node
                          if n.op_type[len("REF::"):] in prims)
        assert casts(ours) == casts(theirs)


def test_params_init_replaces_values_of_that_cell_only():
    graph = ms.load(os.path.join(FIXTURES, "ms_mlp.mindir"))
    x = _inputs("mlp")[0]
    plain = nn.GraphCell(graph)
    bias = np.arange(10, dtype=np.float32)
    cell = nn.GraphCell(graph, params_init={"dense_relu_sequential.4.bias": ms.Tensor(bias),
                                            "not_there": ms.Tensor(1.0)})
    old = RECORD["mlp/ms_file0"]
    np.testing.assert_allclose(cell(x).asnumpy(),
                               old - plain.parameters_dict()["dense_relu_sequential.4.bias"]
                               .asnumpy() + bias, rtol=0, atol=1e-5)
    np.testing.assert_allclose(plain(x).asnumpy(), old, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="dense_relu_sequential.4.bias"):
        nn.GraphCell(graph, params_init={"dense_relu_sequential.4.bias":
                                         ms.Tensor(np.ones(11, np.float32))})
    with pytest.raises(TypeError, match="params_init"):
        nn.GraphCell(graph, params_init=[1])
    with pytest.raises(TypeError, match="params_init"):
        nn.GraphCell(graph, params_init={"x": np.ones(3)})
    with pytest.raises(TypeError, match="FuncGraph"):
        nn.GraphCell("graph")
    with pytest.raises(NotImplementedError, match="obfuscation"):
        nn.GraphCell(graph, obf_random_seed=1)


def test_graph_cell_checks_its_inputs():
    cell = nn.GraphCell(ms.load(os.path.join(FIXTURES, "ms_mlp.mindir")))
    x = _inputs("mlp")[0]
    with pytest.raises(RuntimeError, match="1 input"):
        cell(x, x)
    with pytest.raises(TypeError, match="Float32|float32"):
        cell(ms.Tensor(x.asnumpy().astype(np.float64)))
    with pytest.raises(TypeError, match="Tensor"):
        cell(x.asnumpy())
    out = cell(ms.Tensor(np.concatenate([x.asnumpy()] * 2)))  # another batch size runs
    np.testing.assert_allclose(out.asnumpy()[2:], RECORD["mlp/ms_file0"], rtol=0, atol=1e-5)


def test_load_argument_checks(tmp_path):
    with pytest.raises(ValueError, match="string"):
        ms.load(3)
    with pytest.raises(ValueError, match=".mindir"):
        ms.load(str(tmp_path / "model.onnx"))
    with pytest.raises(ValueError, match="not exist"):
        ms.load(str(tmp_path / "missing.mindir"))
    os.mkdir(tmp_path / "dir.mindir")
    with pytest.raises(ValueError, match="not a file"):
        ms.load(str(tmp_path / "dir.mindir"))
    path = os.path.join(FIXTURES, "ms_mlp.mindir")
    with pytest.raises(ValueError, match="ms_mlp.mindir"):   # a plain file, a key given
        ms.load(path, dec_key=b"0123456789abcdef")
    with pytest.raises(NotImplementedError, match="obfuscation"):
        ms.load(path, obf_func=lambda x: x)
    with pytest.raises(TypeError, match="unexpected"):
        ms.load(path, decrypt=True)


def _write(tmp_path, name, data):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_damaged_files_raise_value_error_naming_them(tmp_path):
    with open(os.path.join(FIXTURES, "ms_lenet_bn.mindir"), "rb") as f:
        good = f.read()
    cases = {"empty.mindir": b"", "garbage.mindir": b"\x80\x04\x95 not protobuf \xff" * 7,
             "text.mindir": b"hello, this is not a model\n"}
    for cut in (1, 100, 1000, len(good) // 2, len(good) - 3):
        cases[f"cut{cut}.mindir"] = good[:cut]
    for name, data in cases.items():
        path = _write(tmp_path, name, data)
        with pytest.raises(ValueError, match=name):
            ms.load(path)


def test_random_corruption_never_leaks_another_exception(tmp_path):
    with open(os.path.join(FIXTURES, "mscore_many_ops.mindir"), "rb") as f:
        good = bytearray(f.read())
    rng = np.random.default_rng(0)
    outcomes = {"ok": 0, "ValueError": 0, "NotImplementedError": 0}
    for trial in range(120):
        data = bytearray(good)
        for pos in rng.integers(0, len(data), size=int(rng.integers(1, 4))):
            data[pos] = int(rng.integers(0, 256))
        path = _write(tmp_path, f"m{trial}.mindir", bytes(data))
        try:
            ms.load(path)
            outcomes["ok"] += 1
        except ValueError as exc:
            assert path in str(exc)
            outcomes["ValueError"] += 1
        except NotImplementedError:
            outcomes["NotImplementedError"] += 1
    assert outcomes["ValueError"] > 0 and outcomes["ok"] > 0


def _model(path):
    model = pb.ModelProto()
    with open(path, "rb") as f:
        model.ParseFromString(f.read())
    return model


def test_inconsistent_graphs_raise_value_error(tmp_path):
    base = os.path.join(FIXTURES, "mscore_mlp.mindir")
    undefined = _model(base)
    undefined.graph.node[-1].input[0] = "nowhere"
    short = _model(base)
    short.graph.parameter[0].raw_data = short.graph.parameter[0].raw_data[:-4]
    unknown_ref = _model(base)
    unknown_ref.graph.node[-1].op_type = "REF::NoSuchPrimitive:99"
    twice = _model(base)
    twice.graph.node[-1].output[0] = twice.graph.node[-2].output[0]
    for name, model, match in (("undefined.mindir", undefined, "nowhere"),
                               ("short.mindir", short, "bytes"),
                               ("unknown_ref.mindir", unknown_ref, "NoSuchPrimitive"),
                               ("twice.mindir", twice, "twice")):
        path = _write(tmp_path, name, model.SerializeToString())
        with pytest.raises(ValueError, match=match):
            ms.load(path)


def test_unsupported_primitive_is_named(tmp_path):
    model = _model(os.path.join(FIXTURES, "ms_mlp.mindir"))
    for prim in model.primitives:
        if prim.op_type == "ReLU":
            prim.op_type = "Gelu"  # a MindSpore primitive mscore's loader does not run
    path = _write(tmp_path, "gelu.mindir", model.SerializeToString())
    with pytest.raises(NotImplementedError, match="'Gelu'") as info:
        ms.load(path)
    assert path in str(info.value)


def test_export_mindir_options_and_formats(tmp_path):
    net = mindir_nets.build(ms)["mlp"][0]()
    x = _inputs("mlp")[0]
    for name in ("a.b", "c.MINDIR", "d.mindir", "e.onnx"):  # MindSpore's suffix handling
        ms.export(net, x, file_name=str(tmp_path / name), file_format="MINDIR")
    assert sorted(os.listdir(tmp_path)) == ["a.b.mindir", "c.MINDIR.mindir", "d.mindir",
                                            "e.onnx.mindir"]
    with pytest.raises(NotImplementedError, match="AIR"):
        ms.export(net, x, file_name=str(tmp_path / "m"), file_format="AIR")
    with pytest.raises(NotImplementedError, match="enc_key"):   # ONNX: not implemented
        ms.export(net, x, file_name=str(tmp_path / "m"), file_format="ONNX",
                  enc_key=b"0123456789abcdef")
    with pytest.raises(TypeError, match="unexpected"):
        ms.export(net, x, file_name=str(tmp_path / "m"), file_format="MINDIR", encrypt=1)
    assert len(os.listdir(tmp_path)) == 4


def test_export_refuses_what_mindir_cannot_hold():
    class Sliced(nn.Cell):
        def construct(self, x):
            return x[:, 1:] * 2

    class Transposed(nn.Cell):
        def __init__(self):
            super().__init__()
            self.up = nn.Conv2dTranspose(2, 2, 3)

        def construct(self, x):
            return self.up(x)

    class BatchStats(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(2, use_batch_statistics=True)

        def construct(self, x):
            return self.bn(x)

    class Noisy(nn.Cell):
        def construct(self, x):
            return x + ops.uniform(x.shape)

    x = ms.Tensor(np.ones((2, 2, 4, 4), np.float32))
    for cell, match in ((Sliced(), "getitem"), (Transposed(), "conv_transpose"),
                        (BatchStats(), "batch statistics"), (Noisy(), "random")):
        with pytest.raises(NotImplementedError, match=match):
            build_mindir_model(cell, x)


@pytest.mark.skipif(not SLOW, reason="MSCORE_SLOW_TESTS=1 runs the full-size tutorial "
                    "network")
@pytest.mark.parametrize("backend", BACKENDS)
def test_full_size_seed_network_round_trips(backend, tmp_path):
    use_backend(backend)
    for name in ("mlp", "mlp_o2"):
        make_net, make_inputs = mindir_nets.build(ms, mlp_width=512)[name]
        net, inputs = make_net(), make_inputs()
        path = str(tmp_path / f"{name}.mindir")
        ms.export(net, *inputs, file_name=path, file_format="MINDIR")
        got = nn.GraphCell(ms.load(path))(*inputs)
        _assert_matches(got, [net(*inputs).asnumpy()], name)
