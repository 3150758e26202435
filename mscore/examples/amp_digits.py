"""``mscore demo``: the network of MindSpore's *Automatic Mix Precision* tutorial, trained on
real handwritten digits.

It trains the tutorial's network (Flatten, Dense 784-512-512-10 with ReLU) with
``Model(..., amp_level="O2", loss_scale_manager=FixedLossScaleManager())``, ``LossMonitor`` and
``ModelCheckpoint``, then evaluates and prints the test accuracy and the wall time.

The data are scikit-learn's handwritten digits (1797 images of 8 x 8, shipped with the
package, no download). They are written as MNIST IDX files and read back with
``MnistDataset``; the pipeline upsamples each image to 20 x 20 and pads it to 28 x 28 (MNIST's
layout: the digit in a 20 x 20 box centred in 28 x 28), then applies the tutorial's
``Rescale``, ``Normalize`` and ``TypeCast``, so the tutorial's network runs unchanged.

Each run gets its own folder, ``mscore_demo_output/<backend>-<amp level>-<mode>-<time>/``,
holding its TensorBoard summary (the loss, and the test accuracy as ``eval/accuracy``) and its
checkpoints; ``mscore_demo_output/loss.png`` draws the loss of every run found there, one
curve each.

Usage::

    mscore demo [--backend torch|jax|cupy] [--epochs 10]
    python -m mscore.examples.amp_digits [--backend torch|jax|cupy] [--epochs 10]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

import numpy as np

import mscore as ms
from mscore import dispatch, nn
from mscore.amp import FixedLossScaleManager
from mscore.commands import (
    ArgumentParser,
    CommandError,
    backend_choice,
    backend_spec,
    command,
    select_backend,
)
from mscore.common.dtype import float32
from mscore.common.tensor import Tensor
from mscore.dataset import MnistDataset, transforms, vision, write_idx
from mscore.train import CheckpointConfig, LossMonitor, Model, ModelCheckpoint, ProgressBar
from mscore.train.summary import SummaryCollector
from mscore.train.summary.plot import plot_summary

DEFAULT_EPOCHS = 10
DEFAULT_BATCH = 64
DEFAULT_LR = 0.05
TEST_FRACTION = 0.2
DEFAULT_OUTPUT = "mscore_demo_output"
TITLE = "MLP 784-512-512-10 (MindSpore's amp tutorial network) on scikit-learn's digits"


def write_digits_idx(folder, seed=0):
    """Write scikit-learn's digits as MNIST IDX files (``train-*`` 80 %, ``t10k-*`` 20 %,
    a fixed random split) into ``folder``; returns ``(n_train, n_test)``."""
    from sklearn.datasets import load_digits
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
    """The tutorial's pipeline, plus the 8x8 -> 28x28 step for the digits (``num_shards`` /
    ``shard_id`` as MnistDataset's; in a data-parallel job they default to the job's)."""
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
    """The tutorial's network: Flatten, Dense 784-512-512-10 with ReLU."""

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
    p = ArgumentParser(
        prog="mscore demo",
        description="Train MindSpore's mixed-precision tutorial network (Dense 784-512-512-10 "
                    "with ReLU) with amp O2 on scikit-learn's handwritten digits, and print "
                    "the test accuracy.")
    p.add_argument("--backend", default=None,
                   help="backend (numpy, torch, jax, cupy, ...); default: the MSCORE_BACKEND "
                        "environment variable, else the built-in numpy")
    p.add_argument("--device-target", default=None, choices=("CPU", "GPU", "Ascend"),
                   help="device (default: CPU, or GPU for a backend that declares no CPU)")
    p.add_argument("--mode", default="pynative", choices=("pynative", "graph"),
                   help="execution mode; graph compiles the train step where the backend can")
    p.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS)
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    p.add_argument("--lr", type=float, default=DEFAULT_LR, help="Momentum learning rate")
    p.add_argument("--amp-level", default="O2", choices=("O0", "O1", "O2", "O3"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1,
                   help="host BLAS/OpenMP threads while the job runs (default: 1, the fastest "
                        "for this small network; 0 leaves the libraries' own setting)")
    p.add_argument("--output-dir", default=DEFAULT_OUTPUT,
                   help="each run writes its summary and checkpoints into its own folder "
                        "here, and loss.png draws every run found here (default: "
                        f"./{DEFAULT_OUTPUT})")
    p.add_argument("--data-dir", default=None,
                   help="where the IDX files go (default: a temporary folder)")
    p.add_argument("--ckpt-dir", default=None,
                   help="where checkpoints go (default: the run's folder)")
    p.add_argument("--per-print", type=int, default=10, help="LossMonitor interval (steps)")
    p.add_argument("--sink", action="store_true",
                   help="dataset_sink_mode=True: prefetch batches onto the device in a thread")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    p.add_argument("--no-summary", action="store_true", help="write no summary and no plot")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="exit with status 1 when the test accuracy is below this")
    return p


