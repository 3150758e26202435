"""mscore vs the hand-written native program on a 4-layer GPT-style decoder, in one process.

The model: token and learned position embeddings, ``--layers`` pre-norm decoder blocks
(LayerNorm, causal multi-head self-attention with ``--heads`` heads — query, key and value
projections, ``scaled_dot_product_attention``, an output projection — and a residual;
LayerNorm, a 4x MLP with tanh-GELU, a residual),
a final LayerNorm and a dense head over ``--vocab`` tokens; width 256, sequence 256, batch 32
by default; cross entropy over every position, momentum SGD (lr 0.01, momentum 0.9). Both sides
start from the same weights and see the same token batches; the first losses are compared
before anything is timed.

* torch: mscore[torch] (PYNATIVE) vs an ``nn.Module`` with ``F.scaled_dot_product_attention``
  trained with ``loss.backward()`` and ``torch.optim.SGD``; O2 vs ``torch.autocast`` +
  ``GradScaler`` (float16), bf16 vs ``torch.autocast(bfloat16)``.
* jax: mscore[jax] in GRAPH_MODE vs a ``jax.jit`` step written with ``jax.numpy`` and
  ``optax.sgd``; its O2 casts the weights to the low dtype inside the step and keeps the
  LayerNorms and the loss in float32 (the same dynamic loss scale for float16).

Reported per level (O0 float32, O2 float16 with a dynamic loss scale, bf16 without): ms/step
and steps/s of each side, the ratio mscore/native, on GPU the achieved TFLOP/s (3x the
forward's matmul FLOPs, attention included), and the O2/O0 speedup of each side.

    python bench/gpt.py [--backend torch,jax] [--levels O0,O2,bf16] [--batch 32] [--seq 256]
                        [--width 256] [--layers 4] [--heads 4] [--vocab 1024]
                        [--device CPU|GPU] [--rounds 5 (cpu clock: 101)] [--steps 2]
                        [--clock wall|cpu]
"""
from __future__ import annotations

import math
import sys

import _compare
import numpy as np

LR, MOMENTUM = 0.01, 0.9
EPS = 1e-5


