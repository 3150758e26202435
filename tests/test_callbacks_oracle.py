"""Callbacks against MindSpore 2.10's recorded behaviour (``tests/data/mindspore_callbacks.json``,
made by ``tests/data/make_callback_oracle.py``): argument checks, ``original_args`` keys,
EarlyStopping / ReduceLROnPlateau traces, History, LearningRateScheduler, TimeMonitor,
BackupAndRestore and OnRequestExit. The oracle's network, data and optimizer are rebuilt
here, so numbers are compared with MindSpore's own."""
import ast
import contextlib
import io
import json
import os
import re
import signal
from functools import partial

import numpy as np
import pytest
from _helpers import available_backends, numpy_context_each_test, use_backend

import mscore as ms
from mscore import nn
from mscore.dataset import NumpySlicesDataset
from mscore.train import Model
from mscore.train import callback as C
from mscore.train.callback import CallbackParam

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "mindspore_callbacks.json")) as _f:
    ORACLE = json.load(_f)


_numpy_context = numpy_context_each_test()


class Net(nn.Cell):
    """The oracle's Dense(3, 2) with fixed weights."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2, weight_init=ms.Tensor(
            np.arange(6, dtype=np.float32).reshape(2, 3) / 10), bias_init="zeros")

    def construct(self, x):
        return self.fc(x)


def dataset(n=6, batch=2):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.standard_normal((n, 2)).astype(np.float32)
    return NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(batch)


def model(metrics=None, lr=0.1):
    net = Net()
    return Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), lr), metrics=metrics), net


# -- argument checks --------------------------------------------------------------------------
# Where mscore deliberately differs (docs/differences.md): label -> mscore's outcome.
DEVIATIONS = {
    "EarlyStopping": {"baseline='x'": "TypeError", "baseline=[1]": "TypeError"},
    "LambdaCallback": {"on_train_begin=1": "TypeError", "on_train_begin='x'": "TypeError",
                       "on_train_begin=0": "TypeError"},
    "LearningRateScheduler": {"learning_rate_function=1": "TypeError",
                              "learning_rate_function=None": "TypeError",
                              "learning_rate_function='x'": "TypeError"},
    "OnRequestExit": {"config_file=1": "TypeError"},
}
_SPECIAL = {"sig=<Signals.SIGKILL: 9>": ("sig", signal.SIGKILL),
            "sig=<Signals.SIGUSR1: 10>": ("sig", signal.SIGUSR1)}


def _parse(label):
    """``name=value`` of a recorded case, or None when the label is not of that form."""
    if label in _SPECIAL:
        return _SPECIAL[label]
    name, sep, text = label.partition("=")
    if not sep or not name.isidentifier():
        return None
    try:
        return name, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _constructors(tmp_path):
    return {
        "BackupAndRestore": lambda name, v: C.BackupAndRestore(
            v if name == "backup_dir" else str(tmp_path / "br"), **(
                {} if name == "backup_dir" else {name: v})),
        "EarlyStopping": lambda name, v: C.EarlyStopping(**{name: v}),
        "ReduceLROnPlateau": lambda name, v: C.ReduceLROnPlateau(**{name: v}),
        "LambdaCallback": lambda name, v: C.LambdaCallback(**{name: v}),
        "LearningRateScheduler": lambda name, v: C.LearningRateScheduler(v),
        "TimeMonitor": lambda name, v: C.TimeMonitor(**{name: v}),
        "LossMonitor": lambda name, v: C.LossMonitor(v),
        "RunContext": lambda name, v: C.RunContext(v),
        "OnRequestExit": lambda name, v: C.OnRequestExit(**{"directory": str(tmp_path / "o"),
                                                            name: v}),
    }


def _outcome(fn):
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__
    return "ok"


@pytest.mark.parametrize("group", sorted(DEVIATIONS.keys() | {
    "BackupAndRestore", "ReduceLROnPlateau", "TimeMonitor", "LossMonitor", "RunContext"}))
def test_argument_checks_match_mindspore(group, tmp_path):
    make = _constructors(tmp_path)[group]
    checked = 0
    for label, recorded in ORACLE["arg_checks"][group].items():
        parsed = _parse(label)
        if parsed is None:
            continue
        expected = recorded if recorded == "ok" else recorded["error"]
        expected = DEVIATIONS.get(group, {}).get(label, expected)
        got = _outcome(partial(make, *parsed))
        assert got == expected, f"{group}({label}): mscore {got}, expected {expected}"
        checked += 1
    assert checked >= 3


# -- original_args ----------------------------------------------------------------------------
class KeyRecorder(C.Callback):
    STAGES = [f"on_{p}_{s}" for p in ("train", "eval") for s in
              ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")]

    def __init__(self):
        super().__init__()
        self.seen = []
        for stage in self.STAGES:
            setattr(self, stage, lambda rc, _s=stage: self.seen.append(
                (_s, dict(rc.original_args()))))


# keys mscore fills beyond MindSpore's (documented in docs/differences.md)
EXTRA_KEYS = {"initial_epoch", "eval_network", "loss_scale_manager", "net_outputs",
              "cur_epoch_num", "epoch_num", "eval_results", "metrics", "valid_dataset",
              "eval_dataset_element"}


def test_original_args_holds_every_key_mindspore_fills():
    m, _ = model(metrics={"mae"})
    runs = {}
    for run in ("train", "eval", "fit"):
        rec = KeyRecorder()
        if run == "train":
            m.train(2, dataset(4, 2), callbacks=[rec])
        elif run == "eval":
            m.eval(dataset(4, 2), callbacks=[rec])
        else:
            m.fit(2, dataset(4, 2), dataset(4, 2), callbacks=[rec])
        runs[run] = rec.seen
    for run, stages in runs.items():
        recorded = ORACLE["original_args"][run]
        assert [s for s, _ in stages] == [e["stage"] for e in recorded], run
        for (stage, got), want in zip(stages, recorded):
            missing = set(want["keys"]) - set(got)
            assert not missing, (run, stage, missing)
            extra = set(got) - set(want["keys"]) - EXTRA_KEYS
            assert not extra, (run, stage, extra)
            for key, value in want["values"].items():
                if key in ("metrics", "eval_results"):
                    assert sorted(got[key]) == value, (run, stage, key)
                else:
                    assert got[key] == value, (run, stage, key, got[key], value)


# -- EarlyStopping / ReduceLROnPlateau ----------------------------------------------------------
def _params(**kw):
    return CallbackParam(**kw)


@pytest.mark.parametrize("case", [c for c in ORACLE["early_stopping"] if "trace" in c],
                         ids=lambda c: json.dumps(c["kwargs"], sort_keys=True))
def test_early_stopping_trace_matches_mindspore(case):
    kwargs = dict(case["kwargs"])
    cb = C.EarlyStopping(**kwargs)
    net = Net()
    trace = []
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cb.on_train_begin(C.RunContext(_params(train_network=net)))
        for epoch, v in enumerate(case["values"], 1):
            params = _params(train_network=net, cur_epoch_num=epoch)
            if kwargs["monitor"] == "loss":
                params.net_outputs = ms.Tensor(np.float32(v))
            elif v is not None:
                params.eval_results = {kwargs["monitor"]: v}
            rc = C.RunContext(params)
            if v is None:
                with pytest.warns(RuntimeWarning, match="not available"):
                    cb.on_train_epoch_end(rc)
            else:
                cb.on_train_epoch_end(rc)
            trace.append({"epoch": epoch, "stop": rc.get_stop_requested(), "wait": cb.wait,
                          "best": float(cb.best)})
            if rc.get_stop_requested():
                break
        cb.on_train_end(C.RunContext(_params()))
    assert len(trace) == len(case["trace"])
    for got, want in zip(trace, case["trace"]):
        assert got["stop"] == want["stop"] and got["wait"] == want["wait"], (got, want)
        assert got["best"] == pytest.approx(want["best"], rel=1e-7)
    assert cb.stopped_epoch == case["stopped_epoch"]
    assert buf.getvalue() == case["stdout"]


def test_early_stopping_restores_best_weights_as_mindspore():
    case = ORACLE["early_stopping"][-1]
    net = Net()
    cb = C.EarlyStopping(patience=1, restore_best_weights=True, verbose=True)
    cb.on_train_begin(C.RunContext(_params(train_network=net)))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for epoch, v in enumerate(case["values"], 1):
            net.fc.weight.set_data(ms.Tensor(np.full((2, 3), float(epoch), np.float32)))
            cb.on_train_epoch_end(C.RunContext(_params(train_network=net, cur_epoch_num=epoch,
                                                       eval_results={"eval_loss": v})))
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), case["weight_after"])
    assert buf.getvalue() == case["stdout"]


@pytest.mark.parametrize("case", [c for c in ORACLE["reduce_lr"] if "trace" in c],
                         ids=lambda c: json.dumps(c["kwargs"], sort_keys=True))
def test_reduce_lr_on_plateau_trace_matches_mindspore(case):
    cb = C.ReduceLROnPlateau(**case["kwargs"])
    net = Net()
    opt = nn.SGD(net.trainable_params(), 1.0)
    buf = io.StringIO()
    trace = []
    with contextlib.redirect_stdout(buf):
        cb.on_train_begin(C.RunContext(_params(optimizer=opt)))
        for epoch, v in enumerate(case["values"], 1):
            cb.on_train_epoch_end(C.RunContext(_params(optimizer=opt, cur_epoch_num=epoch,
                                                       eval_results={"eval_loss": v})))
            trace.append({"lr": float(opt.learning_rate.asnumpy()), "wait": cb.wait,
                          "cooldown_counter": cb.cooldown_counter})
    for got, want in zip(trace, case["trace"]):
        assert got == {k: want[k] for k in got}  # the float32 values, exactly
    assert str(opt.learning_rate.dtype).lower() == case["trace"][0]["lr_dtype"].lower()
    assert buf.getvalue() == case["stdout"]


def test_reduce_lr_on_plateau_refuses_a_schedule():
    net = Net()
    opt = nn.SGD(net.trainable_params(), nn.ExponentialDecayLR(0.1, 0.9, 2))
    cb = C.ReduceLROnPlateau(patience=0)
    cb.on_train_begin(C.RunContext(_params(optimizer=opt)))
    want = ORACLE["reduce_lr"][-1]["dynamic_lr"]
    with pytest.raises(getattr(__builtins__, want["error"], ValueError),
                       match="dynamic learning rate"):
        cb.on_train_epoch_end(C.RunContext(_params(optimizer=opt, cur_epoch_num=1,
                                                   eval_results={"eval_loss": 1.0})))


# -- History, LearningRateScheduler, TimeMonitor ------------------------------------------------
def test_history_matches_mindspore_in_train_and_fit():
    want = ORACLE["history"]
    m, _ = model(metrics={"mae", "loss"})
    h = C.History()
    m.train(2, dataset(4, 2), callbacks=[h])
    assert h.epoch == want["train"]["epoch"]
    assert set(h.history) == set(want["train"]["history"])
    np.testing.assert_allclose(h.history["net_output"], want["train"]["history"]["net_output"],
                               rtol=1e-6)
    assert type(h.history["net_output"][0]).__name__ == want["train"]["types"]["net_output"]
    m, _ = model(metrics={"mae", "loss"})
    h = C.History()
    m.fit(3, dataset(4, 2), dataset(4, 2), valid_frequency=2, callbacks=[h])
    assert h.epoch == want["fit"]["epoch"]  # no evaluation epochs: fit hides them
    assert set(h.history) == set(want["fit"]["history"])
    for key, values in want["fit"]["history"].items():
        np.testing.assert_allclose(h.history[key], values, rtol=1e-5, err_msg=key)


def test_learning_rate_scheduler_matches_mindspore():
    want = ORACLE["lr_scheduler"]
    m, _ = model(lr=0.1)
    calls, lrs = [], []

    def halve_on_even(lr, step):
        calls.append([lr, step])
        return lr * 0.5 if step % 2 == 0 else lr

    m.train(2, dataset(6, 2), callbacks=[C.LearningRateScheduler(halve_on_even), C.LambdaCallback(
        on_train_step_end=lambda rc: lrs.append(
            float(rc.original_args().optimizer.learning_rate.asnumpy())))])
    assert calls == want["calls"]
    assert lrs == want["lr_after_each_step"]


@pytest.mark.parametrize("backend", available_backends())
def test_learning_rate_callbacks_set_the_rate_on_every_backend(backend):
    """The rate callbacks change the optimizer's Parameter in place on each backend, and the
    optimizer's next step uses the new rate (checked against w - lr * grad)."""
    use_backend(backend)
    net = Net()
    opt = nn.SGD(net.trainable_params(), 0.1)
    sched = C.LearningRateScheduler(lambda lr, step: lr * 0.5)
    sched.on_train_step_end(C.RunContext(_params(optimizer=opt, cur_step_num=1)))
    assert float(opt.learning_rate.asnumpy()) == np.float32(0.05)
    plateau = C.ReduceLROnPlateau(patience=0, factor=0.5)
    for epoch, v in enumerate([1.0, 1.0], 1):
        plateau.on_train_epoch_end(C.RunContext(_params(optimizer=opt, cur_epoch_num=epoch,
                                                        eval_results={"eval_loss": v})))
    assert float(opt.learning_rate.asnumpy()) == np.float32(0.025)
    w = net.fc.weight.asnumpy().copy()
    grads = tuple(ms.Tensor(np.ones(p.shape, np.float32)) for p in net.trainable_params())
    opt(grads)
    np.testing.assert_allclose(net.fc.weight.asnumpy(), w - np.float32(0.025), rtol=1e-6)


