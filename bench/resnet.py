"""mscore vs the hand-written native program on a ResNet-18-like network, in one process.

The model is the CIFAR form of ResNet-18: a 3x3 stem convolution, four stages of two basic
blocks (widths w, 2w, 4w, 8w with w = ``--width``, default 64; stride 2 from the second
stage, 1x1 projection shortcuts), BatchNorm after every convolution, global average pooling
and a dense classifier, on 32x32 RGB inputs (batch 128 by default), cross entropy, momentum
SGD (lr 0.01, momentum 0.9). Both sides start from the same weights and see the same batches;
the first losses are compared before anything is timed.

* torch: mscore[torch] (PYNATIVE) vs an ``nn.Module`` trained with ``loss.backward()`` and
  ``torch.optim.SGD``; O2 vs ``torch.autocast`` + ``GradScaler`` (float16), bf16 vs
  ``torch.autocast(bfloat16)``.
* jax: mscore[jax] in GRAPH_MODE (one ``jax.jit`` per step) vs a ``jax.jit`` step written with
  ``lax`` and ``optax.sgd``; its O2 casts the weights to float16 inside the step, keeps
  BatchNorm and the loss in float32 and applies the same dynamic loss scale.

Levels: O0 (float32), O2 (float16 network, float32 BatchNorm and master weights, dynamic
loss scale from 2**16), bf16 (the same in bfloat16 without loss scaling). Reported per level:
ms/step and steps/s of each side, the ratio mscore/native (of the medians, and the median of
the per-round ratios), on GPU the achieved TFLOP/s (3x the forward FLOPs of the convolutions
and the classifier), and the O2/O0 speedup of each side.

    python bench/resnet.py [--backend torch,jax] [--levels O0,O2,bf16] [--batch 128]
                           [--width 64] [--device CPU|GPU] [--rounds 5 (cpu clock: 101)]
                           [--steps 2] [--clock wall|cpu] [--threads 1]
"""
from __future__ import annotations

import sys

import _compare
import numpy as np

LR, MOMENTUM = 0.01, 0.9
STAGES = ((1, 1), (2, 2), (4, 2), (8, 2))   # (width multiple, first stride)


