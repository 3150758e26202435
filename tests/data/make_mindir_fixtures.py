"""Record MindSpore's side of the MINDIR fixtures (step 2 of 2; step 1 is
``make_mindir_mscore.py``). Run from the repository root with MindSpore 2.10's venv::

    /tmp/ms/bin/python tests/data/make_mindir_fixtures.py [--width 512] [--out tests/data/mindir]

For every network of ``mindir_nets.build`` it

* exports the MindSpore network as ``ms_<net>.mindir`` (``mindspore.export``, MINDIR);
* runs the network, its own file and mscore's file ``mscore_<net>.mindir`` through
  ``nn.GraphCell(mindspore.load(...))`` on the fixed inputs and checks that all three agree
  (1e-5 of the largest value for float outputs, 2e-3 for float16 ones; in practice they are
  bit-identical, O2 networks included);
* saves the inputs and the outputs in ``outputs.npz``: ``<net>/input<i>``,
  ``<net>/ms_net<i>`` (the network), ``<net>/ms_file<i>`` (its file) and
  ``<net>/ms_on_mscore<i>`` (mscore's file, as MindSpore runs it), and
  ``<net>/ms_file_params`` (the parameter names of MindSpore's GraphCell on its file).

MindSpore writes its files read-only (0400); they are made 0644 here for git.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mindir_nets  # noqa: E402
import mindspore  # noqa: E402

TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "int64": 0}


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _compare(what, got, want):
    worst = 0.0
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype,
                                                           w.dtype)
        tol = TOLERANCE[str(w.dtype)] * max(1.0, float(np.abs(w).max()))
        diff = float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max())
        assert diff <= tol, (what, diff, tol)
        worst = max(worst, diff)
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=mindir_nets.MLP_WIDTH)
    parser.add_argument("--out", default=os.path.join(HERE, "mindir"))
    args = parser.parse_args(argv)
    mindspore.set_context(mode=mindspore.GRAPH_MODE, device_target="CPU")
    record = {}
    for name, (make_net, make_inputs) in mindir_nets.build(mindspore, args.width).items():
        net, inputs = make_net(), make_inputs()
        path = os.path.join(args.out, f"ms_{name}")
        mindspore.export(net, *inputs, file_name=path, file_format="MINDIR")
        os.chmod(path + ".mindir", 0o644)
        ms_net = [o.asnumpy() for o in _leaves(net(*inputs))]
        runs = {"ms_net": ms_net}
        for key, file in (("ms_file", path + ".mindir"),
                          ("ms_on_mscore", os.path.join(args.out, f"mscore_{name}.mindir"))):
            cell = mindspore.nn.GraphCell(mindspore.load(file))
            runs[key] = [o.asnumpy() for o in _leaves(cell(*inputs))]
            if key == "ms_file":
                record[f"{name}/ms_file_params"] = np.array(
                    [n for n, _ in cell.parameters_and_names()])
            print(f"{name}: {key} vs the network: max |diff| "
                  f"{_compare(key, runs[key], ms_net):.3g}")
        for i, x in enumerate(inputs):
            record[f"{name}/input{i}"] = x.asnumpy()
        for key, outs in runs.items():
            for i, o in enumerate(outs):
                record[f"{name}/{key}{i}"] = o
    np.savez(os.path.join(args.out, "outputs.npz"), **record)
    print(f"wrote {os.path.join(args.out, 'outputs.npz')}")


if __name__ == "__main__":
    main()
