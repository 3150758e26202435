"""``Model`` behaviour cases run unchanged on MindSpore 2.10 and on mscore.

Each ``case_*`` function takes the framework's top-level module and returns a JSON-able
summary (``"raises:<ExceptionType>"`` for a step that raises, see ``attempt``).
``make_model_api.py`` records MindSpore's answers into ``mindspore_model_api.json``;
``tests/test_model_api.py`` runs the same cases on mscore and compares. Training runs use
fixed weights and data, so the numbers after training are comparable too.
"""
import numpy as np
from cell_api_cases import arr, attempt

RNG = np.random.default_rng(7)
X = RNG.normal(size=(12, 3)).astype(np.float32)
Y = (X @ np.array([[0.5], [-1.0], [2.0]], np.float32) + 0.25).astype(np.float32)
Z = RNG.normal(size=(12, 3)).astype(np.float32)
W0 = np.array([[0.1, 0.2, -0.3]], np.float32)


def _dense(ms):
    return ms.nn.Dense(3, 1, weight_init=ms.Tensor(W0), bias_init="zeros")


def _model(ms, net=None, **kwargs):
    net = net or _dense(ms)
    opt = ms.nn.SGD(net.trainable_params(), 0.05)
    return ms.train.Model(net, ms.nn.MSELoss(), opt, **kwargs), net


def _slices(ms, *columns, batch=4):
    names = ["data", "label", "extra"][:len(columns)]
    return ms.dataset.NumpySlicesDataset(tuple(columns), column_names=names,
                                         shuffle=False).batch(batch)


class MindData:
    """A user's own dataset object with MindSpore's dataset interface (as in MindSpore's own
    tests): ``create_tuple_iterator`` returns the object itself, ``reset`` rewinds it."""

    def __init__(self, ms, columns, batch=4, log=None):
        self.batches = [tuple(ms.Tensor(c[i:i + batch]) for c in columns)
                        for i in range(0, len(columns[0]), batch)]
        self.index = 0
        self.log = log if log is not None else []

    def create_tuple_iterator(self, num_epochs=-1, do_copy=True):
        self.log.append(f"create_tuple_iterator(num_epochs={num_epochs}, do_copy={do_copy})")
        return self

    def get_dataset_size(self):
        return len(self.batches)

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        return self

    def __next__(self):
        if self.index >= len(self.batches):
            raise StopIteration
        self.index += 1
        return self.batches[self.index - 1]

    def reset(self):
        self.log.append("reset")
        self.index = 0


def _steps_callback(ms, log):
    class Steps(ms.train.Callback):
        def on_train_step_end(self, run_context):
            p = run_context.original_args()
            log.append(f"step {p.cur_epoch_num} {p.cur_step_num} {p.batch_num}")

        def on_train_epoch_end(self, run_context):
            p = run_context.original_args()
            log.append(f"epoch_end {p.cur_epoch_num}")
            metrics = p.get("metrics")
            if metrics:
                log.append("metrics " + ",".join(f"{k}={v:.5f}" for k, v in
                                                 sorted(metrics.items())))

    return Steps()


def built(make):
    """``"ok"`` when ``make()`` returns, else what :func:`attempt` says."""
    return attempt(lambda: make() and "ok")


