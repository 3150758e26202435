"""Crash trials: kill a training process at random points while ModelCheckpoint saves.

Each trial starts a child process that trains a network of about ``--megabytes`` MB of
parameters (numpy backend) with ``ModelCheckpoint(keep_checkpoint_max=1)`` saving after every
step, synchronously or with ``async_save`` (trials alternate), waits until the child has
completed its second step (so at least one checkpoint is complete), then ``SIGKILL``s it after
a random delay of up to ``--window`` step times. Afterwards it counts, per trial:

* **lost**: no complete, loadable checkpoint is left in the folder;
* **torn**: a file under a final ``*.ckpt`` name does not load (atomicity broken);
* **temporaries**: other files the kill left behind (a save was cut mid-write);
* **orphaned**: such files still there after the next save into the folder (it should
  remove them);
* **over max**: more than ``keep_checkpoint_max`` checkpoints on disk (allowed only while a
  save is in flight, so reported, not counted as a failure).

Target: 0 lost, 0 torn, 0 orphaned. Bounded: ``--trials`` (default 20) trials, each child
killed by the trial's end at the latest.

    python bench/crash_trials.py [--trials 20] [--seed 0] [--megabytes 24] [--window 3]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CHILD_TIMEOUT = 120  # seconds a child may take to reach its second step


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=20, help="number of kills (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of the kill delays")
    p.add_argument("--megabytes", type=float, default=24.0,
                   help="size of the checkpoint in MB (default 24)")
    p.add_argument("--window", type=float, default=3.0,
                   help="kill within this many step times after the second step (default 3)")
    p.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--async-save", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.trials < 1 or args.megabytes <= 0 or args.window <= 0:
        p.error("--trials, --megabytes and --window must be positive")
    return args


# -- the child: train and save until killed -------------------------------------------------
def _child(folder, megabytes, async_save):
    import numpy as np

    import mscore as ms
    from mscore import nn
    from mscore.dataset import NumpySlicesDataset
    from mscore.train import Callback, CheckpointConfig, Model, ModelCheckpoint

    ms.set_context(backend="numpy")
    ms.set_seed(0)
    width = max(8, int((megabytes * 1024 * 1024 / 4) ** 0.5))  # one width x width layer
    net = nn.SequentialCell(nn.Dense(width, width), nn.ReLU(), nn.Dense(width, 4))
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 1e-4))
    x = np.ones((4000, width), np.float32)
    y = np.zeros((4000, 4), np.float32)
    data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(2)

    class Announce(Callback):
        def on_train_step_end(self, run_context):
            print(f"step {run_context.original_args().cur_step_num} {time.monotonic():.4f}",
                  flush=True)

    cfg = CheckpointConfig(save_checkpoint_steps=1, keep_checkpoint_max=1,
                           async_save=async_save)
    model.train(1, data, callbacks=[ModelCheckpoint("net", folder, cfg), Announce()])


# -- the parent: kill and inspect ------------------------------------------------------------
def _step_times(proc, count):
    """Wait for ``count`` "step" lines; return their monotonic times."""
    times = []
    deadline = time.monotonic() + CHILD_TIMEOUT
    while len(times) < count:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the child ended early: {proc.stderr.read()[-2000:]}")
        if line.startswith("step "):
            times.append(float(line.split()[2]))
        if time.monotonic() > deadline:
            raise RuntimeError("the child took too long to start training")
    return times


def _inspect(folder):
    from mscore.train.serialization import load_checkpoint
    names = sorted(os.listdir(folder))
    finals = [n for n in names if n.endswith(".ckpt")]
    loadable, torn = 0, 0
    for name in finals:
        try:
            load_checkpoint(os.path.join(folder, name))
            loadable += 1
        except ValueError:
            torn += 1
    others = [n for n in names if not n.endswith(".ckpt")]
    return {"finals": len(finals), "loadable": loadable, "torn": torn, "others": others}


def _next_save(folder):
    """What the restarted run does first: save into the same folder."""
    import numpy as np

    import mscore as ms
    from mscore.train.serialization import save_checkpoint
    save_checkpoint({"w": ms.Tensor(np.zeros(4, np.float32))},
                    os.path.join(folder, "restart.ckpt"))
    return [n for n in os.listdir(folder)
            if not n.endswith(".ckpt") and n != "restart.ckpt"]


def _trial(index, args, rng, root):
    folder = os.path.join(root, f"trial{index}")
    os.makedirs(folder)
    async_save = index % 2 == 1
    cmd = [sys.executable, os.path.abspath(__file__), "--child", folder,
           "--megabytes", str(args.megabytes)] + (["--async-save"] if async_save else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first, second = _step_times(proc, 2)
        delay = rng.uniform(0.0, args.window * max(second - first, 0.01))
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    seen = _inspect(folder)
    left = _next_save(folder)
    return {"async": async_save, "delay": delay, "lost": seen["loadable"] == 0,
            "torn": seen["torn"], "temporaries": len(seen["others"]), "orphaned": len(left),
            "over_max": seen["finals"] > 1}


def main(argv=None):
    args = _parse(argv)
    if args.child:
        _child(args.child, args.megabytes, args.async_save)
        return 0
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rng = random.Random(args.seed)
    root = tempfile.mkdtemp(prefix="mscore-crash-trials-")
    results = []
    try:
        for i in range(args.trials):
            r = _trial(i, args, rng, root)
            results.append(r)
            print(f"trial {i + 1:2d} ({'async' if r['async'] else 'sync '}): kill after "
                  f"{r['delay']:.3f}s  lost={int(r['lost'])} torn={r['torn']} "
                  f"temporaries={r['temporaries']} orphaned={r['orphaned']} "
                  f"over_max={int(r['over_max'])}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    total = {k: sum(int(r[k]) for r in results)
             for k in ("lost", "torn", "temporaries", "orphaned", "over_max")}
    print(f"crash trials: {len(results)} kills ({args.megabytes:g} MB checkpoints, "
          f"keep_checkpoint_max=1, sync and async alternating): lost {total['lost']}, torn "
          f"{total['torn']}, temporaries left by kills {total['temporaries']}, orphaned after "
          f"the next save {total['orphaned']}, over keep_checkpoint_max {total['over_max']}")
    return 0 if total["lost"] == total["torn"] == total["orphaned"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
