"""mscore[torch] training step vs a hand-written torch loop of the same model, in one process.

The model is an MLP 784-512-512-10 (ReLU), cross entropy, momentum SGD (lr 0.01, momentum
0.9), batch 64 by default. Both sides start from the same weights and see the same batches;
the script checks that their losses agree before it times anything.

* fp32: ``nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum)`` vs
  ``loss.backward(); torch.optim.SGD(momentum=0.9).step()``.
* amp: ``amp.build_train_network(level="O1"/"O2", loss_scale_manager=
  DynamicLossScaleManager(2**16))`` vs ``torch.autocast`` + ``torch.amp.GradScaler``.

Timing: warm-up steps first, then ``--repeats`` rounds; in each round every variant runs
``--steps`` steps (the order rotates between rounds, so slow phases of a shared machine hit
all variants alike) and the device is synchronised before the clock stops. Reported: the
median time per step of each variant and the ratio mscore / native, both as the ratio of the
medians and as the median of the per-round ratios.

    python bench/torch_vs_native.py [--batch 64] [--steps 20] [--repeats 15]
                                    [--device CPU|GPU] [--amp-dtype float16|bfloat16]
"""
from __future__ import annotations

import argparse
import sys
import time

import _compare
import numpy as np


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--steps", type=int, default=20, help="steps per timed round")
    p.add_argument("--repeats", type=int, default=15, help="timed rounds")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps per variant")
    p.add_argument("--device", choices=("CPU", "GPU"), default="CPU")
    p.add_argument("--amp-dtype", choices=("float16", "bfloat16"), default="float16")
    p.add_argument("--skip-amp", action="store_true", help="time fp32 only")
    p.add_argument("--graph", action="store_true",
                   help="also time the fp32 step in GRAPH_MODE (torch.compile on CUDA by "
                        "default; see MSCORE_TORCH_COMPILE)")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: keep)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall: perf_counter; cpu: this process's CPU time (steadier on a "
                        "shared machine with --threads 1; CPU only)")
    args = p.parse_args(argv)
    for name in ("batch", "hidden", "steps", "repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name}: expected a positive int")
    return args


def _batches(args, n=4):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((args.batch, 784)).astype(np.float32) for _ in range(n)]
    ys = [rng.integers(0, 10, args.batch).astype(np.int64) for _ in range(n)]
    return xs, ys


def _mscore_net(ms, nn, args):
    ms.set_seed(0)
    h = args.hidden
    return nn.SequentialCell([nn.Dense(784, h), nn.ReLU(), nn.Dense(h, h), nn.ReLU(),
                              nn.Dense(h, 10)])


