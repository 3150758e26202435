"""mscore[cupy] training step vs a hand-written CuPy step of the same MLP; prints the ratio.

MLP 784-512-512-10 (ReLU), batch 64, float32, plain SGD, softmax cross-entropy. The mscore
side is ``nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(...))`` on backend ``cupy``
(reference autodiff, PYNATIVE); the native side is the same forward/backward written with CuPy
arrays by hand. Both start from the same weights and see the same batches; the first losses
are compared as a sanity check. Timing: warm-up, then interleaved rounds of ``--steps`` steps
each side (synchronised at both ends of a round), median per step over rounds.

Also times the overflow check over the MLP's gradients: the backend's fused one-kernel
``all_finite`` vs a loop of ``cupy.isfinite(g).all()`` with one host sync per array.

Without a CUDA device it prints why and exits with status 0.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

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
    """The hand-written CuPy step: forward, softmax cross-entropy, backward, SGD."""

    def __init__(self, cp, weights, lr):
        self.cp = cp
        self.params = [cp.asarray(w) for w in weights]
        self.lr = np.float32(lr)

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
        for p, g in zip(self.params, (g_w1, g_b1, g_w2, g_b2, g_w3, g_b3)):
            p -= self.lr * g
        return loss


def build_mscore(weights, lr):
    """The mscore train step on the active backend, from the same weights."""
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
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), lr))
    step.set_train()
    return step, net


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
    args = parser.parse_args(argv)
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

    native = NativeMLP(cp, weights, lr)
    x_cp, y_cp = cp.asarray(x_np), cp.asarray(y_np)
    step, net = build_mscore(weights, lr)
    x_ms, y_ms = ms.Tensor(x_np), ms.Tensor(y_np)

    first_native = [float(native.step(x_cp, y_cp)) for _ in range(3)]
    first_mscore = [float(step(x_ms, y_ms).asnumpy()) for _ in range(3)]
    agree = np.allclose(first_native, first_mscore, rtol=1e-4)
    print(f"device {cp.cuda.runtime.getDeviceProperties(args.device_id)['name'].decode()}, "
          f"cupy {cp.__version__}, backend {backend}, batch {args.batch}")
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
