"""mscore[cupy] training step vs a hand-written CuPy step of the same MLP; prints the ratio.

MLP 784-512-512-10 (ReLU), batch 64, float32, plain SGD (``--optimizer momentum``: momentum
0.9), softmax cross-entropy. The mscore side is ``nn.TrainOneStepCell(nn.WithLossCell(net,
loss), nn.SGD(...))`` on backend ``cupy`` (reference autodiff, PYNATIVE); the native side is
the same forward/backward written with CuPy arrays by hand. Both start from the same weights
and see the same batches; the first losses are compared as a sanity check. Timing: warm-up,
then interleaved rounds of ``--steps`` steps each side (synchronised at both ends of a round),
median per step over rounds.

Also times the overflow check over the MLP's gradients: the backend's fused one-kernel
``all_finite`` vs a loop of ``cupy.isfinite(g).all()`` with one host sync per array.

Without a CUDA device it prints why and exits with status 0.

``--count`` counts instead of timing, and needs no GPU: the calls one steady-state step makes
into the mscore backend (bench/count_calls.py's counting wrapper: array ops, views, host
syncs and the kernels that makes on CuPy), and the array-module work of the hand-written
step (each ufunc call, operators, in-place ones and reductions included, each array function,
advanced-index read or write and creation function: about one CuPy kernel each; views are
free), with the ratio of the two kernel counts. It runs on backend ``cupy`` where CuPy has a
device, otherwise on the stand-in ``cupy_sim`` (the CuPy backend class over numpy, plugin
``mscore_cupy.standin``); the hand-written step is counted over numpy arrays either way (the
same code makes the same calls on CuPy arrays).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

SIZES = (784, 512, 512, 10)


def _probe():
    try:
        from mscore_cupy.plugin import probe
    except ImportError:
        return False, "mscore-cupy is not installed (pip install -e plugins/cupy_backend)"
    ok, reason, _ = probe()
    return ok, reason


def make_weights(seed=0):
    """Float32 numpy weights (out, in) and zero biases, shared by both sides."""
    rng = np.random.default_rng(seed)
    out = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        out.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        out.append(np.zeros(fan_out, np.float32))
    return out


class NativeMLP:
    """The hand-written CuPy step: forward, softmax cross-entropy, backward, SGD (with
    ``momentum``: ``v = momentum * v + g; p -= lr * v``)."""

    def __init__(self, cp, weights, lr, momentum=None):
        self.cp = cp
        self.params = [cp.asarray(w) for w in weights]
        self.lr = np.float32(lr)
        self.momentum = None if momentum is None else np.float32(momentum)
        self.moments = [cp.zeros_like(p) for p in self.params] if momentum else None

    def step(self, x, y):
        cp = self.cp
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = x @ w1.T + b1
        a1 = cp.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = cp.maximum(h2, 0)
        logits = a2 @ w3.T + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = cp.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        n = x.shape[0]
        rows = cp.arange(n)
        loss = (cp.log(s[:, 0]) - shifted[rows, y]).mean()
        d = e / s
        d[rows, y] -= 1
        d /= n
        g_w3, g_b3 = d.T @ a2, d.sum(axis=0)
        d = (d @ w3) * (h2 > 0)
        g_w2, g_b2 = d.T @ a1, d.sum(axis=0)
        d = (d @ w2) * (h1 > 0)
        g_w1, g_b1 = d.T @ x, d.sum(axis=0)
        grads = (g_w1, g_b1, g_w2, g_b2, g_w3, g_b3)
        if self.momentum is None:
            for p, g in zip(self.params, grads):
                p -= self.lr * g
            return loss
        for p, v, g in zip(self.params, self.moments, grads):
            v *= self.momentum
            v += g
            p -= self.lr * v
        return loss


def build_mscore(weights, lr, momentum=None):
    """The mscore train step on the active backend, from the same weights (``nn.SGD``, or
    ``nn.Momentum`` with ``momentum``)."""
    import mscore as ms
    from mscore import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(SIZES[0], SIZES[1])
            self.fc2 = nn.Dense(SIZES[1], SIZES[2])
            self.fc3 = nn.Dense(SIZES[2], SIZES[3])
            self.relu = nn.ReLU()

        def construct(self, x):
            return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))

    net = Net()
    for p, w in zip(net.trainable_params(), weights):
        p.set_data(ms.Tensor(w))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.SGD(net.trainable_params(), lr) if momentum is None else \
        nn.Momentum(net.trainable_params(), lr, momentum)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    return step, net


# -- counting the hand-written step's array-module work ----------------------------------------
class _Counted(np.ndarray):
    """A numpy array that counts, in ``_Counted.counts`` by name, the work done on it: each
    ufunc call (operators, in-place ones and reductions included), array function and
    advanced-index read or write. Views (``.T``, basic slicing) are not counted."""

    counts = Counter()

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        _Counted.counts[ufunc.__name__ if method == "__call__" else
                        f"{ufunc.__name__}.{method}"] += 1
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*(_plain(a) for a in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _counted(result)

    def __array_function__(self, func, types, args, kwargs):
        _Counted.counts[func.__name__] += 1
        args = tuple(_plain(a) for a in args)
        return _counted(func(*args, **{k: _plain(v) for k, v in kwargs.items()}))

    def __getitem__(self, index):
        if _advanced(index):
            _Counted.counts["getitem"] += 1
        return super().__getitem__(index)

    def __setitem__(self, index, value):
        if _advanced(index):
            _Counted.counts["setitem"] += 1
        super().__setitem__(index, value)


def _plain(a):
    return a.view(np.ndarray) if isinstance(a, _Counted) else a


def _counted(a):
    if isinstance(a, tuple):
        return tuple(_counted(x) for x in a)
    return a.view(_Counted) if type(a) is np.ndarray else a


def _advanced(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, (np.ndarray, list)) for i in items)


class CountingArrayModule:
    """numpy as the hand-written step's ``cp``: its arrays are :class:`_Counted`, and a
    module function called on no counted array (``arange``, creation) counts itself."""

    def __init__(self):
        self.counts = _Counted.counts

    def __getattr__(self, name):
        value = getattr(np, name)
        if isinstance(value, np.ufunc) or not callable(value):
            return value   # ufuncs count themselves on counted arrays

        def call(*args, **kwargs):
            if not any(isinstance(a, _Counted) for a in args):
                self.counts[name] += 1
            return _counted(value(*args, **kwargs))
        return call


def _bench_module(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}",
                                                  Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _counting_backend():
    """``(backend name, how)``: ``cupy`` where it has a device, else the stand-in."""
    import mscore as ms
    ok, reason = _probe()
    if ok:
        return "cupy", "CuPy on a CUDA device"
    from mscore.plugin.registry import get_registry
    registry = get_registry()
    if "cupy_sim" not in registry.specs:
        module = importlib.import_module("mscore_cupy.standin")
        registry.register_plugin(module, "mscore_cupy.standin")
    ms.set_context(backend="cupy_sim")
    return "cupy_sim", f"the stand-in, CupyBackend over numpy: {reason.split(':')[0]}"


def count(batch=64, steps=3, momentum=None):
    """``{"mscore": (summary, Counter), "native": Counter, "losses": (mscore, native),
    "backend": name}`` of one steady-state train step of each side (see the module's
    docstring); the losses are those of the first three steps."""
    import mscore as ms
    name, how = _counting_backend()
    if name == "cupy":
        ms.set_context(backend="cupy", device_target="GPU")
    counter = _bench_module("count_calls")
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y_np = rng.integers(0, SIZES[-1], size=batch).astype(np.int32)
    weights = make_weights()
    cp = CountingArrayModule()
    native = NativeMLP(cp, weights, 0.01, momentum)
    x_n, y_n = cp.asarray(x_np), cp.asarray(y_np)
    step, _ = build_mscore(weights, 0.01, momentum)
    x_ms, y_ms = ms.Tensor(x_np), ms.Tensor(y_np)
    losses = ([float(step(x_ms, y_ms).asnumpy()) for _ in range(3)],
              [float(native.step(x_n, y_n)) for _ in range(3)])
    summary, counts = counter.count_step(step, (x_ms, y_ms), steps)
    runs = []
    for _ in range(steps):
        cp.counts.clear()
        native.step(x_n, y_n)
        runs.append(Counter(cp.counts))
    runs.sort(key=lambda c: sum(c.values()))
    return {"mscore": (summary, counts), "native": runs[len(runs) // 2], "losses": losses,
            "backend": name, "how": how}


def print_count(result, optimizer, batch):
    """Print :func:`count`'s result."""
    summary, counts = result["mscore"]
    native = result["native"]
    kernels = sum(native.values())
    ms_losses, native_losses = result["losses"]

    def top(c):
        return ", ".join(f"{k} {v}" for k, v in c.most_common(12) if not k.endswith("]"))
    print(f"calls per train step: MLP {'-'.join(map(str, SIZES))}, batch {batch}, float32, "
          f"{optimizer}, backend {result['backend']} ({result['how']})")
    print(f"first 3 losses  native {np.round(native_losses, 6).tolist()}  mscore "
          f"{np.round(ms_losses, 6).tolist()}  agree: "
          f"{np.allclose(native_losses, ms_losses, rtol=1e-4)}")
    print(f"mscore[{result['backend']}]  {summary['array_ops']} array ops ({summary['views']} "
          f"views, {summary['host_syncs']} host syncs), ~{summary['kernels']} kernels on CuPy | "
          f"{top(counts)}")
    print(f"hand-written  {kernels} array-module ops (~kernels on CuPy) | {top(native)}")
    print(f"kernels mscore/hand-written {summary['kernels'] / kernels:.2f}")


