"""20-step MLP/CNN training runs that must give the numpy backend's losses, and
GRAPH_MODE: eager on the CPU by default, torch.compile with its fallback, one compiled graph
per train step, the compile policy and CUDA graph settings."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from _torch_compare import assert_close, rnd, to_numpy, torch

import mscore as ms
from mscore import ops
from mscore.dispatch import call


# -- 20-step training runs: torch must reproduce the numpy losses -------------------------------
def _init(shape, rng):
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def _train(backend, kind, steps=20, mode=ms.PYNATIVE_MODE):
    """Losses of ``steps`` SGD-with-momentum steps from fixed weights and batches."""
    ms.set_context(backend=backend, mode=mode)
    rng = np.random.default_rng(0)
    if kind == "mlp":
        shapes = [(32, 20), (32,), (16, 32), (16,), (5, 16), (5,)]
        data = [rng.standard_normal((16, 20)).astype(np.float32) for _ in range(steps)]
    else:
        shapes = [(4, 1, 3, 3), (4,), (6, 4, 3, 3), (6,), (5, 6 * 2 * 2), (5,)]
        data = [rng.standard_normal((8, 1, 8, 8)).astype(np.float32) for _ in range(steps)]
    teacher = rng.standard_normal((int(np.prod(data[0].shape[1:])), 5))
    labels = [np.argmax(x.reshape(len(x), -1) @ teacher, 1) for x in data]  # learnable
    params = [ms.Parameter(ms.Tensor(_init(s, rng) if len(s) > 1 else
                                     np.full(s, 0.01, np.float32)), name=f"p{i}")
              for i, s in enumerate(shapes)]
    moments = [ms.Parameter(ms.Tensor(np.zeros(s, np.float32)), name=f"m{i}",
                            requires_grad=False) for i, s in enumerate(shapes)]

    def forward(x, y):
        if kind == "mlp":
            h = ops.relu(ops.dense(x, params[0], params[1]))
            h = ops.tanh(ops.dense(h, params[2], params[3]))
            logits = ops.dense(h, params[4], params[5])
        else:
            h = ops.relu(ops.conv2d(x, params[0], params[1], pad_mode="same"))
            h = ops.max_pool2d(h, 2, 2)
            h = ops.relu(ops.conv2d(h, params[2], params[3], pad_mode="pad", padding=1,
                                    stride=1))
            h = ops.avg_pool2d(h, 2, 2)
            logits = ops.dense(ops.flatten(h), params[4], params[5])
        return ops.cross_entropy(logits, y)

    step = ms.value_and_grad(forward, None, params)
    losses = []
    for x, y in zip(data, labels):
        loss, grads = step(ms.Tensor(x), ms.Tensor(y))
        for p, m, g in zip(params, moments, grads):
            m.assign_value(m * 0.9 + g)
            p.assign_value(p - m * 0.05)
        losses.append(loss.item())
    return np.array(losses), [p.asnumpy() for p in params]


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_twenty_training_steps_match_numpy(kind):
    ref_losses, ref_params = _train("numpy", kind)
    losses, params = _train("torch", kind)
    assert ref_losses[-1] < ref_losses[0]  # it learns
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-5)
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p, r, rtol=1e-3, atol=1e-4)


# -- GRAPH_MODE -------------------------------------------------------------------------------
class _Affine(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.linspace(-1, 1, 12, dtype=np.float32)
                                        .reshape(4, 3)), name="w")
        self.count = ms.Parameter(ms.Tensor(np.zeros((), np.float32)), name="count",
                                  requires_grad=False)

    def construct(self, x):
        self.count._assign(call("add", self.count._data,
                                call("full", (), 1.0, ms.float32)))
        return ops.tanh(ops.matmul(x, self.w)), ops.sum(x)


def test_graph_mode_on_cpu_runs_eagerly_with_the_same_results():
    x = rnd(2, 4).astype(np.float32)
    ms.set_context(backend="torch", mode=ms.PYNATIVE_MODE)
    ref_net = _Affine()
    ref = [to_numpy(ref_net(ms.Tensor(x))) for _ in range(2)]
    ms.set_context(mode=ms.GRAPH_MODE)
    net = _Affine()
    b = ms.context.current_backend()
    fn = lambda *a: a  # noqa: E731
    assert b.compile(fn) is fn  # policy "auto" on CPU: eager
    got = [to_numpy(net(ms.Tensor(x))) for _ in range(2)]
    assert_close(got, ref)
    assert net.count.asnumpy() == 2.0


def test_compile_through_torch_compile_and_fallback(monkeypatch):
    ms.set_context(backend="torch")
    b = ms.context.current_backend()
    monkeypatch.setattr(b, "_compile_policy", "always")
    graphs = []

    def counting_compiler(gm, example_inputs):  # dynamo only, no codegen: quick on CPU
        graphs.append(gm)
        return gm.forward
    monkeypatch.setattr(b, "_compile_backend", counting_compiler)

    def step(values, raw):
        return [torch.tanh(raw[0] @ values[0])], [values[0] * 2]

    compiled = b.compile(step, donate_argnums=(0,))
    assert compiled is not step
    w, x = torch.randn(3, 2), torch.randn(4, 3)
    for _ in range(3):
        (out,), (new_w,) = compiled([w], [x])
    torch.testing.assert_close(out, torch.tanh(x @ w))
    torch.testing.assert_close(new_w, w * 2)
    assert len(graphs) == 1  # traced once, then the compiled program runs

    def broken(values, raw):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):  # the program's own error surfaces
        b.compile(broken)([w], [x])

    def failing_compiler(gm, example_inputs):
        raise RuntimeError("codegen failed")
    monkeypatch.setattr(b, "_compile_backend", failing_compiler)
    fn = b.compile(step)
    with pytest.warns(RuntimeWarning, match="torch.compile failed"):
        (out,), _ = fn([w], [x])
    torch.testing.assert_close(out, torch.tanh(x @ w))
    monkeypatch.setattr(b, "_compile_backend", "no_such_compiler_backend")
    with pytest.warns(RuntimeWarning, match="torch.compile failed"):
        fn = b.compile(step)
    assert fn is step


def test_graph_mode_train_step_is_one_torch_compile_graph(monkeypatch):
    """With compilation forced, a whole TrainOneStepCell step (forward, torch.func gradients,
    optimizer) becomes one dynamo graph, traced once, with PYNATIVE's losses."""
    from mscore import nn
    from mscore.compile import graph

    def losses(mode):
        ms.set_context(backend="torch", mode=mode)
        ms.set_seed(0)
        net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
        step.set_train()
        rng = np.random.default_rng(0)
        x = ms.Tensor(rng.standard_normal((5, 6)).astype(np.float32))
        y = ms.Tensor(np.array([0, 2, 1, 1, 0]))
        return [float(step(x, y).asnumpy()) for _ in range(4)]

    ref = losses(ms.PYNATIVE_MODE)
    b = ms.context.current_backend()
    graphs = []

    def counting_compiler(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    monkeypatch.setattr(b, "_compile_policy", "always")
    monkeypatch.setattr(b, "_compile_backend", counting_compiler)
    before = graph.trace_count
    got = losses(ms.GRAPH_MODE)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert len(graphs) == 1            # no graph break, no recompilation
    assert graph.trace_count - before == 1
    assert ref[-1] < ref[0]


def test_compile_policy_env_is_validated(monkeypatch):
    from mscore_torch.backend import TorchBackend
    monkeypatch.setenv("MSCORE_TORCH_COMPILE", "sometimes")
    with pytest.raises(ValueError, match="MSCORE_TORCH_COMPILE"):
        TorchBackend()


@pytest.mark.skipif(os.environ.get("MSCORE_SLOW_TESTS") != "1",
                    reason="the benchmark scripts: set MSCORE_SLOW_TESTS=1")
def test_bench_scripts_run_quickly():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for script, args in (("torch_vs_native.py", ["--steps", "2", "--repeats", "1",
                                                 "--batch", "8", "--skip-amp"]),
                         ("dispatch_overhead.py", ["--number", "20", "--repeats", "1"])):
        path = os.path.join(root, "bench", script)
        if not os.path.exists(path):
            pytest.skip(f"{script} missing")
        out = subprocess.run([sys.executable, path] + args, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "ratio" in out.stdout


def test_compile_policy_auto_compiles_on_cuda_only(monkeypatch):
    """``auto`` keeps GRAPH_MODE eager on CPU and compiles on CUDA, with CUDA graphs unless
    MSCORE_TORCH_CUDA_GRAPHS=0 (the device is only pretended here: nothing runs)."""
    from mscore_torch.backend import TorchBackend
    b = TorchBackend()
    assert b._compile_policy == "auto" and not b._compiles()
    assert "CUDA" in b.graph_mode_eager_reason()
    monkeypatch.setattr(b, "_device", torch.device("cuda", 0))
    assert b._compiles() and b.graph_mode_eager_reason() is None
    assert b._compile_mode() == "reduce-overhead"
    monkeypatch.setenv("MSCORE_TORCH_CUDA_GRAPHS", "0")
    plain = TorchBackend()
    monkeypatch.setattr(plain, "_device", torch.device("cuda", 0))
    assert plain._compiles() and plain._compile_mode() is None
    monkeypatch.setenv("MSCORE_TORCH_COMPILE", "never")
    never = TorchBackend()
    monkeypatch.setattr(never, "_device", torch.device("cuda", 0))
    assert not never._compiles() and "never" in never.graph_mode_eager_reason()


def test_compiled_o2_step_with_dynamic_loss_scale_matches_pynative(monkeypatch):
    """A compiled amp O2 step with a dynamic loss scale skips the same overflowing steps and
    moves the scale as PYNATIVE does; a new batch shape compiles a new program and gives
    PYNATIVE's numbers too. The compiler is ``aot_eager`` (dynamo's graph through AOT
    autograd's functionalisation, as inductor sees it, run eagerly: quick on a CPU)."""
    from mscore import amp, nn
    from mscore.compile import graph

    def run(mode):
        ms.set_context(backend="torch", mode=mode)
        ms.set_seed(0)
        net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 3)])
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        manager = amp.DynamicLossScaleManager(2.0 ** 22, 2, 3)  # overflows first (float16)
        step = amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level="O2",
                                       loss_scale_manager=manager)
        step.set_train()
        rng = np.random.default_rng(0)
        out = []
        for batch in (5,) * 9 + (3,) * 2:
            x = ms.Tensor(rng.standard_normal((batch, 6)).astype(np.float32))
            y = ms.Tensor(rng.integers(0, 3, batch).astype(np.int32))
            loss, overflow, scale = step(x, y)
            out.append((float(loss.asnumpy()), bool(overflow.asnumpy()),
                        float(scale.asnumpy())))
        return out, net.trainable_params()[0].asnumpy()

    ref, ref_w = run(ms.PYNATIVE_MODE)
    b = ms.context.current_backend()
    graphs = []

    aot_eager = torch._dynamo.lookup_backend("aot_eager")

    def counting_compiler(gm, example_inputs, **kwargs):
        graphs.append(gm)
        return aot_eager(gm, example_inputs)
    monkeypatch.setattr(b, "_compile_policy", "always")
    monkeypatch.setattr(b, "_compile_backend", counting_compiler)
    before = graph.trace_count
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # no fallback to eager
            got, got_w = run(ms.GRAPH_MODE)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert [o for _, o, _ in ref][:2] == [True, True] and not ref[-1][1]
    assert [s for _, _, s in got] == [s for _, _, s in ref]
    assert [o for _, o, _ in got] == [o for _, o, _ in ref]
    np.testing.assert_allclose([v for v, _, _ in got], [v for v, _, _ in ref], rtol=1e-3)
    np.testing.assert_allclose(got_w, ref_w, rtol=1e-3, atol=1e-5)
    assert graph.trace_count - before == 2     # one program per batch shape, no retrace
    assert len(graphs) == 2


