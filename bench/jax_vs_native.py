"""mscore[jax] GRAPH_MODE train step vs a hand-written ``jax.jit`` + ``optax`` step.

Both run in this process on the same device, from the same initial weights and on the same
batches: the mscore side is ``nn.TrainOneStepCell(nn.WithLossCell(net, CrossEntropyLoss),
Momentum)`` called in GRAPH_MODE (one ``jax.jit`` of forward, loss, backward, optimizer
update and BatchNorm buffer updates, parameters donated); the native side is the same model
written with ``jax.numpy``/``lax``, ``jax.value_and_grad`` and ``optax.sgd(lr, momentum)``
under ``jax.jit`` with donated parameters and optimizer state.

The script first checks that both sides compute the same losses, then warms both up, then
times interleaved blocks of steps (the order alternates every round) and reports the median
time per step, the ratio mscore/native, the absolute difference per step, and how many times
mscore traced the step (``mscore.compile.graph.trace_count``: all during warm-up, none while
timing). Absolute times are only meaningful on an otherwise idle machine (or a GPU).

    python bench/jax_vs_native.py                  # all models, CPU
    python bench/jax_vs_native.py --threads 1 --clock cpu   # one XLA thread, CPU time
    python bench/jax_vs_native.py --model cnn --device GPU --rounds 15
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial

import numpy as np

MODELS = ("tiny", "mlp", "cnn")
LR, MOMENTUM = 0.01, 0.9


def parse_args(argv=None):
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=MODELS + ("all",), default="all")
    p.add_argument("--device", choices=("CPU", "GPU"), default="CPU")
    p.add_argument("--rounds", type=int, default=9, help="interleaved timing rounds")
    p.add_argument("--block", type=float, default=0.25,
                   help="target seconds per timed block (sets the steps per block)")
    p.add_argument("--precision", choices=("highest", "default"), default="highest",
                   help="matmul/conv precision of both sides (mscore's default is highest)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall: perf_counter; cpu: this process's CPU time (steadier on a "
                        "shared machine; CPU only)")
    p.add_argument("--threads", type=int, default=0,
                   help="XLA:CPU intra-op threads (0: XLA's default; set before jax loads)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds: expected a positive int")
    if not args.block > 0:
        p.error("--block: expected a positive number of seconds")
    return args


# -- the models, written twice -----------------------------------------------------------------
def mscore_model(kind):
    """The mscore network of ``kind`` and the shapes of one batch."""
    from mscore import nn
    if kind == "tiny":
        return nn.SequentialCell(nn.Dense(32, 64), nn.ReLU(), nn.Dense(64, 10)), (16, 32)
    if kind == "mlp":
        net = nn.SequentialCell(nn.Dense(784, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                                nn.Dense(512, 10))
        return net, (128, 784)

    class CNN(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same", has_bias=True)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same", has_bias=True)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(32 * 7 * 7, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.bn1(self.conv1(x))))
            x = self.pool(self.relu(self.conv2(x)))
            return self.fc(self.flatten(x))

    return CNN(), (32, 1, 28, 28)


def native_apply(kind, precision):
    """``apply(params, state, x, train) -> (logits, new_state)`` for ``kind`` in plain JAX."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def dense(p, x):
        return jnp.matmul(x, p["weight"].T, precision=precision) + p["bias"]

    def conv_same(p, x):
        spec = lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
        y = lax.conv_general_dilated(x, p["weight"], (1, 1), [(1, 1), (1, 1)],
                                     dimension_numbers=spec, precision=precision)
        return y + p["bias"].reshape(1, -1, 1, 1)

    def max_pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def batch_norm(p, s, x):
        mean = jnp.mean(x, axis=(0, 2, 3))
        var = jnp.mean((x - mean.reshape(1, -1, 1, 1)) ** 2, axis=(0, 2, 3))
        n = x.shape[0] * x.shape[2] * x.shape[3]
        inv = p["gamma"] / jnp.sqrt(var + 1e-5)
        y = (x - mean.reshape(1, -1, 1, 1)) * inv.reshape(1, -1, 1, 1) + \
            p["beta"].reshape(1, -1, 1, 1)
        mean, var = lax.stop_gradient(mean), lax.stop_gradient(var)
        new = {"moving_mean": 0.9 * s["moving_mean"] + 0.1 * mean,
               "moving_variance": 0.9 * s["moving_variance"] + 0.1 * var * n / (n - 1)}
        return y, new

    if kind in ("tiny", "mlp"):
        def apply(params, state, x):
            layers = params["layers"]
            for i, p in enumerate(layers):
                x = dense(p, x)
                if i < len(layers) - 1:
                    x = jax.nn.relu(x)
            return x, state
        return apply

    def apply(params, state, x):
        x, bn = batch_norm(params["bn1"], state["bn1"], conv_same(params["conv1"], x))
        x = max_pool(jax.nn.relu(x))
        x = max_pool(jax.nn.relu(conv_same(params["conv2"], x)))
        x = dense(params["fc"], x.reshape(x.shape[0], -1))
        return x, {"bn1": bn}
    return apply


def native_params(kind, net):
    """The native params/state pytrees holding copies of the mscore network's weights."""
    import jax.numpy as jnp
    values = {name: jnp.asarray(p.asnumpy()) for name, p in net.parameters_and_names()}
    if kind in ("tiny", "mlp"):
        idx = sorted({int(n.split(".")[0]) for n in values})
        return {"layers": [{"weight": values[f"{i}.weight"], "bias": values[f"{i}.bias"]}
                           for i in idx]}, {}
    params = {"conv1": {"weight": values["conv1.weight"], "bias": values["conv1.bias"]},
              "bn1": {"gamma": values["bn1.gamma"], "beta": values["bn1.beta"]},
              "conv2": {"weight": values["conv2.weight"], "bias": values["conv2.bias"]},
              "fc": {"weight": values["fc.weight"], "bias": values["fc.bias"]}}
    state = {"bn1": {"moving_mean": values["bn1.moving_mean"],
                     "moving_variance": values["bn1.moving_variance"]}}
    return params, state


