"""Cross-backend check for a GPU machine: every installed backend on CUDA against numpy on CPU.

For each installed backend that can use a GPU here, train the same MLP and CNN for 20 steps
(same initial weights, same batches, SGD with momentum, float32) and compare the losses step
by step with the numpy reference on CPU; backends declaring ``compile`` run in GRAPH_MODE too.
Prints one table row per (backend, mode, model) and exits non-zero when a row fails.

    python bench/gpu_check.py                    # every installed backend
    python bench/gpu_check.py --backends cupy,torch --rtol 1e-4 --json out.json

Backends that are unavailable here (no CUDA device, say) are listed with the reason and do
not fail the run; run it on a machine with a GPU to get numbers.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import mscore as ms
from mscore import nn
from mscore.plugin.registry import get_registry

STEPS = 20
BATCH = 16


class MLP(nn.Cell):
    """64 -> 128 -> 64 -> 10 with ReLU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(64, 128)
        self.fc2 = nn.Dense(128, 64)
        self.fc3 = nn.Dense(64, 10)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class CNN(nn.Cell):
    """Two conv/ReLU/max-pool stages on 1x16x16 inputs, then a Dense classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=1, pad_mode="same", has_bias=True)
        self.pool = nn.MaxPool2d(2, 2)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(16 * 4 * 4, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc(self.flatten(x))


MODELS = {"mlp": (MLP, (64,)), "cnn": (CNN, (1, 16, 16))}


def make_data(model, seed=0):
    """``STEPS`` batches of float32 inputs and learnable int32 labels (numpy)."""
    rng = np.random.default_rng(seed)
    shape = MODELS[model][1]
    xs = rng.standard_normal((STEPS, BATCH) + shape).astype(np.float32)
    proj = rng.standard_normal((int(np.prod(shape)), 10))
    ys = np.argmax(xs.reshape(STEPS, BATCH, -1) @ proj, -1).astype(np.int32)
    return xs, ys


def initial_weights(model):
    """The model's initial parameters, drawn once on numpy (shared by every backend)."""
    ms.set_context(backend="numpy", device_target="CPU", device_id=0, mode=ms.PYNATIVE_MODE)
    ms.set_seed(1)
    net = MODELS[model][0]()
    return {p.name: p.asnumpy() for p in net.get_parameters()}


def train(model, weights, data, mode):
    """Per-step losses of the active backend (float64 numpy array)."""
    ms.set_context(mode=mode)
    ms.set_seed(1)
    net = MODELS[model][0]()
    for p in net.get_parameters():
        p.set_data(ms.Tensor(weights[p.name]))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    step.set_train()
    xs, ys = data
    losses = []
    for x, y in zip(xs, ys):
        losses.append(float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy()))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    return np.array(losses)


def targets(names, device):
    """``(name, spec, reason)`` for every asked backend; reason is None when it can run on
    ``device`` ("GPU" or "CPU") here, judged by its probe's device list (or its declared
    devices when the probe lists none)."""
    registry = get_registry()
    rows = []
    for name in names:
        spec = registry.spec(name)
        reason, devices = None, list(spec.devices)
        if spec.probe is not None:
            try:
                ok, why, probed = spec.probe()
            except Exception as exc:  # a probe that raises is a finding, not a crash
                ok, why, probed = False, f"probe raised {type(exc).__name__}: {exc}", []
            if not ok:
                reason = why
            devices = list(probed) or devices
        prefixes = ("GPU", "CUDA") if device == "GPU" else ("CPU",)
        if reason is None and not any(str(d).upper().startswith(prefixes) for d in devices):
            reason = f"no {device} device here (found: {', '.join(map(str, devices)) or '-'})"
        rows.append((name, spec, reason))
    return rows


def main(argv=None):
    """Run the check; return 0 when every row that ran is within tolerance."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="all",
                        help="comma-separated backend names (default: every installed one)")
    parser.add_argument("--models", default="mlp,cnn", help="comma-separated: mlp, cnn")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="largest relative loss difference per step (default 1e-4)")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    parser.add_argument("--device", default="GPU", choices=("GPU", "CPU"),
                        help="where the backends under test run (CPU: a smoke test)")
    args = parser.parse_args(argv)
    registry = get_registry()
    names = registry.names() if args.backends == "all" else \
        [n.strip() for n in args.backends.split(",") if n.strip()]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"--models: unknown {unknown}; expected some of {sorted(MODELS)}")

    reference = {}
    for model in models:
        weights = initial_weights(model)
        data = make_data(model)
        reference[model] = (weights, data, train(model, weights, data, ms.PYNATIVE_MODE))

    rows, failed = [], False
    for name, spec, reason in targets([n for n in names if n != "numpy"], args.device):
        if reason is not None:
            rows.append({"backend": name, "mode": "-", "model": "-", "status": "skipped",
                         "detail": reason})
            continue
        modes = [("PYNATIVE", ms.PYNATIVE_MODE)]
        if "compile" in spec.capabilities:
            modes.append(("GRAPH", ms.GRAPH_MODE))
        for mode_name, mode in modes:
            for model in models:
                weights, data, ref = reference[model]
                row = {"backend": name, "mode": mode_name, "model": model}
                try:
                    ms.set_context(backend=name, device_target=args.device, device_id=0)
                    start = time.perf_counter()
                    losses = train(model, weights, data, mode)
                    row["seconds"] = round(time.perf_counter() - start, 2)
                except Exception as exc:  # report and go on with the other backends
                    row.update(status="ERROR", detail=f"{type(exc).__name__}: {exc}")
                    failed = True
                    rows.append(row)
                    continue
                finally:
                    ms.set_context(backend="numpy", device_target="CPU", device_id=0,
                                   mode=ms.PYNATIVE_MODE)
                diff = np.abs(losses - ref)
                rel = diff / np.maximum(np.abs(ref), 1e-12)
                ok = bool(np.all(np.isfinite(losses)) and rel.max() <= args.rtol)
                failed |= not ok
                row.update(status="ok" if ok else "FAIL", max_abs=float(diff.max()),
                           max_rel=float(rel.max()), first=float(losses[0]),
                           last=float(losses[-1]), ref_last=float(ref[-1]))
                rows.append(row)

    _print_table(rows, args.rtol, args.device)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rtol": args.rtol, "steps": STEPS, "rows": rows}, f, indent=2)
    return 1 if failed else 0


def _print_table(rows, rtol, device):
    where = "CUDA" if device == "GPU" else "CPU"
    print(f"{STEPS}-step float32 losses on {where} vs numpy on CPU (pass: max rel diff <= "
          f"{rtol:g})")
    head = ("backend", "mode", "model", "status", "max |diff|", "max rel", "first loss",
            "last loss", "numpy last", "seconds")
    table = [head]
    for r in rows:
        if "max_abs" in r:
            table.append((r["backend"], r["mode"], r["model"], r["status"],
                          f"{r['max_abs']:.3g}", f"{r['max_rel']:.3g}", f"{r['first']:.6f}",
                          f"{r['last']:.6f}", f"{r['ref_last']:.6f}", f"{r['seconds']}"))
        else:
            table.append((r["backend"], r["mode"], r["model"], r["status"], "", "", "", "",
                          "", ""))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for i, row in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for r in rows:
        if r["status"] in ("skipped", "ERROR"):
            print(f"{r['backend']} {r['mode']} {r['model']}: {r['status']}: {r['detail']}")


if __name__ == "__main__":
    sys.exit(main())
