"""A decoder split Megatron-style over 2 ranks by SEMI_AUTO_PARALLEL shard strategies, timed
beside torch's own tensor parallelism (``torch.distributed.tensor.parallel``) with the same
layout, in the same job.

The decoder (``--width 512 --layers 4 --heads 8``, causal self-attention and a 4x MLP,
pre-LayerNorm, a vocabulary of ``--vocab`` tokens) is written with mscore primitives whose
strategies cut it as Megatron-LM does: the embedding table by rows (vocabulary-parallel
``Gather``), the query/key/value projections by heads (column-parallel), attention per head on
each rank, the output projection by heads (row-parallel: its partial sums all-reduced), the
MLP's first matmul by columns and its second by rows; LayerNorms and the output head are whole
on every rank. The script starts itself with ``mscore run`` (2 workers, gloo on 127.0.0.1);
each worker times, in alternating rounds, ``mscore`` (the cut decoder, Adam, one
``value_and_grad`` step) and ``torch TP`` (the same decoder in plain torch with
``parallelize_module``: ``ColwiseParallel`` / ``RowwiseParallel`` on the same weights and
``RowwiseParallel`` on the embedding) — with ``--backend jax``, ``jax GSPMD`` (the same
decoder in plain jax, its weights placed by ``NamedSharding`` over the job's global mesh in
the same layout, one ``jax.jit`` step with optax's Adam) — and prints the median step times,
their ratio, and the bytes of Parameters a rank holds against one process.

    OMP_NUM_THREADS=1 python bench/semi_auto_decoder.py [--width 512] [--layers 4] [--heads 8]
        [--vocab 1024] [--seq 64] [--batch 8] [--steps 5] [--repeats 5]
        [--mode pynative|graph] [--clock cpu|wall]

:func:`build_decoder` is also the network of the suite's small-size check
(tests/semi_auto_worker.py).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.abspath(__file__)


def build_decoder(ms, nn, ops, vocab, width, layers, heads, seq, dtype, tp=2, seed=3):
    """The decoder as an mscore Cell: ``net(ids (B, S) int32) -> logits (B * S, vocab)``,
    its shard strategies cutting it over ``tp`` ranks (they act in SEMI_AUTO_PARALLEL mode
    only)."""
    from mscore.common.initializer import Normal, initializer
    d = width // heads
    ms.set_seed(seed)

    def weight(shape, name, sigma=0.05):
        return ms.Parameter(initializer(Normal(sigma), list(shape), dtype), name=name)

    def const(shape, value, name):
        return ms.Parameter(ms.Tensor(np.full(shape, value, dtype)), name=name)

    mask = np.triu(np.full((seq, seq), -1e9, dtype), 1)

    class Block(nn.Cell):
        def __init__(self, i):
            super().__init__()
            self.ln1_g, self.ln1_b = const(width, 1.0, f"l{i}.ln1.g"), const(width, 0.0,
                                                                             f"l{i}.ln1.b")
            self.ln2_g, self.ln2_b = const(width, 1.0, f"l{i}.ln2.g"), const(width, 0.0,
                                                                             f"l{i}.ln2.b")
            self.wq = weight((width, width), f"l{i}.wq")
            self.wk = weight((width, width), f"l{i}.wk")
            self.wv = weight((width, width), f"l{i}.wv")
            self.wo = weight((width, width), f"l{i}.wo")
            self.fc1 = weight((width, 4 * width), f"l{i}.fc1")
            self.fc2 = weight((4 * width, width), f"l{i}.fc2")
            self.ln = ops.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-5)
            heads_cut = (1, tp, 1, 1)
            self.column = ops.MatMul().shard(((1, 1), (1, tp)))     # q, k, v, MLP up
            self.row = ops.MatMul().shard(((1, tp), (tp, 1)))       # attention out, MLP down
            self.to_heads = ops.Transpose().shard(((1, 1, tp, 1),))
            self.from_heads = ops.Transpose().shard((heads_cut,))
            self.scores = ops.BatchMatMul(transpose_b=True).shard((heads_cut, heads_cut))
            self.scale = ops.Mul().shard((heads_cut, ()))
            self.masked = ops.Add().shard((heads_cut, (1, 1)))
            self.softmax = ops.Softmax(-1).shard((heads_cut,))
            self.attend = ops.BatchMatMul().shard((heads_cut, heads_cut))
            self.gelu = ops.GeLU().shard(((1, tp),))
            self.factor = ms.Tensor(np.array(1.0 / np.sqrt(d), dtype))
            self.mask = ms.Tensor(mask)

        def heads(self, h, w, b):
            """(B * S, width) -> (B, heads, S, d), cut by heads."""
            return self.to_heads(self.column(h, w).reshape(b, seq, heads, d), (0, 2, 1, 3))

        def construct(self, x):
            b = x.shape[0]
            h = self.ln(x, self.ln1_g, self.ln1_b)[0].reshape(b * seq, width)
            q, k, v = self.heads(h, self.wq, b), self.heads(h, self.wk, b), \
                self.heads(h, self.wv, b)
            s = self.masked(self.scale(self.scores(q, k), self.factor), self.mask)
            a = self.from_heads(self.attend(self.softmax(s), v), (0, 2, 1, 3))
            x = x + self.row(a.reshape(b * seq, width), self.wo).reshape(b, seq, width)
            h = self.ln(x, self.ln2_g, self.ln2_b)[0].reshape(b * seq, width)
            m = self.row(self.gelu(self.column(h, self.fc1)), self.fc2)
            return x + m.reshape(b, seq, width)

    class Decoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table = weight((vocab, width), "embedding", 0.5)
            self.lookup = ops.Gather().shard(((tp, 1), (1, 1)))     # vocabulary-parallel
            self.blocks = nn.CellList([Block(i) for i in range(layers)])
            self.ln = ops.LayerNorm(begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-5)
            self.lnf_g, self.lnf_b = const(width, 1.0, "lnf.g"), const(width, 0.0, "lnf.b")
            self.head = weight((width, vocab), "head")
            self.logits = ops.MatMul()

        def construct(self, ids):
            x = self.lookup(self.table, ids, 0)
            for block in self.blocks:
                x = block(x)
            x = self.ln(x, self.lnf_g, self.lnf_b)[0]
            return self.logits(x.reshape(-1, width), self.head)
    return Decoder()


def make_batches(vocab, seq, batch, steps, seed=0):
    """``steps`` batches of token ids and next-token labels (int32)."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (steps, batch, seq + 1)).astype(np.int32)
    return [(i[:, :-1], i[:, 1:].reshape(-1)) for i in ids]