def test_time_monitor_lines_match_mindspore(capsys):
    m, _ = model(metrics={"mae"})
    m.train(1, dataset(4, 2), callbacks=[C.TimeMonitor()])
    m.train(1, dataset(4, 2), callbacks=[C.TimeMonitor(data_time=True)])
    m.eval(dataset(4, 2), callbacks=[C.TimeMonitor()])
    m.fit(1, dataset(4, 2), dataset(4, 2), callbacks=[C.TimeMonitor()])
    lines = capsys.readouterr().out.splitlines()
    assert [re.sub(r"\d+\.\d+", "X", line) for line in lines] == \
        ORACLE["time_monitor"]["lines_pattern"]


# -- BackupAndRestore / OnRequestExit ----------------------------------------------------------
def test_backup_and_restore_as_mindspore(tmp_path):
    want = ORACLE["backup_and_restore"]
    d = str(tmp_path / "backup")
    m, net = model()
    m.train(2, dataset(4, 2), callbacks=[C.BackupAndRestore(d, delete_checkpoint=False)])
    assert sorted(os.listdir(d)) == want["files_kept"]
    saved = ms.load_checkpoint(os.path.join(d, "backup.ckpt"))
    assert sorted(saved) == sorted(p.name for p in m.train_network.get_parameters())
    assert sorted(saved) == want["saved_names"]
    np.testing.assert_array_equal(saved["fc.weight"].asnumpy(), net.fc.weight.asnumpy())
    # a fresh model restores the backup before its first step, then deletes the file
    m2, net2 = model()
    got = {}
    m2.train(1, dataset(4, 2), callbacks=[C.BackupAndRestore(d), C.LambdaCallback(
        on_train_step_begin=lambda rc: got.setdefault("w", net2.fc.weight.asnumpy()))])
    np.testing.assert_array_equal(got["w"], net.fc.weight.asnumpy())
    assert sorted(os.listdir(d)) == want["files_after_delete"]
    # every second epoch
    d3 = str(tmp_path / "freq")
    exists = []
    m3, _ = model()
    m3.train(3, dataset(4, 2), callbacks=[
        C.BackupAndRestore(d3, save_freq=2, delete_checkpoint=False),
        C.LambdaCallback(on_train_epoch_end=lambda rc: exists.append(
            os.path.exists(os.path.join(d3, "backup.ckpt"))))])
    assert exists == want["save_freq_2_exists_after_epoch"]
    # nothing to delete: MindSpore raises FileNotFoundError, mscore does not (differences.md)
    m4, _ = model()
    m4.train(1, dataset(4, 2), callbacks=[C.BackupAndRestore(str(tmp_path / "none"),
                                                             save_freq=5)])
    assert want["delete_without_file"]["error"] == "FileNotFoundError"


