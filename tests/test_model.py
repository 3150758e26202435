"""Model: the seed examples on every backend, train/eval/predict/fit numerics, sink mode,
DatasetHelper, loss scaling, argument checks, and resuming from a checkpoint."""
import os
import re
import threading

import numpy as np
import pytest
from _helpers import available_backends, each_backend, numpy_context_each_test

import mscore as ms
from mscore import nn
from mscore.dataset import NumpySlicesDataset, write_idx
from mscore.train import (
    Callback,
    CheckpointConfig,
    DatasetHelper,
    LambdaCallback,
    LossMonitor,
    Model,
    ModelCheckpoint,
    connect_network_with_dataset,
)

BACKENDS = available_backends()


_numpy_context = numpy_context_each_test(seed=0)
backend = each_backend(seed=0)


def _blobs(n=48, features=6, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    y = x[:, :classes].argmax(1).astype(np.int32)
    return x, y


def _ds(x, y, batch=8, shuffle=False):
    return NumpySlicesDataset((x, y), ["x", "y"], shuffle=shuffle).batch(batch)


def _mlp(features=6, classes=3):
    return nn.SequentialCell(nn.Dense(features, 16), nn.ReLU(), nn.Dense(16, classes))


# -- the seed examples -------------------------------------------------------------------------
def _write_fake_mnist(folder, n=64, seed=0):
    """Learnable fake MNIST: each class lights a different band of rows."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    images = rng.integers(0, 40, (n, 28, 28)).astype(np.uint8)
    for i, c in enumerate(labels):
        images[i, 2 * c + 4:2 * c + 7] = 220
    write_idx(os.path.join(folder, "train-images-idx3-ubyte"), images)
    write_idx(os.path.join(folder, "train-labels-idx1-ubyte"), labels)


def _amp_tutorial_example(path):
    """Seed 004's Model example, with ``mindspore`` replaced by ``mscore``; returns the
    per-step losses and the trained Model."""
    import mscore as ms
    from mscore import nn
    from mscore.amp import FixedLossScaleManager
    from mscore.dataset import MnistDataset, transforms, vision
    from mscore.train import LossMonitor, Model

    def datapipe(path, batch_size):
        image_transforms = [
            vision.Rescale(1.0 / 255.0, 0),
            vision.Normalize(mean=(0.1307,), std=(0.3081,))
        ]
        label_transform = transforms.TypeCast(ms.int32)

        dataset = MnistDataset(path, shuffle=False)
        dataset = dataset.map(image_transforms, 'image')
        dataset = dataset.map(label_transform, 'label')
        dataset = dataset.batch(batch_size)
        return dataset

    train_dataset = datapipe(path, 64)

    class Network(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.dense_relu_sequential = nn.SequentialCell(
                nn.Dense(28*28, 512),
                nn.ReLU(),
                nn.Dense(512, 512),
                nn.ReLU(),
                nn.Dense(512, 10)
            )

        def construct(self, x):
            x = self.flatten(x)
            logits = self.dense_relu_sequential(x)
            return logits

    # Initialize network
    model = Network()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), 1e-2)

    loss_scale_manager = FixedLossScaleManager()
    trainer = Model(model, loss_fn=loss_fn, optimizer=optimizer, metrics={'accuracy'},
                    amp_level="O2", loss_scale_manager=loss_scale_manager)

    loss_callback = LossMonitor(100)
    losses = LambdaCallback(on_train_step_end=lambda rc: seen.append(
        float(rc.original_args().net_outputs[0].asnumpy())))
    seen = []
    trainer.train(10, train_dataset, callbacks=[loss_callback, losses])
    return seen, trainer, train_dataset


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fake_mnist")
    _write_fake_mnist(str(folder))
    return str(folder)


@pytest.fixture(scope="module")
def amp_tutorial_numpy_losses(mnist_dir):
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    losses, _, _ = _amp_tutorial_example(mnist_dir)
    return losses


def test_amp_tutorial_model_example_on_every_backend(backend, mnist_dir, amp_tutorial_numpy_losses,
                                                capsys):
    losses, trainer, train_dataset = _amp_tutorial_example(mnist_dir)
    assert len(losses) == 10  # 10 epochs of 1 batch; LossMonitor(100) prints nothing
    assert capsys.readouterr().out == ""
    assert losses[-1] < losses[0] - 0.1  # SGD(1e-2) for 10 steps: the loss falls
    if backend != "numpy":  # numpy is the reference itself: comparing would prove nothing
        # O2 (fp16 compute) follows the numpy reference within fp16 rounding
        np.testing.assert_allclose(losses, amp_tutorial_numpy_losses, rtol=2e-2, atol=2e-3)
    # the amp-converted network still evaluates in float32 at the metric
    acc = trainer.eval(train_dataset)["accuracy"]
    assert acc > 0.3


class _ModelApiPageNet(nn.Cell):
    """Seed 003's Net, with a 16 x 16 input instead of 224 x 224 to stay fast."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, 3, has_bias=False, weight_init='normal')
        self.bn = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(64*16*16, 12)  # padding=0

    def construct(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.relu(x)
        x = self.flatten(x)
        out = self.fc(x)
        return out


def _model_api_page_dataset(n=8, batch=8):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3, 16, 16)).astype(np.float32)
    y = rng.integers(0, 12, n).astype(np.int32)
    return NumpySlicesDataset((x, y), ["data", "label"], shuffle=False).batch(batch)