def mscore_step(ms, nn, net, lr=1e-3):
    """A train step function of ``net``: Adam on the mean cross entropy; returns the loss."""
    opt = nn.Adam(net.trainable_params(), learning_rate=lr)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    grad_fn = ms.value_and_grad(lambda ids, labels: loss_fn(net(ids), labels), None,
                                opt.parameters)

    def step(ids, labels):
        loss, grads = grad_fn(ids, labels)
        opt(grads)
        return loss
    return step


def torch_decoder(vocab, width, layers, heads, seq, tp_mesh):
    """The same decoder in plain torch, cut by ``parallelize_module`` over ``tp_mesh``."""
    import torch
    from torch import nn as tnn
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )
    tp = tp_mesh.size()
    d = width // heads

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = tnn.LayerNorm(width), tnn.LayerNorm(width)
            self.q, self.k, self.v = (tnn.Linear(width, width, bias=False) for _ in range(3))
            self.o = tnn.Linear(width, width, bias=False)
            self.up = tnn.Linear(width, 4 * width, bias=False)
            self.down = tnn.Linear(4 * width, width, bias=False)
            self.register_buffer("mask", torch.triu(torch.full((seq, seq), -1e9), 1))

        def forward(self, x):
            b = x.shape[0]
            h = self.ln1(x)
            local = heads // tp

            def split(t):
                return t.view(b, seq, local, d).transpose(1, 2)
            q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
            s = q @ k.transpose(-1, -2) / d ** 0.5 + self.mask
            a = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, seq, local * d)
            x = x + self.o(a)
            return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))

    class Decoder(tnn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = tnn.Embedding(vocab, width)
            self.blocks = tnn.ModuleList([Block() for _ in range(layers)])
            self.ln = tnn.LayerNorm(width)
            self.head = tnn.Linear(width, vocab, bias=False)

        def forward(self, ids):
            x = self.embedding(ids)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x)).reshape(-1, vocab)
    torch.manual_seed(0)
    net = Decoder()
    for block in net.blocks:
        parallelize_module(block, tp_mesh, {"q": ColwiseParallel(), "k": ColwiseParallel(),
                                            "v": ColwiseParallel(), "o": RowwiseParallel(),
                                            "up": ColwiseParallel(),
                                            "down": RowwiseParallel()})
    parallelize_module(net, tp_mesh, {"embedding": RowwiseParallel(input_layouts=Replicate())})
    return net


