"""The main job: the seed-004 mixed-precision example on real handwritten digits.

It trains the seed's network (Flatten, Dense 784-512-512-10 with ReLU) with
``Model(..., amp_level="O2", loss_scale_manager=FixedLossScaleManager())``, ``LossMonitor`` and
``ModelCheckpoint``, then evaluates and prints the test accuracy and the wall time.

The data are scikit-learn's handwritten digits (1797 images of 8 x 8, shipped with the
package, no download). They are written as MNIST IDX files and read back with
``MnistDataset``; the pipeline upsamples each image to 20 x 20 and pads it to 28 x 28 (MNIST's
layout: the digit in a 20 x 20 box centred in 28 x 28), then applies the seed's ``Rescale``,
``Normalize`` and ``TypeCast``, so the seed network runs unchanged.

Usage::

    python -m mscore.examples.amp_digits [--backend torch|jax|cupy] [--epochs 10]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

DEFAULT_EPOCHS = 10
DEFAULT_BATCH = 64
DEFAULT_LR = 0.05
TEST_FRACTION = 0.2


def write_digits_idx(folder, seed=0):
    """Write scikit-learn's digits as MNIST IDX files (``train-*`` 80 %, ``t10k-*`` 20 %,
    a fixed random split) into ``folder``; returns ``(n_train, n_test)``."""
    from sklearn.datasets import load_digits
    from mscore.dataset import write_idx
    digits = load_digits()
    images = np.clip(np.rint(digits.images * (255.0 / 16.0)), 0, 255).astype(np.uint8)
    labels = digits.target.astype(np.uint8)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(round(len(labels) * TEST_FRACTION))
    test, train = order[:n_test], order[n_test:]
    os.makedirs(folder, exist_ok=True)
    write_idx(os.path.join(folder, "train-images-idx3-ubyte"), images[train])
    write_idx(os.path.join(folder, "train-labels-idx1-ubyte"), labels[train])
    write_idx(os.path.join(folder, "t10k-images-idx3-ubyte"), images[test])
    write_idx(os.path.join(folder, "t10k-labels-idx1-ubyte"), labels[test])
    return len(train), len(test)


def datapipe(path, usage, batch_size, shuffle, num_shards=None, shard_id=None):
    """The seed-004 pipeline, plus the 8x8 -> 28x28 step for the digits (``num_shards`` /
    ``shard_id`` as MnistDataset's; in a data-parallel job they default to the job's)."""
    import mscore as ms
    from mscore.dataset import MnistDataset, transforms, vision
    image_transforms = [
        vision.Resize((20, 20)),
        vision.Pad(4),
        vision.Rescale(1.0 / 255.0, 0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
    ]
    label_transform = transforms.TypeCast(ms.int32)
    dataset = MnistDataset(path, usage=usage, shuffle=shuffle, num_shards=num_shards,
                           shard_id=shard_id)
    dataset = dataset.map(image_transforms, "image")
    dataset = dataset.map(label_transform, "label")
    return dataset.batch(batch_size)


def build_network():
    """The seed-004 network."""
    from mscore import nn

    class Network(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.dense_relu_sequential = nn.SequentialCell(
                nn.Dense(28 * 28, 512),
                nn.ReLU(),
                nn.Dense(512, 512),
                nn.ReLU(),
                nn.Dense(512, 10),
            )

        def construct(self, x):
            x = self.flatten(x)
            logits = self.dense_relu_sequential(x)
            return logits

    return Network()


def _parser():
    p = argparse.ArgumentParser(
        prog="mscore demo",
        description="Train the seed-004 network with amp O2 on scikit-learn's digits and "
                    "print the test accuracy.")
    p.add_argument("--backend", default=None,
                   help="backend (numpy, torch, jax, cupy, ...); default: MSCORE_BACKEND or "
                        "the built-in numpy")
    p.add_argument("--device-target", default=None, choices=("CPU", "GPU", "Ascend"),
                   help="device (default: CPU, or GPU for a backend that declares no CPU)")
    p.add_argument("--mode", default="pynative", choices=("pynative", "graph"),
                   help="execution mode; graph compiles the train step where the backend can")
    p.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS)
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    p.add_argument("--lr", type=float, default=DEFAULT_LR, help="Momentum learning rate")
    p.add_argument("--amp-level", default="O2", choices=("O0", "O1", "O2", "O3"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data-dir", default=None,
                   help="where the IDX files go (default: a temporary folder)")
    p.add_argument("--ckpt-dir", default=None,
                   help="where checkpoints go (default: a temporary folder)")
    p.add_argument("--per-print", type=int, default=10, help="LossMonitor interval (steps)")
    p.add_argument("--sink", action="store_true",
                   help="dataset_sink_mode=True: prefetch batches onto the device in a thread")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.add_argument("--summary-dir", default=os.path.join("mscore_demo_output", "summary"),
                   help="where the TensorBoard summary goes; its loss curve is drawn to "
                        "loss.png beside it (default: ./mscore_demo_output/summary)")
    p.add_argument("--no-summary", action="store_true", help="write no summary and no plot")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="exit with status 1 when the test accuracy is below this")
    return p


def _declared_devices(backend):
    """The device targets a backend's plugin declares ("CPU", "GPU"); empty if unknown."""
    from mscore.plugin.registry import get_registry
    try:
        return {d.split(":")[0] for d in get_registry().spec(backend).devices}
    except ValueError:
        return {"CPU"}  # not installed: let set_context name the installed ones


