"""Record MindSpore 2.10's results of the GRAPH_MODE programs in ``graph_programs.py`` into
``mindspore_graph_results.json`` beside this script (GRAPH_MODE, CPU).

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python record_graph_oracle.py
"""
import json
import os
import sys

import mindspore as ms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_programs import GRAPH_PROGRAMS


def main():
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    results = {}
    for name, program in GRAPH_PROGRAMS.items():
        ms.set_seed(0)
        results[name] = program(ms)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mindspore_graph_results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
