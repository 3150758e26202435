"""Recurrent layers per backend: one PYNATIVE training step of a 2-layer bidirectional
``nn.LSTM`` (the sentiment tutorial's shape, smaller by default), mscore with the backend's
fused ``rnn_sequence`` (torch's own LSTM kernels; one compiled ``lax.scan`` on jax) against
the same step with the fused op unbound (the core's reference, op by op: what every step
cost before) and, on torch, native ``torch.nn.LSTM``, in one process.

Timing: ``--repeats`` samples of one step each, the variants in turn (a slow phase of a shared
machine hits all alike); the median is printed with the ratio to the fused variant. Run with
one BLAS/OpenMP thread; ``--clock cpu`` (the default) is this process's CPU time.

    OMP_NUM_THREADS=1 python bench/rnn_sequence.py --backend jax [--steps 100] [--clock cpu]
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import numpy as np


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="jax", help="numpy, torch or jax")
    p.add_argument("--steps", type=int, default=100, help="time steps of the sequence")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5, help="samples per variant")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="cpu: this process's CPU time; wall: perf_counter")
    return p.parse_args(argv)


@contextlib.contextmanager
def _unbound(backend):
    """The backend without its fused ``rnn_sequence`` (the core's reference runs)."""
    from mscore.conformance.harness import without_fused
    with without_fused(backend, "rnn_sequence"):
        yield


def _mscore_step(args):
    import mscore as ms
    from mscore import nn, ops
    ms.set_seed(0)
    net = nn.LSTM(args.embed, args.hidden, num_layers=2, bidirectional=True)
    head = nn.Dense(2 * args.hidden, 2)
    params = net.trainable_params() + head.trainable_params()
    opt = nn.Adam(params, 1e-3)
    x = ms.Tensor(np.random.RandomState(0).standard_normal(
        (args.steps, args.batch, args.embed)).astype(np.float32))
    y = ms.Tensor(np.arange(args.batch) % 2, ms.int32)

    def loss_fn(x, y):
        out, _ = net(x)
        return ops.cross_entropy(head(out[-1]), y)
    grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)

    def step():
        loss, grads = grad_fn(x, y)
        opt(grads)
        return float(loss.asnumpy())
    return step


def _torch_step(args):
    import torch
    torch.manual_seed(0)
    net = torch.nn.LSTM(args.embed, args.hidden, num_layers=2, bidirectional=True)
    head = torch.nn.Linear(2 * args.hidden, 2)
    opt = torch.optim.Adam(list(net.parameters()) + list(head.parameters()), 1e-3)
    x = torch.from_numpy(np.random.RandomState(0).standard_normal(
        (args.steps, args.batch, args.embed)).astype(np.float32))
    y = torch.arange(args.batch) % 2

    def step():
        opt.zero_grad()
        out, _ = net(x)
        loss = torch.nn.functional.cross_entropy(head(out[-1]), y)
        loss.backward()
        opt.step()
        return float(loss)
    return step


def main(argv=None):
    args = _parse(argv)
    import mscore as ms
    from mscore import context
    ms.set_context(backend=args.backend, mode=ms.PYNATIVE_MODE)
    backend = context.current_backend()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    fused = _mscore_step(args)
    variants = {"composite": fused}
    if getattr(backend, "rnn_sequence", None) is not None:
        variants = {"fused": fused, "composite": fused}
    if args.backend == "torch":
        variants["native"] = _torch_step(args)
    for name, step in variants.items():        # warm-up: compilation, first-call costs
        with _unbound(backend) if name == "composite" else contextlib.nullcontext():
            step()
    times = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, step in variants.items():
            with _unbound(backend) if name == "composite" else contextlib.nullcontext():
                start = clock()
                step()
                times[name].append(clock() - start)
    base = statistics.median(times[next(iter(variants))])
    print(f"{args.backend}: LSTM 2 layers bidirectional, T={args.steps} N={args.batch} "
          f"H={args.hidden}, one training step ({args.clock} clock, median of "
          f"{args.repeats})")
    for name, samples in times.items():
        med = statistics.median(samples)
        print(f"  {name:10s} {med * 1e3:10.1f} ms   x{med / base:6.2f}")


if __name__ == "__main__":
    main()