def test_model_api_page_model_examples_on_every_backend(backend, tmp_path, capsys, monkeypatch):
    from mscore import Tensor
    from mscore.nn import Momentum
    from mscore.train.callback import Callback, CheckpointConfig, ModelCheckpoint
    monkeypatch.chdir(tmp_path)
    get_dataset = _model_api_page_dataset
    Net = _ModelApiPageNet

    # Model(...).train
    net = Net()
    loss = nn.SoftmaxCrossEntropyWithLogits(is_grad=False, sparse=True, reduction="mean")
    optim = Momentum(params=net.trainable_params(), learning_rate=0.1, momentum=0.9)
    model = Model(net, loss_fn=loss, optimizer=optim, metrics=None)
    dataset = get_dataset()
    w0 = net.fc.weight.asnumpy().copy()
    model.train(2, dataset)
    assert not np.array_equal(w0, net.fc.weight.asnumpy())

    # Model(...).eval with {'acc'}
    net = Net()
    model = Model(net, loss_fn=loss, optimizer=None, metrics={'acc'})
    result = model.eval(dataset)
    assert set(result) == {"acc"} and 0.0 <= result["acc"] <= 1.0

    # Model(Net()).predict
    input_data = Tensor(np.random.randint(0, 255, [1, 3, 16, 16]), ms.float32)
    model = Model(Net())
    out = model.predict(input_data)
    assert out.shape == (1, 12) and out.dtype == ms.float32

    # the Callback example
    class Print_info(Callback):
        def step_end(self, run_context):
            cb_params = run_context.original_args()
            print(cb_params.cur_epoch_num)
            print(cb_params.cur_step_num)

    print_cb = Print_info()
    net = Net()
    model = Model(net, loss_fn=loss,
                  optimizer=Momentum(net.trainable_params(), 0.1, 0.9))
    capsys.readouterr()
    model.train(2, dataset, callbacks=print_cb)
    assert capsys.readouterr().out.split() == ["1", "1", "2", "2"]

    # the CheckpointConfig / ModelCheckpoint example (10 epochs of 1 step)
    config = CheckpointConfig()
    ckpoint_cb = ModelCheckpoint(prefix="ck_prefix", directory='./', config=config)
    model.train(10, dataset, callbacks=ckpoint_cb)
    files = sorted(f for f in os.listdir(tmp_path) if f.endswith(".ckpt"))
    assert files == ["ck_prefix-10_1.ckpt", "ck_prefix-6_1.ckpt", "ck_prefix-7_1.ckpt",
                     "ck_prefix-8_1.ckpt", "ck_prefix-9_1.ckpt"]  # keep_checkpoint_max=5
    saved = ms.load_checkpoint(str(tmp_path / "ck_prefix-10_1.ckpt"))
    np.testing.assert_array_equal(saved["fc.weight"].asnumpy(), net.fc.weight.asnumpy())


