"""Record MindSpore 2.10's per-step losses of the programs in ``programs.py`` into
``mindspore_losses.json`` beside this script (PyNative mode, CPU).

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python record_oracle.py
"""
import json
import os
import sys

import mindspore as ms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from programs import PROGRAMS


def main():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    losses = {}
    for name, program in PROGRAMS.items():
        ms.set_seed(0)
        losses[name] = program(ms)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mindspore_losses.json"), "w") as f:
        json.dump(losses, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