def jax_decoder(vocab, width, layers, heads, seq, batch, lr=1e-3):
    """The same decoder in plain jax over the job's global mesh (GSPMD): its weights placed
    with ``NamedSharding`` in the same layout, one ``jax.jit`` train step with optax's Adam;
    returns ``run(ids, labels) -> loss`` (numpy in, a float out)."""
    import jax
    import jax.numpy as jnp
    import optax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()), ("tp",))
    rng = np.random.default_rng(0)
    d = width // heads

    def place(value, *spec):
        return jax.make_array_from_callback(value.shape, NamedSharding(mesh, P(*spec)),
                                            lambda index: value[index])

    def normal(*shape, sigma=0.05):
        return (rng.standard_normal(shape) * sigma).astype(np.float32)

    def norm_params():
        return place(np.ones(width, np.float32)), place(np.zeros(width, np.float32))
    params = {"table": place(normal(vocab, width, sigma=0.5), "tp", None),
              "head": place(normal(width, vocab)), "lnf": norm_params(), "blocks": [
                  {"ln1": norm_params(), "ln2": norm_params(),
                   "wq": place(normal(width, width), None, "tp"),
                   "wk": place(normal(width, width), None, "tp"),
                   "wv": place(normal(width, width), None, "tp"),
                   "wo": place(normal(width, width), "tp", None),
                   "fc1": place(normal(width, 4 * width), None, "tp"),
                   "fc2": place(normal(4 * width, width), "tp", None)}
                  for _ in range(layers)]}
    mask = jnp.triu(jnp.full((seq, seq), -1e9, jnp.float32), 1)

    def layer_norm(x, gb):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * gb[0] + gb[1]

    def loss_fn(p, ids, labels):
        x = p["table"][ids]
        for blk in p["blocks"]:
            h = layer_norm(x, blk["ln1"])

            def heads_of(w, h=h):
                return (h @ w).reshape(batch, seq, heads, d).transpose(0, 2, 1, 3)
            q, k, v = heads_of(blk["wq"]), heads_of(blk["wk"]), heads_of(blk["wv"])
            s = q @ k.swapaxes(-1, -2) / np.sqrt(d) + mask
            a = (jax.nn.softmax(s, -1) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, width)
            x = x + a @ blk["wo"]
            x = x + jax.nn.gelu(layer_norm(x, blk["ln2"]) @ blk["fc1"],
                                approximate=False) @ blk["fc2"]
        logits = (layer_norm(x, p["lnf"]) @ p["head"]).reshape(-1, vocab)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    opt = optax.adam(lr)
    state = {"params": params, "opt": opt.init(params)}

    @jax.jit
    def step(params, opt_state, ids, labels):
        loss, grads = jax.value_and_grad(loss_fn)(params, ids, labels)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def run(ids, labels):
        state["params"], state["opt"], loss = step(state["params"], state["opt"],
                                                   place(ids), place(labels))
        return float(loss.addressable_data(0))
    return run