# -- numerics --------------------------------------------------------------------------------
def test_model_train_equals_a_hand_written_loop():
    x, y = _blobs()
    ms.set_seed(1)
    net_a = _mlp()
    Model(net_a, nn.CrossEntropyLoss(), nn.Momentum(net_a.trainable_params(), 0.1, 0.9)) \
        .train(3, _ds(x, y))
    ms.set_seed(1)
    net_b = _mlp()
    step = nn.TrainOneStepCell(nn.WithLossCell(net_b, nn.CrossEntropyLoss()),
                               nn.Momentum(net_b.trainable_params(), 0.1, 0.9))
    step.set_train()
    for _ in range(3):
        for i in range(0, len(y), 8):
            step(ms.Tensor(x[i:i + 8]), ms.Tensor(y[i:i + 8]))
    for pa, pb in zip(net_a.get_parameters(), net_b.get_parameters()):
        np.testing.assert_array_equal(pa.asnumpy(), pb.asnumpy())


def test_eval_returns_acc_and_loss_computed_like_numpy():
    x, y = _blobs(40)
    net = _mlp()
    model = Model(net, nn.CrossEntropyLoss(), metrics={"acc", "loss"})
    result = model.eval(_ds(x, y, batch=16))
    assert set(result) == {"acc", "loss"}
    logits = net(ms.Tensor(x)).asnumpy().astype(np.float64)
    assert result["acc"] == pytest.approx((logits.argmax(1) == y).mean())
    batch_losses = []
    for i in range(0, 40, 16):
        lg = logits[i:i + 16]
        logp = lg - np.log(np.exp(lg).sum(1, keepdims=True))
        batch_losses.append(-logp[np.arange(len(lg)), y[i:i + 16]].mean())
    assert result["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)
    assert net.training is False


def test_predict_is_the_network_in_inference_mode():
    x, _ = _blobs(5)
    net = nn.SequentialCell(nn.Dense(6, 8), nn.Dropout(p=0.5), nn.Dense(8, 3))
    model = Model(net)
    net.set_train(True)
    out = model.predict(ms.Tensor(x))
    # inference mode: dropout is off, so a second call gives the same values
    np.testing.assert_array_equal(out.asnumpy(), model.predict(ms.Tensor(x)).asnumpy())
    assert out.shape == (5, 3) and net.training is False
    # a numpy array is refused with MindSpore's words (test_numpy_arguments.py)
    with pytest.raises(TypeError, match=r"The types of input data must be in the Union\(Tensor, "
                                        r".*but got type ndarray\.\nHint: wrap the numpy array "
                                        r"with ms\.Tensor\(x\)\.$"):
        model.predict(x)
    with pytest.raises(TypeError, match="predict_data"):   # MindSpore's type
        model.predict()
    with pytest.raises(TypeError, match="Tensor"):   # a str passes to the network, as in MindSpore
        model.predict("x")


def test_custom_eval_network_and_eval_indexes():
    x, y = _blobs(24)
    net = _mlp()

    class Eval(nn.Cell):
        def __init__(self, net):
            super().__init__(auto_prefix=False)
            self.net = net

        def construct(self, data, label):
            return label, self.net(data)

    model = Model(net, eval_network=Eval(net), metrics={"acc": ms.train.Accuracy().set_indexes(
        [1, 0])})
    acc = model.eval(_ds(x, y))["acc"]
    assert acc == pytest.approx((net(ms.Tensor(x)).asnumpy().argmax(1) == y).mean())


def test_fit_evaluates_at_valid_frequency_and_reports_eval_results():
    x, y = _blobs()
    net = _mlp()
    model = Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9),
                  metrics={"acc"})
    seen = []

    class Spy(Callback):
        def on_eval_end(self, rc):
            seen.append(("eval", rc.original_args().cur_epoch_num))

        def on_train_epoch_end(self, rc):
            p = rc.original_args()
            seen.append(("epoch_end", p.cur_epoch_num, dict(p.get("eval_results") or {}),
                         p.mode, p.cur_step_num))

    model.fit(4, _ds(x, y), _ds(x, y), valid_frequency=2, callbacks=[Spy()])
    evals = [s for s in seen if s[0] == "eval"]
    assert evals == [("eval", 2), ("eval", 4)]
    ends = [s for s in seen if s[0] == "epoch_end"]
    assert [e[2] != {} for e in ends] == [False, True, False, True]
    assert set(ends[1][2]) == {"acc", "eval_loss"}
    assert all(e[3] == "train" for e in ends)  # the train state is restored after eval
    assert [e[4] for e in ends] == [6, 12, 18, 24]
    # the eval_loss is the loss of the network as it stood at that epoch
    seen.clear()
    model.fit(1, _ds(x, y), _ds(x, y), valid_frequency=[1], callbacks=[Spy()])
    fresh = model.eval(_ds(x, y))
    assert seen[-1][2]["acc"] == fresh["acc"]
    with pytest.raises(ValueError, match="valid_frequency"):
        model.fit(1, _ds(x, y), _ds(x, y), valid_frequency=0)