def test_on_request_exit_stops_and_saves_on_the_signal(tmp_path):
    want = ORACLE["on_request_exit"]
    d = str(tmp_path / "ore")
    m, net = model()
    steps = []

    def kill_at_2(rc):
        steps.append(rc.original_args().cur_step_num)
        if steps[-1] == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)
    cb = C.OnRequestExit(directory=d, file_name="Net")
    # the signal arrives during step 2 (before OnRequestExit's step end runs)
    m.train(2, dataset(6, 2), callbacks=[C.LambdaCallback(on_train_step_end=kill_at_2), cb])
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is put back
    assert cb.exit is want["exit_flag"]
    # MindSpore 2.10 only records the signal and trains on (steps 1..6); mscore stops after
    # the step, as the documentation says (docs/differences.md)
    assert want["steps_run"] == [1, 2, 3, 4, 5, 6] and steps == [1, 2]
    tree = {root[len(d):] or "/": sorted(files) for root, _, files in os.walk(d)}
    assert tree == want["tree"]
    saved = ms.load_checkpoint(os.path.join(d, "rank_0", "Net_train.ckpt"))
    assert sorted(saved) == want["ckpt_names"]
    np.testing.assert_array_equal(saved["fc.weight"].asnumpy(), net.fc.weight.asnumpy())
    graph = ms.nn.GraphCell(ms.load(os.path.join(d, "rank_0", "Net_train.mindir")))
    x = ms.Tensor(np.ones((2, 3), np.float32))
    np.testing.assert_allclose(graph(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)
    # a restarted run loads the saved checkpoint before its first step
    m2, net2 = model()
    first = {}
    cb2 = C.OnRequestExit(directory=d, file_name="Net")
    m2.train(1, dataset(2, 2), callbacks=[cb2, C.LambdaCallback(
        on_train_step_begin=lambda rc: first.setdefault("w", net2.fc.weight.asnumpy()))])
    np.testing.assert_array_equal(first["w"], net.fc.weight.asnumpy())


def test_on_request_exit_quiet_run_and_config_file(tmp_path):
    want = ORACLE["on_request_exit"]
    d = str(tmp_path / "quiet")
    m, _ = model()
    cb = C.OnRequestExit(directory=d)
    m.train(1, dataset(4, 2), callbacks=[cb])
    assert {root[len(d):] or "/": sorted(files) for root, _, files in os.walk(d)} == \
        want["quiet_tree"]
    assert os.path.relpath(cb.train_name, d) == want["attrs"]["train_name"]
    assert os.path.relpath(cb.eval_name, d) == want["attrs"]["eval_name"]
    # the config file asks for the exit at the next step; evaluation stops too
    cfg = tmp_path / "exit.json"
    m, _ = model(metrics={"mae"})
    steps = []
    cb = C.OnRequestExit(directory=d, config_file=str(cfg), save_mindir=False)
    m.train(3, dataset(6, 2), callbacks=[cb, C.LambdaCallback(
        on_train_step_end=lambda rc: (steps.append(rc.original_args().cur_step_num),
                                      cfg.write_text('{"GracefulExit": 1}')))])
    assert steps == [1, 2]
    assert sorted(os.listdir(os.path.join(d, "rank_0"))) == ["Net_train.ckpt"]
    eval_steps = []
    m.eval(dataset(6, 2), callbacks=[cb, C.LambdaCallback(
        on_eval_step_end=lambda rc: eval_steps.append(rc.original_args().cur_step_num))])
    assert eval_steps == [1]
    assert "Net_eval.ckpt" in os.listdir(os.path.join(d, "rank_0"))


# -- CheckpointConfig / ModelCheckpoint ---------------------------------------------------------
# mscore checks these earlier or more strictly than MindSpore (docs/differences.md)
CONFIG_DEVIATIONS = {"format='x'": "ValueError", "foo=1": "TypeError",
                     "enc_key=b'short'": "ValueError", "enc_key and crc_check": "ValueError"}
CONFIG_SPECIAL = {
    "all zero": dict(save_checkpoint_steps=0, save_checkpoint_seconds=0, keep_checkpoint_max=0,
                     keep_checkpoint_per_n_minutes=0),
    "all None": dict(save_checkpoint_steps=None, save_checkpoint_seconds=None,
                     keep_checkpoint_max=None, keep_checkpoint_per_n_minutes=None),
    "steps=0 seconds=5": dict(save_checkpoint_steps=0, save_checkpoint_seconds=5),
    "format='safetensors', enc_key=b'k'*16": dict(format="safetensors", enc_key=b"k" * 16),
    "format='safetensors', exception_save=True": dict(format="safetensors",
                                                      exception_save=True),
    "format='safetensors', crc_check=True": dict(format="safetensors", crc_check=True),
    "format='safetensors', enc_mode='AES-CBC'": dict(format="safetensors", enc_mode="AES-CBC"),
    "enc_key and crc_check": dict(enc_key=b"k" * 16, crc_check=True),
    "saved_network=1": dict(saved_network=1),
}


def test_checkpoint_config_checks_match_mindspore():
    checked = 0
    for label, recorded in ORACLE["arg_checks"]["CheckpointConfig"].items():
        if label in CONFIG_SPECIAL:
            kwargs = CONFIG_SPECIAL[label]
        else:
            parsed = _parse(label)
            assert parsed is not None, label
            kwargs = dict([parsed])
        expected = recorded if recorded == "ok" else recorded["error"]
        expected = CONFIG_DEVIATIONS.get(label, expected)
        got = _outcome(partial(C.CheckpointConfig, **kwargs))
        assert got == expected, f"CheckpointConfig({label}): mscore {got}, expected {expected}"
        checked += 1
    assert checked == len(ORACLE["arg_checks"]["CheckpointConfig"])


def test_model_checkpoint_checks_match_mindspore(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = str(tmp_path / "mc")
    calls = {"prefix=callable": dict(prefix=lambda cb: "p", directory=d),
             "directory=callable": dict(directory=lambda cb: d)}
    for label, recorded in ORACLE["arg_checks"]["ModelCheckpoint"].items():
        if label in calls:
            kwargs = calls[label]
        else:
            name, value = _parse(label)
            kwargs = {name: value} if name == "directory" else {name: value, "directory": d}
        expected = recorded if recorded == "ok" else recorded["error"]
        got = _outcome(partial(C.ModelCheckpoint, **kwargs))
        assert got == expected, f"ModelCheckpoint({label}): mscore {got}, expected {expected}"


@pytest.mark.parametrize("case", ORACLE["prefix_rename"], ids=lambda c: ",".join(c["existing"]))
def test_prefix_renaming_rule_matches_mindspore(case, tmp_path):
    for name in case["existing"]:
        (tmp_path / name).write_bytes(b"")
    assert C.ModelCheckpoint(prefix="net", directory=str(tmp_path)).prefix == case["prefix"]


def _train_with(tmp_path, label, config, epochs=2, n=6, prefix="net", directory=None, extra=(),
                **kw):
    d = directory or str(tmp_path / label)
    m, net = model()
    cb = C.ModelCheckpoint(prefix=prefix, directory=d, config=config)
    m.train(epochs, dataset(n, 2), callbacks=[cb, *extra], **kw)
    return d, cb, m


def _files(d):
    return sorted(os.listdir(d))


def test_checkpoint_files_match_mindspore(tmp_path):
    want = ORACLE["files"]
    d, cb, _ = _train_with(tmp_path, "default", None)
    assert _files(d) == want["default"]["files"]
    assert os.path.basename(cb.latest_ckpt_file_name) == want["default"]["latest"]
    d, cb, _ = _train_with(tmp_path, "s2k2", C.CheckpointConfig(save_checkpoint_steps=2,
                                                                keep_checkpoint_max=2))
    assert _files(d) == want["steps2_keep2"]["files"]
    d, cb, _ = _train_with(tmp_path, "s4", C.CheckpointConfig(save_checkpoint_steps=4,
                                                              keep_checkpoint_max=10))
    assert _files(d) == want["steps4"]["files"]
    _, cb2, _ = _train_with(tmp_path, "s4", C.CheckpointConfig(save_checkpoint_steps=4,
                                                               keep_checkpoint_max=10),
                            directory=d)
    assert cb2.prefix == want["steps4_second_run"]["prefix"]
    assert _files(d) == want["steps4_second_run"]["files"]
    d, _, _ = _train_with(tmp_path, "initial", C.CheckpointConfig(
        save_checkpoint_steps=2, keep_checkpoint_max=10), epochs=3, initial_epoch=1)
    assert _files(d) == want["initial_epoch"]["files"]


def test_callable_prefix_and_directory_match_mindspore(tmp_path):
    want = ORACLE["files"]
    cfg = C.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=10)
    d, cb, _ = _train_with(tmp_path, "p", cfg,
                           prefix=lambda cb: f"p{cb.cur_epoch_num}x{cb.cur_step_num}")
    assert _files(d) == want["callable_prefix"]["files"]
    assert os.path.basename(cb.latest_ckpt_file_name) == want["callable_prefix"]["latest"]
    base = str(tmp_path / "d")
    _, cb, _ = _train_with(tmp_path, "d", cfg, directory=lambda cb: os.path.join(
        base, f"e{cb.cur_epoch_num}"))
    assert {sub: _files(os.path.join(base, sub)) for sub in _files(base)} == \
        want["callable_directory"]["tree"]
    assert os.path.relpath(cb.latest_ckpt_file_name, base) == want["callable_directory"]["latest"]
    both = str(tmp_path / "both")
    _train_with(tmp_path, "both", C.CheckpointConfig(save_checkpoint_steps=3,
                                                     keep_checkpoint_max=1),
                prefix=lambda cb: f"s{cb.cur_step_num}",
                directory=lambda cb: os.path.join(both, f"e{cb.cur_epoch_num}"))
    assert {sub: _files(os.path.join(both, sub)) for sub in _files(both)} == \
        want["callable_both_keep1"]
    for key, bad in (("callable_prefix_bad", "a/b"), ("callable_prefix_int", 5)):
        with pytest.raises(getattr(__import__("builtins"), want[key]["error"]),
                           match="callable, it must return a string"):
            _train_with(tmp_path, key, None, epochs=1, n=4, prefix=lambda cb, _b=bad: _b)


def _entries(path, names):
    loaded = ms.load_checkpoint(path)
    out = {}
    for k in names & set(loaded):
        v = loaded[k]
        if isinstance(v, str):
            out[k] = {"str": v}
        else:
            arr = v.asnumpy()
            out[k] = {"dtype": str(v.dtype).lower(), "shape": list(arr.shape),
                      "value": arr.tolist()}
    return out


def _lower_dtypes(entries):
    return {k: (dict(v, dtype=v["dtype"].lower()) if "dtype" in v else v)
            for k, v in entries.items()}


def test_append_info_and_saved_network_match_mindspore(tmp_path):
    want = ORACLE["files"]
    names = {"epoch_num", "step_num", "lr", "name", "flag", "n"}
    cfg = C.CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=10, append_info=[
        "epoch_num", "step_num", {"lr": 0.5, "name": "abc", "flag": True, "n": 7}])
    d, _, _ = _train_with(tmp_path, "append", cfg)
    assert _files(d) == want["append_info"]["files"]
    for f, entries in want["append_info"]["entries"].items():
        assert _entries(os.path.join(d, f), names) == _lower_dtypes(entries), f
    cfg = C.CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=10,
                             append_info=[{"epoch_num": 10, "step_num": 100}])
    d, _, _ = _train_with(tmp_path, "offset", cfg)
    for f, entries in want["append_offset"].items():
        assert _entries(os.path.join(d, f), names) == _lower_dtypes(entries), f
    d, _, _ = _train_with(tmp_path, "saved", C.CheckpointConfig(
        saved_network=nn.Dense(2, 1), keep_checkpoint_max=1), epochs=1)
    assert _files(d) == want["saved_network"]["files"]
    assert sorted(ms.load_checkpoint(os.path.join(d, _files(d)[-1]))) == \
        want["saved_network"]["names"]
    d, _, m = _train_with(tmp_path, "train_net", C.CheckpointConfig(keep_checkpoint_max=1),
                          epochs=1)
    assert sorted(ms.load_checkpoint(os.path.join(d, _files(d)[-1]))) == \
        want["train_network_names"]


