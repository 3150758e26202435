"""The bytes a rank holds with the parallel optimizer, against one process: the distinct
storages behind every live Parameter and behind Adam's moments (tests/live_storage.py), for
the MLP 256-512-512-16 on 2 ranks (``mscore run``, 127.0.0.1), per mode, optimizer level and
gradient accumulation. Prints one line per configuration with the two ratios (1/N of the
moments is the goal; weights stay whole, so all Parameters cannot drop under
``(1 + moments / N) / (1 + moments)`` of one process).

    python bench/parallel_optimizer_memory.py [--backend torch|jax] [--workers 2]
        [--configs pynative:level1,graph:level1,pynative:level2,graph:level2:acc]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "tests", "sharded_memory_worker.py")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--configs", default="pynative:level1,graph:level1,pynative:level2,"
                                        "graph:level2,graph:level1:acc,graph:level2:acc")
    p.add_argument("--timeout", type=int, default=900)
    args = p.parse_args(argv)
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "mscore.launch", f"--worker_num={args.workers}",
               f"--local_worker_num={args.workers}", "--master_addr=127.0.0.1",
               f"--master_port={_free_port()}", WORKER, "--backend", args.backend,
               "--configs", args.configs, "--out", out]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=args.timeout)
        if proc.returncode:
            sys.exit(f"the job failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        with open(os.path.join(out, "rank0.json")) as f:
            result = json.load(f)
    print(f"backend {args.backend}, {args.workers} ranks, rank 0 against one process")
    print(f"{'config':<22}{'moments':>10}{'all Parameters':>16}{'MB alone':>10}{'MB rank':>9}")
    for cfg, got in result.items():
        (alone_all, alone_moments), (all_bytes, moments) = got["alone"], got["sharded"]
        print(f"{cfg:<22}{moments / alone_moments:>10.3f}{all_bytes / alone_all:>16.3f}"
              f"{alone_all / 2 ** 20:>10.2f}{all_bytes / 2 ** 20:>9.2f}")


if __name__ == "__main__":
    main()