def test_plain_iterable_of_numpy_batches_is_accepted():
    x, y = _blobs(32)
    batches = [(x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)]
    ms.set_seed(2)
    net_a = _mlp()
    Model(net_a, nn.CrossEntropyLoss(), nn.SGD(net_a.trainable_params(), 0.1)).train(2, batches)
    ms.set_seed(2)
    net_b = _mlp()
    Model(net_b, nn.CrossEntropyLoss(), nn.SGD(net_b.trainable_params(), 0.1)).train(
        2, _ds(x, y))
    for pa, pb in zip(net_a.get_parameters(), net_b.get_parameters()):
        np.testing.assert_array_equal(pa.asnumpy(), pb.asnumpy())


def test_a_generator_of_batches_trains_one_epoch(capsys):
    x, y = _blobs(32)
    ms.set_seed(2)
    net_a = _mlp()
    model = Model(net_a, nn.CrossEntropyLoss(), nn.SGD(net_a.trainable_params(), 0.1))
    model.train(1, ((x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)),
                callbacks=[LossMonitor(1)])
    steps = re.findall(r"epoch: 1 step: (\d+),", capsys.readouterr().out)
    assert steps == ["1", "2", "3", "4"]
    ms.set_seed(2)
    net_b = _mlp()
    Model(net_b, nn.CrossEntropyLoss(), nn.SGD(net_b.trainable_params(), 0.1)).train(
        1, _ds(x, y))
    for pa, pb in zip(net_a.get_parameters(), net_b.get_parameters()):
        np.testing.assert_array_equal(pa.asnumpy(), pb.asnumpy())
    with pytest.raises(RuntimeError, match="one epoch only"):
        model.train(2, ((x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)))


def test_loss_fn_needs_two_columns():
    x, y = _blobs(16)
    net = _mlp()
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
    three = NumpySlicesDataset((x, y, y), ["a", "b", "c"], shuffle=False).batch(8)
    with pytest.raises(ValueError, match=r"\(data, label\)"):
        model.train(1, three)