def native_step(kind, precision):
    """The hand-written jitted train step and its optax optimizer."""
    import jax
    import optax
    apply = native_apply(kind, precision)
    tx = optax.sgd(LR, momentum=MOMENTUM)

    def loss_fn(params, state, x, y):
        logits, new_state = apply(params, state, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), new_state

    @partial(jax.jit, donate_argnums=(0, 1, 2))
    def step(params, state, opt_state, x, y):
        (loss, new_state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, state,
                                                                            x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), new_state, opt_state, loss

    return step, tx


# -- measurement -------------------------------------------------------------------------------
def run_model(kind, args, out=sys.stdout):
    """Check, warm up and time one model; returns a dict of the measurements."""
    import jax

    import mscore as ms
    from mscore import nn
    from mscore.compile import graph

    ms.set_context(backend="jax", device_target=args.device, mode=ms.GRAPH_MODE)
    from mscore import dispatch
    backend = dispatch.backend()
    backend.precision = None if args.precision == "default" else args.precision
    precision = backend.precision
    ms.set_seed(0)
    net, xshape = mscore_model(kind)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                nn.Momentum(net.trainable_params(), LR, MOMENTUM))
    train.set_train()
    params, state = native_params(kind, net)
    step, tx = native_step(kind, precision)
    opt_state = tx.init(params)

    rng = np.random.default_rng(0)
    batches = [(rng.normal(size=xshape).astype(np.float32),
                rng.integers(0, 10, size=(xshape[0],)).astype(np.int32)) for _ in range(4)]
    ms_batches = [(ms.Tensor(x), ms.Tensor(y)) for x, y in batches]
    jx_batches = [(jax.device_put(x), jax.device_put(y)) for x, y in batches]

    # 1. Same losses from the same weights (also compiles both sides).
    traces_before = graph.trace_count
    ms_losses, nat_losses = [], []
    for i in range(3):
        ms_losses.append(float(train(*ms_batches[i % 4]).asnumpy()))
        params, state, opt_state, loss = step(params, state, opt_state, *jx_batches[i % 4])
        nat_losses.append(float(loss))
    max_rel = max(abs(a - b) / abs(b) for a, b in zip(ms_losses, nat_losses))
    # 2. Warm-up, then steps per block from a rough timing.
    state_box = {"params": params, "state": state, "opt": opt_state}

    def ms_block(n):
        loss = None
        for i in range(n):
            loss = train(*ms_batches[i % 4])
        loss.asnumpy()

    def native_block(n):
        p, s, o = state_box["params"], state_box["state"], state_box["opt"]
        loss = None
        for i in range(n):
            p, s, o, loss = step(p, s, o, *jx_batches[i % 4])
        np.asarray(loss)
        state_box.update(params=p, state=s, opt=o)

    for fn in (ms_block, native_block):
        fn(3)
    t0 = time.perf_counter()
    native_block(5)
    per_step = (time.perf_counter() - t0) / 5
    n = max(5, min(2000, int(args.block / max(per_step, 1e-6))))
    traces_warm = graph.trace_count - traces_before
    # 3. Interleaved timing.
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    ms_times, nat_times = [], []
    for r in range(args.rounds):
        order = ((ms_block, ms_times), (native_block, nat_times))
        for fn, sink in (order if r % 2 == 0 else order[::-1]):
            t0 = clock()
            fn(n)
            sink.append((clock() - t0) / n)
    traces_timed = graph.trace_count - traces_before - traces_warm
    ms_med, nat_med = statistics.median(ms_times), statistics.median(nat_times)
    result = {"model": kind, "steps_per_block": n, "rounds": args.rounds,
              "mscore_ms": ms_med * 1e3, "native_ms": nat_med * 1e3,
              "ratio": ms_med / nat_med, "overhead_us": (ms_med - nat_med) * 1e6,
              "ratio_min": min(ms_times) / min(nat_times),
              "traces_warmup": traces_warm, "traces_timed": traces_timed,
              "loss_max_rel_diff": max_rel, "programs": graph.cache_size(train)}
    print(f"{kind:5s} mscore {result['mscore_ms']:8.3f} ms/step  native "
          f"{result['native_ms']:8.3f} ms/step  ratio {result['ratio']:.3f} (best-of "
          f"{result['ratio_min']:.3f})  diff {result['overhead_us']:+7.1f} us/step  traces "
          f"{traces_warm} warm-up / {traces_timed} timed  losses agree to "
          f"{max_rel:.1e}", file=out)
    return result


def main(argv=None):
    """Run the comparison; returns the list of result dicts."""
    args = parse_args(argv)
    if args.threads:
        import os
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false "
                                   f"intra_op_parallelism_threads={args.threads}").strip()
    import jax

    import mscore as ms
    kinds = MODELS if args.model == "all" else (args.model,)
    print(f"mscore {ms.__version__} vs jax {jax.__version__} on {args.device} "
          f"({jax.devices()[0].device_kind}); {args.rounds} interleaved rounds, median "
          f"per step; precision={args.precision}")
    results = [run_model(k, args) for k in kinds]
    from mscore.compile import graph
    print(f"mscore.compile.graph.trace_count = {graph.trace_count} (one trace per model)")
    return results


if __name__ == "__main__":
    main()
