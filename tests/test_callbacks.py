"""Callbacks: call order and cb_params (DESIGN.md), LossMonitor, TimeMonitor, ModelCheckpoint,
EarlyStopping, ReduceLROnPlateau, LambdaCallback, History, ProgressBar."""
import io
import math
import os
import re
import time

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import nn
from mscore.dataset import NumpySlicesDataset
from mscore.train import (
    Callback,
    CheckpointConfig,
    EarlyStopping,
    History,
    LambdaCallback,
    LossMonitor,
    Model,
    ModelCheckpoint,
    ProgressBar,
    ReduceLROnPlateau,
    RunContext,
    TimeMonitor,
)
from mscore.train.callback import CallbackParam

_numpy_context = numpy_context_each_test(seed=0)


def _data(n=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x[:, :3].argmax(1)).astype(np.int32)
    return x, y


def _dataset(n=8, batch=2, seed=0):
    x, y = _data(n, seed)
    return NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(batch)


def _model(metrics=None, lr=0.1):
    net = nn.Dense(4, 3)
    loss = nn.CrossEntropyLoss()
    opt = nn.Momentum(net.trainable_params(), lr, 0.9)
    return Model(net, loss, opt, metrics=metrics), net, loss, opt


class Recorder(Callback):
    """Records every new-style and legacy call with the step/epoch it saw."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.params = []

    def _note(self, name, run_context):
        cb = run_context.original_args()
        self.calls.append((name, cb.cur_epoch_num, cb.cur_step_num))
        self.params.append(dict(cb))

    def __enter__(self):
        self.calls.append(("__enter__", None, None))
        return self

    def __exit__(self, *err):
        self.calls.append(("__exit__", None, None))


for _name in ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end"):
    setattr(Recorder, _name, lambda self, rc, _n=_name: self._note(_n, rc))


class NewStyle(Recorder):
    pass


for _name in ("on_train_begin", "on_train_epoch_begin", "on_train_step_begin",
              "on_train_step_end", "on_train_epoch_end", "on_train_end", "on_eval_begin",
              "on_eval_epoch_begin", "on_eval_step_begin", "on_eval_step_end",
              "on_eval_epoch_end", "on_eval_end"):
    setattr(NewStyle, _name, lambda self, rc, _n=_name: self._note(_n, rc))


def test_train_callback_order_and_cur_step_num_match_design():
    model, net, loss, opt = _model()
    rec = NewStyle()
    model.train(2, _dataset(), callbacks=[rec])
    expected = [("__enter__", None, None), ("on_train_begin", 0, 0)]
    step = 0
    for epoch in (1, 2):
        expected.append(("on_train_epoch_begin", epoch, step))
        for _ in range(4):
            step += 1
            expected += [("on_train_step_begin", epoch, step), ("on_train_step_end", epoch, step)]
        expected.append(("on_train_epoch_end", epoch, step))
    expected += [("on_train_end", 2, 8), ("__exit__", None, None)]
    assert rec.calls == expected


def test_legacy_names_are_called_by_the_default_on_train_methods():
    model, *_ = _model()
    rec = Recorder()
    model.train(2, _dataset(), callbacks=rec)  # a single callback, not a list, works too
    names = [c[0] for c in rec.calls]
    assert names[:3] == ["__enter__", "begin", "epoch_begin"]
    assert names.count("step_begin") == 8 and names.count("step_end") == 8
    assert names.count("epoch_end") == 2 and names[-2:] == ["end", "__exit__"]
    assert [c[2] for c in rec.calls if c[0] == "step_end"] == list(range(1, 9))


def test_cb_params_fields_match_design():
    model, net, loss, opt = _model()
    rec = NewStyle()
    data = _dataset()
    model.train(2, data, callbacks=[rec])
    step_end = [p for (n, *_), p in zip(rec.calls[1:], rec.params) if n == "on_train_step_end"]
    assert len(step_end) == 8
    p = step_end[5]
    for field in ("cur_epoch_num", "cur_step_num", "batch_num", "epoch_num", "net_outputs",
                  "network", "train_network", "optimizer", "loss_fn", "train_dataset",
                  "dataset_sink_mode", "list_callback", "mode"):
        assert field in p, field
    assert p["cur_epoch_num"] == 2 and p["cur_step_num"] == 6
    assert p["batch_num"] == 4 and p["epoch_num"] == 2
    assert p["network"] is net and p["optimizer"] is opt and p["loss_fn"] is loss
    assert p["train_network"] is model.train_network and p["train_dataset"] is data
    assert p["dataset_sink_mode"] is False and p["mode"] == "train"
    assert p["list_callback"] == [rec]
    out = p["net_outputs"]
    assert isinstance(out, ms.Tensor) and out.shape == () and math.isfinite(float(out))


def test_net_outputs_is_the_loss_of_that_step():
    """The loss a callback sees is the loss of the batch before the update, as computed by
    hand with numpy."""
    model, net, *_ = _model(lr=0.0)
    w, b = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)
    seen = []
    model.train(1, _dataset(), callbacks=[LambdaCallback(
        on_train_step_end=lambda rc: seen.append(float(rc.original_args().net_outputs)))])
    x, y = _data()
    ref = []
    for i in range(0, 8, 2):
        logits = x[i:i + 2] @ w.T + b
        logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        ref.append(-logp[np.arange(2), y[i:i + 2]].mean())
    np.testing.assert_allclose(seen, ref, rtol=1e-5)


def test_eval_callback_order_and_params():
    model, *_ = _model(metrics={"acc"})
    rec = NewStyle()
    result = model.eval(_dataset(), callbacks=[rec])
    names = [c[0] for c in rec.calls]
    assert names == (["__enter__", "on_eval_begin", "on_eval_epoch_begin"]
                     + ["on_eval_step_begin", "on_eval_step_end"] * 4
                     + ["on_eval_epoch_end", "on_eval_end", "__exit__"])
    assert [c[2] for c in rec.calls if c[0] == "on_eval_step_end"] == [1, 2, 3, 4]
    last = rec.params[-1]
    assert last["mode"] == "eval" and last["metrics"] == result and last["batch_num"] == 4
    assert "eval_network" in last and "valid_dataset" in last


def test_request_stop_ends_training_after_that_step():
    model, *_ = _model()
    rec = NewStyle()

    def stop_at_3(rc):
        if rc.original_args().cur_step_num == 3:
            rc.request_stop()

    model.train(5, _dataset(), callbacks=[LambdaCallback(on_train_step_end=stop_at_3), rec])
    steps = [c[2] for c in rec.calls if c[0] == "on_train_step_end"]
    assert steps == [1, 2, 3]
    names = [c[0] for c in rec.calls]
    assert names[-3:] == ["on_train_epoch_end", "on_train_end", "__exit__"]


def test_run_context_and_callback_param():
    rc = RunContext({"a": 1})
    assert rc.original_args().a == 1 and rc.original_args()["a"] == 1
    assert rc.get_stop_requested() is False
    rc.request_stop()
    assert rc.get_stop_requested() is True
    with pytest.raises(TypeError, match="original_args"):
        RunContext([1])
    p = CallbackParam()
    p.x = 3
    assert p["x"] == 3
    with pytest.raises(AttributeError):
        _ = p.missing


def test_callbacks_argument_is_checked():
    model, *_ = _model()
    with pytest.raises(TypeError, match="callbacks"):
        model.train(1, _dataset(), callbacks=[LossMonitor(), "not a callback"])
    with pytest.raises(TypeError, match="callbacks"):
        model.train(1, _dataset(), callbacks=5)


# -- LossMonitor ----------------------------------------------------------------------------------
def test_loss_monitor_format_and_cadence(capsys):
    model, *_ = _model()
    losses = []
    model.train(2, _dataset(), callbacks=[
        LossMonitor(3),
        LambdaCallback(on_train_step_end=lambda rc: losses.append(rc.original_args().net_outputs))])
    lines = capsys.readouterr().out.strip().splitlines()
    # printed at global steps 3 and 6 -> (epoch 1, step 3) and (epoch 2, step 2)
    assert len(lines) == 2
    m = [re.fullmatch(r"epoch: (\d+) step: (\d+), loss is (\S+)", ln) for ln in lines]
    assert all(m)
    assert [(int(x.group(1)), int(x.group(2))) for x in m] == [(1, 3), (2, 2)]
    # the number is the Python float of the step's loss, as MindSpore prints it
    # (tests/data/training_api_oracle.json records its lines)
    assert m[0].group(3) == str(float(losses[2].asnumpy()))
    assert m[1].group(3) == str(float(losses[5].asnumpy()))


def test_loss_monitor_zero_prints_nothing_and_checks_args(capsys):
    model, *_ = _model()
    model.train(1, _dataset(), callbacks=[LossMonitor(0)])
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="per_print_times"):
        LossMonitor(-1)
    with pytest.raises(TypeError, match="per_print_times"):
        LossMonitor(1.5)


def test_loss_monitor_stops_on_nan():
    x, y = _data()
    x[4:6] = np.nan
    data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(2)
    model, *_ = _model()
    rec = NewStyle()
    with pytest.raises(ValueError, match=r"epoch: 1 step: 3\. Invalid loss"):
        model.train(2, data, callbacks=[LossMonitor(100), rec])
    assert [c[2] for c in rec.calls if c[0] == "on_train_step_end"] == [1, 2]
    assert rec.calls[-1][0] == "__exit__"  # callbacks are exited even on error


# -- TimeMonitor ----------------------------------------------------------------------------------
def test_time_monitor_prints_epoch_and_step_times(capsys):
    model, *_ = _model()
    slow = LambdaCallback(on_train_step_end=lambda rc: time.sleep(0.01))
    tm = TimeMonitor(data_time=True)
    model.train(1, _dataset(), callbacks=[slow, tm])
    line = capsys.readouterr().out.strip()
    m = re.fullmatch(r"Train epoch time: ([\d.]+) ms, per step time: ([\d.]+) ms "
                     r"\(data time: ([\d.]+) ms\)", line)
    assert m, line
    epoch_ms, step_ms = float(m.group(1)), float(m.group(2))
    assert epoch_ms >= 40.0  # four steps of at least 10 ms
    assert step_ms == pytest.approx(epoch_ms / 4, rel=1e-3)
    with pytest.raises(TypeError, match="data_time"):
        TimeMonitor(data_time=1)


# -- ModelCheckpoint ------------------------------------------------------------------------------
def test_checkpoint_config_checks_and_policy():
    with pytest.raises(ValueError, match="can't be all None or 0"):
        CheckpointConfig(0, 0, 0, 0)
    with pytest.raises(ValueError, match="save_checkpoint_steps"):
        CheckpointConfig(save_checkpoint_steps=-1)
    with pytest.raises(TypeError, match="keep_checkpoint_max"):
        CheckpointConfig(keep_checkpoint_max=1.5)
    with pytest.raises(TypeError, match="async_save"):
        CheckpointConfig(async_save=1)
    with pytest.raises(TypeError, match="saved_network"):
        CheckpointConfig(saved_network=3)
    with pytest.raises(ValueError, match="format"):
        CheckpointConfig(format="pt")
    cfg = CheckpointConfig(save_checkpoint_steps=5, save_checkpoint_seconds=10)
    assert cfg.save_checkpoint_seconds is None  # steps win, as in MindSpore
    cfg = CheckpointConfig(save_checkpoint_steps=None, save_checkpoint_seconds=10,
                           keep_checkpoint_max=0, keep_checkpoint_per_n_minutes=2)
    pol = cfg.get_checkpoint_policy()
    assert pol["save_checkpoint_seconds"] == 10 and pol["keep_checkpoint_per_n_minutes"] == 2
    assert CheckpointConfig(keep_checkpoint_max=0, save_checkpoint_steps=3).keep_checkpoint_max \
        == 1
    with pytest.raises(ValueError, match="prefix"):
        ModelCheckpoint(prefix="a/b")
    with pytest.raises(TypeError, match="config"):
        ModelCheckpoint(config={"steps": 1})


def test_model_checkpoint_names_rotation_and_content(tmp_path):
    model, net, _, opt = _model()
    ck = ModelCheckpoint("net", str(tmp_path), CheckpointConfig(save_checkpoint_steps=3,
                                                                keep_checkpoint_max=2))
    model.train(3, _dataset(), callbacks=[ck])
    # saves at global steps 3, 6, 9 and 12 -> 1_3, 2_2, 3_1, 3_4; the two newest are kept
    assert sorted(os.listdir(tmp_path)) == ["net-3_1.ckpt", "net-3_4.ckpt"]
    assert ck.latest_ckpt_file_name == str(tmp_path / "net-3_4.ckpt")
    saved = ms.load_checkpoint(ck.latest_ckpt_file_name)
    for p in model.train_network.get_parameters():
        np.testing.assert_array_equal(saved[p.name].asnumpy(), p.asnumpy())
    assert any(name.startswith("moments.") for name in saved)  # optimizer state too


def test_model_checkpoint_keeps_all_below_max_and_renames_prefix_of_a_second_run(tmp_path):
    model, *_ = _model()
    model.train(2, _dataset(), callbacks=[
        ModelCheckpoint("p", str(tmp_path), CheckpointConfig(save_checkpoint_steps=2,
                                                             keep_checkpoint_max=10))])
    assert sorted(os.listdir(tmp_path)) == ["p-1_2.ckpt", "p-1_4.ckpt", "p-2_2.ckpt",
                                            "p-2_4.ckpt"]
    ck2 = ModelCheckpoint("p", str(tmp_path), CheckpointConfig(save_checkpoint_steps=100,
                                                               keep_checkpoint_max=1))
    assert ck2.prefix == "p_1"
    model.train(1, _dataset(), callbacks=[ck2])
    names = sorted(os.listdir(tmp_path))
    assert "p_1-1_4.ckpt" in names and len(names) == 5  # the first run's files are untouched


def test_model_checkpoint_by_seconds_and_safetensors(tmp_path):
    model, *_ = _model()
    slow = LambdaCallback(on_train_step_end=lambda rc: time.sleep(0.6))
    cfg = CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=1,
                           keep_checkpoint_max=10, format="safetensors")
    model.train(1, _dataset(), callbacks=[slow, ModelCheckpoint("s", str(tmp_path), cfg)])
    names = sorted(os.listdir(tmp_path))
    assert all(n.endswith(".safetensors") for n in names)
    # 4 steps of ~0.6 s: one save by time (after step 2 or 3) and one at the end
    assert len(names) == 2 and "s-1_4.safetensors" in names


def test_model_checkpoint_append_info_and_saved_network(tmp_path):
    model, net, *_ = _model()
    cfg = CheckpointConfig(save_checkpoint_steps=4, saved_network=net,
                           append_info=["epoch_num", "step_num", {"tag": "v1"}])
    model.train(1, _dataset(), callbacks=[ModelCheckpoint("a", str(tmp_path), cfg)])
    saved = ms.load_checkpoint(str(tmp_path / "a-1_4.ckpt"))
    assert set(saved) == {"weight", "bias", "epoch_num", "step_num", "tag"}
    assert int(saved["epoch_num"].asnumpy()) == 1 and int(saved["step_num"].asnumpy()) == 4
    assert saved["tag"] == "v1"


# -- EarlyStopping / ReduceLROnPlateau ------------------------------------------------------------
def _fake_fit(callback, values, monitor="eval_loss", lr_param=None):
    """Drive a callback through epochs whose evaluation gives ``values``."""
    params = CallbackParam(cur_epoch_num=0, cur_step_num=0, net_outputs=None,
                           optimizer=lr_param, train_network=None, network=None)
    rc = RunContext(params)
    callback.on_train_begin(rc) if lr_param is None else None
    stopped = None
    for epoch, v in enumerate(values, 1):
        params.cur_epoch_num = epoch
        params.eval_results = {monitor: v}
        callback.on_train_epoch_end(rc)
        if rc.get_stop_requested():
            stopped = epoch
            break
    return stopped


def test_early_stopping_patience_min_delta_and_mode():
    # min mode: best 1.0 at epoch 2; no improvement > 0.05 for 2 epochs -> stop at epoch 4
    assert _fake_fit(EarlyStopping(patience=2, min_delta=0.05), [2.0, 1.0, 0.97, 0.99, 0.5]) == 4
    assert _fake_fit(EarlyStopping(patience=2), [3.0, 2.0, 1.0, 0.5]) is None
    # 'acc' in the name -> max mode
    assert _fake_fit(EarlyStopping("accuracy", patience=1), [0.5, 0.6, 0.6], "accuracy") == 3
    # baseline: must beat 0.9
    assert _fake_fit(EarlyStopping("accuracy", patience=2, baseline=0.9),
                     [0.5, 0.6, 0.95], "accuracy") == 2
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="up")
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(patience=-1)
    with pytest.warns(RuntimeWarning, match="not available"):
        _fake_fit(EarlyStopping("f1"), [1.0])


def test_early_stopping_on_fit_restores_best_weights():
    model, net, *_ = _model(metrics={"acc"}, lr=0.5)
    snapshots = []
    es = EarlyStopping(monitor="eval_loss", patience=0, min_delta=-1e9,  # never improves twice
                       restore_best_weights=True)
    take = LambdaCallback(on_train_epoch_end=lambda rc: snapshots.append(net.weight.asnumpy()))
    model.fit(5, _dataset(), _dataset(), callbacks=[take, es])
    # the first epoch always improves on +inf; with patience 0 the second one stops
    assert es.stopped_epoch in (1, 2)
    np.testing.assert_array_equal(net.weight.asnumpy(), snapshots[0])


def test_reduce_lr_on_plateau_schedule():
    from mscore.common.parameter import Parameter

    class Opt:
        learning_rate = Parameter(ms.Tensor(np.array(1.0, np.float32)), name="learning_rate")

    opt = Opt()
    cb = ReduceLROnPlateau(factor=0.5, patience=1, min_delta=0.0, cooldown=2, min_lr=0.2)
    lrs = []
    params = CallbackParam(cur_epoch_num=0, optimizer=opt, net_outputs=None)
    rc = RunContext(params)
    cb.on_train_begin(rc)
    for epoch, v in enumerate([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 1):
        params.cur_epoch_num = epoch
        params.eval_results = {"eval_loss": v}
        cb.on_train_epoch_end(rc)
        lrs.append(float(opt.learning_rate.asnumpy()))
    # Keras/MindSpore semantics: epoch 2 plateau -> 0.5 and cooldown 2; the cooldown counts
    # down in epochs 3 and 4, and epoch 4 already counts again -> 0.25; epoch 6 -> 0.2 (min_lr)
    assert lrs == pytest.approx([1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2])
    with pytest.raises(ValueError, match="factor"):
        ReduceLROnPlateau(factor=1.0)


def test_reduce_lr_on_plateau_changes_the_model_optimizer_in_fit():
    model, net, loss, opt = _model(metrics={"acc"}, lr=0.1)
    cb = ReduceLROnPlateau(monitor="acc", factor=0.5, patience=0, min_delta=10.0)
    model.fit(3, _dataset(), _dataset(), callbacks=[cb])
    # epoch 1 improves on -inf; epochs 2 and 3 cannot improve by 10 -> halved twice
    assert float(opt.learning_rate.asnumpy()) == pytest.approx(0.025)


# -- LambdaCallback / History / ProgressBar -------------------------------------------------------
def test_lambda_callback_hooks_and_checks():
    seen = []
    cb = LambdaCallback(on_train_begin=lambda rc: seen.append("b"),
                        on_train_epoch_end=lambda rc: seen.append("e"),
                        on_train_end=lambda rc: seen.append("x"))
    model, *_ = _model()
    model.train(2, _dataset(), callbacks=[cb])
    assert seen == ["b", "e", "e", "x"]
    with pytest.raises(TypeError, match="on_train_end"):
        LambdaCallback(on_train_end=3)


def test_history_records_epoch_losses_and_fit_metrics():
    model, *_ = _model(metrics={"acc"})
    last_losses = []
    hist = History()
    model.fit(3, _dataset(), _dataset(), callbacks=[hist, LambdaCallback(
        on_train_epoch_end=lambda rc: last_losses.append(float(rc.original_args().net_outputs)))])
    assert hist.epoch == {"epoch": [1, 2, 3]}
    assert hist.history["net_output"] == pytest.approx(last_losses)
    assert len(hist.history["acc"]) == 3 and all(0 <= a <= 1 for a in hist.history["acc"])


def test_progress_bar_is_off_by_default_and_draws_when_added():
    model, *_ = _model()
    buf = io.StringIO()
    model.train(2, _dataset(), callbacks=[ProgressBar(file=buf)])
    text = buf.getvalue()
    assert "epoch 1/2" in text and "epoch 2/2" in text and "4/4" in text and "loss=" in text
    with pytest.raises(ValueError, match="update_every"):
        ProgressBar(update_every=0)