# -- sink mode and DatasetHelper ---------------------------------------------------------------
def test_sink_mode_gives_the_same_weights_as_the_python_loop():
    x, y = _blobs()
    weights = []
    for sink in (False, True):
        ms.set_seed(4)
        net = _mlp()
        Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9)) \
            .train(3, _ds(x, y, shuffle=True), dataset_sink_mode=sink)
        weights.append([p.asnumpy() for p in net.get_parameters()])
    for a, b in zip(*weights):
        np.testing.assert_array_equal(a, b)


def test_sink_size_takes_steps_across_dataset_passes():
    x = np.arange(5, dtype=np.float32).reshape(5, 1)
    y = np.arange(5, dtype=np.int32)
    data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(1)  # 5 batches
    net = nn.Dense(1, 5)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.01))
    seen = []

    class Spy(Callback):
        def on_train_step_begin(self, rc):
            p = rc.original_args()
            seen.append((p.cur_epoch_num, p.cur_step_num, p.batch_num,
                         int(p.train_dataset_element[1].asnumpy()[0])))

    model.train(4, data, callbacks=[Spy()], dataset_sink_mode=True, sink_size=3)
    # 4 epochs x 3 steps; the data continue where the previous epoch stopped
    assert [s[3] for s in seen] == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    assert [s[0] for s in seen] == [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    assert [s[1] for s in seen] == list(range(1, 13)) and {s[2] for s in seen} == {3}
    # sink_size is ignored without sink mode, as in MindSpore
    seen.clear()
    model.train(1, data, callbacks=[Spy()], dataset_sink_mode=False, sink_size=3)
    assert len(seen) == 5


def test_dataset_helper_non_sink_and_sink():
    x, y = _blobs(20)
    data = _ds(x, y, batch=5)
    helper = DatasetHelper(data, dataset_sink_mode=False)
    assert helper.sink_size() == 4
    epochs = [[(a.asnumpy(), b.asnumpy()) for a, b in helper] for _ in range(2)]
    assert len(epochs[0]) == 4 and isinstance(next(iter(helper))[0], ms.Tensor)
    np.testing.assert_array_equal(np.concatenate([e[0] for e in epochs[1]]), x)

    sink = DatasetHelper(data, dataset_sink_mode=True, sink_size=-1, epoch_num=2)
    it = iter(sink)
    first = next(it)
    assert any(t.name == "mscore-dataset-sink" for t in threading.enumerate())
    rest = list(it)
    np.testing.assert_array_equal(np.concatenate([first[0].asnumpy()] +
                                                 [r[0].asnumpy() for r in rest]), x)
    assert len(list(sink)) == 4
    assert len(list(sink)) == 4  # more epochs than epoch_num: the thread starts again
    sink.stop_send()
    dtypes, shapes = sink.types_shapes()
    assert dtypes == [ms.float32, ms.int32] and shapes == [(5, 6), (5,)]
    net = _mlp()
    assert connect_network_with_dataset(net, sink) is net
    sink.release()
    with pytest.raises(ValueError, match="sink_size"):
        DatasetHelper(data, True, sink_size=0)
    with pytest.raises(TypeError, match="dataset_sink_mode"):
        DatasetHelper(data, dataset_sink_mode="yes")
    with pytest.raises(ValueError, match="epoch_num"):
        DatasetHelper(data, epoch_num=0)
    with pytest.raises(TypeError, match="dataset_helper"):
        connect_network_with_dataset(net, data)
    with pytest.raises(ValueError, match="endlessly"):
        DatasetHelper(data.repeat(), True, -1)
    assert DatasetHelper(data.repeat(), True, 7).sink_size() == 7
    # a one-shot iterator can be inspected without losing its first batch
    one_shot = DatasetHelper(iter([(x[i:i + 5], y[i:i + 5]) for i in range(0, 20, 5)]), False)
    assert one_shot.types_shapes()[1] == [(5, 6), (5,)]
    assert one_shot.sink_size() == -1  # length unknown until read
    np.testing.assert_array_equal(np.concatenate([b[1].asnumpy() for b in one_shot]), y)


def test_sink_thread_errors_reach_the_training_loop():
    def bad(v):
        if float(v[0]) > 10:
            raise KeyError("broken row")
        return v

    x = np.arange(16, dtype=np.float32).reshape(16, 1)
    y = np.zeros(16, np.int32)
    data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).map(bad, "x").batch(4)
    net = nn.Dense(1, 2)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
    # a user function's error reaches the loop as MindSpore raises it (RuntimeError), chained
    with pytest.raises(RuntimeError, match="broken row") as info:
        model.train(1, data, dataset_sink_mode=True)
    assert isinstance(info.value.__cause__, KeyError)