# -- the model, three times --------------------------------------------------------------------
def mscore_net(width, classes=10):
    """The mscore network (parameter names match the torch module's state_dict)."""
    from mscore import nn, ops

    def conv(cin, cout, k, stride):
        return nn.Conv2d(cin, cout, k, stride, pad_mode="pad", padding=k // 2)

    class Block(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = conv(cin, cout, 3, stride)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = conv(cout, cout, 3, 1)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.project = stride != 1 or cin != cout
            if self.project:
                self.shortcut = nn.SequentialCell([conv(cin, cout, 1, stride),
                                                   nn.BatchNorm2d(cout)])

        def construct(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + (self.shortcut(x) if self.project else x))

    class ResNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = conv(3, width, 3, 1)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU()
            cin, layers = width, []
            for mult, stride in STAGES:
                cout = width * mult
                layers.append(nn.SequentialCell([Block(cin, cout, stride),
                                                 Block(cout, cout, 1)]))
                cin = cout
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.fc = nn.Dense(cin, classes)

        def construct(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(ops.mean(x, (2, 3)))

    return ResNet()


def torch_net(torch, width, classes=10):
    """The same network as a torch ``nn.Module``."""
    tnn = torch.nn

    def conv(cin, cout, k, stride):
        return tnn.Conv2d(cin, cout, k, stride, padding=k // 2, bias=False)

    class Block(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1, self.bn1 = conv(cin, cout, 3, stride), tnn.BatchNorm2d(cout)
            self.conv2, self.bn2 = conv(cout, cout, 3, 1), tnn.BatchNorm2d(cout)
            self.project = stride != 1 or cin != cout
            if self.project:
                self.shortcut = tnn.Sequential(conv(cin, cout, 1, stride),
                                               tnn.BatchNorm2d(cout))

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return torch.relu(out + (self.shortcut(x) if self.project else x))

    class ResNet(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = conv(3, width, 3, 1), tnn.BatchNorm2d(width)
            cin, layers = width, []
            for mult, stride in STAGES:
                cout = width * mult
                layers.append(tnn.Sequential(Block(cin, cout, stride), Block(cout, cout, 1)))
                cin = cout
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.fc = tnn.Linear(cin, classes)

        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(x.mean(dim=(2, 3)))

    return ResNet()


_TORCH_NAMES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
                "moving_variance": "running_var"}


def torch_name(ms_name):
    """The torch state_dict key of an mscore parameter name."""
    head, _, last = ms_name.rpartition(".")
    return f"{head}.{_TORCH_NAMES.get(last, last)}" if head else last


def conv_flops(width, batch, classes=10, size=32):
    """Multiply-adds x2 of one forward pass (convolutions and the classifier)."""
    total, cin, s = 0, 3, size
    total += 2 * 3 * width * 9 * s * s
    cin = width
    for mult, stride in STAGES:
        cout = width * mult
        for b in range(2):
            st = stride if b == 0 else 1
            so = s // st
            total += 2 * cin * cout * 9 * so * so + 2 * cout * cout * 9 * so * so
            if st != 1 or cin != cout:
                total += 2 * cin * cout * so * so
            cin, s = cout, so
    return (total + 2 * cin * classes) * batch


class ResNetWorkload(_compare.Workload):
    """The ResNet-18-like net on 32x32 inputs, cross entropy."""

    def __init__(self, width, batch):
        self.width, self.batch = width, batch

    def mscore_net(self):
        return mscore_net(self.width)

    def mscore_loss(self):
        from mscore import nn
        return nn.CrossEntropyLoss()

    def torch_net(self, torch):
        return torch_net(torch, self.width)

    def torch_name(self, ms_name):
        return torch_name(ms_name)

    def torch_loss(self, torch, out, y):
        return torch.nn.functional.cross_entropy(out, y)

    def is_state(self, ms_name):
        return ms_name.rpartition(".")[2] in ("moving_mean", "moving_variance")

    def jax_apply(self, params, state, x, low_dt, precision):
        return jax_apply(self.width, params, state, x, low_dt, precision)

    def jax_loss(self, logits, y):
        import optax
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def flops(self):
        return 3 * conv_flops(self.width, self.batch)


def jax_apply(width, params, state, x, low_dt, precision):
    """The model in jax: ``(float32 logits, new BatchNorm statistics)``; with ``low_dt`` the
    convolutions and the classifier compute in it, BatchNorm in float32."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    spec = lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))

    def conv(w, x, stride):
        k = w.shape[-1] // 2
        if low_dt is not None:
            w = w.astype(low_dt)
        return lax.conv_general_dilated(x, w, (stride, stride), [(k, k), (k, k)],
                                        dimension_numbers=spec, precision=precision)

    def bn(p, s, x):
        dt = x.dtype
        x = x.astype(jnp.float32)
        mean = jnp.mean(x, axis=(0, 2, 3))
        var = jnp.mean(jnp.square(x - mean.reshape(1, -1, 1, 1)), axis=(0, 2, 3))
        n = x.shape[0] * x.shape[2] * x.shape[3]
        inv = p["gamma"] * lax.rsqrt(var + 1e-5)
        y = (x - mean.reshape(1, -1, 1, 1)) * inv.reshape(1, -1, 1, 1) + \
            p["beta"].reshape(1, -1, 1, 1)
        mean, var = lax.stop_gradient(mean), lax.stop_gradient(var)
        new = {"moving_mean": 0.9 * s["moving_mean"] + 0.1 * mean,
               "moving_variance": 0.9 * s["moving_variance"] + 0.1 * var * n / (n - 1)}
        return y.astype(dt), new

    def block(p, s, x, stride, project):
        new = {}
        out, new["bn1"] = bn(p["bn1"], s["bn1"], conv(p["conv1"]["weight"], x, stride))
        out, new["bn2"] = bn(p["bn2"], s["bn2"], conv(p["conv2"]["weight"], jax.nn.relu(out), 1))
        if project:
            sc, bn_s = bn(p["shortcut"]["1"], s["shortcut"]["1"],
                          conv(p["shortcut"]["0"]["weight"], x, stride))
            new["shortcut"] = {"1": bn_s}
        else:
            sc = x
        return jax.nn.relu(out + sc), new

    new = {}
    if low_dt is not None:
        x = x.astype(low_dt)
    x, new["bn1"] = bn(params["bn1"], state["bn1"], conv(params["conv1"]["weight"], x, 1))
    x = jax.nn.relu(x)
    cin = width
    for i, (mult, stride) in enumerate(STAGES):
        name, cout = f"layer{i + 1}", width * mult
        new[name] = {}
        for b in range(2):
            st = stride if b == 0 else 1
            x, new[name][str(b)] = block(params[name][str(b)], state[name][str(b)], x, st,
                                         st != 1 or cin != cout)
            cin = cout
    feat = jnp.mean(x, axis=(2, 3))
    w, b = params["fc"]["weight"], params["fc"]["bias"]
    if low_dt is not None:
        w, b = w.astype(low_dt), b.astype(low_dt)
    return (jnp.matmul(feat, w.T, precision=precision) + b).astype(jnp.float32), new


def main(argv=None, out=sys.stdout):
    """Run the comparisons; 0 on success, 2 when a comparison was not like for like."""
    p = _compare.parser(__doc__.splitlines()[0])
    _compare.common_arguments(p, batch=128)
    p.add_argument("--width", type=int, default=64, help="channels of the first stage")
    args = p.parse_args(argv)
    _compare.check_arguments(p, args)
    if args.width < 1:
        p.error("--width: expected a positive int")
    _compare.limit_threads(args.threads)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((args.batch, 3, 32, 32)).astype(np.float32),
                rng.integers(0, 10, args.batch).astype(np.int32)) for _ in range(2)]
    workload = ResNetWorkload(args.width, args.batch)
    print(f"ResNet-18-like (width {args.width}), 32x32, batch {args.batch}, device "
          f"{args.device}, {workload.flops() / 1e9:.1f} GFLOP per train step, {args.rounds} "
          f"rounds x {args.steps} steps ({args.clock} clock, {args.threads or 'default'} "
          f"thread(s))", file=out, flush=True)
    return _compare.run(workload, args, batches, out, LR, MOMENTUM)


if __name__ == "__main__":
    sys.exit(main())