def _clock(kind):
    return time.process_time if kind == "cpu" else time.perf_counter


def worker(args):
    import mscore as ms
    from mscore import nn, ops
    from mscore.communication import get_rank, init
    from mscore.communication.comm_func import barrier
    from mscore.parallel.auto_parallel import AutoParallel
    if args.backend != "jax":
        import torch
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh
    ms.set_context(backend=args.backend, mode=ms.GRAPH_MODE if args.mode == "graph" else
                   ms.PYNATIVE_MODE)
    init()
    rank = get_rank()
    shape = (args.vocab, args.width, args.layers, args.heads, args.seq)
    batches = make_batches(args.vocab, args.seq, args.batch, args.steps)
    net = build_decoder(ms, nn, ops, *shape, np.float32)
    whole = sum(p.asnumpy().nbytes for p in net.trainable_params())
    step = AutoParallel(mscore_step(ms, nn, net))
    step.dataset_strategy("full_batch")   # every rank reads the batch, as torch TP's do
    tensors = [(ms.Tensor(i), ms.Tensor(y)) for i, y in batches]
    for ids, labels in tensors[:2]:
        step(ids, labels).asnumpy()   # the first step keeps the slices, then compiles
    mine = sum(p.asnumpy().nbytes for p in net.trainable_params())

    if args.backend == "jax":
        native_name = "jax GSPMD"
        run = jax_decoder(*shape, args.batch)

        def native_steps():
            for ids, labels in batches:
                loss = run(ids, labels)
            return loss
    else:
        native_name = "torch TP"
        if not dist.is_initialized():
            dist.init_process_group("gloo")
        mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        tnet = torch_decoder(*shape, mesh)
        topt = torch.optim.Adam(tnet.parameters(), lr=1e-3)
        tbatches = [(torch.from_numpy(i).long(), torch.from_numpy(y).long())
                    for i, y in batches]

        def native_steps():
            for ids, labels in tbatches:
                loss = torch.nn.functional.cross_entropy(tnet(ids), labels)
                topt.zero_grad()
                loss.backward()
                topt.step()
            return float(loss.detach())

    def mscore_steps():
        for ids, labels in tensors:
            loss = step(ids, labels)
        return float(loss.asnumpy())
    native_steps()
    clock = _clock(args.clock)
    times = {"mscore": [], native_name: []}
    for _ in range(args.repeats):
        for name, fn in (("mscore", mscore_steps), (native_name, native_steps)):
            barrier()
            t = clock()
            fn()
            times[name].append((clock() - t) / args.steps)
    if rank == 0:
        med = {k: statistics.median(v) for k, v in times.items()}
        with open(args.worker_out, "w") as f:
            json.dump({"times": med, "bytes": [whole, mine]}, f)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--mode", choices=("pynative", "graph"), default="pynative")
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--clock", choices=("cpu", "wall"), default="wall")
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker_out:
        return worker(args)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cmd = [sys.executable, "-m", "mscore.launch", "--worker_num=2", "--local_worker_num=2",
               f"--master_port={port}", HERE, "--worker-out", out] + [
            a for a in (argv if argv is not None else sys.argv[1:])]
        subprocess.run(cmd, check=True, timeout=args.timeout)
        with open(out) as f:
            result = json.load(f)
    t = result["times"]
    native = [k for k in t if k != "mscore"][0]
    whole, mine = result["bytes"]
    print(f"decoder width {args.width}, {args.layers} layers, {args.heads} heads, vocab "
          f"{args.vocab}, seq {args.seq}, batch {args.batch}; 2 ranks over gloo, "
          f"backend {args.backend} {args.mode}, clock {args.clock}")
    print(f"  step time: mscore {t['mscore'] * 1e3:.1f} ms, {native} "
          f"{t[native] * 1e3:.1f} ms, ratio {t['mscore'] / t[native]:.3f}")
    print(f"  Parameter bytes per rank: {mine} of {whole} in one process "
          f"({mine / whole:.3f})")


if __name__ == "__main__":
    main()