def _torch_net(torch, ms_net, device):
    """A torch MLP holding copies of the mscore network's initial weights."""
    values = [p.asnumpy() for p in ms_net.trainable_params()]
    h = values[0].shape[0]
    net = torch.nn.Sequential(torch.nn.Linear(784, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
                              torch.nn.ReLU(), torch.nn.Linear(h, 10)).to(device)
    with torch.no_grad():
        for p, v in zip(net.parameters(), values):
            p.copy_(torch.from_numpy(v))
    return net


def build_variants(args):
    """``{name: (step_fn, sync_fn)}`` for each variant, and the fp32 loss check."""
    import torch

    import mscore as ms
    from mscore import nn

    ms.set_context(backend="torch", device_target=args.device)
    backend = ms.context.current_backend()
    device = backend.torch_device
    xs, ys = _batches(args)
    ms_data = [(ms.Tensor(x), ms.Tensor(y)) for x, y in zip(xs, ys)]
    t_data = [(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device))
              for x, y in zip(xs, ys)]

    def sync():
        backend.synchronize()

    variants = {}

    # -- fp32 -------------------------------------------------------------------------------
    ms_net = _mscore_net(ms, nn, args)
    t_net = _torch_net(torch, ms_net, device)
    opt = nn.Momentum(ms_net.trainable_params(), 0.01, 0.9)
    ms_step = nn.TrainOneStepCell(nn.WithLossCell(ms_net, nn.CrossEntropyLoss()), opt)
    ms_step.set_train()
    t_opt = torch.optim.SGD(t_net.parameters(), lr=0.01, momentum=0.9)
    counter = {"ms": 0, "t": 0}

    def mscore_fp32():
        x, y = ms_data[counter["ms"] % len(ms_data)]
        counter["ms"] += 1
        return ms_step(x, y)

    def native_fp32():
        x, y = t_data[counter["t"] % len(t_data)]
        counter["t"] += 1
        t_opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(t_net(x), y)
        loss.backward()
        t_opt.step()
        return loss

    check = [(float(mscore_fp32().asnumpy()), float(native_fp32().item())) for _ in range(5)]
    variants["fp32"] = {"mscore": mscore_fp32, "native": native_fp32}

    if args.graph:
        g_net = _mscore_net(ms, nn, args)
        g_step = nn.TrainOneStepCell(nn.WithLossCell(g_net, nn.CrossEntropyLoss()),
                                     nn.Momentum(g_net.trainable_params(), 0.01, 0.9))
        g_step.set_train()
        g_state = {"i": 0}

        def mscore_graph():
            x, y = ms_data[g_state["i"] % len(ms_data)]
            g_state["i"] += 1
            ms.set_context(mode=ms.GRAPH_MODE)
            try:
                return g_step(x, y)
            finally:
                ms.set_context(mode=ms.PYNATIVE_MODE)

        t0 = time.perf_counter()
        first = float(mscore_graph().asnumpy())
        print(f"GRAPH_MODE first call (trace/compile): {time.perf_counter() - t0:.1f} s, "
              f"loss {first:.6f} (PYNATIVE: {check[0][0]:.6f})")
        variants["fp32"]["mscore GRAPH_MODE"] = mscore_graph

    if args.skip_amp:
        return variants, sync, check, device
    try:
        from mscore import amp
        build = amp.build_train_network
    except (ImportError, AttributeError) as exc:
        print(f"amp: skipped (mscore.amp.build_train_network unavailable: {exc})")
        return variants, sync, check, device

    # -- amp --------------------------------------------------------------------------------
    low = getattr(torch, args.amp_dtype)
    amp_dtype = getattr(ms, args.amp_dtype)
    amp_variants = {}
    for level in ("O1", "O2"):
        net = _mscore_net(ms, nn, args)
        opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        manager = amp.DynamicLossScaleManager(2.0 ** 16, 2, 2000)
        if level == "O2":
            step = build(net, opt, nn.CrossEntropyLoss(), level="O2", cast_model_type=amp_dtype,
                         loss_scale_manager=manager)
        else:  # O1 in the chosen low dtype, then loss scaling on top
            net = amp.auto_mixed_precision(net, "O1", amp_dtype)
            step = build(net, opt, nn.CrossEntropyLoss(), level="O0", loss_scale_manager=manager)
        step.set_train()
        state = {"i": 0}

        def run(step=step, state=state):
            x, y = ms_data[state["i"] % len(ms_data)]
            state["i"] += 1
            return step(x, y)
        amp_variants[f"mscore {level}"] = run

    a_net = _torch_net(torch, _mscore_net(ms, nn, args), device)
    a_opt = torch.optim.SGD(a_net.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(device.type, init_scale=2.0 ** 16, growth_interval=2000)
    a_state = {"i": 0}

    def native_amp():
        x, y = t_data[a_state["i"] % len(t_data)]
        a_state["i"] += 1
        a_opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=low):
            loss = torch.nn.functional.cross_entropy(a_net(x), y)
        scaler.scale(loss).backward()
        scaler.step(a_opt)
        scaler.update()
        return loss

    amp_variants["native"] = native_amp
    variants[f"amp {args.amp_dtype}"] = amp_variants
    return variants, sync, check, device


def time_group(fns, sync, args):
    """Median seconds per step of each function, and per-round ratios to 'native'
    (``_compare.time_interleaved`` with this script's ``--repeats`` as its rounds)."""
    rounds = argparse.Namespace(warmup=args.warmup, clock=args.clock, rounds=args.repeats,
                                steps=args.steps)
    medians, ratios, _spread = _compare.time_interleaved(fns, sync, rounds)
    return medians, ratios


def main(argv=None):
    args = _parse(argv)
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "GPU" and not torch.cuda.is_available():
        print("GPU: no CUDA device here; run with --device CPU")
        return 1
    variants, sync, check, device = build_variants(args)
    diff = max(abs(a - b) / max(abs(b), 1e-6) for a, b in check)
    print(f"mscore[torch] vs native torch, MLP 784-{args.hidden}-{args.hidden}-10, batch "
          f"{args.batch}, device {device}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")
    print(f"same model check (first 5 fp32 losses, mscore vs native): max rel diff {diff:.1e}")
    if diff > 1e-4:
        print("ERROR: mscore and native losses differ; the comparison is not like for like")
        return 2
    print(f"timing ({args.clock} clock): {args.warmup} warm-up steps, {args.repeats} "
          f"interleaved rounds of {args.steps} steps, medians (a shared machine is noisy: "
          f"compare ratios)")
    for group, fns in variants.items():
        med, ratio = time_group(fns, sync, args)
        if "mscore GRAPH_MODE" in fns:
            from mscore.compile import graph
            print(f"[{group}] GRAPH_MODE programs traced so far: {graph.trace_count}")
        native = med["native"]
        print(f"[{group}] native: {native * 1e3:.3f} ms/step")
        for name, t in med.items():
            if name == "native":
                continue
            print(f"[{group}] {name}: {t * 1e3:.3f} ms/step  ratio mscore/native = "
                  f"{t / native:.3f} (median of per-round ratios {ratio[name]:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