# -- construction -------------------------------------------------------------------------------
def case_init_checks(ms):
    nn = ms.nn
    net = _dense(ms)
    opt = nn.SGD(net.trainable_params(), 0.1)
    Model = ms.train.Model
    loss = nn.MSELoss()
    return {
        "network_int": built(lambda: Model(3)),
        "loss_int": built(lambda: Model(net, 3)),
        "optimizer_int": built(lambda: Model(net, loss, 3)),
        "metrics_list": built(lambda: Model(net, loss, opt, metrics=["mse"])),
        "metrics_str": built(lambda: Model(net, loss, opt, metrics="mse")),
        "metrics_bad_name": built(lambda: Model(net, loss, opt, metrics={"nope"})),
        "eval_network_int": built(lambda: Model(net, loss, opt, eval_network=3)),
        "eval_indexes_alone": built(lambda: Model(net, loss, opt, eval_indexes=[0, 1, 2])
                                     ),
        "eval_indexes_short": built(lambda: Model(net, loss, opt, eval_network=net,
                                                    eval_indexes=[0, 1])),
        "eval_indexes_tuple": built(lambda: Model(net, loss, opt, eval_network=net,
                                                    eval_indexes=(0, 1, 2))),
        "amp_bad": built(lambda: Model(net, loss, opt, amp_level="O4")),
        "amp_int": built(lambda: Model(net, loss, opt, amp_level=1)),
        "boost_bad": built(lambda: Model(net, loss, opt, boost_level="O9")),
        "unknown_kwarg": built(lambda: Model(net, loss, opt, bogus=1)),
        "keep_bn_int": built(lambda: Model(net, loss, opt, amp_level="O2",
                                             keep_batchnorm_fp32=1)),
        "keep_bn_ok": built(lambda: Model(net, loss, opt, amp_level="O2",
                                            keep_batchnorm_fp32=False)),
        "metrics_without_loss": built(lambda: Model(net, metrics={"mse"})),
        "amp_without_optimizer": built(lambda: Model(net, loss, amp_level="O2")),
    }


def case_networks(ms):
    nn = ms.nn
    net = _dense(ms)
    opt = nn.SGD(net.trainable_params(), 0.1)
    Model = ms.train.Model

    def names(make):
        def run():
            m = make()
            return [type(m.train_network).__name__,
                    type(m.eval_network).__name__ if m.eval_network is not None else None,
                    m.predict_network is net]
        return attempt(run)

    return {
        "full": names(lambda: Model(net, nn.MSELoss(), opt)),
        "metrics": names(lambda: Model(net, nn.MSELoss(), opt, metrics={"mse"})),
        "no_optimizer": names(lambda: Model(net, nn.MSELoss())),
        "network_only": names(lambda: Model(net)),
        "eval_network": names(lambda: Model(net, nn.MSELoss(), opt, metrics={"mse"},
                                    eval_network=nn.WithEvalCell(net, nn.MSELoss()))),
        "amp_o2": names(lambda: Model(net, nn.MSELoss(), opt, amp_level="O2")),
        "amp_o3": names(lambda: Model(net, nn.MSELoss(), opt, amp_level="O3")),
        "amp_o2_fixed_scale": names(lambda: Model(
            net, nn.MSELoss(), opt, amp_level="O2",
            loss_scale_manager=ms.amp.FixedLossScaleManager(drop_overflow_update=False))),
    }


# -- train / fit arguments ------------------------------------------------------------------------
def case_train_checks(ms):
    model, _ = _model(ms)

    def ds():   # a fresh dataset each time (MindSpore ties a dataset to the Model using it)
        return _slices(ms, X, Y)

    def train(epoch, data, **kwargs):
        return attempt(lambda: model.train(epoch, data() if callable(data) else data,
                                           **kwargs) or "ok")

    return {
        "epoch_zero": train(0, ds),
        "epoch_negative": train(-1, ds),
        "epoch_str": train("1", ds),
        "epoch_float": train(1.0, ds),
        "epoch_bool": train(True, ds),
        "dataset_none": train(1, None),
        "dataset_int": train(1, 3),
        "sink_mode_str": train(1, ds, dataset_sink_mode="yes"),
        "sink_size_zero": train(1, ds, dataset_sink_mode=True, sink_size=0),
        "sink_size_minus2": train(1, ds, dataset_sink_mode=True, sink_size=-2),
        "sink_size_str": train(1, ds, dataset_sink_mode=True, sink_size="2"),
        "initial_epoch_negative": train(2, ds, initial_epoch=-1),
        "initial_epoch_equal": train(2, ds, initial_epoch=2),
        "initial_epoch_str": train(2, ds, initial_epoch="1"),
        "callbacks_int": train(1, ds, callbacks=3),
        "callbacks_list_int": train(1, ds, callbacks=[3]),
        "ok": train(1, ds),
    }