def _check(args):
    """Argument values argparse cannot check, as one-line errors."""
    for option, value in (("--epochs", args.epochs), ("--batch-size", args.batch_size)):
        if value < 1:
            raise CommandError(f"{option}: expected a positive integer, got {value}")
    if not args.lr > 0:
        raise CommandError(f"--lr: expected a positive number, got {args.lr}")
    if args.threads < 0:
        raise CommandError(f"--threads: expected 0 (library default) or more, got "
                           f"{args.threads}")
    if args.per_print < 0:
        raise CommandError(f"--per-print: expected 0 (never) or more, got {args.per_print}")


def _check_folders(args):
    """The folders given on the command line, made before the data are written: a bad one
    is one line (the output folder only when something goes there)."""
    if args.data_dir is not None:
        make_folder(args.data_dir, "--data-dir")
    if args.ckpt_dir is not None:
        make_folder(args.ckpt_dir, "--ckpt-dir")
    if not args.no_summary or args.ckpt_dir is None:
        make_folder(args.output_dir, "--output-dir")


def _declared_devices(backend, source):
    """The device targets a backend's plugin declares ("CPU", "GPU"); a plugin that fails to
    load (or hangs) is a CommandError naming ``source``."""
    try:
        return {d.split(":")[0] for d in backend_spec(backend, source).devices}
    except ValueError:
        return {"CPU"}  # not installed: let set_context name the installed ones


@contextlib.contextmanager
def limit_host_threads(threads):
    """Limit the host's BLAS and OpenMP thread pools to ``threads`` inside the block (0: leave
    them alone). On a small network and a busy machine, spinning BLAS threads cost more than
    they give; one thread also keeps the numbers independent of the core count. (The
    backend's own pools are limited by :meth:`~mscore.plugin.backend.Backend.limit_threads`.)
    """
    if not threads:
        yield
        return
    from threadpoolctl import threadpool_limits  # the [demo] extra brings it
    with threadpool_limits(limits=threads):
        yield


