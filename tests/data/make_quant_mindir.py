"""The quantized MINDIR fixtures: mscore writes them, MindSpore 2.10 runs them.

Two steps, from the repository root::

    python tests/data/make_quant_mindir.py                     # mscore's venv
    /tmp/ms/bin/python tests/data/make_quant_mindir.py --record  # MindSpore 2.10's venv

Step 1 builds each network of :func:`build` (numpy backend, weights from a fixed numpy seed),
makes it quantization-aware with ``mscore.train.quant.convert_quant_network``, runs two
training-mode forwards on fixed inputs (the observers and BatchNorm statistics take their
values), and writes ``tests/data/quant/mscore_<net>.mindir`` (``export(...,
file_format="MINDIR")``) and ``quant_io.npz``: the inputs, every parameter of the quantized
network after calibration (``<net>/param/<name>``) and mscore's inference output
(``<net>/mscore``). Step 2 loads each file with ``mindspore.load``, runs it through
``nn.GraphCell``, checks that MindSpore's output equals mscore's (1e-6) and saves it as
``<net>/ms`` in ``quant_io.npz``.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "quant")
NETS = ("seed", "lenet")


def build(ms, name):
    """The quantization-aware network ``name`` of mscore module ``ms`` (float weights from a
    fixed seed, observers and statistics still at their initial values)."""
    from mscore.train.quant import convert_quant_network
    nn = ms.nn
    if name == "seed":
        net = nn.SequentialCell(nn.Flatten(), nn.Dense(64, 16), nn.ReLU(), nn.Dense(16, 16),
                                nn.ReLU(), nn.Dense(16, 10))
        kwargs = {}
    else:
        net = nn.SequentialCell(
            nn.Conv2d(1, 4, 3, pad_mode="same", has_bias=True), nn.BatchNorm2d(4), nn.ReLU(),
            nn.MaxPool2d(2, 2), nn.Conv2d(4, 6, 3, pad_mode="valid"), nn.BatchNorm2d(6),
            nn.ReLU(), nn.Flatten(), nn.Dense(6 * 2 * 2, 10))
        kwargs = dict(per_channel=(True, False), symmetric=(True, False),
                      narrow_range=(True, False))
    rng = np.random.default_rng(7)
    for p in sorted(net.get_parameters(), key=lambda p: p.name):
        shape = tuple(p.shape)
        if p.name.endswith("moving_variance") or p.name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.standard_normal(shape) / np.sqrt(max(np.prod(shape[1:]), 1))
        p.set_data(ms.Tensor(value.astype(np.float32)))
    return convert_quant_network(net, **kwargs)


def inputs():
    """Pixel-like inputs (levels of 1/16), (4, 1, 8, 8) float32."""
    return np.random.default_rng(3).integers(0, 17, (4, 1, 8, 8)).astype(np.float32) / 16


def write_with_mscore():
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    import mscore as ms
    from mscore.train.quant import export
    ms.set_context(backend="numpy")
    os.makedirs(OUT, exist_ok=True)
    x = inputs()
    record = {"input": x}
    for name in NETS:
        q = build(ms, name)
        q.set_train(True)
        for scale in (1.0, 1.5):   # calibrate observers and statistics
            q(ms.Tensor(x * scale))
        q.set_train(False)
        for p in q.get_parameters():
            record[f"{name}/param/{p.name}"] = p.asnumpy()
        record[f"{name}/mscore"] = q(ms.Tensor(x)).asnumpy()
        path = os.path.join(OUT, f"mscore_{name}")
        export(q, ms.Tensor(x), file_name=path, file_format="MINDIR")
        print(f"wrote {path}.mindir ({os.path.getsize(path + '.mindir')} bytes)")
    np.savez(os.path.join(OUT, "quant_io.npz"), **record)


def record_with_mindspore():
    import mindspore as mindspore_
    path = os.path.join(OUT, "quant_io.npz")
    record = dict(np.load(path))
    for name in NETS:
        graph = mindspore_.load(os.path.join(OUT, f"mscore_{name}.mindir"))
        out = mindspore_.nn.GraphCell(graph)(mindspore_.Tensor(record["input"])).asnumpy()
        np.testing.assert_allclose(out, record[f"{name}/mscore"], rtol=0, atol=1e-6)
        record[f"{name}/ms"] = out
        print(f"{name}: MindSpore {mindspore_.__version__} ran mscore's file, max |diff| "
              f"{np.abs(out - record[name + '/mscore']).max()}")
    np.savez(path, **record)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true",
                        help="step 2: run the files in MindSpore and record its outputs")
    if parser.parse_args().record:
        record_with_mindspore()
    else:
        write_with_mscore()
