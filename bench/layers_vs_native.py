"""mscore[torch] recurrent + transformer training step vs the same model in plain torch, in one
process.

Model: ``LSTM(32 -> 64, batch_first)`` -> ``TransformerEncoderLayer(64, 4 heads, 128,
dropout 0, batch_first)`` -> mean over time -> ``Dense(64, 10)``, cross entropy, SGD
(lr 0.01); batch 32 of 16 steps by default. torch's modules get the mscore network's initial
weights (LSTM names and gate order are the same; ``dense1/2`` are torch's ``linear1/2``,
``gamma``/``beta`` its LayerNorm ``weight``/``bias``), and the script checks that both sides
give the same losses before timing.

Timing: warm-up, then ``--repeats`` rounds of ``--steps`` steps per variant (order rotating);
reported: the median time per step and the ratio mscore / native.

    python bench/layers_vs_native.py [--batch 32] [--seq 16] [--steps 10] [--repeats 7]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--device", choices=("CPU", "GPU"), default="CPU")
    return p.parse_args(argv)


def _mscore_model(ms, nn):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(32, 64, batch_first=True)
            self.encoder = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                                      batch_first=True)
            self.head = nn.Dense(64, 10)

        def construct(self, x):
            y, _ = self.lstm(x)
            return self.head(self.encoder(y).mean(1))
    ms.set_seed(0)
    return Net()


def _torch_model(torch, ms_net, device):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(32, 64, batch_first=True)
            self.encoder = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0,
                                                            batch_first=True)
            self.head = torch.nn.Linear(64, 10)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(self.encoder(y).mean(1))
    net = Net().to(device)
    rename = {"dense1": "linear1", "dense2": "linear2", "gamma": "weight", "beta": "bias"}
    state = {}
    for name, p in ms_net.parameters_and_names():
        parts = [rename.get(part, part) for part in name.split(".")]
        state[".".join(parts)] = torch.from_numpy(p.asnumpy()).to(device)
    net.load_state_dict(state, strict=True)
    return net


def main(argv=None):
    args = _parse(argv)
    import torch

    import mscore as ms
    from mscore import nn

    ms.set_context(backend="torch", device_target=args.device)
    backend = ms.context.current_backend()
    device = backend.torch_device
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((args.batch, args.seq, 32)).astype(np.float32) for _ in range(4)]
    ys = [rng.integers(0, 10, args.batch).astype(np.int64) for _ in range(4)]
    ms_net = _mscore_model(ms, nn)
    t_net = _torch_model(torch, ms_net, device)
    step = nn.TrainOneStepCell(nn.WithLossCell(ms_net, nn.CrossEntropyLoss()),
                               nn.SGD(ms_net.trainable_params(), 0.01))
    step.set_train()
    t_opt = torch.optim.SGD(t_net.parameters(), lr=0.01)
    ms_data = [(ms.Tensor(x), ms.Tensor(y.astype(np.int32))) for x, y in zip(xs, ys)]
    t_data = [(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device))
              for x, y in zip(xs, ys)]
    count = {"ms": 0, "t": 0}

    def mscore_step():
        x, y = ms_data[count["ms"] % 4]
        count["ms"] += 1
        return step(x, y)

    def native_step():
        x, y = t_data[count["t"] % 4]
        count["t"] += 1
        t_opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(t_net(x), y)
        loss.backward()
        t_opt.step()
        return loss

    for _ in range(3):
        a, b = float(mscore_step().asnumpy()), float(native_step().item())
        print(f"loss mscore {a:.6f}  torch {b:.6f}")
        if abs(a - b) > 1e-4 * max(1.0, abs(b)):
            raise SystemExit("the two models disagree: not timing")
    variants = {"mscore[torch]": mscore_step, "torch": native_step}
    times = {k: [] for k in variants}
    for r in range(args.repeats):
        order = list(variants)[r % 2:] + list(variants)[:r % 2]
        for name in order:
            backend.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                out = variants[name]()
            _ = float(out.asnumpy()) if hasattr(out, "asnumpy") else float(out.item())
            times[name].append((time.perf_counter() - t0) / args.steps)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:>14}: {v * 1e3:8.2f} ms/step")
    print(f"ratio mscore/torch: {med['mscore[torch]'] / med['torch']:.2f}")


if __name__ == "__main__":
    main()