# -- loss scaling and amp ------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy warns on the fp16 overflow
def test_dynamic_loss_scale_manager_follows_overflows():
    from mscore.amp import DynamicLossScaleManager
    x, y = _blobs(32)
    net = _mlp()
    manager = DynamicLossScaleManager(init_loss_scale=2.0 ** 20, scale_factor=2, scale_window=3)
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1),
                  amp_level="O2", loss_scale_manager=manager)
    scales, overflows, managed = [], [], []
    model.train(3, _ds(x, y), callbacks=[LambdaCallback(on_train_step_end=lambda rc: (
        overflows.append(bool(rc.original_args().net_outputs[1].asnumpy())),
        scales.append(float(rc.original_args().net_outputs[2].asnumpy())),
        managed.append(manager.get_loss_scale())))])
    # Model updates the manager after each step: it holds the scale the next step uses
    assert managed[:-1] == scales[1:]
    assert True in overflows[3:] and len(set(scales)) > 2  # shrinks and grows again
    # 2**20 overflows fp16 gradients: the scale halves on every overflow until it fits
    assert overflows[0] is True and overflows[-1] is False
    # the Python-side manager follows the same rule as the train cell's scale
    expected = 2.0 ** 20
    good = 0
    for ov in overflows:
        if ov:
            expected, good = max(expected / 2, 1.0), 0
        else:
            good += 1
            if good >= 3:
                expected, good = expected * 2, 0
    assert manager.get_loss_scale() == pytest.approx(expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the first steps overflow 2**24
def test_amp_o2_model_trains_and_eval_network_casts_to_fp32():
    x, y = _blobs(32)
    net = _mlp()
    model = Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9),
                  metrics={"loss", "acc"}, amp_level="O2")
    before = model.eval(_ds(x, y))["loss"]
    model.train(5, _ds(x, y))
    after = model.eval(_ds(x, y))
    assert after["loss"] < before
    loss, logits, label = model.eval_network(ms.Tensor(x[:4]), ms.Tensor(y[:4]))
    assert logits.dtype == ms.float32 and loss.dtype == ms.float32
    for p in net.get_parameters():
        assert p.dtype == ms.float32  # master weights stay fp32


