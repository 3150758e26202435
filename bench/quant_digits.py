"""Quantization-aware training on scikit-learn's digits: float vs QAT vs onnxruntime int8.

For two networks, the amp tutorial's MLP (Flatten, Dense 784-512-512-10, ReLU) and a LeNet-like
conv net with BatchNorm (Conv5-BN-ReLU-Pool twice, Dense 256-120-84-10), on the digits laid
out as MNIST (the ``amp_digits`` pipeline: 8x8 upsampled to 20x20, padded to 28x28,
``Rescale`` + ``Normalize``):

1. train the float network (``--float-epochs``) and save a checkpoint;
2. fine-tune from that checkpoint for ``--qat-epochs`` twice, with the same data order and
   learning rate: a float network (``load_param_into_net``), and a fresh network made
   quantization-aware by ``convert_quant_network`` (weights per channel, BatchNorm folded)
   that gets the checkpoint through ``load_nonquant_param_into_quant_net``; evaluate both
   (the difference is the cost of quantization);
3. ``export`` it as int8 ONNX (``mean``/``std_dev`` of the pipeline's normalisation in pixel
   units) and the float network as float ONNX; run the int8 model in onnxruntime on the test
   set: its accuracy, the share of test images where its argmax equals mscore's fake-quant
   forward, the largest logit difference, the file sizes and their ratio, and which integer
   kernels onnxruntime fused the QDQ graph into.

    python bench/quant_digits.py [--backend torch] [--mode pynative|graph] [--nets mlp,lenet]
                                 [--float-epochs 10] [--qat-epochs 4] [--seed 1]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

PIXEL_MEAN = 0.1307 * 255.0   # the pipeline's Normalize, in pixel units (export's mean)
PIXEL_STD = 0.3081 * 255.0


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="torch")
    p.add_argument("--mode", default="pynative", choices=("pynative", "graph"),
                   help="graph compiles each train step where the backend can (jax)")
    p.add_argument("--nets", default="mlp,lenet")
    p.add_argument("--float-epochs", type=int, default=10)
    p.add_argument("--qat-epochs", type=int, default=4)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--qat-lr", type=float, default=0.005)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args(argv)


def load_digits_arrays(folder):
    """(train_x, train_y, test_x, test_y) as float32 NCHW / int32, through the amp
    tutorial's pipeline."""
    from mscore.examples.amp_digits import datapipe, write_digits_idx
    write_digits_idx(folder)
    arrays = []
    for usage in ("train", "test"):
        xs, ys = [], []
        for x, y in datapipe(folder, usage, 256, shuffle=False).create_tuple_iterator(
                output_numpy=True):
            xs.append(x)
            ys.append(y)
        images = np.concatenate(xs).astype(np.float32)
        if images.ndim == 4 and images.shape[-1] == 1:   # HWC images -> NCHW
            images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))
        arrays += [images, np.concatenate(ys).astype(np.int32)]
    return arrays


def build(name):
    from mscore import nn
    if name == "mlp":
        from mscore.examples.amp_digits import build_network
        return build_network()
    return nn.SequentialCell(
        nn.Conv2d(1, 6, 5, pad_mode="valid"), nn.BatchNorm2d(6), nn.ReLU(),
        nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5, pad_mode="valid"), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2, 2), nn.Flatten(),
        nn.Dense(16 * 4 * 4, 120), nn.ReLU(), nn.Dense(120, 84), nn.ReLU(),
        nn.Dense(84, 10))


def train(net, data, epochs, lr, batch, seed):
    import mscore as ms
    from mscore import nn
    from mscore.dataset import NumpySlicesDataset
    from mscore.train import Model
    ms.set_seed(seed)
    ds = NumpySlicesDataset({"image": data[0], "label": data[1]}, shuffle=True).batch(batch)
    model = Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), lr, 0.9),
                  metrics={"accuracy"})
    start = time.perf_counter()
    model.train(epochs, ds)
    return time.perf_counter() - start


def logits(net, x, batch=256):
    import mscore as ms
    net.set_train(False)
    return np.concatenate([net(ms.Tensor(x[i:i + batch])).asnumpy()
                           for i in range(0, len(x), batch)])


def ort_session(path, optimized=None):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    if optimized:
        opts.optimized_model_filepath = optimized
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def fused_kernels(path):
    """The integer op types in onnxruntime's optimized graph of ``path``."""
    import onnx
    model = onnx.load(path)
    kinds = {}
    for node in model.graph.node:
        if node.op_type.startswith("QLinear") or node.op_type in (
                "QGemm", "ConvInteger", "MatMulInteger", "MatMulIntegerToFloat",
                "DynamicQuantizeMatMul"):
            kinds[node.op_type] = kinds.get(node.op_type, 0) + 1
    return kinds


