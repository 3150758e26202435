"""Integer floor division on the numpy backend: mscore's ``ops.floor_divide`` against numpy's
``np.floor_divide`` on the same arrays, in one process.

Variants: ``native`` (``np.floor_divide``; numpy's own ``x // 0 == 0``), ``mscore`` (the
public op as it runs: the backend's ``int_floor_divide`` when it binds one) and, when the
backend binds one, ``composite`` (the same op with it unbound: the core's composite from
``div``, ``mul``, ``sub``, comparisons and selects). Cases: int32 and int64, 1 000 and
1 000 000 elements, divisors of both signs, 2 to 999 in magnitude ("plain"), or with about 1%
zeros and 1% -1 among them ("edges": there the contract's ``x // 0``, MAX, MIN or 0 by the sign
of ``x``, and the wrapping ``x // -1`` are patched in).

Timing: ``--repeats`` samples of ``--number`` calls each, taken for the variants in turn (so a
slow phase of a shared machine hits all alike); the median time per call is printed with the
ratio to native, and the backend calls one mscore call makes (``bench/count_calls.py``).
Run with one BLAS/OpenMP thread; ``--clock cpu`` (the default) is this process's CPU time.

    OMP_NUM_THREADS=1 python bench/int_floor_divide.py [--clock cpu|wall] [--repeats 7]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from count_calls import counting

SIZES = (1_000, 1_000_000)
DTYPES = ("int32", "int64")


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7, help="samples per variant")
    p.add_argument("--number", type=int, default=0,
                   help="calls per sample (default: about 20 ms of native work)")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="cpu: this process's CPU time (steady with one thread); wall: "
                        "perf_counter")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.number < 0:
        p.error("--repeats must be positive and --number non-negative")
    return args


def _inputs(dtype, size, edges, rng):
    a = rng.integers(-10**6, 10**6, size).astype(dtype)
    b = rng.integers(2, 1000, size).astype(dtype) * rng.choice(np.array([-1, 1], dtype), size)
    if edges:
        u = rng.random(size)
        b[u < 0.01] = 0
        b[(u >= 0.01) & (u < 0.02)] = -1
    return a, b


def _variants(a, b):
    import mscore as ms
    from mscore import context, ops
    backend = context.current_backend()
    ta, tb = ms.Tensor(a), ms.Tensor(b)

    def native():
        with np.errstate(divide="ignore", over="ignore"):
            return np.floor_divide(a, b)

    def mscore():
        return ops.floor_divide(ta, tb)

    fns = {"native": native, "mscore": mscore}
    if getattr(backend, "int_floor_divide", None) is not None:
        def composite():
            saved = backend.__dict__.get("int_floor_divide")
            backend.int_floor_divide = None
            try:
                return ops.floor_divide(ta, tb)
            finally:
                if saved is None:
                    del backend.int_floor_divide
                else:
                    backend.int_floor_divide = saved
        fns["composite"] = composite
    return fns


def _time(fns, number, repeats, clock):
    samples = {n: [] for n in fns}
    names = list(fns)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = fns[name]
            t0 = clock()
            for _ in range(number):
                fn()
            samples[name].append((clock() - t0) / number)
    return {n: statistics.median(v) for n, v in samples.items()}


def main(argv=None):
    args = _parse(argv)
    import mscore as ms
    ms.set_context(backend="numpy")
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, clock {args.clock}; median time per call, ratio to native")
    for dtype in DTYPES:
        for size in SIZES:
            for edges in (False, True):
                a, b = _inputs(dtype, size, edges, rng)
                fns = _variants(a, b)
                want = fns["native"]()
                got = fns["mscore"]().asnumpy()
                nonzero = b != 0
                assert np.array_equal(got[nonzero], want[nonzero]), "results differ"
                with counting() as counter:
                    fns["mscore"]()
                calls = sum(counter.counts.values())
                number = args.number or max(1, int(0.02 / max(size * 6e-9, 2e-6)))
                medians = _time(fns, number, args.repeats, clock)
                line = (f"{dtype} n={size:<8d} {'edges' if edges else 'plain':5s} "
                        f"native {medians['native'] * 1e6:9.1f} us")
                for name in ("mscore", "composite"):
                    if name in medians:
                        line += (f" | {name} {medians[name] * 1e6:9.1f} us ratio "
                                 f"{medians[name] / medians['native']:5.2f}")
                print(line + f" | {calls} backend calls")


if __name__ == "__main__":
    main()