def test_cuda_compile_hands_inductor_its_cuda_graph_settings(monkeypatch):
    """On CUDA the program goes to inductor with reduce-overhead's settings (CUDA graphs) and
    eager's low-precision rounding as config patches (inductor takes no ``mode`` argument),
    says so once, and copies the program's outputs out of the graph pool (the device is
    pretended and inductor replaced by a recorder: nothing is compiled here)."""
    from mscore_torch.backend import TorchBackend
    b = TorchBackend()
    monkeypatch.setattr(b, "_device", torch.device("cuda", 0))
    b.device = "GPU:0"
    seen = []

    def recorder(gm, example_inputs, **kwargs):
        seen.append(kwargs)
        return gm.forward
    monkeypatch.setattr(torch._dynamo, "lookup_backend", lambda name: recorder)

    def step(values, raw):
        return [values[0] * 2], [torch.tanh(raw[0])]

    with pytest.warns(RuntimeWarning, match="CUDA graphs"):
        compiled = b.compile(step)
    assert compiled.compile_mode == "reduce-overhead"
    w, x = torch.randn(3), torch.randn(4)
    (new_w,), (out,) = compiled([w], [x])
    torch.testing.assert_close(new_w, w * 2)
    torch.testing.assert_close(out, torch.tanh(x))
    assert seen == [{"config_patches": {"triton.cudagraphs": True,
                                        "emulate_precision_casts": True}}]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # said once per backend
        b.compile(step)