class Boom(C.Callback):
    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        if cb.cur_epoch_num == 2 and cb.cur_step_num == 5:
            raise RuntimeError("boom")


def test_exception_save_matches_mindspore(tmp_path):
    want = ORACLE["files"]
    for flag in (True, False):
        d = str(tmp_path / f"exc_{flag}")
        cfg = C.CheckpointConfig(save_checkpoint_steps=100, keep_checkpoint_max=10,
                                 exception_save=flag, append_info=["epoch_num", "step_num"])
        with pytest.raises(RuntimeError, match="boom"):
            _train_with(tmp_path, "", cfg, epochs=3, directory=d, extra=[Boom()])
        case = want[f"exception_save_{flag}"]
        assert _files(d) == case["files"]
        if flag:
            got = _entries(os.path.join(d, case["files"][0]), {"epoch_num", "step_num"})
            assert got == _lower_dtypes(case["breakpoint_entries"])
    d = str(tmp_path / "exc_True")
    m, _ = model()
    cb = C.ModelCheckpoint(prefix="net", directory=d, config=C.CheckpointConfig(
        save_checkpoint_steps=100, keep_checkpoint_max=10, exception_save=True))
    with pytest.raises(RuntimeError):
        m.train(3, dataset(6, 2), callbacks=[cb, Boom()])
    assert _files(d) == want["exception_save_again"]["files"]
    assert cb.prefix == want["exception_save_again"]["prefix"]

    def fail(run_context):
        raise ValueError("early")

    for label, stage in (("first_step", "on_train_step_begin"), ("train_begin", "on_train_begin")):
        d = str(tmp_path / label)
        cfg = C.CheckpointConfig(save_checkpoint_steps=100, keep_checkpoint_max=10,
                                 exception_save=True)
        with pytest.raises(ValueError, match="early"):
            _train_with(tmp_path, "", cfg, directory=d,
                        extra=[C.LambdaCallback(**{stage: fail})])
        assert _files(d) == want[f"exception_save_{label}"]["files"]
    # evaluation errors and a finished run leave no breakpoint file
    m, _ = model(metrics={"mae"})
    d = str(tmp_path / "clean")
    cb = C.ModelCheckpoint(prefix="net", directory=d, config=C.CheckpointConfig(
        keep_checkpoint_max=1, exception_save=True))
    m.train(1, dataset(2, 2), callbacks=[cb])
    with pytest.raises(ValueError, match="early"):
        m.eval(dataset(2, 2), callbacks=[cb, C.LambdaCallback(on_eval_begin=fail)])
    assert _files(d) == ["net-1_1.ckpt"]


def test_encrypted_model_checkpoint_loads_with_its_key(tmp_path):
    cfg = C.CheckpointConfig(keep_checkpoint_max=1, enc_key=b"0123456789abcdef",
                             enc_mode="AES-CBC", append_info=["step_num"])
    d, _, m = _train_with(tmp_path, "enc", cfg, epochs=1)
    path = os.path.join(d, _files(d)[0])
    with pytest.raises(ValueError, match="encrypted"):
        ms.load_checkpoint(path)
    loaded = ms.load_checkpoint(path, dec_key=b"0123456789abcdef", dec_mode="AES-CBC")
    assert int(loaded["step_num"].asnumpy()) == 3
    for p in m.train_network.get_parameters():
        np.testing.assert_array_equal(loaded[p.name].asnumpy(), p.asnumpy())
