"""Data-parallel training of the network of MindSpore's amp tutorial on handwritten digits,
on 2 workers.

Every worker holds the whole network and trains on its half of each batch; the gradients are
all-reduced (averaged) before every optimizer step, so the job trains the same model as one
process with the whole batch. Launch it with mscore's msrun-style launcher or with torchrun::

    mscore run --worker_num=2 --local_worker_num=2 examples/data_parallel.py --backend torch
    torchrun --nproc-per-node=2 examples/data_parallel.py --backend jax --mode graph

What it shows, in MindSpore's API: ``communication.init()``, ``get_rank()``,
``get_group_size()``, ``set_auto_parallel_context(parallel_mode=DATA_PARALLEL,
gradients_mean=True)``, a dataset that shards itself from the communication context,
``Model`` with amp O2 and loss scaling (an overflow on any worker makes every worker skip the
step), ``LossMonitor`` lines that name the rank, ``ModelCheckpoint`` writing one folder per
rank (a rerun in the same folder may rename the prefix of some ranks only, as MindSpore
does: each rank's own file name is gathered, and printed), and
``load_distributed_checkpoint`` reading the ranks' files back into one network, evaluated at
the same amp level.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

from mscore.examples.amp_digits import build_network, datapipe, write_digits_idx


def _parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default=None, help="torch, jax, numpy, cupy (default: "
                                                   "MSCORE_BACKEND or numpy)")
    p.add_argument("--mode", choices=("pynative", "graph"), default="pynative")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64, help="global batch (all workers)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--ckpt-dir", default=os.path.join("mscore_dp_output", "ckpt"),
                   help="where every rank saves (in its own rank_R folder; default "
                        "./mscore_dp_output/ckpt, shared by the workers of this machine)")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="exit with status 1 when the test accuracy is below this")
    return p


def gather_paths(path, limit=4096):
    """Every rank's ``path`` (a str of at most ``limit`` UTF-8 bytes), in rank order, on
    every rank: an all-gather of the bytes as a row of int32 codes (0 pads)."""
    import numpy as np

    import mscore as ms
    from mscore.communication import comm_func

    data = path.encode("utf-8")
    if len(data) > limit:
        raise ValueError(f"checkpoint path longer than {limit} bytes: {path[:80]!r}...")
    row = np.zeros((1, limit), np.int32)
    row[0, :len(data)] = np.frombuffer(data, np.uint8)
    gathered, _ = comm_func.all_gather_into_tensor(ms.Tensor(row))
    return [bytes(codes[codes > 0].astype(np.uint8)).decode("utf-8")
            for codes in gathered.asnumpy()]


def main(argv=None):
    args = _parser().parse_args(argv)
    import mscore as ms
    from mscore import amp, nn
    from mscore.amp import FixedLossScaleManager
    from mscore.communication import comm_func, get_group_size, get_rank, init
    from mscore.train import CheckpointConfig, LossMonitor, ModelCheckpoint

    context = {"mode": ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE}
    if args.backend:
        context["backend"] = args.backend
    ms.set_context(**context)
    init()                                   # join the job the launcher started
    rank, size = get_rank(), get_group_size()
    if args.batch_size % size:
        print(f"error: --batch-size {args.batch_size} is not a multiple of the {size} workers",
              file=sys.stderr)
        return 2
    ms.set_seed(1)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True)

    with tempfile.TemporaryDirectory(prefix=f"mscore-dp-rank{rank}-") as tmp:
        data_dir = os.path.join(tmp, "digits")        # the same files on every rank
        ckpt_dir = args.ckpt_dir
        write_digits_idx(data_dir)
        # Sharded by the job (rank r reads rows r, r + size, ...): each step of the job sees
        # one global batch of --batch-size rows.
        train = datapipe(data_dir, "train", args.batch_size // size, shuffle=True)
        # Every rank evaluates the whole test set.
        test = datapipe(data_dir, "test", args.batch_size, shuffle=False, num_shards=1,
                        shard_id=0)

        net = build_network()
        loss_fn = nn.CrossEntropyLoss()
        optimizer = nn.Momentum(net.trainable_params(), learning_rate=args.lr, momentum=0.9)
        model = ms.Model(net, loss_fn, optimizer, metrics={"accuracy"}, amp_level="O2",
                         loss_scale_manager=FixedLossScaleManager())
        steps = train.get_dataset_size()
        checkpoint = ModelCheckpoint("digits", ckpt_dir, CheckpointConfig(
            save_checkpoint_steps=steps, keep_checkpoint_max=1))
        if rank == 0:
            epochs = f"{args.epochs} epoch{'s' if args.epochs != 1 else ''}"
            print(f"mscore {ms.__version__} | backend {ms.get_context('backend')} | {size} "
                  f"workers | {epochs} of {steps} steps, {args.batch_size // size} rows per "
                  f"worker and step | checkpoints: {os.path.abspath(ckpt_dir)}", flush=True)
        model.train(args.epochs, train, callbacks=[LossMonitor(steps), checkpoint])
        accuracy = float(model.eval(test)["accuracy"])
        print(f"test accuracy: {accuracy:.4f} (rank {rank})", flush=True)

        # Every rank's own file: a rerun in the same folder renames the prefix per rank
        # folder (digits_1, digits_2, ... as MindSpore does), so no rank can guess another's.
        files = gather_paths(checkpoint.latest_ckpt_file_name)
        if rank == 0:
            print("saved:\n" + "\n".join(f"  rank {r}: {f}" for r, f in enumerate(files)),
                  flush=True)
            fresh = build_network()
            ms.load_distributed_checkpoint(fresh, files)
            # Evaluated at O2, as the trained network was, so the two accuracies compare.
            fresh = amp.auto_mixed_precision(fresh, "O2")
            reloaded = float(ms.Model(fresh, loss_fn, metrics={"accuracy"}).eval(test)[
                "accuracy"])
            print(f"reloaded from the {size} ranks' checkpoints: test accuracy "
                  f"{reloaded:.4f}", flush=True)
        comm_func.barrier()                  # the job ends together, after the reload
    if args.min_accuracy is not None and accuracy < args.min_accuracy:
        print(f"FAILED: accuracy {accuracy:.4f} < {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