# -- argument checks -----------------------------------------------------------------------------
def test_model_argument_checks():
    net = _mlp()
    loss = nn.CrossEntropyLoss()
    opt = nn.SGD(net.trainable_params(), 0.1)
    with pytest.raises(ValueError, match="optimizer"):
        Model(net, loss, amp_level="O2")
    with pytest.raises(ValueError,
                       match=r"^The .level. should be in : \[.O0., .O1., .O2., .O3., .auto.\], "
                             r"but got O4\.$"):
        Model(net, loss, opt, amp_level="O4")
    with pytest.raises(ValueError, match="unsupported keyword"):
        Model(net, loss, opt, loss_scale=3)
    with pytest.raises(TypeError, match="network"):
        Model(lambda v: v)
    with pytest.raises(TypeError, match="loss_fn"):
        Model(net, "ce")
    with pytest.raises(TypeError, match="keep_batchnorm_fp32"):
        Model(net, loss, opt, keep_batchnorm_fp32="yes")
    with pytest.raises(ValueError, match="loss_scale_manager"):
        from mscore.amp import FixedLossScaleManager
        Model(net, loss, loss_scale_manager=FixedLossScaleManager())
    with pytest.raises(ValueError, match="loss_fn"):
        Model(net, metrics={"acc"})
    with pytest.raises(ValueError, match="eval_indexes"):   # read with metrics only
        Model(net, metrics={"acc"}, eval_network=net, eval_indexes=[0, 1])
    with pytest.raises(TypeError, match="metrics"):
        Model(net, loss, metrics="acc")
    model = Model(net, loss, opt)
    x, y = _blobs(8)
    with pytest.raises(ValueError, match="epoch"):
        model.train(0, _ds(x, y))
    with pytest.raises(ValueError, match="sink_size"):
        model.train(1, _ds(x, y), sink_size=0)
    with pytest.raises(ValueError, match="initial_epoch"):
        model.train(2, _ds(x, y), initial_epoch=2)
    with pytest.raises(TypeError, match="dataset_sink_mode"):
        model.train(1, _ds(x, y), dataset_sink_mode=1)
    with pytest.raises(ValueError, match="metrics"):
        model.eval(_ds(x, y))
    with pytest.raises(TypeError, match="train_dataset"):
        model.train(1, 42)


# -- resuming ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [b for b in ("numpy", "torch") if b in BACKENDS])
def test_resume_from_checkpoint_equals_uninterrupted_training(name, tmp_path):
    """Train 2 epochs, save, load into a fresh network, train 1 more: bit for bit the
    weights (and optimizer state) of 3 uninterrupted epochs, with a shuffled dataset."""
    ms.set_context(backend=name)
    x, y = _blobs(40)

    def build():
        ms.set_seed(7)
        net = _mlp()
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        return net, opt, Model(net, nn.CrossEntropyLoss(), opt)

    def data():
        return _ds(x, y, shuffle=True)

    _, _, full = build()
    full.train(3, data())
    ref = {p.name: p.asnumpy() for p in full.train_network.get_parameters()}

    _, _, first = build()
    ck = ModelCheckpoint("run", str(tmp_path), CheckpointConfig(save_checkpoint_steps=1000))
    first.train(2, data(), callbacks=[ck])
    assert os.path.basename(ck.latest_ckpt_file_name) == "run-2_5.ckpt"

    net, opt, resumed = build()
    params = ms.load_checkpoint(ck.latest_ckpt_file_name)
    not_loaded, _ = ms.load_param_into_net(net, params)
    assert not_loaded == []
    not_loaded, _ = ms.load_param_into_net(opt, params)
    assert not_loaded == []
    steps = []
    resumed.train(3, data(), initial_epoch=2, callbacks=[LambdaCallback(
        on_train_step_end=lambda rc: steps.append((rc.original_args().cur_epoch_num,
                                                   rc.original_args().cur_step_num)))])
    assert steps == [(3, s) for s in range(11, 16)]
    got = {p.name: p.asnumpy() for p in resumed.train_network.get_parameters()}
    assert sorted(got) == sorted(ref)
    for k in ref:
        np.testing.assert_array_equal(got[k], ref[k], err_msg=k)


@pytest.mark.skipif("jax" not in BACKENDS, reason="jax backend not installed")
def test_graph_mode_model_on_jax_matches_pynative():
    x, y = _blobs(32)
    results = []
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(backend="jax", mode=mode)
        ms.set_seed(5)
        net = _mlp()
        model = Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9),
                      metrics={"acc"})
        model.train(2, _ds(x, y))
        results.append(([p.asnumpy() for p in net.get_parameters()],
                         model.eval(_ds(x, y))["acc"]))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for a, b in zip(results[0][0], results[1][0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert results[0][1] == results[1][1]
