"""Host work per train step on the launch-bound proxies, counted instead of timed.

On a shared machine the time ratios of ``bench/gpt.py`` and ``bench/resnet.py`` at tiny
shapes move by ±10% from run to run; the work behind them does not. For mscore[torch]'s
PYNATIVE step and the native torch step of the same model (the benches' workloads, built the
same way), this prints per step: the Python-level calls (``cProfile``'s count: Python
functions and the builtins they call) and the ATen calls (``TorchDispatchMode``).

    python bench/host_calls.py [--model gpt|resnet|all] [--levels O0,O2,bf16] [--steps 10]

The decoder is ``bench/gpt.py --width 16 --seq 8 --batch 2 --vocab 32 --heads 2``, the
ResNet ``bench/resnet.py --width 2 --batch 2``.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from collections import Counter
from functools import partial
from types import SimpleNamespace

import _compare
import gpt
import numpy as np
import resnet


def _workload(model):
    rng = np.random.default_rng(0)
    if model == "gpt":
        cfg = SimpleNamespace(width=16, seq=8, batch=2, vocab=32, heads=2, layers=4)
        ids = rng.integers(0, cfg.vocab, (cfg.batch, cfg.seq + 1)).astype(np.int32)
        return gpt.GPTWorkload(cfg), ids[:, :-1].copy(), ids[:, 1:].reshape(-1).copy()
    x = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    return resnet.ResNetWorkload(2, 2), x, rng.integers(0, 10, 2).astype(np.int32)


def _native_step(torch, workload, level):
    """The benches' native step of a fresh network (``_compare.native_torch_step``)."""
    net = workload.torch_net(torch)
    net.train()
    return _compare.native_torch_step(torch, workload, net, "cpu", level, 0.01, 0.9)


def _counts(torch, fn, steps):
    """(Python calls per step, ATen calls per step) of ``fn()`` after a warm-up."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Aten(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls[func.overloadpacket.__name__] += 1
            return func(*args, **(kwargs or {}))

    for _ in range(3):
        fn()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(steps):
        fn()
    profile.disable()
    python = pstats.Stats(profile, stream=io.StringIO()).total_calls / steps
    with Aten() as mode:
        fn()
    return python, sum(mode.calls.values())


def main(argv=None, out=sys.stdout):
    """Print the counts of every requested model and level."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("gpt", "resnet", "all"), default="all")
    p.add_argument("--levels", default="O0,O2,bf16")
    p.add_argument("--steps", type=int, default=10)
    args = p.parse_args(argv)
    levels = args.levels.split(",")
    bad = sorted(set(levels) - set(_compare.LEVELS))
    if bad or args.steps < 1:
        p.error(f"--levels: expected some of {list(_compare.LEVELS)}; --steps: positive")
    import torch

    import mscore as ms
    torch.set_num_threads(1)
    ms.set_context(backend="torch", device_target="CPU", mode=ms.PYNATIVE_MODE)
    for model in (("gpt", "resnet") if args.model == "all" else (args.model,)):
        for level in levels:
            workload, x, y = _workload(model)
            step, _ = _compare.mscore_step(workload, ms, level, 0.01, 0.9)
            mx, my = ms.Tensor(x), ms.Tensor(y)
            native = _native_step(torch, workload, level)
            tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()
            mine = _counts(torch, partial(step, mx, my), args.steps)
            theirs = _counts(torch, partial(native, tx, ty), args.steps)
            print(f"{model} {level}: Python calls/step mscore {mine[0]:.0f} native "
                  f"{theirs[0]:.0f}; ATen calls/step mscore {mine[1]} native {theirs[1]}",
                  file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
