"""Data-parallel step time with N=1 and N=2 workers, the bytes all-reduced per step, and the
communication overhead per step; mscore[torch] beside torch's own DistributedDataParallel.

The model is the seed-004 MLP (784-512-512-10, ReLU), cross entropy, momentum SGD, a fixed
batch of ``--batch`` rows *per worker* (weak scaling). The script starts itself with
``mscore run`` once per worker count; in every worker, one after the other and with the same
process group:

* ``mscore DP``: ``TrainOneStepCell`` in DATA_PARALLEL mode (gradients all-reduced in one
  bucket, as the reducer plans them);
* ``mscore alone``: the same cell built in stand-alone mode (no collective), run at the same
  time on every worker, so the machine is as loaded as in the DP run;
* ``all-reduce``: the bucket's all-reduce alone (the gradients' bytes, one collective);
* ``torch DDP`` / ``torch alone`` (``--backend torch``): the same model in plain torch with
  ``DistributedDataParallel`` (gloo, its own 25 MB buckets) and without it.

With ``--parallel-optimizer`` the DP cell shards the optimizer state over the workers
(``enable_parallel_optimizer=True``: gradients reduce-scattered, updated weights
all-gathered) and the script prints the bytes of optimizer state each rank holds against the
unsharded state (measured on the optimizers' state Parameters).

Times are medians over ``--repeats`` rounds of ``--steps`` steps (the variants alternate in
each round); the communication overhead per step is ``DP - alone``. Scaling efficiency is the
N=1 step time over the N=2 one; on a machine with fewer cores than workers it measures the
contention of the processes as much as the communication.

    python bench/data_parallel.py [--backend torch|jax|numpy] [--mode pynative|graph]
                                  [--workers 1,2] [--batch 64] [--steps 20] [--repeats 5]
                                  [--parallel-optimizer]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.abspath(__file__)


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--mode", choices=("pynative", "graph"), default="pynative")
    p.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    p.add_argument("--batch", type=int, default=64, help="rows per worker and step")
    p.add_argument("--steps", type=int, default=20, help="steps per timed round")
    p.add_argument("--repeats", type=int, default=5, help="timed rounds")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timeout", type=int, default=900, help="seconds per job")
    p.add_argument("--parallel-optimizer", action="store_true",
                   help="shard the optimizer state over the workers (ZeRO-style)")
    p.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


# -- the worker -----------------------------------------------------------------------------------
def _mlp(ms, nn):
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(784, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                              nn.Dense(512, 10)])


def _mscore_step(ms, nn, parallel, sharded=False):
    ms.reset_auto_parallel_context()
    if parallel:
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                     gradients_mean=True, enable_parallel_optimizer=sharded)
    net = _mlp(ms, nn)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    cell = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
    cell.set_train(True)
    ms.reset_auto_parallel_context()
    return cell


def _state_bytes(optimizer):
    """Bytes of the optimizer's state Parameters (every ParameterTuple but the parameters)."""
    inner = getattr(optimizer, "inner", optimizer)   # the parallel optimizer's own
    return sum(int(np.prod(p.shape)) * p.dtype.itemsize for name, tup in
               inner._param_tuples.items() if name != "parameters" for p in tup)


def _timed(run, steps, finish):
    start = time.perf_counter()
    out = None
    for _ in range(steps):
        out = run()
    finish(out)
    return (time.perf_counter() - start) / steps


def _torch_variants(args, rank):
    import torch
    import torch.distributed as dist
    torch.manual_seed(0)

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                   torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                   torch.nn.Linear(512, 10))
    rng = np.random.default_rng(rank)
    x = torch.from_numpy(rng.standard_normal((args.batch, 784)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, args.batch))
    loss_fn = torch.nn.CrossEntropyLoss()
    variants = {}
    for name, wrap in (("torch DDP", True), ("torch alone", False)):
        net = model()
        if wrap:
            net = torch.nn.parallel.DistributedDataParallel(net, process_group=dist.group.WORLD)
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

        def step(net=net, opt=opt):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
            return loss
        variants[name] = (step, lambda out: out.item())
    return variants