def make_folder(path, option):
    """Create the folder ``path`` (and its parents) if it is missing; one line naming
    ``option`` (a :class:`CommandError`) when that fails or nothing can be written there."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise CommandError(f"{option}: {path!r} is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"{option}: cannot create the folder {path!r}: "
                           f"{exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CommandError(f"{option}: cannot write into the folder {path!r}")
    return path


def new_run_dir(output_dir, backend, amp_level, mode):
    """Create and return ``output_dir/<backend>-<amp_level>-<mode>-<YYYYmmdd-HHMMSS>`` (with
    ``-2``, ``-3``, ... when a run of the same second exists)."""
    stamp = time.strftime('%Y%m%d-%H%M%S')
    stem = os.path.join(output_dir, f"{backend}-{amp_level}-{mode}-{stamp}")
    make_folder(output_dir, "--output-dir")
    for n in range(1, 1000):
        path = stem if n == 1 else f"{stem}-{n}"
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise CommandError(f"--output-dir: cannot create the folder {path!r}: "
                               f"{exc.strerror or exc}") from None
    raise CommandError(f"--output-dir: cannot make a new run folder in {output_dir!r}")


def _plural(count, noun):
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _plot_runs(output_dir):
    """Draw every run under ``output_dir`` into ``output_dir/loss.png``; the line to print."""
    picture = os.path.join(output_dir, "loss.png")
    try:
        plot_summary(output_dir, picture, title=TITLE)
    except ImportError:
        return ("loss curves: not drawn, matplotlib is not installed (pip install matplotlib, "
                "or install mscore with the [demo] extra)")
    return f"loss curves of every run in {output_dir}: {picture}"


@command("mscore demo")
def main(argv=None) -> int:
    """Run the job; returns the exit status (0, 1 below ``--min-accuracy``, 2 for a usage
    error or a missing dependency)."""
    args = _parser().parse_args(argv)
    _check(args)
    import sklearn.datasets  # noqa: F401  (missing: one line naming the [demo] extra, now)
    with limit_host_threads(args.threads):
        return _run(args)


def _run(args):
    start = time.perf_counter()

    name, source = backend_choice(args.backend)
    device = args.device_target
    if device is None and name is not None and "CPU" not in _declared_devices(name, source):
        device = "GPU"  # a GPU-only backend (cupy)
    backend = select_backend(name, source, device_target=device,
                             device_source="--device-target" if args.device_target else
                             f"the device of backend {name!r}",
                             mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    mode = args.mode
    if mode == "graph":
        reason = dispatch.backend().graph_mode_eager_reason()
        if reason is not None:
            mode = "graph-eager"
            print(f"--mode graph: the train step runs eagerly: {reason}", flush=True)
    with dispatch.backend().limit_threads(args.threads) if args.threads else \
            contextlib.nullcontext():
        return _train_and_report(args, backend, mode, start)


def _train_and_report(args, backend, mode, start):
    _check_folders(args)
    ms.set_seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="mscore-digits-") as tmp:
        data_dir = args.data_dir or os.path.join(tmp, "digits_idx")
        n_train, n_test = write_digits_idx(data_dir)
        train_dataset = datapipe(data_dir, "train", args.batch_size, shuffle=True)
        test_dataset = datapipe(data_dir, "test", args.batch_size, shuffle=False)
        # A run folder only when something goes into it: the summary, or the checkpoints.
        run_dir = None
        if not args.no_summary or args.ckpt_dir is None:
            run_dir = new_run_dir(args.output_dir, backend, args.amp_level, mode)
        ckpt_dir = args.ckpt_dir or os.path.join(run_dir, "ckpt")

        model = build_network()
        loss_fn = nn.CrossEntropyLoss()
        optimizer = nn.Momentum(model.trainable_params(), learning_rate=args.lr, momentum=0.9)
        loss_scale_manager = FixedLossScaleManager()
        trainer = Model(model, loss_fn=loss_fn, optimizer=optimizer, metrics={"accuracy"},
                        amp_level=args.amp_level, loss_scale_manager=loss_scale_manager)
        steps = train_dataset.get_dataset_size()
        checkpoint = ModelCheckpoint("digits", ckpt_dir,
                                     CheckpointConfig(save_checkpoint_steps=steps,
                                                      keep_checkpoint_max=2))
        callbacks = [LossMonitor(args.per_print), checkpoint]
        if args.progress is not None:
            callbacks.append(ProgressBar(show=args.progress))
        # Kept open after training (a context), so the test accuracy goes into the same
        # event file, after the training steps (TensorBoard reads one run in order).
        summary = None if args.no_summary else SummaryCollector(run_dir, collect_freq=5)
        if summary is not None:
            callbacks.append(summary)
        threads = args.threads or "library default"
        print(f"mscore {ms.__version__} | backend {backend} | mode {mode} | amp "
              f"{args.amp_level} | host threads: {threads}\n"
              f"digits: {n_train} train / {n_test} test images | "
              f"{_plural(args.epochs, 'epoch')} of {_plural(steps, 'step')}\n"
              f"run: {run_dir or ckpt_dir}", flush=True)
        with summary if summary is not None else contextlib.nullcontext():
            t_train = time.perf_counter()
            trainer.train(args.epochs, train_dataset, callbacks=callbacks,
                          dataset_sink_mode=args.sink)
            train_s = time.perf_counter() - t_train
            accuracy = trainer.eval(test_dataset)["accuracy"]
            if summary is not None:
                _record_test_accuracy(summary.summary_record, accuracy, args.epochs * steps)
    print(f"checkpoint: {checkpoint.latest_ckpt_file_name}")
    print(f"test accuracy: {accuracy:.4f} ({round(accuracy * n_test)}/{n_test})", flush=True)
    if not args.no_summary:
        print(f"summary: {run_dir} (tensorboard --logdir {args.output_dir})")
        print(_plot_runs(args.output_dir))
    wall, since = _elapsed(start)
    print(f"wall time: {wall:.1f} s since {since} (training {train_s:.1f} s) on backend "
          f"{backend}")
    if args.min_accuracy is not None and accuracy < args.min_accuracy:
        print(f"FAILED: accuracy {accuracy:.4f} < {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


def _record_test_accuracy(record, accuracy, step):
    """The test accuracy as the scalar ``eval/accuracy`` at the last train step, in the
    training summary's own event file (``record``: its open ``SummaryRecord``)."""
    record.add_value("scalar", "eval/accuracy", Tensor(accuracy, float32))
    record.record(step)


def seconds_since_process_start():
    """Wall seconds since this process started (Linux: its start time in ``/proc``, which
    counts the interpreter's start and every import), or None where that is unknown."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")   # field 22: since boot
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _elapsed(start):
    """``(seconds, what they count from)``: since the process started where known, else
    since ``start`` (a ``perf_counter`` reading when the command started)."""
    since_process = seconds_since_process_start()
    if since_process is not None:
        return since_process, "the process started"
    return time.perf_counter() - start, "the command started (imports not counted)"


if __name__ == "__main__":
    sys.exit(main())
