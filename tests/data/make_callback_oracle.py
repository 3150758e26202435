"""Record how MindSpore 2.10's callbacks behave into ``mindspore_callbacks.json``.

Run from the repository root with MindSpore's own environment (never mscore's)::

    /tmp/ms/bin/python tests/data/make_callback_oracle.py

Everything runs on MindSpore's CPU backend in PyNative mode, in a temporary directory. The
JSON holds:

* ``arg_checks``: for each constructor/function and argument value, ``"ok"`` or the
  exception type MindSpore raises (with its message);
* ``original_args``: the keys of ``run_context.original_args()`` at each callback stage of
  ``Model.train``, ``Model.eval`` and ``Model.fit``, with the scalar values;
* ``prefix_rename``: the prefix ``ModelCheckpoint`` uses when files are already in the
  directory, and ``files``: the files a short training run leaves (step policy, rotation,
  callable prefix/directory, ``append_info``, ``saved_network``, ``exception_save``);
* ``early_stopping`` / ``reduce_lr``: traces of the two callbacks fed with given
  sequences of monitored values;
* ``history``, ``lr_scheduler``, ``time_monitor``, ``backup_and_restore``,
  ``on_request_exit``: what those callbacks record, print or write.
"""
import contextlib
import io
import json
import os
import re
import shutil
import signal
import sys
import tempfile

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn
from mindspore.train import Model
from mindspore.train import callback as C
from mindspore.train.callback import _InternalCallbackParam

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mindspore_callbacks.json")


def outcome(fn):
    """``"ok"`` or ``{"error": type name, "message": text}`` for calling ``fn``."""
    try:
        fn()
    except BaseException as exc:
        return {"error": type(exc).__name__, "message": str(exc)[:300]}
    return "ok"


