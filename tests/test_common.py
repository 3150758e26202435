"""The foundation's common layer: context and backend selection, dtypes, Tensor, Parameter,
initializers, value_and_grad's calling conventions and Cell bookkeeping."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import mscore as ms
from mscore import nn, ops
from mscore.common import dtype as mdt
from mscore.plugin.registry import get_registry


@pytest.fixture(autouse=True)
def _numpy_backend():
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)


# -- context ---------------------------------------------------------------------------------
def test_set_context_validates_every_key():
    with pytest.raises(ValueError, match="unknown key"):
        ms.set_context(backnd="numpy")
    with pytest.raises(ValueError, match="mode"):
        ms.set_context(mode=2)
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="TPU")
    with pytest.raises(TypeError, match="device_target"):
        ms.set_context(device_target=0)
    with pytest.raises(ValueError, match="device_id"):
        ms.set_context(device_id=-1)
    with pytest.raises(ValueError, match="get_context"):
        ms.get_context("nope")
    ms.set_context(mode=ms.GRAPH_MODE)
    assert ms.get_context("mode") == ms.GRAPH_MODE == 0
    assert ms.PYNATIVE_MODE == 1


def test_unknown_backend_names_the_installed_ones_and_no_invented_package():
    with pytest.raises(ValueError) as err:
        ms.set_context(backend="tensorflow")
    text = str(err.value)
    assert "'tensorflow' is not installed" in text
    for name in get_registry().names():
        assert name in text
    assert "pip install" not in text and "mscore-tensorflow" not in text
    assert "'mscore.backends' entry point" in text
    assert ms.get_context("backend") == "numpy"  # nothing changed


def test_numpy_backend_refuses_gpu_and_keeps_the_old_target():
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="GPU")
    assert ms.get_context("device_target") == "CPU"


def _selected_in_subprocess(env_backend):
    env = dict(os.environ, MSCORE_BACKEND=env_backend)
    code = "import mscore; print(mscore.get_context('backend'))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)


def test_mscore_backend_environment_variable_selects_the_backend():
    out = _selected_in_subprocess("numpy")
    assert out.stdout.strip() == "numpy", out.stderr
    others = [n for n in ("torch", "jax") if n in get_registry().names()]
    if others:
        out = _selected_in_subprocess(others[0])
        assert out.stdout.strip() == others[0], out.stderr
    out = _selected_in_subprocess("nonexistent")
    assert out.returncode != 0 and "'nonexistent' is not installed" in out.stderr


# -- dtypes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,want", [
    ("float16", "float32", "float32"), ("bfloat16", "float16", "float32"),
    ("bfloat16", "float64", "float64"), ("int32", "float16", "float16"),
    ("uint8", "int8", "int16"), ("bool", "int8", "int8"), ("int64", "int32", "int64"),
])
def test_promotion_table(a, b, want):
    assert mdt.promote(mdt.get_dtype(a), mdt.get_dtype(b)) is mdt.get_dtype(want)
    x = ms.Tensor(np.ones(2, mdt.get_dtype(a).np_dtype))
    y = ms.Tensor(np.ones(2, mdt.get_dtype(b).np_dtype))
    assert (x + y).dtype is mdt.get_dtype(want)


def test_dtype_lookup_errors():
    with pytest.raises(ValueError, match="unknown dtype"):
        mdt.get_dtype("float8")
    with pytest.raises(TypeError, match="dtype"):
        mdt.as_dtype(object())
    assert mdt.as_dtype(float) is ms.float32 and mdt.as_dtype("bfloat16") is ms.bfloat16


# -- Tensor ------------------------------------------------------------------------------------
def test_tensor_default_dtypes_like_mindspore():
    assert ms.Tensor(1.5).dtype is ms.float32
    assert ms.Tensor(3).dtype is ms.int64
    assert ms.Tensor(True).dtype is ms.bool_
    assert ms.Tensor([1.0, 2.0]).dtype is ms.float32
    assert ms.Tensor(np.zeros(2)).dtype is ms.float64
    assert ms.Tensor(np.zeros(2), ms.float16).dtype is ms.float16
    assert ms.Tensor(shape=(2, 3), dtype=ms.int32).asnumpy().tolist() == [[0] * 3] * 2
    with pytest.raises(TypeError, match="input_data"):
        ms.Tensor("abc")
    with pytest.raises(ValueError, match="input_data is None"):
        ms.Tensor()


def test_scalars_take_the_tensor_dtype():
    h = ms.Tensor(np.array([1.0, 2.0], np.float16))
    assert (h * 3.0).dtype is ms.float16
    assert (2 + h).dtype is ms.float16
    i = ms.Tensor(np.array([1, 2], np.int32))
    assert (i + 1).dtype is ms.int32
    assert (i * 0.5).dtype is ms.float32
    np.testing.assert_array_equal((i * 0.5).asnumpy(), [0.5, 1.0])


def test_tensor_operators_indexing_and_reductions():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ms.Tensor(a)
    np.testing.assert_array_equal((t - 1).asnumpy(), a - 1)
    np.testing.assert_array_equal((1 - t).asnumpy(), 1 - a)
    np.testing.assert_array_equal((t / 2).asnumpy(), a / 2)
    np.testing.assert_array_equal((t ** 2).asnumpy(), a ** 2)
    np.testing.assert_array_equal((t @ t.T).asnumpy(), a @ a.T)
    np.testing.assert_array_equal((t > 5).asnumpy(), a > 5)
    np.testing.assert_array_equal(t[1:, ::2].asnumpy(), a[1:, ::2])
    np.testing.assert_array_equal(t[ms.Tensor(np.array([2, 0]))].asnumpy(), a[[2, 0]])
    np.testing.assert_array_equal(t[None, 1].asnumpy(), a[None, 1])
    np.testing.assert_array_equal(t.reshape(2, -1).asnumpy(), a.reshape(2, -1))
    assert t.sum().item() == a.sum()
    np.testing.assert_allclose(t.mean(axis=1).asnumpy(), a.mean(axis=1))
    np.testing.assert_array_equal(t.max(axis=0).asnumpy(), a.max(axis=0))
    np.testing.assert_array_equal(t.argmax(axis=1).asnumpy(), a.argmax(axis=1))
    t[0, 1] = 100.0
    assert t.asnumpy()[0, 1] == 100.0 and t.asnumpy()[0, 0] == 0.0
    assert t.shape == (3, 4) and t.ndim == 2 and t.size == 12 and len(t) == 3
    assert float(ms.Tensor(2.5)) == 2.5 and int(ms.Tensor(7)) == 7
    with pytest.raises(ValueError, match="item"):
        t.item()
    with pytest.raises(ValueError, match="proposed_shape"):
        t.reshape(5, -1)
    assert repr(t).startswith("Tensor(shape=[3, 4], dtype=Float32, value=\n[[")
    assert t.astype(ms.bfloat16).dtype is ms.bfloat16
    np.testing.assert_array_equal(np.asarray(t.astype(ms.int32)), t.asnumpy().astype(np.int32))


# -- Parameter and initializers ----------------------------------------------------------------
def test_parameters_are_named_by_attribute_path():
    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(2, 3)
            self.scale = ms.Parameter(ms.Tensor(np.ones(3, np.float32)))

        def construct(self, x):
            return self.fc(x) * self.scale

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.SequentialCell(nn.Dense(3, 1))

        def construct(self, x):
            return self.head(self.block(x))

    net = Net()
    names = [p.name for p in net.trainable_params()]
    # MindSpore's order: each cell's own parameters, then its sub-cells', depth first.
    assert names == ["block.scale", "block.fc.weight", "block.fc.bias", "head.0.weight",
                     "head.0.bias"]
    assert [n for n, _ in net.parameters_and_names()] == names
    assert [n for n, _ in net.cells_and_names()] == ["", "block", "block.fc", "head", "head.0"]
    net.set_train()
    assert all(c.training for _, c in net.cells_and_names())
    seen = []
    net.apply(lambda c: seen.append(type(c).__name__))
    assert seen[-1] == "Net" and "Dense" in seen
    assert "(block): Block" in repr(net)
    with pytest.raises(TypeError, match="picklable"):
        pickle.dumps(net)
    with pytest.raises(TypeError, match="picklable"):
        pickle.dumps(net.block.scale)
    with pytest.raises(KeyError, match="child_name"):
        net.insert_child_to_cell("a.b", nn.ReLU())
    with pytest.raises(TypeError, match="child_cell"):
        net.insert_child_to_cell("c", object())


def test_parameter_validation_and_clone():
    with pytest.raises(TypeError, match="requires_grad"):
        ms.Parameter(ms.Tensor(1.0), requires_grad="yes")
    with pytest.raises(ValueError, match="name"):  # MindSpore's type for this check
        ms.Parameter(ms.Tensor(1.0), name=3)
    p = ms.Parameter(ms.Tensor(np.arange(3, dtype=np.float32)), name="w")
    same = p.clone()
    zeros = p.clone("zeros")
    assert same.name == "w" and same is not p
    np.testing.assert_array_equal(same.asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(zeros.asnumpy(), [0, 0, 0])
    p.set_data(ms.Tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(same.asnumpy(), [0, 1, 2])
    with pytest.raises(ValueError, match="shape"):
        p.assign_value(ms.Tensor(np.ones(4, np.float32)))


def test_initializers_are_seeded_and_bounded():
    ms.set_seed(5)
    a = ms.initializer("XavierUniform", (64, 32)).asnumpy()
    ms.set_seed(5)
    b = ms.initializer("xavier_uniform", (64, 32)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert np.abs(a).max() <= np.sqrt(6.0 / 96) + 1e-7
    he = ms.initializer("HeUniform", (40, 10, 3, 3)).asnumpy()
    assert np.abs(he).max() <= np.sqrt(2.0) * np.sqrt(3.0 / 90) + 1e-6
    # MindSpore 2.x: a and b are absolute bounds, not multiples of sigma
    tn = ms.initializer(ms.common.initializer.TruncatedNormal(0.1, a=-0.2, b=0.2),
                        (2000,)).asnumpy()
    assert np.abs(tn).max() <= 0.2 + 1e-7 and 0.07 < tn.std() < 0.1
    normal = ms.initializer("normal", (4000,)).asnumpy()
    assert 0.009 < normal.std() < 0.011  # MindSpore's default sigma 0.01
    assert ms.initializer(0.5, (2,), ms.float16).dtype is ms.float16
    with pytest.raises(ValueError, match="no initializer named"):
        ms.initializer("glorot", (2, 2))
    with pytest.raises(ValueError, match="shape"):
        ms.initializer("zeros", (2, -1))
    with pytest.raises(ValueError, match="seed"):
        ms.set_seed(-1)


# -- value_and_grad calling conventions --------------------------------------------------------
def test_value_and_grad_argument_layouts():
    w = ms.Parameter(ms.Tensor(np.array([2.0, 3.0], np.float32)), name="w")
    x = ms.Tensor(np.array([1.0, 4.0], np.float32))
    y = ms.Tensor(np.array([5.0, 6.0], np.float32))

    def f(a, b):
        return ops.sum(a * b * w)

    out, g = ms.value_and_grad(f)(x, y)
    assert float(out) == 1 * 5 * 2 + 4 * 6 * 3
    np.testing.assert_array_equal(g.asnumpy(), (y * w).asnumpy())
    _, (ga, gb) = ms.value_and_grad(f, (0, 1))(x, y)
    np.testing.assert_array_equal(gb.asnumpy(), (x * w).asnumpy())
    _, (gw,) = ms.value_and_grad(f, None, [w])(x, y)
    np.testing.assert_array_equal(gw.asnumpy(), (x * y).asnumpy())
    _, gw_single = ms.value_and_grad(f, None, w)(x, y)
    np.testing.assert_array_equal(gw_single.asnumpy(), gw.asnumpy())
    _, (gx, (gw2,)) = ms.value_and_grad(f, 0, [w])(x, y)
    np.testing.assert_array_equal(gw2.asnumpy(), gw.asnumpy())
    _, ((pos, _), ((name, _),)) = ms.value_and_grad(f, 0, [w], return_ids=True)(x, y)
    assert pos == 0 and name == "w"

    def with_aux(a, b):
        return ops.sum(a * b), a + b

    (loss, aux), g = ms.value_and_grad(with_aux, 0, has_aux=True)(x, y)
    np.testing.assert_array_equal(g.asnumpy(), y.asnumpy())  # aux adds no gradient
    np.testing.assert_array_equal(aux.asnumpy(), [6.0, 10.0])
    grads, aux = ms.grad(with_aux, 0, has_aux=True)(x, y)
    np.testing.assert_array_equal(grads.asnumpy(), y.asnumpy())

    def two_outputs(a):
        return a * 2.0, a * 3.0

    g = ms.grad(two_outputs)(x)  # without has_aux every output counts (sensitivity of ones)
    np.testing.assert_array_equal(g.asnumpy(), [5.0, 5.0])

    with pytest.raises(ValueError, match="both be None"):
        ms.value_and_grad(f, None)
    with pytest.raises(TypeError, match="weights"):
        ms.value_and_grad(f, 0, [x])
    with pytest.raises(TypeError, match="grad_position"):
        ms.value_and_grad(f, "0")
    with pytest.raises(ValueError, match="out of range"):
        ms.value_and_grad(f, 3)(x, y)
    with pytest.raises(TypeError, match="callable"):
        ms.value_and_grad(3)


def test_grad_operation_classic_interface():
    net = nn.Dense(2, 1)
    x = ms.Tensor(np.array([[1.0, 2.0]], np.float32))
    grads = ops.GradOperation(get_by_list=True)(net, net.trainable_params())(x)
    np.testing.assert_array_equal(grads[0].asnumpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(grads[1].asnumpy(), [1.0])
    sens = ms.Tensor(np.array([[3.0]], np.float32))
    gx = ops.GradOperation(sens_param=True)(net)(x, sens)
    np.testing.assert_allclose(gx.asnumpy(), 3.0 * net.weight.asnumpy())
