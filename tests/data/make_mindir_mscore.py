"""Write mscore's MINDIR exports of the fixture networks (step 1 of 2).

Run from the repository root with mscore's environment::

    python tests/data/make_mindir_mscore.py [--width 512] [--out tests/data/mindir]

It writes ``mscore_<net>.mindir`` for every network of ``mindir_nets.build`` (numpy backend).
Step 2, ``make_mindir_fixtures.py`` (MindSpore's venv), loads them in MindSpore and records
what MindSpore computes on them.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import mindir_nets  # noqa: E402

import mscore  # noqa: E402
from mscore.train.serialization._mindir_export import export_mindir  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=mindir_nets.MLP_WIDTH)
    parser.add_argument("--out", default=os.path.join(HERE, "mindir"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    mscore.set_context(backend="numpy")
    for name, (make_net, make_inputs) in mindir_nets.build(mscore, args.width).items():
        path = export_mindir(make_net(), *make_inputs(),
                             file_name=os.path.join(args.out, f"mscore_{name}"))
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
