"""Backend calls per train step: a counting wrapper around the active backend.

:class:`CountingBackend` stands in for the active backend (``mscore._state.process.backend``) and
counts every call the core makes through it, by op name. The array-module backends (numpy,
and CuPy, which shares their code) launch about one kernel per counted array op, so on them
the count is the kernel count the issue's "110 kernels per step against 35" refers to; on
torch and jax it counts the core's calls into the plugin (autograd's and XLA's own kernels
are not seen).

    python bench/count_calls.py [--backend numpy|torch|jax|cupy] [--model mlp|cnn|all]
                                [--amp O0,O2] [--optimizer momentum|sgd] [--steps 3]
                                [--by-op] [--plugin mscore_cupy.standin]

prints, per model and amp level, the calls of one steady-state train step (the median over
``--steps`` steps after a warm-up step): all calls, array ops (calls that produce or read
array data: everything but ``shape``/``dtype``/``native_dtype``), views (reshape, transpose,
broadcast_to, stop_gradient), host synchronisations (``to_numpy``, ``all_finite``,
``synchronize``), the kernel launches that makes on CuPy (an estimate: the array ops that
are neither views nor syncs, a list op counted once per array) and the biggest op counts.

Library use::

    with counting() as counter:
        step(x, y)
    counter.counts   # Counter({'matmul': 9, ...})
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter

import numpy as np

METADATA = frozenset({"shape", "dtype", "native_dtype"})
VIEWS = frozenset({"reshape", "transpose", "broadcast_to", "stop_gradient"})
HOST_SYNCS = frozenset({"to_numpy", "all_finite", "synchronize"})
# Ops over lists of arrays: one call, one kernel per array on CuPy (a multi-tensor launch on
# torch's CUDA).
LIST_OPS = frozenset({"foreach_div", "momentum_update", "adam_update", "unscale_check"})
# Ops that launch more than one kernel on CuPy: the launches of one call.
MULTI_KERNEL = {"class_label_check": 2}   # the elementwise check and the any() reduction


class CountingBackend:
    """Delegates everything to ``inner`` and counts the calls of its callables by name."""

    def __init__(self, inner):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "counts", Counter())
        object.__setattr__(self, "_wrapped", {})

    def __getattr__(self, name):
        value = getattr(self._inner, name)
        if name.startswith("_") or not callable(value):
            return value
        wrapped = self._wrapped.get(name)
        if wrapped is None or wrapped[0] is not value:
            counts = self.counts

            if name in LIST_OPS:
                def counted(*args, **kwargs):
                    counts[name] += 1
                    counts[name + "[arrays]"] += len(args[0])
                    return value(*args, **kwargs)
            elif name == "float_caster":   # what it gives are casts by a shorter path
                def counted(*args, **kwargs):
                    caster = value(*args, **kwargs)

                    def counted_cast(a):
                        counts["cast"] += 1
                        return caster(a)
                    return counted_cast
            else:
                def counted(*args, **kwargs):
                    counts[name] += 1
                    return value(*args, **kwargs)
            wrapped = self._wrapped[name] = (value, counted)
        return wrapped[1]

    def __setattr__(self, name, value):
        setattr(self._inner, name, value)

    def reset(self):
        """Forget the counts so far."""
        self.counts.clear()


def summarize(counts):
    """``{'all', 'array_ops', 'views', 'host_syncs', 'kernels'}`` of a Counter of op names:
    ``kernels`` estimates the launches on CuPy (array ops that are not views, list ops
    counted once per array, the ops of ``MULTI_KERNEL`` by their launches)."""
    calls = {k: v for k, v in counts.items() if not k.endswith("[arrays]")}
    total = sum(calls.values())
    meta = sum(v for k, v in calls.items() if k in METADATA)
    views = sum(v for k, v in calls.items() if k in VIEWS)
    syncs = sum(v for k, v in calls.items() if k in HOST_SYNCS)
    lists = sum(v for k, v in calls.items() if k in LIST_OPS)
    items = sum(counts[k + "[arrays]"] for k in LIST_OPS)
    extra = sum(calls.get(k, 0) * (n - 1) for k, n in MULTI_KERNEL.items())
    return {"all": total, "array_ops": total - meta, "views": views, "host_syncs": syncs,
            "kernels": total - meta - views - syncs - lists + items + extra}


@contextlib.contextmanager
def counting():
    """Count the calls into the active backend inside the block (yields the counter)."""
    from mscore import _state, context
    inner = context.current_backend()
    counter = CountingBackend(inner)
    _state.process.backend = counter
    try:
        yield counter
    finally:
        _state.process.backend = inner


def mlp():
    """MLP 784-512-512-10 (ReLU) and the shape of one batch of 64."""
    from mscore import nn
    return nn.SequentialCell([nn.Dense(784, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                              nn.Dense(512, 10)]), (64, 784)


def cnn():
    """Conv-BN-ReLU-pool-dense on 28x28, batch 32."""
    from mscore import nn
    return nn.SequentialCell([nn.Conv2d(1, 16, 3, has_bias=True), nn.BatchNorm2d(16),
                              nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                              nn.Dense(16 * 14 * 14, 10)]), (32, 1, 28, 28)


MODELS = {"mlp": mlp, "cnn": cnn}


def train_step(net, level, lr=0.01, optimizer="momentum"):
    """``nn.TrainOneStepCell`` (O0) or ``amp.build_train_network`` at ``level`` with a
    dynamic loss scale, cross entropy, momentum SGD (``optimizer="sgd"``: plain SGD, as
    bench/cupy_vs_native.py's hand-written step)."""
    from mscore import amp, nn
    opt = nn.Momentum(net.trainable_params(), lr, 0.9) if optimizer == "momentum" else \
        nn.SGD(net.trainable_params(), lr)
    if level == "O0":
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    else:
        step = amp.build_train_network(net, opt, nn.CrossEntropyLoss(), level=level,
                                       loss_scale_manager=amp.DynamicLossScaleManager(2.0 ** 16))
    step.set_train()
    return step


def count_step(step, inputs, steps=3):
    """``(median summary, Counter of the median step)`` of ``steps`` calls after one
    warm-up call."""
    step(*inputs)
    runs = []
    for _ in range(steps):
        with counting() as counter:
            step(*inputs)
        runs.append(Counter(counter.counts))
    totals = [sum(c.values()) for c in runs]
    mid = runs[totals.index(sorted(totals)[len(totals) // 2])]
    return summarize(mid), mid


def main(argv=None):
    """Print the per-step call counts of the chosen models and amp levels."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="numpy")
    p.add_argument("--model", choices=tuple(MODELS) + ("all",), default="all")
    p.add_argument("--amp", default="O0,O2", help="comma-separated amp levels")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--optimizer", choices=("momentum", "sgd"), default="momentum")
    p.add_argument("--by-op", action="store_true", help="print every op's count")
    p.add_argument("--plugin", action="append", default=[],
                   help="extra plugin module to register (e.g. mscore_cupy.standin)")
    args = p.parse_args(argv)
    import mscore as ms
    if args.plugin:
        import importlib

        from mscore.plugin.registry import get_registry
        for mod in args.plugin:
            get_registry().register_plugin(importlib.import_module(mod), mod)
    from mscore.plugin.registry import BackendUnavailableError
    try:
        ms.set_context(backend=args.backend)
    except BackendUnavailableError as exc:
        print(f"count_calls: skipped, {exc}")
        return 0
    models = list(MODELS) if args.model == "all" else [args.model]
    for name in models:
        for level in args.amp.split(","):
            ms.set_seed(0)
            net, shape = MODELS[name]()
            rng = np.random.default_rng(0)
            x = ms.Tensor(rng.standard_normal(shape).astype(np.float32))
            y = ms.Tensor(rng.integers(0, 10, shape[0]).astype(np.int32))
            summary, counts = count_step(train_step(net, level, optimizer=args.optimizer),
                                         (x, y), args.steps)
            top = ", ".join(f"{k} {v}" for k, v in counts.most_common(None if args.by_op
                                                                      else 8)
                            if not k.endswith("[arrays]"))
            print(f"{args.backend} {name} {level}: {summary['all']} calls, "
                  f"{summary['array_ops']} array ops ({summary['views']} views), "
                  f"{summary['host_syncs']} host syncs, ~{summary['kernels']} kernels on "
                  f"CuPy | {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