def run_net(name, data, args, tmp):
    import mscore as ms
    from mscore.train.quant import convert_quant_network, export, load_nonquant_param_into_quant_net
    from mscore.train.serialization import export as float_export
    train_x, train_y, test_x, test_y = data
    ms.set_seed(args.seed)
    pretrained = build(name)
    train(pretrained, (train_x, train_y), args.float_epochs, args.lr, args.batch, args.seed)
    pretrained_acc = float((logits(pretrained, test_x).argmax(1) == test_y).mean())
    ckpt = os.path.join(tmp, f"{name}.ckpt")
    ms.save_checkpoint(pretrained, ckpt)

    # The same fine-tuning from the same checkpoint, in float and quantization-aware.
    float_net = build(name)
    ms.load_param_into_net(float_net, ms.load_checkpoint(ckpt))
    float_s = train(float_net, (train_x, train_y), args.qat_epochs, args.qat_lr, args.batch,
                    args.seed + 1)
    float_acc = float((logits(float_net, test_x).argmax(1) == test_y).mean())
    qnet = convert_quant_network(build(name), per_channel=(True, False))
    load_nonquant_param_into_quant_net(qnet, ms.load_checkpoint(ckpt), ["step"])
    qat_s = train(qnet, (train_x, train_y), args.qat_epochs, args.qat_lr, args.batch,
                  args.seed + 1)
    q_logits = logits(qnet, test_x)
    qat_acc = float((q_logits.argmax(1) == test_y).mean())

    example = ms.Tensor(test_x[:1])
    int8_path = os.path.join(tmp, f"{name}_int8.onnx")
    float_path = os.path.join(tmp, f"{name}_float.onnx")
    export(qnet, example, file_name=int8_path, mean=PIXEL_MEAN, std_dev=PIXEL_STD,
           file_format="ONNX")
    float_export(float_net, example, file_name=float_path, file_format="ONNX")
    optimized = os.path.join(tmp, f"{name}_int8_ort.onnx")
    session = ort_session(int8_path, optimized)
    ort_logits = np.concatenate([session.run(None, {"input_0": test_x[i:i + 1]})[0]
                                 for i in range(len(test_x))])
    return {
        "net": name, "pretrained_acc": pretrained_acc, "float_acc": float_acc,
        "qat_acc": qat_acc,
        "int8_acc": float((ort_logits.argmax(1) == test_y).mean()),
        "argmax_agree": float((ort_logits.argmax(1) == q_logits.argmax(1)).mean()),
        "max_logit_diff": float(np.abs(ort_logits - q_logits).max()),
        "float_bytes": os.path.getsize(float_path), "int8_bytes": os.path.getsize(int8_path),
        "kernels": fused_kernels(optimized), "float_s": float_s, "qat_s": qat_s,
    }


def main(argv=None):
    args = _parse(argv)
    import mscore as ms
    ms.set_context(backend=args.backend,
                   mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    with tempfile.TemporaryDirectory(prefix="mscore-quant-") as tmp:
        data = load_digits_arrays(os.path.join(tmp, "idx"))
        print(f"mscore {ms.__version__} | backend {args.backend} ({args.mode}) | digits "
              f"{len(data[1])} train / {len(data[3])} test | float {args.float_epochs} epochs, QAT "
              f"{args.qat_epochs} epochs, batch {args.batch}", flush=True)
        rows = [run_net(name, data, args, tmp) for name in args.nets.split(",")]
    for r in rows:
        print(f"\n[{r['net']}] pretrained float acc {r['pretrained_acc']:.4f}; fine-tuned "
              f"{args.qat_epochs} epochs: float acc {r['float_acc']:.4f} ({r['float_s']:.1f} s)"
              f" | QAT fake-quant acc {r['qat_acc']:.4f} ({r['qat_s']:.1f} s) | onnxruntime "
              f"int8 acc {r['int8_acc']:.4f}")
        print(f"  QAT - float: {100 * (r['qat_acc'] - r['float_acc']):+.2f} points; int8 "
              f"argmax == mscore fake-quant argmax on {100 * r['argmax_agree']:.2f}% of the "
              f"test set (max |logit diff| {r['max_logit_diff']:.4f})")
        print(f"  ONNX size: float {r['float_bytes']} B, int8 {r['int8_bytes']} B, ratio "
              f"{r['float_bytes'] / r['int8_bytes']:.2f}x; onnxruntime integer kernels: "
              f"{r['kernels'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
