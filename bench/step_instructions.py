"""CPU instructions per train step on the launch-bound proxies, counted by callgrind.

On a shared machine the time ratios of ``bench/gpt.py`` and ``bench/resnet.py`` at tiny
shapes move by ±15% from run to run. The instructions a step executes do not depend on the
load: this runs mscore[torch]'s PYNATIVE step and the native torch step of the same model
(``bench/host_calls.py``'s workloads, the timing benches' own steps) in one process under
``valgrind --tool=callgrind``, with instrumentation switched on only around ``--steps``
steps of each side after a warm-up, and prints millions of instructions per step and their
ratio mscore/native. Cache misses and memory stalls are not in the count; it measures the
host work of a step, which is what these proxies are about.

    python bench/step_instructions.py [--model gpt|resnet|all] [--levels O0,O2,bf16]
                                      [--steps 20]

Needs ``valgrind`` (with ``callgrind_control``) on the PATH; each model and level takes
about a minute.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIDES = ("native", "mscore")
LEVELS = ("O0", "O2", "bf16")


def _child(model, level, steps, folder):
    """Under callgrind: warm both steps up, then run ``steps`` of each side between
    handshakes with the parent, which switches instrumentation on and off."""
    sys.path.insert(0, str(HERE))
    import _compare
    import host_calls
    import torch

    import mscore as ms
    torch.set_num_threads(1)
    ms.set_context(backend="torch", device_target="CPU", mode=ms.PYNATIVE_MODE)
    workload, x, y = host_calls._workload(model)
    step, _ = _compare.mscore_step(workload, ms, level, 0.01, 0.9)
    native = host_calls._native_step(torch, workload, level)
    mx, my = ms.Tensor(x), ms.Tensor(y)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()
    runs = {"native": lambda: native(tx, ty), "mscore": lambda: step(mx, my)}
    for side in SIDES:
        for _ in range(5):
            runs[side]()
        _handshake(folder, f"{side}-start")
        for _ in range(steps):
            runs[side]()
        _handshake(folder, f"{side}-end")


def _handshake(folder, name):
    Path(folder, name).touch()
    while not Path(folder, name + ".ok").exists():
        time.sleep(0.02)


def _wait_for(folder, name, proc):
    while not Path(folder, name).exists():
        if proc.poll() is not None:
            raise RuntimeError(f"the measured process exited ({proc.returncode}) before "
                               f"{name!r}; see {folder}/child.log")
        time.sleep(0.05)


def _control(*args):
    subprocess.run(["callgrind_control", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def _totals(path):
    for line in Path(path).read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise ValueError(f"{path}: no 'totals:' line in the callgrind output")


def measure(model, level, steps):
    """``{"native": instructions per step, "mscore": ...}`` of one model and level."""
    folder = tempfile.mkdtemp(prefix="mscore-instr-")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
           f"--callgrind-out-file={folder}/cg.%p", sys.executable, __file__, "--child",
           model, level, str(steps), folder]
    try:
        with open(Path(folder, "child.log"), "w") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            try:
                pid = str(proc.pid)
                for _number, side in enumerate(SIDES, 1):
                    _wait_for(folder, f"{side}-start", proc)
                    _control("-z", pid)
                    _control("-i", "on", pid)
                    Path(folder, f"{side}-start.ok").touch()
                    _wait_for(folder, f"{side}-end", proc)
                    _control("-i", "off", pid)
                    _control("-d", side, pid)
                    Path(folder, f"{side}-end.ok").touch()
                if proc.wait(timeout=600):
                    raise RuntimeError(f"the measured process failed; see {folder}/child.log")
            finally:
                if proc.poll() is None:
                    proc.kill()
        dumps = {side: next(Path(folder).glob(f"cg.{pid}.{n}"))
                 for n, side in enumerate(SIDES, 1)}
        out = {side: _totals(path) / steps for side, path in dumps.items()}
    except BaseException:
        print(f"(callgrind output kept in {folder})", file=sys.stderr)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return out


def main(argv=None):
    """Print instructions per step and the ratio for each requested model and level."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2], int(argv[3]), argv[4])
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("gpt", "resnet", "all"), default="all")
    p.add_argument("--levels", default=",".join(LEVELS))
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args(argv)
    levels = args.levels.split(",")
    if set(levels) - set(LEVELS) or args.steps < 1:
        p.error(f"--levels: expected some of {list(LEVELS)}; --steps: positive")
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        print("valgrind (with callgrind_control) is not on the PATH: nothing measured")
        return 1
    for model in (("gpt", "resnet") if args.model == "all" else (args.model,)):
        for level in levels:
            got = measure(model, level, args.steps)
            print(f"{model} {level}: instructions/step native {got['native'] / 1e6:.2f} M, "
                  f"mscore {got['mscore'] / 1e6:.2f} M; ratio mscore/native "
                  f"{got['mscore'] / got['native']:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