def case_fit_checks(ms):
    model, _ = _model(ms, metrics={"mse"})
    plain, _ = _model(ms)

    def fit(m, epoch, *datasets, **kwargs):
        return attempt(lambda: m.fit(epoch, *[_slices(ms, X, Y) for _ in datasets],
                                     **kwargs) or "ok")

    ds = None   # each call builds fresh datasets in its place

    return {
        "frequency_zero": fit(model, 1, ds, ds, valid_frequency=0),
        "frequency_str": fit(model, 1, ds, ds, valid_frequency="1"),
        "frequency_float": fit(model, 1, ds, ds, valid_frequency=1.0),
        "frequency_list_zero": fit(model, 1, ds, ds, valid_frequency=[0]),
        "frequency_tuple": fit(model, 1, ds, ds, valid_frequency=(1,)),
        "valid_sink_str": fit(model, 1, ds, ds, valid_dataset_sink_mode="no"),
        "valid_without_metrics": fit(plain, 1, ds, ds),
        "no_valid_dataset": fit(plain, 1, ds),
        "ok": fit(model, 1, ds, ds),
    }


def case_eval_predict_checks(ms):
    model, net = _model(ms, metrics={"mse"})
    plain, _ = _model(ms)
    x = ms.Tensor(X[:2])
    return {
        "eval_no_metrics": attempt(lambda: plain.eval(_slices(ms, X, Y))),
        "eval_sink_str": attempt(lambda: model.eval(_slices(ms, X, Y), dataset_sink_mode="no")),
        "eval_none": attempt(lambda: model.eval(None)),
        "eval_callbacks_int": attempt(lambda: model.eval(_slices(ms, X, Y), callbacks=3)),
        "predict_none": attempt(lambda: model.predict()),
        "predict_numpy": attempt(lambda: arr(model.predict(X[:2]))),
        "predict_tensor": attempt(lambda: arr(model.predict(x))),
        "predict_backend_lite": attempt(lambda: arr(model.predict(x, backend="lite"))),
        "predict_backend_int": attempt(lambda: arr(model.predict(x, backend=3))),
        "predict_training_flag": attempt(lambda: (model.predict(x), net.training)[1]),
    }


def case_build_and_layouts(ms):
    model, _ = _model(ms, metrics={"mse"})
    return {
        "build": attempt(lambda: model.build(_slices(ms, X, Y), _slices(ms, X, Y)) or "ok"),
        "build_no_sink": attempt(lambda: model.build(sink_mode=False) or "ok"),
        "infer_predict_layout": attempt(lambda: model.infer_predict_layout(ms.Tensor(X[:2]))),
        "infer_train_layout": attempt(lambda: model.infer_train_layout(_slices(ms, X, Y))),
    }


# -- training runs ------------------------------------------------------------------------------
def case_train_numbers(ms):
    log = []
    model, net = _model(ms, metrics={"mse"})
    model.train(3, _slices(ms, X, Y), callbacks=[_steps_callback(ms, log)])
    return {"log": log, "weight": arr(net.weight), "bias": arr(net.bias),
            "eval": {k: round(float(v), 4) for k, v in model.eval(_slices(ms, X, Y)).items()}}


def case_train_initial_epoch(ms):
    log = []
    model, net = _model(ms)
    model.train(3, _slices(ms, X, Y), callbacks=[_steps_callback(ms, log)], initial_epoch=1)
    return {"log": log, "weight": arr(net.weight)}


def case_train_sink_size(ms):
    log = []
    model, net = _model(ms)
    model.train(2, _slices(ms, X, Y), callbacks=[_steps_callback(ms, log)],
                dataset_sink_mode=True, sink_size=2)
    return {"log_len": len(log), "epoch_ends": [e for e in log if e.startswith("epoch")],
            "weight": arr(net.weight)}