def main(argv=None) -> int:
    """Run the job; returns the exit status (0, or 1 below ``--min-accuracy``)."""
    args = _parser().parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1 or args.lr <= 0:
        print("error: --epochs and --batch-size must be positive and --lr > 0", file=sys.stderr)
        return 2
    start = time.perf_counter()
    import mscore as ms
    from mscore import nn
    from mscore.amp import FixedLossScaleManager
    from mscore.train import CheckpointConfig, LossMonitor, Model, ModelCheckpoint, \
        ProgressBar

    context = {"mode": ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE}
    if args.backend is not None:
        context["backend"] = args.backend
    if args.device_target is not None:
        context["device_target"] = args.device_target
    elif args.backend is not None and "CPU" not in _declared_devices(args.backend):
        context["device_target"] = "GPU"  # a GPU-only backend (cupy)
    from mscore.plugin.registry import BackendUnavailableError
    try:
        ms.set_context(**context)
    except (ValueError, BackendUnavailableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ms.set_seed(args.seed)
    backend = ms.get_context("backend")

    with tempfile.TemporaryDirectory(prefix="mscore-digits-") as tmp:
        data_dir = args.data_dir or os.path.join(tmp, "digits_idx")
        ckpt_dir = args.ckpt_dir or os.path.join(tmp, "ckpt")
        n_train, n_test = write_digits_idx(data_dir)
        train_dataset = datapipe(data_dir, "train", args.batch_size, shuffle=True)
        test_dataset = datapipe(data_dir, "test", args.batch_size, shuffle=False)

        model = build_network()
        loss_fn = nn.CrossEntropyLoss()
        optimizer = nn.Momentum(model.trainable_params(), learning_rate=args.lr, momentum=0.9)
        loss_scale_manager = FixedLossScaleManager()
        trainer = Model(model, loss_fn=loss_fn, optimizer=optimizer, metrics={"accuracy"},
                        amp_level=args.amp_level, loss_scale_manager=loss_scale_manager)
        steps = train_dataset.get_dataset_size()
        callbacks = [LossMonitor(args.per_print),
                     ModelCheckpoint("digits", ckpt_dir,
                                     CheckpointConfig(save_checkpoint_steps=steps,
                                                      keep_checkpoint_max=2))]
        if args.progress:
            callbacks.append(ProgressBar())
        if not args.no_summary:
            from mscore.train.summary import SummaryCollector
            callbacks.append(SummaryCollector(args.summary_dir, collect_freq=5))
        print(f"mscore {ms.__version__} | backend {backend} | amp {args.amp_level} | "
              f"digits: {n_train} train / {n_test} test images | {args.epochs} epochs of "
              f"{steps} steps", flush=True)
        t_train = time.perf_counter()
        trainer.train(args.epochs, train_dataset, callbacks=callbacks,
                      dataset_sink_mode=args.sink)
        train_s = time.perf_counter() - t_train
        result = trainer.eval(test_dataset)
        accuracy = float(result["accuracy"])
        ckpt = callbacks[1].latest_ckpt_file_name
        print(f"checkpoint: {os.path.basename(ckpt)}"
              + ("" if args.ckpt_dir is None else f" in {ckpt_dir}"))
    if not args.no_summary:
        from mscore.train.summary.plot import plot_summary
        picture = os.path.join(os.path.dirname(os.path.abspath(args.summary_dir)), "loss.png")
        plot_summary(args.summary_dir, picture)
        print(f"summary: {args.summary_dir} (tensorboard --logdir {args.summary_dir}); "
              f"loss curve: {picture}")
    wall = time.perf_counter() - start
    print(f"test accuracy: {accuracy:.4f} ({round(accuracy * n_test)}/{n_test})")
    print(f"wall time: {wall:.1f} s (training {train_s:.1f} s) on backend {backend}")
    if args.min_accuracy is not None and accuracy < args.min_accuracy:
        print(f"FAILED: accuracy {accuracy:.4f} < {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