def worker(args):
    """One worker of a job: time every variant, write rank's JSON."""
    import mscore as ms
    from mscore import nn
    from mscore.communication import get_group_size, get_rank, init, management
    ms.set_context(backend=args.backend,
                   mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    init()
    rank, size = get_rank(), get_group_size()
    rng = np.random.default_rng(rank)
    x = ms.Tensor(rng.standard_normal((args.batch, 784)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, args.batch).astype(np.int32))
    dp = _mscore_step(ms, nn, True, args.parallel_optimizer)
    alone = _mscore_step(ms, nn, False)
    grads = tuple(ms.Tensor(p.asnumpy()) for p in dp.weights)
    reducer = getattr(dp.grad_reducer, "replicated", dp.grad_reducer)
    coll = management.collectives()
    flat = ms.Tensor(np.ones(sum(p.size for p in dp.weights), np.float32))
    backend = ms.context.current_backend()

    def finish(out):
        (out if isinstance(out, ms.Tensor) else flat).asnumpy()

    variants = {"mscore DP": (lambda: dp(x, y), finish),
                "mscore alone": (lambda: alone(x, y), finish),
                "all-reduce": (lambda: ms.Tensor._wrap(coll.all_reduce(flat._data, "sum")),
                               finish)}
    if args.backend == "torch":
        variants.update(_torch_variants(args, rank))
    for run, fin in variants.values():
        _timed(run, args.warmup, fin)
    times = {name: [] for name in variants}
    names = list(variants)
    for r in range(args.repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            coll.barrier()   # every worker times the same variant at the same time
            run, fin = variants[name]
            times[name].append(_timed(run, args.steps, fin))
    backend.synchronize()
    result = {"rank": rank, "size": size, "engine": coll.engine,
              "buckets": len(reducer.bucket_plan(grads)) + len(
                  getattr(getattr(dp.optimizer, "plan", None), "buckets", ())),
              "bytes_per_step": reducer.bytes_per_step(grads) + sum(
                  p.size * p.dtype.itemsize for i, p in enumerate(dp.weights)
                  if getattr(getattr(dp.optimizer, "plan", None), "sharded", [False] * 99)[i]),
              "state_bytes": [_state_bytes(alone.optimizer), _state_bytes(dp.optimizer)],
              "ms": {name: 1e3 * statistics.median(t) for name, t in times.items()},
              "min_ms": {name: 1e3 * min(t) for name, t in times.items()}}
    with open(os.path.join(args.worker_out, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    return 0


# -- the driver -----------------------------------------------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _job(args, n, out):
    cmd = [sys.executable, "-m", "mscore.launch", f"--worker_num={n}",
           f"--local_worker_num={n}", f"--master_port={_free_port()}", HERE,
           "--backend", args.backend, "--mode", args.mode, "--batch", str(args.batch),
           "--steps", str(args.steps), "--repeats", str(args.repeats), "--warmup",
           str(args.warmup), "--worker-out", out] + \
        (["--parallel-optimizer"] if args.parallel_optimizer else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if proc.returncode != 0:
        raise SystemExit(f"the {n}-worker job failed:\n{proc.stdout[-2000:]}\n"
                         f"{proc.stderr[-3000:]}")
    ranks = []
    for r in range(n):
        with open(os.path.join(out, f"rank{r}.json")) as f:
            ranks.append(json.load(f))
    return ranks


def main(argv=None):
    args = _parse(argv)
    if args.worker_out:
        return worker(args)
    counts = [int(c) for c in args.workers.split(",")]
    rows, best = {}, {}
    with tempfile.TemporaryDirectory(prefix="mscore-bench-dp-") as tmp:
        for n in counts:
            out = os.path.join(tmp, str(n))
            os.mkdir(out)
            ranks = _job(args, n, out)
            # the slowest rank sets the pace of a synchronous job
            rows[n] = {name: max(r["ms"][name] for r in ranks) for name in ranks[0]["ms"]}
            best[n] = {name: max(r["min_ms"][name] for r in ranks) for name in ranks[0]["ms"]}
            rows[n]["bytes"] = ranks[0]["bytes_per_step"]
            rows[n]["buckets"] = ranks[0]["buckets"]
            rows[n]["engine"] = ranks[0]["engine"]
            if args.parallel_optimizer:
                full = ranks[0]["state_bytes"][0]
                held = [r["state_bytes"][1] for r in ranks]
                print(f"optimizer state, N={n}: unsharded {full:,} bytes; held per rank "
                      f"{', '.join(f'{h:,}' for h in held)} bytes "
                      f"({max(held) / full:.1%} of the unsharded state)")
    names = list(next(iter(rows.values())))
    print(f"data parallel, backend {args.backend} ({rows[counts[0]]['engine']}), "
          f"{args.mode}, MLP 784-512-512-10, batch {args.batch} per worker; ms per step "
          f"(median of {args.repeats} rounds x {args.steps} steps, slowest rank)")
    header = ["workers"] + [n for n in names if n not in ("bytes", "buckets", "engine")] + \
        ["overhead", "bytes/step", "buckets"]
    print(" | ".join(header))
    for n, row in rows.items():
        overhead = row["mscore DP"] - row["mscore alone"]
        cells = [str(n)] + [f"{row[k]:.2f}" for k in header[1:-3]] + \
            [f"{overhead:+.2f}", f"{row['bytes']:,}", str(row["buckets"])]
        print(" | ".join(cells))
        if "torch DDP" in row:
            print(f"  N={n}: mscore DP / torch DDP = {row['mscore DP'] / row['torch DDP']:.2f}; "
                  f"torch DDP overhead {row['torch DDP'] - row['torch alone']:+.2f} ms")
    print("fastest round (ms per step; what the step costs when the machine lets it run):")
    for n, row in best.items():
        print(f"  N={n}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()) +
              f"; overhead {row['mscore DP'] - row['mscore alone']:+.2f}")
    if 1 in rows and 2 in rows:
        eff = rows[1]["mscore DP"] / rows[2]["mscore DP"]
        eff_best = best[1]["mscore DP"] / best[2]["mscore DP"]
        print(f"scaling efficiency at N=2 (weak scaling, t1/t2): {eff:.0%} (medians), "
              f"{eff_best:.0%} (fastest rounds)")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
