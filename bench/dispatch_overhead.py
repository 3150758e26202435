"""Per-op dispatch overhead of mscore vs calling the array library directly.

For each installed backend among numpy, torch and jax, small ops on tiny arrays (so the
kernel itself costs little) are timed through mscore's public API (``Tensor`` operators and
``mscore.ops``) and as the native call on the same native arrays. Printed per op: the median
time per call of each, the overhead (difference) in microseconds and the ratio.

Timing: ``--number`` calls per sample, ``--repeats`` samples taken alternately for mscore and
native (so load changes on a shared machine hit both), medians reported. jax dispatches
asynchronously; each sample ends with ``block_until_ready`` on its last result.

    python bench/dispatch_overhead.py [--number 2000] [--repeats 7] [--backends numpy,torch]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--number", type=int, default=2000, help="calls per timing sample")
    p.add_argument("--repeats", type=int, default=7, help="samples per op and side")
    p.add_argument("--backends", default="numpy,torch,jax",
                   help="comma-separated backends to measure (those installed)")
    p.add_argument("--size", type=int, default=8, help="arrays are size x size")
    args = p.parse_args(argv)
    if args.number < 1 or args.repeats < 1 or args.size < 1:
        p.error("--number, --repeats and --size must be positive")
    return args


def _native_ops(name, a, b, w):
    """``{op: zero-argument callable}`` of the native library on native arrays."""
    if name == "numpy":
        xp = np
        relu = lambda: np.where(a > 0, a, 0)  # noqa: E731
        block = None
    elif name == "torch":
        import torch as xp
        relu = lambda: xp.relu(a)  # noqa: E731
        block = None
    else:
        import jax
        import jax.numpy as xp
        relu = lambda: jax.nn.relu(a)  # noqa: E731
        block = jax.block_until_ready
    ops = {
        "add": lambda: a + b,
        "mul_scalar": lambda: a * 2.0,
        "matmul": lambda: xp.matmul(a, w),
        "exp": lambda: xp.exp(a),
        "sum_axis": lambda: a.sum(1) if name != "torch" else a.sum(1),
        "reshape": lambda: a.reshape(-1),
        "relu": relu,
    }
    return ops, block


def _mscore_ops(ms, a, b, w):
    ops = ms.ops
    return {
        "add": lambda: a + b,
        "mul_scalar": lambda: a * 2.0,
        "matmul": lambda: ops.matmul(a, w),
        "exp": lambda: ops.exp(a),
        "sum_axis": lambda: ops.sum(a, 1),
        "reshape": lambda: ops.reshape(a, (-1,)),
        "relu": lambda: ops.relu(a),
    }


def _sample(fn, number, block):
    t0 = time.perf_counter()
    for _ in range(number):
        out = fn()
    if block is not None:
        block(out)
    return (time.perf_counter() - t0) / number


def measure(name, args):
    """Rows ``(op, mscore_us, native_us)`` for backend ``name``."""
    import mscore as ms
    ms.set_context(backend=name)
    rng = np.random.default_rng(0)
    n = args.size
    a_np, b_np, w_np = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(3))
    a, b, w = ms.Tensor(a_np), ms.Tensor(b_np), ms.Tensor(w_np)
    mine = _mscore_ops(ms, a, b, w)
    native_block = None
    native, native_block = _native_ops(name, a._data, b._data, w._data)
    mscore_block = None
    if native_block is not None:
        def mscore_block(t):
            native_block(t._data)
    rows = []
    for op in mine:
        m_fn, n_fn = mine[op], native[op]
        for fn, blk in ((m_fn, mscore_block), (n_fn, native_block)):  # warm-up, compile
            _sample(fn, max(args.number // 10, 1), blk)
        ms_t, nat_t = [], []
        for _ in range(args.repeats):
            ms_t.append(_sample(m_fn, args.number, mscore_block))
            nat_t.append(_sample(n_fn, args.number, native_block))
        rows.append((op, statistics.median(ms_t) * 1e6, statistics.median(nat_t) * 1e6))
    ms.set_context(backend="numpy")
    return rows


def main(argv=None):
    args = _parse(argv)
    from mscore.plugin.registry import get_registry
    reg = get_registry()
    wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
    print(f"per-op dispatch overhead: {args.size}x{args.size} float32, {args.number} calls per "
          f"sample, median of {args.repeats} alternating samples (a shared machine is noisy)")
    status = 0
    for name in wanted:
        if name not in reg.names():
            print(f"[{name}] not installed: skipped")
            continue
        spec = reg.spec(name)
        if spec.probe is not None and not spec.probe()[0]:
            print(f"[{name}] unavailable: {spec.probe()[1]}")
            continue
        try:
            rows = measure(name, args)
        except Exception as exc:  # one backend's failure must not hide the others
            print(f"[{name}] failed: {type(exc).__name__}: {exc}")
            status = 1
            continue
        print(f"[{name}] {'op':<11} {'mscore us':>10} {'native us':>10} {'overhead us':>12} "
              f"{'ratio':>7}")
        for op, m, nat in rows:
            print(f"[{name}] {op:<11} {m:>10.2f} {nat:>10.2f} {m - nat:>12.2f} {m / nat:>7.2f}")
        over = statistics.median([m - nat for _, m, nat in rows])
        ratio = statistics.median([m / nat for _, m, nat in rows])
        print(f"[{name}] median overhead {over:.2f} us/op, median ratio mscore/native "
              f"{ratio:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
