"""Records MindSpore 2.10's behaviour for the training-side names its own unit tests exercise
(tests/test_training_api_oracle.py reads the JSON, tests/test_differences_claims.py checks the
claims of docs/differences.md against it): the save-operator checkpoint hook of
``mindspore.train.callback``, ``SummaryCollector``'s argument messages and private state, the
summary operators' empty name in GRAPH_MODE, optimizers over integer Parameters,
``Cell().construct()``, an exception in ``load_checkpoint``'s ``choice_func``,
``auto_mixed_precision`` of a plain function, GRAPH_MODE calls with keyword arguments and an
optimizer returning its ``ParameterTuple``, the ``export_options`` message under several hash
seeds, a dataset iterated by fresh iterators, ``LossMonitor``'s loss text, and MINDIR files
encrypted by ``export(..., enc_key=, enc_mode=)`` (``tests/data/crypto/ms_dense_*.mindir``).

Run with the separate MindSpore venv, from /tmp:
``cd /tmp && /tmp/ms/bin/python <repo>/tests/data/make_training_api_oracle.py`` (MindSpore
2.10, CPU). mscore's tests read the JSON; they never import MindSpore.
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import training_api_cases

SEEDS = (0, 7)      # PYTHONHASHSEED values that list {'npy', None} in both orders


def err(fn):
    """``{"type", "message"}`` of what ``fn()`` raises, or ``{"value": repr}`` of its value."""
    try:
        out = fn()
    except Exception as exc:  # recording what MindSpore raises
        return {"type": type(exc).__name__, "message": str(exc)}
    return {"value": repr(out)}


def export_option_messages():
    """The ValueError message of ``export_options={'tensor_format': 'npz'}`` per hash seed
    (MindSpore lists the accepted values from a set)."""
    code = ("import mindspore as ms, tempfile\n"
            "try:\n"
            "    ms.train.SummaryCollector(tempfile.mkdtemp(), "
            "export_options={'tensor_format': 'npz'})\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    out = {}
    for seed in SEEDS:
        env = dict(os.environ, PYTHONHASHSEED=str(seed), GLOG_v="3")
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True)
        out[str(seed)] = proc.stdout.strip().splitlines()[-1]
    return out


MINDIR_KEY = b"0123456789abcdef"


def encrypted_mindir(folder):
    """A Dense network exported as MINDIR encrypted in each mode into ``folder``
    (``ms_dense_<mode>.mindir``), its output, and the messages of bad keys and modes."""
    import mindspore as ms
    from mindspore import Tensor, nn
    ms.set_seed(1)
    net = nn.Dense(3, 2)
    x = Tensor(np.array([[1.0, -2.0, 0.5]], np.float32))
    out = {"key": MINDIR_KEY.decode(), "input": x.asnumpy().tolist(),
           "output": net(x).asnumpy().tolist(), "files": {}}
    for mode in ("AES-GCM", "AES-CBC", "SM4-CBC"):
        name = f"ms_dense_{mode}"
        ms.export(net, x, file_name=os.path.join(folder, name), file_format="MINDIR",
                  enc_key=MINDIR_KEY, enc_mode=mode)
        os.chmod(os.path.join(folder, name + ".mindir"), 0o644)
        out["files"][mode] = name + ".mindir"
    bad = os.path.join(tempfile.mkdtemp(), "bad")

    def first_line(fn):
        got = err(fn)
        got["message"] = got["message"].splitlines()[0]
        return got
    out["errors"] = {
        "enc_key_str": first_line(lambda: ms.export(net, x, file_name=bad, file_format="MINDIR",
                                                    enc_key="k")),
        "enc_mode_int": first_line(lambda: ms.export(net, x, file_name=bad, file_format="MINDIR",
                                                     enc_key=MINDIR_KEY, enc_mode=1)),
        "enc_mode_bad": first_line(lambda: ms.export(net, x, file_name=bad, file_format="MINDIR",
                                                     enc_key=MINDIR_KEY, enc_mode="XYZ")),
        "dec_key_str": first_line(lambda: ms.load(
            os.path.join(folder, "ms_dense_AES-GCM.mindir"), dec_key="k")),
    }
    return out


def main():
    import mindspore as ms
    import mindspore.dataset as ds
    from mindspore import Parameter, Tensor, nn, ops
    from mindspore.common import dtype as mstype
    from mindspore.nn.optim.optimizer import Optimizer
    from mindspore.train.callback import (
        LossMonitor,
        RunContext,
        _checkpoint_cb_for_save_op,
        _InternalCallbackParam,
        _set_cur_net,
    )

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    record = {"note": f"MindSpore {ms.__version__} (CPU)"}

    # -- the save operator's checkpoint hook ---------------------------------------------
    class Conv(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, has_bias=False, weight_init="zeros")

        def construct(self, x):
            return self.conv(x)

    def params(value):
        return [{"name": "conv.weight",
                 "data": Tensor(np.full((4, 3, 3, 3), value), dtype=mstype.float32)}]

    no_net = _checkpoint_cb_for_save_op(params(1.0))
    net = Conv()
    _set_cur_net(net)
    with_net = _checkpoint_cb_for_save_op(params(2.0))
    loaded = float(net.conv.weight.asnumpy()[0, 0, 0, 0])
    again = _checkpoint_cb_for_save_op(params(3.0))
    record["save_op_hook"] = {"without_net": no_net, "with_net": with_net,
                              "weight_after": loaded, "second_call": again,
                              "weight_after_second": float(net.conv.weight.asnumpy()[0, 0, 0, 0])}

    # -- SummaryCollector ------------------------------------------------------------------
    collector_cases = training_api_cases.COLLECTOR_CASES
    record["collector_errors"] = {
        name: err(lambda spec=spec: ms.train.SummaryCollector(
            tempfile.mkdtemp(), collect_specified_data=spec) and None)
        for name, spec in collector_cases.items()}

    outputs = {"none": None, "int": 1, "float": 1.5, "tensor": Tensor(1), "list_int": [1],
               "list_tensor": [Tensor(1)], "empty_dict": {}, "matrix": Tensor([[1, 2], [3, 4]]),
               "tuple_int": (1,)}
    parsed = {}
    for name, output in outputs.items():
        cb_params = _InternalCallbackParam()
        cb_params.net_outputs = output
        collector = ms.train.SummaryCollector(tempfile.mkdtemp())
        collector._get_loss(cb_params)
        parsed[name] = collector._is_parse_loss_success
    record["collector_parse_loss"] = parsed

    class NoOptimizer(nn.Cell):
        def construct(self, x):
            return x

    cb_params = _InternalCallbackParam()
    cb_params.optimizer = None
    cb_params.train_network = NoOptimizer()
    cb_params.mode = "train"
    collector = ms.train.SummaryCollector(tempfile.mkdtemp())
    first = collector._get_optimizer(cb_params)
    record["collector_no_optimizer"] = {"result": repr(first),
                                        "temp_optimizer": collector._temp_optimizer}
    record["export_option_message"] = export_option_messages()

    # -- the summary operators' name in GRAPH_MODE ---------------------------------------
    class SummaryNet(nn.Cell):
        def __init__(self, op, tag):
            super().__init__()
            self.op, self.tag = op, tag

        def construct(self, x):
            self.op(self.tag, x)
            return x

    ms.set_context(mode=ms.GRAPH_MODE)
    graph_names = {}
    for op_name in ("ScalarSummary", "TensorSummary", "ImageSummary", "HistogramSummary"):
        x = Tensor(np.ones((1, 3, 2, 2) if op_name == "ImageSummary" else (1,), np.float32))
        got = err(lambda op_name=op_name, x=x: SummaryNet(getattr(ops, op_name)(), "")(x))
        got["message"] = got.get("message", "").splitlines()[0]
        graph_names[op_name] = got
    record["summary_empty_name_graph_mode"] = graph_names

    # -- GRAPH_MODE: keyword arguments, an optimizer returning its ParameterTuple ------------
    class Scaled(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")

        def construct(self, x, scale=1.0, shift=None):
            out = x * self.w * scale
            if shift is not None:
                out = out + shift
            return out

    x = Tensor(np.array([3.0, 4.0], np.float32))
    record["graph_kwargs"] = {
        "scale": Scaled()(x, scale=2.0).asnumpy().tolist(),
        "shift": Scaled()(x, shift=Tensor(np.array([1.0, 1.0], np.float32))).asnumpy().tolist(),
        "both": Scaled()(x, shift=Tensor(np.array([1.0, 1.0], np.float32)),
                         scale=3.0).asnumpy().tolist()}

    class AssignSGD(nn.Optimizer):
        def __init__(self, parameters, learning_rate=0.5):
            super().__init__(learning_rate, parameters)
            self.assign = ops.Assign()

        def construct(self, gradients):
            params = self.parameters
            lr = self.get_lr()
            for i in range(len(params)):
                self.assign(params[i], params[i] - lr * gradients[i])
            return params

    w = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")
    opt = AssignSGD([w])
    out = opt((Tensor(np.array([1.0, 1.0], np.float32)),))
    record["graph_optimizer_returns_parameters"] = {
        "type": type(out).__name__, "element_types": [type(v).__name__ for v in out],
        "values": [v.asnumpy().tolist() for v in out], "parameter": w.asnumpy().tolist()}
    ms.set_context(mode=ms.PYNATIVE_MODE)

    # -- optimizers over integer Parameters ----------------------------------------------------
    def int_param():
        return Parameter(Tensor(np.array([1, 2], np.int32)), name="ip")

    kinds = {"Momentum": dict(momentum=0.9), "SGD": {}, "Adam": {}, "RMSProp": {},
             "Adagrad": {}}
    record["integer_parameter_optimizers"] = {
        name: err(lambda name=name, kw=kw: type(getattr(nn, name)(
            [int_param()], learning_rate=0.1, **kw)).__name__)
        for name, kw in kinds.items()}
    record["integer_parameter_optimizers"]["Optimizer"] = err(
        lambda: type(Optimizer(learning_rate=0.1,
                               parameters=[Parameter(Tensor(1), "weight")])).__name__)

    # -- Cell().construct(), load_checkpoint's choice_func, amp of a function ------------------
    record["cell_construct"] = err(lambda: nn.Cell().construct())
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "net.ckpt")
    ms.save_checkpoint(Conv(), path)

    def refuse(name):
        raise KeyError(f"refused {name}")
    got = err(lambda: ms.load_checkpoint(path, choice_func=refuse))
    got["message"] = got["message"].replace(os.path.realpath(path), "<FILE>")
    record["choice_func_raises"] = got

    from mindspore.amp import auto_mixed_precision

    def matmul(a, b):
        return ops.matmul(a, b)
    ones = Tensor(np.ones((2, 2), np.float32))
    record["amp_function"] = {
        "auto_output_dtype": str(auto_mixed_precision(matmul, "auto")(ones, ones).dtype),
        "auto_not_function": err(lambda: auto_mixed_precision(3, "auto")),
        "o1_function": err(lambda: auto_mixed_precision(matmul, "O1")),
        "o0_function": err(lambda: auto_mixed_precision(matmul, "O0"))}

    # -- a dataset read by fresh iterators -------------------------------------------------
    ms.set_seed(1)
    data = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=True).batch(2)
    fresh = [[int(v) for b in data.create_tuple_iterator(output_numpy=True) for v in b[0]]
             for _ in range(2)]
    it = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
    epochs = [[int(v) for b in it for v in b[0]] for _ in range(2)]
    ds.config.set_seed(5)
    gen = ds.GeneratorDataset([(i,) for i in range(10)], ["x"], shuffle=True)
    gen_fresh = [[int(b[0]) for b in gen.create_tuple_iterator(output_numpy=True)]
                 for _ in range(2)]
    record["dataset_fresh_iterators"] = {"numpy_slices_seed": 1, "fresh": fresh,
                                         "one_iterator_two_epochs": epochs,
                                         "generator_seed": 5, "generator_fresh": gen_fresh}

    # -- LossMonitor's loss text -------------------------------------------------------------
    lines = {}
    for name, value in {"float32": Tensor(np.float32(3.6393022)),
                        "float16": Tensor(np.float16(0.1)),
                        "float32_vector": Tensor(np.array([1.0, 2.5], np.float32)),
                        "tuple": (Tensor(np.float32(0.1)), Tensor(True)),
                        "python_float": 0.25}.items():
        cb_params = _InternalCallbackParam()
        cb_params.cur_epoch_num, cb_params.epoch_num = 1, 1
        cb_params.cur_step_num, cb_params.batch_num = 1, 1
        cb_params.net_outputs = value
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            LossMonitor(1).step_end(RunContext(cb_params))
        lines[name] = buf.getvalue().strip()
    record["loss_monitor_lines"] = lines

    here = os.path.dirname(os.path.abspath(__file__))
    record["encrypted_mindir"] = encrypted_mindir(os.path.join(here, "crypto"))
    with open(os.path.join(here, "training_api_oracle.json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