def _time(fn, steps, sync):
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    sync()
    return (time.perf_counter() - start) / steps


def main(argv=None):
    """Run the comparison; 0 on success or when there is no device to run on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--optimizer", choices=("sgd", "momentum"), default="sgd")
    parser.add_argument("--count", action="store_true",
                        help="count calls per step instead of timing (no GPU needed)")
    args = parser.parse_args(argv)
    momentum = 0.9 if args.optimizer == "momentum" else None
    if args.count:
        print_count(count(args.batch, momentum=momentum), args.optimizer, args.batch)
        return 0
    ok, reason = _probe()
    if not ok:
        print(f"cupy_vs_native: skipped, backend 'cupy' is unavailable here: {reason}")
        return 0

    import cupy as cp

    import mscore as ms
    ms.set_context(backend="cupy", device_target="GPU", device_id=args.device_id)
    backend = ms.get_context("backend")
    lr = 0.01
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((args.batch, SIZES[0])).astype(np.float32)
    y_np = rng.integers(0, SIZES[-1], size=args.batch).astype(np.int32)
    weights = make_weights()

    native = NativeMLP(cp, weights, lr, momentum)
    x_cp, y_cp = cp.asarray(x_np), cp.asarray(y_np)
    step, net = build_mscore(weights, lr, momentum)
    x_ms, y_ms = ms.Tensor(x_np), ms.Tensor(y_np)

    first_native = [float(native.step(x_cp, y_cp)) for _ in range(3)]
    first_mscore = [float(step(x_ms, y_ms).asnumpy()) for _ in range(3)]
    agree = np.allclose(first_native, first_mscore, rtol=1e-4)
    print(f"device {cp.cuda.runtime.getDeviceProperties(args.device_id)['name'].decode()}, "
          f"cupy {cp.__version__}, backend {backend}, batch {args.batch}, {args.optimizer}")
    print(f"first 3 losses  native {np.round(first_native, 6).tolist()}  "
          f"mscore {np.round(first_mscore, 6).tolist()}  agree: {agree}")

    sync = cp.cuda.Device().synchronize
    for _ in range(3):  # warm-up: kernels compiled, memory pool filled
        native.step(x_cp, y_cp)
        step(x_ms, y_ms)
    t_native, t_mscore = [], []
    for _ in range(args.rounds):
        t_native.append(_time(lambda: native.step(x_cp, y_cp), args.steps, sync))
        t_mscore.append(_time(lambda: step(x_ms, y_ms), args.steps, sync))
    med_n, med_m = statistics.median(t_native), statistics.median(t_mscore)
    print(f"train step  native {med_n * 1e3:.3f} ms   mscore[cupy] {med_m * 1e3:.3f} ms   "
          f"ratio mscore/native {med_m / med_n:.2f}   (median of {args.rounds} rounds x "
          f"{args.steps} steps)")

    # Overflow check over the gradients of this MLP: fused kernel vs one sync per array.
    grads = [cp.asarray(w) for w in weights]
    gb = ms.context.current_backend()
    gb.all_finite(grads)

    def looped():
        return all(bool(cp.isfinite(g).all()) for g in grads)

    looped()
    t_fused = statistics.median(_time(lambda: gb.all_finite(grads), 50, sync)
                                for _ in range(args.rounds))
    t_loop = statistics.median(_time(looped, 50, sync) for _ in range(args.rounds))
    big = [cp.ones(n, cp.float32) for n in (25_000_000, 10_000_000, 1000, 1)]
    t_big_fused = statistics.median(_time(lambda: gb.all_finite(big), 10, sync)
                                    for _ in range(3))
    t_big_loop = statistics.median(_time(
        lambda: all(bool(cp.isfinite(g).all()) for g in big), 10, sync) for _ in range(3))
    print(f"all_finite over the {len(grads)} MLP gradients  fused {t_fused * 1e6:.1f} us   "
          f"per-array loop {t_loop * 1e6:.1f} us   ratio {t_fused / t_loop:.2f}")
    print(f"all_finite over 35M float32 in 4 arrays        fused {t_big_fused * 1e6:.1f} us   "
          f"per-array loop {t_big_loop * 1e6:.1f} us   ratio {t_big_fused / t_big_loop:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