def case_fit_numbers(ms):
    log = []
    model, net = _model(ms, metrics={"mse", "mae"})
    model.fit(4, _slices(ms, X, Y), _slices(ms, X, Y), valid_frequency=2,
              callbacks=[_steps_callback(ms, log)])
    log2 = []
    model2, _ = _model(ms, metrics={"mse"})
    model2.fit(3, _slices(ms, X, Y), _slices(ms, X, Y), valid_frequency=[1, 3],
               callbacks=[_steps_callback(ms, log2)], valid_dataset_sink_mode=True,
               initial_epoch=1)
    return {"log": log, "weight": arr(net.weight), "log_list_frequency": log2}


def case_user_dataset(ms):
    calls = []
    log = []
    model, net = _model(ms, metrics={"mse"})
    data = MindData(ms, (X, Y), log=calls)
    model.train(3, data, callbacks=[_steps_callback(ms, log)])
    train_calls = list(calls)
    calls.clear()
    result = model.eval(MindData(ms, (X, Y), log=calls))
    eval_calls = list(calls)
    calls.clear()
    model.fit(2, MindData(ms, (X, Y), log=calls), MindData(ms, (X, Y), log=calls))
    return {"log": log, "train_calls": train_calls, "eval_calls": eval_calls,
            "fit_calls": calls, "weight": arr(net.weight),
            "eval": {k: round(float(v), 4) for k, v in result.items()},
            "three_columns": attempt(lambda: model.train(1, MindData(ms, (X, Y, Z))))}


def _two_input_loss_net(ms):
    nn = ms.nn

    class TwoInputs(nn.Cell):
        """loss = mean((dense(x) + dense(z) - y)^2): three dataset columns, no loss_fn."""

        def __init__(self):
            super().__init__()
            self.fc = _dense(ms)

        def construct(self, x, y, z):
            d = self.fc(x) + self.fc(z) - y
            return (d * d).mean()

    return TwoInputs()


def case_multiple_inputs(ms):
    nn = ms.nn
    log = []
    net = _two_input_loss_net(ms)
    opt = nn.SGD(net.trainable_params(), 0.05)
    model = ms.train.Model(net, optimizer=opt)
    model.train(2, _slices(ms, X, Y, Z), callbacks=[_steps_callback(ms, log)])

    class EvalNet(nn.Cell):
        """(loss, prediction, label) from three columns."""

        def __init__(self, fc):
            super().__init__()
            self.fc = fc

        def construct(self, x, y, z):
            pred = self.fc(x) + self.fc(z)
            d = pred - y
            return (d * d).mean(), pred, y

    eval_model = ms.train.Model(net, optimizer=opt, metrics={"mse", "loss"},
                                eval_network=EvalNet(net.fc), eval_indexes=[0, 1, 2])
    result = eval_model.eval(_slices(ms, X, Y, Z))

    class Predict(nn.Cell):
        def __init__(self, fc):
            super().__init__()
            self.fc = fc

        def construct(self, x, z):
            return self.fc(x) + self.fc(z)

    predicted = ms.train.Model(Predict(net.fc)).predict(ms.Tensor(X[:2]), ms.Tensor(Z[:2]))
    return {"log": log, "weight": arr(net.fc.weight),
            "eval": {k: round(float(v), 4) for k, v in result.items()},
            "predict": arr(predicted)}


def case_eval_indexes(ms):
    nn = ms.nn
    net = _dense(ms)

    class Reordered(nn.Cell):
        """(label, loss, prediction): the order eval_indexes=[1, 2, 0] names."""

        def __init__(self):
            super().__init__()
            self.net = net
            self.loss = nn.MSELoss()

        def construct(self, x, y):
            pred = self.net(x)
            return y, self.loss(pred, y), pred

    model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.05),
                           metrics={"mae", "loss"}, eval_network=Reordered(),
                           eval_indexes=[1, 2, 0])
    result = model.eval(_slices(ms, X, Y))
    fit_log = []
    model.fit(1, _slices(ms, X, Y), _slices(ms, X, Y),
              callbacks=[_steps_callback(ms, fit_log)])
    return {"eval": {k: round(float(v), 4) for k, v in result.items()},
            "fit_log": fit_log}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}