def mscore_net(cfg):
    """The mscore decoder; logits come out as (batch * seq, vocab)."""
    from mscore import nn, ops
    from mscore.common.initializer import Normal, initializer
    from mscore.common.parameter import Parameter

    d, h = cfg.width, cfg.heads

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm((d,), epsilon=EPS)
            self.q, self.k, self.v = nn.Dense(d, d), nn.Dense(d, d), nn.Dense(d, d)
            self.proj = nn.Dense(d, d)
            self.ln2 = nn.LayerNorm((d,), epsilon=EPS)
            self.fc1 = nn.Dense(d, 4 * d)
            self.gelu = nn.GELU()
            self.fc2 = nn.Dense(4 * d, d)

        def heads(self, y, b, t):
            return ops.transpose(ops.reshape(y, (b, t, h, d // h)), (0, 2, 1, 3))

        def construct(self, x):
            b, t, _ = x.shape
            y = self.ln1(x)
            a = ops.scaled_dot_product_attention(self.heads(self.q(y), b, t),
                                                 self.heads(self.k(y), b, t),
                                                 self.heads(self.v(y), b, t), is_causal=True)
            x = x + self.proj(ops.reshape(ops.transpose(a, (0, 2, 1, 3)), (b, t, d)))
            return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Cell):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(cfg.vocab, d, embedding_table=Normal(0.02))
            self.pos = Parameter(initializer(Normal(0.02), (cfg.seq, d)), name="pos")
            self.blocks = nn.SequentialCell([Block() for _ in range(cfg.layers)])
            self.ln_f = nn.LayerNorm((d,), epsilon=EPS)
            self.head = nn.Dense(d, cfg.vocab, has_bias=False)

        def construct(self, ids):
            x = self.tok(ids) + self.cast_param(self.pos)
            logits = self.head(self.ln_f(self.blocks(x)))
            return ops.reshape(logits, (-1, cfg.vocab))

    return GPT()


def torch_net(torch, cfg):
    """The same decoder as a torch ``nn.Module``."""
    tnn, tf = torch.nn, torch.nn.functional
    d, h = cfg.width, cfg.heads

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = tnn.LayerNorm(d, eps=EPS), tnn.LayerNorm(d, eps=EPS)
            self.q, self.k, self.v = tnn.Linear(d, d), tnn.Linear(d, d), tnn.Linear(d, d)
            self.proj = tnn.Linear(d, d)
            self.fc1, self.fc2 = tnn.Linear(d, 4 * d), tnn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            y = self.ln1(x)
            q, k, v = (lin(y).reshape(b, t, h, d // h).transpose(1, 2)
                       for lin in (self.q, self.k, self.v))
            a = tf.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(tf.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class GPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.tok = tnn.Embedding(cfg.vocab, d)
            self.pos = tnn.Parameter(torch.zeros(cfg.seq, d))
            self.blocks = tnn.Sequential(*[Block() for _ in range(cfg.layers)])
            self.ln_f = tnn.LayerNorm(d, eps=EPS)
            self.head = tnn.Linear(d, cfg.vocab, bias=False)

        def forward(self, ids):
            x = self.tok(ids) + self.pos
            return self.head(self.ln_f(self.blocks(x))).reshape(-1, cfg.vocab)

    return GPT()


_TORCH_NAMES = {"gamma": "weight", "beta": "bias", "embedding_table": "weight"}


def jax_apply(cfg, params, state, ids, low_dt, precision):
    """The decoder in jax: float32 logits (batch * seq, vocab); with ``low_dt`` the weights
    are cast to it and the LayerNorms compute in float32."""
    import jax
    import jax.numpy as jnp
    d, h = cfg.width, cfg.heads

    def cast(w):
        return w if low_dt is None else w.astype(low_dt)

    def dense(p, x):
        y = jnp.matmul(x, cast(p["weight"]).T, precision=precision)
        return y + cast(p["bias"]) if "bias" in p else y

    def layer_norm(p, x):
        dt = x.dtype
        x = x.astype(jnp.float32)
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        y = (x - mean) * jax.lax.rsqrt(var + EPS) * p["gamma"] + p["beta"]
        return y.astype(dt)

    def attention(q, k, v):
        t = q.shape[-2]
        s = jnp.matmul(q, jnp.swapaxes(k, -1, -2), precision=precision) * \
            jnp.asarray(1.0 / math.sqrt(q.shape[-1]), q.dtype)
        causal = jnp.tril(jnp.ones((t, t), bool))
        s = jnp.where(causal, s, jnp.asarray(-jnp.inf, s.dtype))
        return jnp.matmul(jax.nn.softmax(s, axis=-1), v, precision=precision)

    b, t = ids.shape
    x = cast(params["tok"]["embedding_table"])[ids] + cast(params["pos"])
    for i in range(cfg.layers):
        p = params["blocks"][str(i)]
        y = layer_norm(p["ln1"], x)
        q, k, v = (dense(p[n], y).reshape(b, t, h, d // h).transpose(0, 2, 1, 3)
                   for n in ("q", "k", "v"))
        a = attention(q, k, v).transpose(0, 2, 1, 3).reshape(b, t, d)
        x = x + dense(p["proj"], a)
        x = x + dense(p["fc2"], jax.nn.gelu(dense(p["fc1"], layer_norm(p["ln2"], x)),
                                            approximate=True))
    logits = dense(params["head"], layer_norm(params["ln_f"], x))
    return logits.reshape(-1, cfg.vocab).astype(jnp.float32), state


class GPTWorkload(_compare.Workload):
    """The decoder, cross entropy over every position."""

    def __init__(self, cfg):
        self.cfg = cfg

    def mscore_net(self):
        return mscore_net(self.cfg)

    def mscore_loss(self):
        from mscore import nn
        return nn.CrossEntropyLoss()

    def torch_net(self, torch):
        return torch_net(torch, self.cfg)

    def torch_name(self, ms_name):
        head, _, last = ms_name.rpartition(".")
        return f"{head}.{_TORCH_NAMES.get(last, last)}" if head else last

    def torch_loss(self, torch, out, y):
        return torch.nn.functional.cross_entropy(out, y)

    def jax_apply(self, params, state, x, low_dt, precision):
        return jax_apply(self.cfg, params, state, x, low_dt, precision)

    def jax_loss(self, logits, y):
        import optax
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def flops(self):
        c = self.cfg
        tokens = c.batch * c.seq
        per_token = c.layers * (24 * c.width ** 2 + 4 * c.seq * c.width) + \
            2 * c.width * c.vocab
        return 3 * tokens * per_token


def main(argv=None, out=sys.stdout):
    """Run the comparisons; 0 on success, 2 when a comparison was not like for like."""
    p = _compare.parser(__doc__.splitlines()[0])
    _compare.common_arguments(p, batch=32)
    for name, default in (("seq", 256), ("width", 256), ("layers", 4), ("heads", 4),
                          ("vocab", 1024)):
        p.add_argument(f"--{name}", type=int, default=default)
    args = p.parse_args(argv)
    _compare.check_arguments(p, args)
    for name in ("seq", "width", "layers", "heads", "vocab"):
        if getattr(args, name) < 1:
            p.error(f"--{name}: expected a positive int")
    if args.width % args.heads:
        p.error("--width must be a multiple of --heads")
    _compare.limit_threads(args.threads)
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(2):
        ids = rng.integers(0, args.vocab, (args.batch, args.seq + 1)).astype(np.int32)
        batches.append((ids[:, :-1].copy(), ids[:, 1:].reshape(-1).copy()))
    workload = GPTWorkload(args)
    print(f"GPT decoder: {args.layers} layers, width {args.width}, {args.heads} heads, "
          f"sequence {args.seq}, vocab {args.vocab}, batch {args.batch}, device {args.device}, "
          f"{workload.flops() / 1e9:.1f} GFLOP per train step, {args.rounds} rounds x "
          f"{args.steps} steps ({args.clock} clock, {args.threads or 'default'} thread(s))",
          file=out, flush=True)
    return _compare.run(workload, args, batches, out, LR, MOMENTUM)


if __name__ == "__main__":
    sys.exit(main())