class Net(nn.Cell):
    """Dense(3, 2) with fixed weights."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2, weight_init=Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)
                                                    / 10), bias_init="zeros")

    def construct(self, x):
        return self.fc(x)


def dataset(n=6, batch=2):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.standard_normal((n, 2)).astype(np.float32)
    return ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)


def model(metrics=None, lr=0.1):
    net = Net()
    return Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), lr), metrics=metrics), net


# -- argument checks ---------------------------------------------------------------------------
def arg_checks(tmp):
    cases = {}

    def add(group, label, fn):
        cases.setdefault(group, {})[label] = outcome(fn)

    cc = C.CheckpointConfig
    for name in ("save_checkpoint_steps", "save_checkpoint_seconds", "keep_checkpoint_max",
                 "keep_checkpoint_per_n_minutes"):
        for value in (-1, 1.5, "1", True, None, 0, 3):
            add("CheckpointConfig", f"{name}={value!r}", lambda n=name, v=value: cc(**{n: v}))
    add("CheckpointConfig", "all zero", lambda: cc(0, 0, 0, 0))
    add("CheckpointConfig", "all None", lambda: cc(None, None, None, None))
    add("CheckpointConfig", "steps=0 seconds=5", lambda: cc(save_checkpoint_steps=0,
                                                            save_checkpoint_seconds=5))
    for value in (1, "x", None):
        add("CheckpointConfig", f"integrated_save={value!r}", lambda v=value: cc(integrated_save=v))
    for value in (1, "x", "thread", "process", None, True):
        add("CheckpointConfig", f"async_save={value!r}", lambda v=value: cc(async_save=v))
    add("CheckpointConfig", "saved_network=1", lambda: cc(saved_network=1))
    for value in ("x", ["x"], [1], [{"a": 1}, {"b": 2}], [{1: 1}], [{"a": [1]}],
                  ["epoch_num", {"a": "s"}], [], {"a": 1}, ["step_num", "epoch_num"],
                  [{"a": None}]):
        add("CheckpointConfig", f"append_info={value!r}", lambda v=value: cc(append_info=v))
    for value in ("str", 1, b"0123456789abcdef", b"short"):
        add("CheckpointConfig", f"enc_key={value!r}", lambda v=value: cc(enc_key=v))
    for value in (1, "XYZ", "AES-CBC", None):
        add("CheckpointConfig", f"enc_mode={value!r}", lambda v=value: cc(enc_mode=v))
    for value in (1, "x", None, True):
        add("CheckpointConfig", f"exception_save={value!r}", lambda v=value: cc(exception_save=v))
    for value in (1, None):
        add("CheckpointConfig", f"crc_check={value!r}", lambda v=value: cc(crc_check=v))
        add("CheckpointConfig", f"remove_redundancy={value!r}",
            lambda v=value: cc(remove_redundancy=v))
    for value in ("x", 1, "safetensors", "ckpt", None):
        add("CheckpointConfig", f"format={value!r}", lambda v=value: cc(format=v))
    add("CheckpointConfig", "format='safetensors', enc_key=b'k'*16",
        lambda: cc(format="safetensors", enc_key=b"k" * 16))
    add("CheckpointConfig", "format='safetensors', exception_save=True",
        lambda: cc(format="safetensors", exception_save=True))
    add("CheckpointConfig", "format='safetensors', crc_check=True",
        lambda: cc(format="safetensors", crc_check=True))
    add("CheckpointConfig", "format='safetensors', enc_mode='AES-CBC'",
        lambda: cc(format="safetensors", enc_mode="AES-CBC"))
    add("CheckpointConfig", "foo=1", lambda: cc(foo=1))
    add("CheckpointConfig", "enc_key and crc_check",
        lambda: cc(enc_key=b"k" * 16, crc_check=True))

    mc = C.ModelCheckpoint
    d = os.path.join(tmp, "mc_checks")
    for value in (1, "a/b", "", None, "ok", "a\\b"):
        add("ModelCheckpoint", f"prefix={value!r}", lambda v=value: mc(prefix=v, directory=d))
    add("ModelCheckpoint", "prefix=callable", lambda: mc(prefix=lambda cb: "p", directory=d))
    for value in (1, "", b"x"):
        add("ModelCheckpoint", f"directory={value!r}", lambda v=value: mc(directory=v))
    add("ModelCheckpoint", "directory=callable", lambda: mc(directory=lambda cb: d))
    add("ModelCheckpoint", "config='x'", lambda: mc(directory=d, config="x"))
    add("ModelCheckpoint", "config={}", lambda: mc(directory=d, config={}))

    br = C.BackupAndRestore
    bd = os.path.join(tmp, "br_checks")
    for value in (1, None, ""):
        add("BackupAndRestore", f"backup_dir={value!r}", lambda v=value: br(v))
    for value in ("epoch", 0, -1, 2, "x", 1.5, True):
        add("BackupAndRestore", f"save_freq={value!r}", lambda v=value: br(bd, save_freq=v))
    for value in (1, "x", None):
        add("BackupAndRestore", f"delete_checkpoint={value!r}",
            lambda v=value: br(bd, delete_checkpoint=v))

    ore = C.OnRequestExit
    od = os.path.join(tmp, "ore_checks")
    for name, values in (("save_ckpt", (1, "x")), ("save_mindir", (1, None)),
                         ("sig", (signal.SIGKILL, "x", 1.5, signal.SIGUSR1, None)),
                         ("file_name", (1,)), ("directory", (1,)), ("config_file", (1,))):
        for value in values:
            add("OnRequestExit", f"{name}={value!r}",
                lambda n=name, v=value: ore(**{"directory": od, n: v}))

    es = C.EarlyStopping
    for name, values in (("monitor", (1, "", None)), ("min_delta", ("x", True, -1, None)),
                         ("patience", (-1, 1.5, True, "1")), ("verbose", (1, "x")),
                         ("mode", ("x", 1, "MAX")), ("baseline", ("x", 0.5, [1])),
                         ("restore_best_weights", (1, None))):
        for value in values:
            add("EarlyStopping", f"{name}={value!r}", lambda n=name, v=value: es(**{n: v}))

    rl = C.ReduceLROnPlateau
    for name, values in (("monitor", (1, "")), ("factor", (0, 0.0, 1, 1.0, 0.5, -0.1, "x", True,
                                                          2)),
                         ("patience", (-1, 1.5)), ("verbose", (1,)), ("mode", ("x", 1)),
                         ("min_delta", ("x", -1, True)), ("cooldown", (-1, 1.5, True)),
                         ("min_lr", (-1, "x", True, None))):
        for value in values:
            add("ReduceLROnPlateau", f"{name}={value!r}", lambda n=name, v=value: rl(**{n: v}))

    for value in (1, "x", None, 0):
        add("LambdaCallback", f"on_train_begin={value!r}",
            lambda v=value: C.LambdaCallback(on_train_begin=v))
    for value in (1, None, "x"):
        add("LearningRateScheduler", f"learning_rate_function={value!r}",
            lambda v=value: C.LearningRateScheduler(v))
    for value in (0, -1, "x", 1.5, None, 3):
        add("TimeMonitor", f"data_size={value!r}", lambda v=value: C.TimeMonitor(data_size=v))
    for value in (1, "x", None):
        add("TimeMonitor", f"data_time={value!r}", lambda v=value: C.TimeMonitor(data_time=v))
    for value in (-1, 1.5, True, 0, "1"):
        add("LossMonitor", f"per_print_times={value!r}", lambda v=value: C.LossMonitor(v))
    for value in (1, {}, [], None):
        add("RunContext", f"original_args={value!r}", lambda v=value: C.RunContext(v))
    add("History", "no args", C.History)
    return cases


# -- original_args -----------------------------------------------------------------------------
_SCALARS = ("cur_epoch_num", "cur_step_num", "batch_num", "epoch_num", "mode",
            "dataset_sink_mode", "parallel_mode", "device_number", "last_save_ckpt_step",
            "latest_ckpt_file", "initial_step", "sink_size")


class KeyRecorder(C.Callback):
    """Records the keys (and scalar values) of original_args at every stage."""

    STAGES = [f"on_{p}_{s}" for p in ("train", "eval") for s in
              ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")]

    def __init__(self):
        super().__init__()
        self.seen = []
        for stage in self.STAGES:
            setattr(self, stage, self._make(stage))

    def _make(self, stage):
        def record(run_context):
            cb = run_context.original_args()
            entry = {"stage": stage, "keys": sorted(cb.keys()),
                     "type": type(cb).__name__,
                     "values": {k: cb[k] for k in _SCALARS if k in cb and
                                isinstance(cb[k], (int, float, str, bool, type(None)))}}
            for k in ("metrics", "eval_results"):
                if k in cb:
                    entry["values"][k] = sorted(cb[k])
            if "net_outputs" in cb:
                out = cb["net_outputs"]
                entry["net_outputs_type"] = (type(out).__name__ if not isinstance(out, tuple)
                                             else [type(o).__name__ for o in out])
            if "list_callback" in cb:
                entry["list_callback"] = [type(c).__name__ for c in cb["list_callback"]]
            self.seen.append(entry)
        return record


def original_args():
    out = {}
    m, _ = model(metrics={"mae"})
    rec = KeyRecorder()
    m.train(2, dataset(4, 2), callbacks=[rec])
    out["train"] = rec.seen
    rec = KeyRecorder()
    m.eval(dataset(4, 2), callbacks=[rec])
    out["eval"] = rec.seen
    rec = KeyRecorder()
    m.fit(2, dataset(4, 2), dataset(4, 2), callbacks=[rec])
    out["fit"] = rec.seen
    rec = KeyRecorder()
    m.train(3, dataset(4, 2), callbacks=[rec], initial_epoch=1)
    out["train_initial_epoch"] = [e for e in rec.seen if e["stage"] in
                                  ("on_train_begin", "on_train_step_begin", "on_train_end")]
    return out


# -- ModelCheckpoint files ---------------------------------------------------------------------
RENAME_SCENARIOS = [
    [], ["net-1_1.ckpt"], ["net-1_1.ckpt", "net_1-1_1.ckpt"], ["net_3-1_1.ckpt"], ["net.ckpt"],
    ["network-1_1.ckpt"], ["net2-1_1.ckpt"], ["net_x-1_1.ckpt"], ["net-1_1.safetensors"],
    ["net-1_1_breakpoint.ckpt"], ["net-1_1.txt"], ["net_1_2-1_1.ckpt"], ["net-graph.meta"],
    ["net_05-3_3.ckpt"], ["net_1.ckpt"], ["net_7-1_1.ckpt", "net-2_2.ckpt"], ["net_-1_1.ckpt"],
    ["net.1-1_1.ckpt"], ["net_12-1_1.ckpt", "net_3-1_1.ckpt"], ["Net-1_1.ckpt"],
    ["net-1_1.ckpt.tmp"], ["net--1_1.ckpt"], ["net_2x-1_1.ckpt"], ["net 3-1_1.ckpt"],
]


def prefix_rename(tmp):
    out = []
    for i, existing in enumerate(RENAME_SCENARIOS):
        d = os.path.join(tmp, f"rename_{i}")
        os.makedirs(d)
        for name in existing:
            open(os.path.join(d, name), "wb").close()
        cb = C.ModelCheckpoint(prefix="net", directory=d)
        out.append({"existing": existing, "prefix": cb._prefix})
    return out


def _listing(d):
    return sorted(os.listdir(d))


def _ckpt_entries(path, names=None):
    params = ms.load_checkpoint(path)
    out = {}
    for k, v in params.items():
        if names is not None and k not in names:
            continue
        if isinstance(v, str):
            out[k] = {"str": v}
        else:
            arr = v.asnumpy()
            out[k] = {"dtype": str(v.dtype), "shape": list(arr.shape),
                      "value": arr.tolist() if arr.size < 10 else None}
    return out


def training_files(tmp):
    out = {}

    def run(label, epochs=2, n=6, prefix="net", config=None, directory=None, extra=(), **kw):
        d = directory or os.path.join(tmp, f"files_{label}")
        m, net = model()
        cb = C.ModelCheckpoint(prefix=prefix, directory=d, config=config)
        m.train(epochs, dataset(n, 2), callbacks=[cb, *extra], **kw)
        return d, cb, net

    d, cb, _ = run("default")
    out["default"] = {"files": _listing(d), "latest": os.path.basename(cb.latest_ckpt_file_name)}
    d, cb, _ = run("steps2_keep2", config=C.CheckpointConfig(save_checkpoint_steps=2,
                                                            keep_checkpoint_max=2))
    out["steps2_keep2"] = {"files": _listing(d),
                           "latest": os.path.basename(cb.latest_ckpt_file_name)}
    d, cb, _ = run("steps4", config=C.CheckpointConfig(save_checkpoint_steps=4,
                                                      keep_checkpoint_max=10))
    out["steps4"] = {"files": _listing(d), "latest": os.path.basename(cb.latest_ckpt_file_name)}
    # a second run into the same directory: renamed prefix
    d2, cb2, _ = run("steps4_again", directory=d,
                     config=C.CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=10))
    out["steps4_second_run"] = {"files": _listing(d2), "prefix": cb2._prefix}
    d, cb, _ = run("initial_epoch", epochs=3, initial_epoch=1,
                   config=C.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=10))
    out["initial_epoch"] = {"files": _listing(d)}

    # callable prefix and directory
    base = os.path.join(tmp, "files_callables")
    d, cb, _ = run("callable_prefix", directory=base + "_p",
                   prefix=lambda cb: f"p{cb.cur_epoch_num}x{cb.cur_step_num}",
                   config=C.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=10))
    out["callable_prefix"] = {"files": _listing(d),
                              "latest": os.path.basename(cb.latest_ckpt_file_name)}
    m, _ = model()
    cb = C.ModelCheckpoint(prefix="net", directory=lambda cb: os.path.join(
        base + "_d", f"e{cb.cur_epoch_num}"),
        config=C.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=10))
    m.train(2, dataset(6, 2), callbacks=[cb])
    out["callable_directory"] = {
        "tree": {sub: _listing(os.path.join(base + "_d", sub))
                 for sub in sorted(os.listdir(base + "_d"))},
        "latest": os.path.relpath(cb.latest_ckpt_file_name, base + "_d")}
    m, _ = model()
    d = base + "_both"
    cb = C.ModelCheckpoint(prefix=lambda cb: f"s{cb.cur_step_num}",
                           directory=lambda cb: os.path.join(d, f"e{cb.cur_epoch_num}"),
                           config=C.CheckpointConfig(save_checkpoint_steps=3,
                                                     keep_checkpoint_max=1))
    m.train(2, dataset(6, 2), callbacks=[cb])
    out["callable_both_keep1"] = {sub: _listing(os.path.join(d, sub))
                                  for sub in sorted(os.listdir(d))}
    # a callable prefix returning a bad name
    m, _ = model()
    cb = C.ModelCheckpoint(prefix=lambda cb: "a/b", directory=base + "_bad")
    out["callable_prefix_bad"] = outcome(lambda: m.train(1, dataset(4, 2), callbacks=[cb]))
    m, _ = model()
    cb = C.ModelCheckpoint(prefix=lambda cb: 5, directory=base + "_bad2")
    out["callable_prefix_int"] = outcome(lambda: m.train(1, dataset(4, 2), callbacks=[cb]))

    # append_info
    cfg = C.CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=10,
                             append_info=["epoch_num", "step_num",
                                          {"lr": 0.5, "name": "abc", "flag": True, "n": 7}])
    d, cb, _ = run("append_info", config=cfg)
    out["append_info"] = {"files": _listing(d),
                          "entries": {f: _ckpt_entries(os.path.join(d, f),
                                                       {"epoch_num", "step_num", "lr", "name",
                                                        "flag", "n"})
                                      for f in _listing(d) if f.endswith(".ckpt")}}
    cfg = C.CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=10,
                             append_info=[{"epoch_num": 10, "step_num": 100}])
    d, cb, _ = run("append_offset", config=cfg)
    out["append_offset"] = {f: _ckpt_entries(os.path.join(d, f), {"epoch_num", "step_num"})
                            for f in _listing(d) if f.endswith(".ckpt")}

    # saved_network
    other = nn.Dense(2, 1)
    d, cb, _ = run("saved_network", epochs=1,
                   config=C.CheckpointConfig(saved_network=other, keep_checkpoint_max=1))
    out["saved_network"] = {"files": _listing(d),
                            "names": sorted(_ckpt_entries(os.path.join(d, _listing(d)[-1])))}
    d, cb, _ = run("train_network_names", epochs=1,
                   config=C.CheckpointConfig(keep_checkpoint_max=1))
    out["train_network_names"] = sorted(_ckpt_entries(
        os.path.join(d, [f for f in _listing(d) if f.endswith(".ckpt")][-1])))

    # exception_save
    class Boom(C.Callback):
        def on_train_step_end(self, run_context):
            cb = run_context.original_args()
            if cb.cur_epoch_num == 2 and cb.cur_step_num == 5:
                raise RuntimeError("boom")

    for flag in (True, False):
        d = os.path.join(tmp, f"files_exception_{flag}")
        m, _ = model()
        cfg = C.CheckpointConfig(save_checkpoint_steps=100, keep_checkpoint_max=10,
                                 exception_save=flag, append_info=["epoch_num", "step_num"])
        cb = C.ModelCheckpoint(prefix="net", directory=d, config=cfg)
        res = outcome(lambda m=m, cb=cb: m.train(3, dataset(6, 2), callbacks=[cb, Boom()]))
        entry = {"outcome": res, "files": _listing(d)}
        for f in _listing(d):
            if f.endswith("_breakpoint.ckpt"):
                entry["breakpoint_entries"] = _ckpt_entries(os.path.join(d, f),
                                                            {"epoch_num", "step_num"})
        out[f"exception_save_{flag}"] = entry
    # a second exception run in the same directory: the breakpoint prefix is renamed
    d = os.path.join(tmp, "files_exception_True")
    m, _ = model()
    cfg = C.CheckpointConfig(save_checkpoint_steps=100, keep_checkpoint_max=10,
                             exception_save=True)
    cb = C.ModelCheckpoint(prefix="net", directory=d, config=cfg)
    outcome(lambda: m.train(3, dataset(6, 2), callbacks=[cb, Boom()]))
    out["exception_save_again"] = {"files": _listing(d), "prefix": cb._prefix}
    # the exception in the first step of the first epoch, and in on_train_begin
    for label, stage in (("first_step", "on_train_step_begin"), ("train_begin", "on_train_begin")):
        d = os.path.join(tmp, f"files_exception_{label}")
        m, _ = model()
        cb = C.ModelCheckpoint(prefix="net", directory=d, config=C.CheckpointConfig(
            save_checkpoint_steps=100, keep_checkpoint_max=10, exception_save=True))

        def fail(run_context):
            raise ValueError("early")
        lam = C.LambdaCallback(**{stage: fail})
        res = outcome(lambda m=m, cb=cb, lam=lam: m.train(2, dataset(6, 2), callbacks=[cb, lam]))
        out[f"exception_save_{label}"] = {"outcome": res["error"], "files": _listing(d)}
    return out


# -- EarlyStopping / ReduceLROnPlateau traces --------------------------------------------------
def _params(**kw):
    cb = _InternalCallbackParam()
    for k, v in kw.items():
        setattr(cb, k, v)
    return cb


ES_SCENARIOS = [
    ({"patience": 0}, "eval_loss", [1.0, 0.9, 0.8]),
    ({"patience": 2}, "eval_loss", [1.0, 0.9, 0.95, 0.97, 0.5]),
    ({"patience": 2, "min_delta": 0.1}, "eval_loss", [1.0, 0.95, 0.85, 0.8, 0.7]),
    ({"patience": 1}, "acc", [0.5, 0.6, 0.6, 0.7]),
    ({"patience": 1, "mode": "min"}, "acc", [0.5, 0.4, 0.45, 0.3]),
    ({"patience": 1}, "mae", [0.5, 0.4, 0.45, 0.3]),
    ({"patience": 1, "monitor": "mae"}, "mae", [0.5, 0.4, 0.45, 0.3]),
    ({"patience": 1, "mode": "max"}, "eval_loss", [1.0, 1.1, 1.05, 1.2]),
    ({"patience": 3, "baseline": 0.5}, "eval_loss", [1.0, 0.9, 0.8, 0.7, 0.6]),
    ({"patience": 2}, "eval_loss", [1.0, None, 0.9, 0.95, 0.99]),
    ({"patience": 2, "monitor": "loss"}, "loss", [1.0, 0.9, 0.95, 0.97]),
]


def early_stopping():
    out = []
    for kwargs, key, values in ES_SCENARIOS:
        kwargs = dict(kwargs)
        monitor = kwargs.pop("monitor", "eval_loss" if key in ("eval_loss", "loss") else key)
        if key == "loss":
            monitor = "loss"
        cb = C.EarlyStopping(monitor=monitor, **kwargs)
        net = Net()
        trace = []
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cb.on_train_begin(C.RunContext(_params(train_network=net)))
            for epoch, v in enumerate(values, 1):
                params = _params(train_network=net, cur_epoch_num=epoch)
                if key == "loss":
                    params.net_outputs = Tensor(np.float32(v))
                elif v is not None:
                    params.eval_results = {key: v}
                rc = C.RunContext(params)
                cb.on_train_epoch_end(rc)
                trace.append({"epoch": epoch, "stop": rc.get_stop_requested(), "wait": cb.wait,
                              "best": float(cb.best)})
                if rc.get_stop_requested():
                    break
            cb.on_train_end(C.RunContext(_params()))
        out.append({"kwargs": dict(kwargs, monitor=monitor), "values": values, "trace": trace,
                    "stopped_epoch": cb.stopped_epoch, "baseline_attr": cb.baseline,
                    "stdout": buf.getvalue()})
    # restore_best_weights: the weights of the best epoch come back
    net = Net()
    cb = C.EarlyStopping(patience=1, restore_best_weights=True, verbose=True)
    cb.on_train_begin(C.RunContext(_params(train_network=net)))
    snapshots = []
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for epoch, v in enumerate([1.0, 0.5, 0.7], 1):
            w = np.full((2, 3), float(epoch), np.float32)
            net.fc.weight.set_data(Tensor(w))
            snapshots.append(w.tolist())
            rc = C.RunContext(_params(train_network=net, cur_epoch_num=epoch,
                                      eval_results={"eval_loss": v}))
            cb.on_train_epoch_end(rc)
    out.append({"restore_best_weights": True, "values": [1.0, 0.5, 0.7],
                "weight_after": net.fc.weight.asnumpy().tolist(), "stdout": buf.getvalue()})
    return out


RL_SCENARIOS = [
    ({"patience": 1, "factor": 0.5}, [1.0, 1.1, 1.2, 1.3, 0.5, 0.6]),
    ({"patience": 0, "factor": 0.5}, [1.0, 0.9, 0.8]),
    ({"patience": 1, "factor": 0.5, "cooldown": 2}, [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6]),
    ({"patience": 1, "factor": 0.1, "min_lr": 0.05}, [1.0, 1.1, 1.2, 1.3, 1.4]),
    ({"patience": 2, "factor": 0.5, "min_delta": 0.1}, [1.0, 0.95, 0.92, 0.8, 0.79, 0.78]),
    ({"patience": 1, "factor": 0.5, "mode": "max", "verbose": True}, [0.1, 0.05, 0.2, 0.1]),
    ({"patience": 1, "factor": 0.5, "min_lr": 2.0}, [1.0, 1.1, 1.2]),
]


def reduce_lr():
    out = []
    for kwargs, values in RL_SCENARIOS:
        cb = C.ReduceLROnPlateau(**kwargs)
        net = Net()
        opt = nn.SGD(net.trainable_params(), 1.0)
        trace = []
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cb.on_train_begin(C.RunContext(_params(optimizer=opt)))
            for epoch, v in enumerate(values, 1):
                rc = C.RunContext(_params(optimizer=opt, cur_epoch_num=epoch,
                                          eval_results={"eval_loss": v}))
                cb.on_train_epoch_end(rc)
                trace.append({"lr": float(opt.learning_rate.asnumpy()), "wait": cb.wait,
                              "cooldown_counter": cb.cooldown_counter,
                              "lr_dtype": str(opt.learning_rate.dtype)})
        out.append({"kwargs": kwargs, "values": values, "trace": trace,
                    "stdout": buf.getvalue()})
    # a learning-rate schedule is refused
    net = Net()
    opt = nn.SGD(net.trainable_params(), nn.ExponentialDecayLR(0.1, 0.9, 2))
    cb = C.ReduceLROnPlateau(patience=0)
    cb.on_train_begin(C.RunContext(_params(optimizer=opt)))
    out.append({"dynamic_lr": outcome(lambda: cb.on_train_epoch_end(C.RunContext(_params(
        optimizer=opt, cur_epoch_num=1, eval_results={"eval_loss": 1.0}))))})
    return out


# -- History, LearningRateScheduler, TimeMonitor -----------------------------------------------
def history():
    out = {}
    m, _ = model(metrics={"mae", "loss"})
    h = C.History()
    m.train(2, dataset(4, 2), callbacks=[h])
    out["train"] = {"epoch": h.epoch, "history": {k: [float(x) for x in v]
                                                  for k, v in h.history.items()},
                    "types": {k: type(v[0]).__name__ for k, v in h.history.items()}}
    m, _ = model(metrics={"mae", "loss"})
    h = C.History()
    m.fit(3, dataset(4, 2), dataset(4, 2), valid_frequency=2, callbacks=[h])
    out["fit"] = {"epoch": h.epoch, "history": {k: [float(x) for x in v]
                                                for k, v in h.history.items()}}
    # independent values: the losses the network printed
    m, net = model(metrics={"mae", "loss"})
    losses = []
    m.train(2, dataset(4, 2), callbacks=[C.LambdaCallback(
        on_train_step_end=lambda rc: losses.append(float(rc.original_args().net_outputs.asnumpy())))])
    out["step_losses"] = losses
    return out


def lr_scheduler():
    m, _ = model(lr=0.1)
    seen = []

    def fn(lr, step):
        seen.append([lr, step])
        return lr * 0.5 if step % 2 == 0 else lr

    opt_lrs = []
    m.train(2, dataset(6, 2), callbacks=[C.LearningRateScheduler(fn), C.LambdaCallback(
        on_train_step_end=lambda rc: opt_lrs.append(
            float(rc.original_args().optimizer.learning_rate.asnumpy())))])
    m2, _ = model(lr=0.1)
    outcome_eval = outcome(lambda: m2.eval(dataset(4, 2),
                                           callbacks=[C.LearningRateScheduler(fn)]))
    return {"calls": seen, "lr_after_each_step": opt_lrs, "in_eval": outcome_eval}


def time_monitor():
    m, _ = model(metrics={"mae"})
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        m.train(1, dataset(4, 2), callbacks=[C.TimeMonitor()])
        m.train(1, dataset(4, 2), callbacks=[C.TimeMonitor(data_time=True)])
        m.eval(dataset(4, 2), callbacks=[C.TimeMonitor()])
        m.fit(1, dataset(4, 2), dataset(4, 2), callbacks=[C.TimeMonitor()])
    lines = buf.getvalue().splitlines()
    return {"lines_pattern": [re.sub(r"\d+\.\d+", "X", line) for line in lines]}


# -- BackupAndRestore, OnRequestExit ------------------------------------------------------------
def backup_and_restore(tmp):
    out = {}
    d = os.path.join(tmp, "backup")
    m, net = model()
    cb = C.BackupAndRestore(d, delete_checkpoint=False)
    m.train(2, dataset(4, 2), callbacks=[cb])
    out["files_kept"] = _listing(d)
    saved = _ckpt_entries(os.path.join(d, "backup.ckpt"))
    out["saved_names"] = sorted(saved)
    out["weight_equals_net"] = bool(np.allclose(
        ms.load_checkpoint(os.path.join(d, "backup.ckpt"))["fc.weight"].asnumpy(),
        net.fc.weight.asnumpy()))
    # a new model restores it in on_train_begin: weights after restore, before the first step
    m2, net2 = model()
    got = {}
    cb2 = C.BackupAndRestore(d, delete_checkpoint=True)
    m2.train(1, dataset(4, 2), callbacks=[cb2, C.LambdaCallback(
        on_train_step_begin=lambda rc: got.setdefault("w", net2.fc.weight.asnumpy().tolist()))])
    out["restored_first_step_weight_equals_backup"] = bool(np.allclose(got["w"],
                                                                        net.fc.weight.asnumpy()))
    out["files_after_delete"] = _listing(d)
    d3 = os.path.join(tmp, "backup_freq")
    m3, _ = model()
    epochs_saved = []

    class Spy(C.Callback):
        def on_train_epoch_end(self, run_context):
            p = os.path.join(d3, "backup.ckpt")
            epochs_saved.append(os.path.getmtime(p) if os.path.exists(p) else None)
    m3.train(3, dataset(4, 2), callbacks=[C.BackupAndRestore(d3, save_freq=2,
                                                             delete_checkpoint=False), Spy()])
    out["save_freq_2_exists_after_epoch"] = [e is not None for e in epochs_saved]
    d4 = os.path.join(tmp, "backup_none")
    m4, _ = model()

    class StopFirst(C.Callback):
        def on_train_step_end(self, run_context):
            raise KeyboardInterrupt

    out["delete_without_file"] = outcome(lambda: m4.train(
        1, dataset(4, 2), callbacks=[C.BackupAndRestore(d4, save_freq=5)]))
    return out


def on_request_exit(tmp):
    out = {}
    d = os.path.join(tmp, "ore")
    m, net = model()
    steps = []

    class Kill(C.Callback):
        def on_train_step_end(self, run_context):
            cb = run_context.original_args()
            steps.append(cb.cur_step_num)
            if cb.cur_step_num == 2:
                os.kill(os.getpid(), signal.SIGTERM)

    old = signal.getsignal(signal.SIGTERM)
    cb = C.OnRequestExit(directory=d, file_name="Net")
    res = outcome(lambda: m.train(2, dataset(6, 2), callbacks=[cb, Kill()]))
    signal.signal(signal.SIGTERM, old)
    out["outcome"] = res
    out["steps_run"] = steps
    out["exit_flag"] = cb.exit
    out["tree"] = {root[len(d):] or "/": sorted(files) for root, _, files in os.walk(d)}
    ckpt = os.path.join(d, "rank_0", "Net_train.ckpt")
    if os.path.exists(ckpt):
        out["ckpt_names"] = sorted(_ckpt_entries(ckpt))
    # without a signal nothing is written
    d2 = os.path.join(tmp, "ore_quiet")
    m, _ = model()
    cb = C.OnRequestExit(directory=d2)
    m.train(1, dataset(4, 2), callbacks=[cb])
    signal.signal(signal.SIGTERM, old)
    out["quiet_tree"] = {root[len(d2):] or "/": sorted(files) for root, _, files in os.walk(d2)}
    out["attrs"] = {"train_name": os.path.relpath(cb.train_name, d2),
                    "eval_name": os.path.relpath(cb.eval_name, d2)}
    return out


def main():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    tmp = tempfile.mkdtemp(prefix="ms_cb_oracle_")
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        record = {
            "mindspore_version": ms.__version__,
            "command": "/tmp/ms/bin/python tests/data/make_callback_oracle.py",
            "arg_checks": arg_checks(tmp),
            "original_args": original_args(),
            "prefix_rename": prefix_rename(tmp),
            "files": training_files(tmp),
            "early_stopping": early_stopping(),
            "reduce_lr": reduce_lr(),
            "history": history(),
            "lr_scheduler": lr_scheduler(),
            "time_monitor": time_monitor(),
            "backup_and_restore": backup_and_restore(tmp),
            "on_request_exit": on_request_exit(tmp),
        }
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
    with open(OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True, default=repr)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    sys.exit(main())
