"""Summary operators inside construct (every backend, PYNATIVE and GRAPH_MODE, under
value_and_grad), SummaryCollector driven by hand and by Model.train, and ``mscore plot``."""
import json
import os

import numpy as np
import pytest
from _helpers import available_backends

import mscore as ms
from mscore import nn
from mscore.train.callback import CallbackParam, RunContext
from mscore.train.summary import (
    HistogramSummary,
    ImageSummary,
    ScalarSummary,
    SummaryRecord,
    TensorSummary,
    load_summaries,
    summary_ops,
)
from mscore.train.summary.collector import SummaryCollector, current_learning_rate


@pytest.fixture(autouse=True)
def _clean_state():
    summary_ops.discard_pending()
    yield
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    summary_ops.discard_pending()


# -- summary operators ---------------------------------------------------------------------
class OpsNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.array([1.0, -2.0, 3.0, 0.5], np.float32)),
                              name="w")
        self.scalar, self.hist = ScalarSummary(), HistogramSummary()
        self.tensor, self.image = TensorSummary(), ImageSummary()

    def construct(self, x):
        y = x * self.w
        loss = (y * y).sum()
        self.scalar("loss", loss)
        self.hist("y", y)
        self.tensor("x", x)
        self.image("img", (x.reshape((1, 1, 2, 2)) / 10.0))
        return loss


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
@pytest.mark.parametrize("backend", available_backends())
def test_summary_operators_record_on_every_backend(backend, mode, tmp_path):
    ms.set_context(backend=backend, mode=mode)
    net = OpsNet()
    w = np.array([1.0, -2.0, 3.0, 0.5], np.float64)
    grad_fn = ms.value_and_grad(net, None, net.trainable_params())
    xs = {}
    with SummaryRecord(str(tmp_path)) as sr:
        for step in (1, 2):
            x = np.full(4, step, np.float32)
            net(ms.Tensor(x))
            sr.record(step)
            xs[step] = x
        x = np.array([0.5, 1.0, 1.5, 2.0], np.float32)
        _, grads = grad_fn(ms.Tensor(x))                     # ops under autodiff
        sr.record(3)
        xs[3] = x
        sr.record(4)                                         # nothing new: no event
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * x * x * w, rtol=1e-5)
    got = load_summaries(str(tmp_path))
    assert [s for s, _, _ in got["scalar"]["loss"]] == [1, 2, 3]
    for step, _, value in got["scalar"]["loss"]:
        expected = float(np.sum((xs[step] * w) ** 2))
        assert value == pytest.approx(expected, rel=1e-6)
    for step, _, value in got["tensor"]["x"]:
        np.testing.assert_array_equal(value, xs[step])
    for step, _, h in got["histogram"]["y"]:
        y = xs[step] * w
        assert (h["min"], h["max"], h["num"]) == (y.min(), y.max(), 4)
    assert [s for s, _, _ in got["image"]["img"]] == [1, 2, 3]
    assert (got["image"]["img"][0][2]["height"], got["image"]["img"][0][2]["width"]) == (2, 2)


def test_summary_operator_checks():
    t = ms.Tensor(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="name"):
        ScalarSummary()(1, t)
    with pytest.raises(TypeError, match="name"):           # MindSpore's type
        ScalarSummary()("", t)
    with pytest.raises(TypeError, match="value"):
        ScalarSummary()("a", 1.0)
    with pytest.raises(ValueError, match="shape"):
        ScalarSummary()("a", t)
    with pytest.raises(ValueError, match="rank"):
        HistogramSummary()("a", ms.Tensor(np.float32(1)))
    with pytest.raises(ValueError, match="rank"):
        TensorSummary()("a", ms.Tensor(np.float32(1)))
    with pytest.raises(ValueError, match="4-d"):
        ImageSummary()("a", t)
    with pytest.raises(ValueError, match="channels"):
        ImageSummary()("a", ms.Tensor(np.ones((1, 6, 2, 2), np.float32)))
    ScalarSummary()("ok", ms.Tensor(np.ones((1,), np.float32)))   # shape (1,) is a scalar
    assert summary_ops.consume_pending()[0][:2] == ("scalar", "ok")


def test_eval_mode_leaves_operator_values_pending(tmp_path):
    with SummaryRecord(str(tmp_path)) as sr:
        ScalarSummary()("v", ms.Tensor(np.float32(4)))
        sr.set_mode("eval")
        sr.record(1)
        sr.set_mode("train")
        sr.record(2)
    got = load_summaries(str(tmp_path))["scalar"]
    assert [(s, v) for s, _, v in got["v"]] == [(2, 4.0)]


# -- SummaryCollector ----------------------------------------------------------------------
class SmallNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="same")
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(2 * 4 * 4, 3)
        self.tensor = TensorSummary()

    def construct(self, x):
        y = self.fc(self.flatten(self.conv(x)))
        self.tensor("logits", y)
        return y


def _setup(lr=0.05):
    ms.set_seed(0)
    net = SmallNet()
    opt = nn.SGD(net.trainable_params(), lr)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), opt)
    return net, opt, train_net


def _drive(collector, steps, batch_num, train_net, opt, net, images=None, outputs=None,
           callbacks=None):
    rng = np.random.default_rng(0)
    cb = CallbackParam(mode="train", epoch_num=-(-steps // batch_num), batch_num=batch_num,
              cur_step_num=0, cur_epoch_num=1, train_network=train_net, network=net,
              optimizer=opt, loss_fn=None, dataset_sink_mode=False,
              list_callback=callbacks if callbacks is not None else [collector],
              net_outputs=None, train_dataset_element=None)
    ctx = RunContext(cb)
    losses, xs = {}, {}
    with collector:
        collector.on_train_begin(ctx)
        for step in range(1, steps + 1):
            x = (rng.integers(0, 256, (2, 1, 4, 4)) / 255.0).astype(np.float32) \
                if images is None else images
            label = ms.Tensor(np.array([0, 2], np.int32))
            loss = train_net(ms.Tensor(x), label)
            cb["cur_step_num"] = step
            cb["cur_epoch_num"] = (step - 1) // batch_num + 1
            cb["train_dataset_element"] = [ms.Tensor(x), label]
            cb["net_outputs"] = loss if outputs is None else outputs
            losses[step], xs[step] = float(loss.asnumpy()), x
            collector.on_train_step_end(ctx)
            if step % batch_num == 0:
                collector.on_train_epoch_end(ctx)
        collector.on_train_end(ctx)
    return losses, xs


def test_collector_records_loss_lr_histograms_images_and_lineage(tmp_path):
    import io

    from PIL import Image
    net, opt, train_net = _setup()
    collector = SummaryCollector(str(tmp_path), collect_freq=3,
                                 collect_specified_data={"histogram_regular": "^fc"},
                                 custom_lineage_data={"version": "v1", "depth": 2})
    losses, xs = _drive(collector, steps=7, batch_num=7, train_net=train_net, opt=opt,
                        net=net)
    got = load_summaries(str(tmp_path))
    due = [1, 3, 6]                                   # the first step, then every 3rd
    assert [s for s, _, _ in got["scalar"]["loss/auto"]] == due
    for s, _, v in got["scalar"]["loss/auto"]:
        assert v == pytest.approx(losses[s], rel=1e-6)
    assert [(s, v) for s, _, v in got["scalar"]["learning_rate/auto"]] == \
        [(s, pytest.approx(0.05)) for s in due]
    assert set(got["histogram"]) == {"fc.weight/auto", "fc.bias/auto"}
    final_w = net.fc.weight.asnumpy()
    last = got["histogram"]["fc.weight/auto"][-1]
    assert last[0] == 6
    # the histogram of step 7 is not written, so step 6 differs from the final weights
    assert last[2]["num"] == final_w.size
    images = got["image"]["input_data/auto"]
    assert [s for s, _, _ in images] == due
    png = np.array(Image.open(io.BytesIO(images[1][2]["png"])))
    expected = np.concatenate([np.rint(xs[3][i, 0] * 255) for i in range(2)], axis=1)
    np.testing.assert_array_equal(png, expected.astype(np.uint8))
    # TensorSummary follows collect_freq here (7 steps: fewer than 20 collections)
    assert [s for s, _, _ in got["tensor"]["logits"]] == [1, 3, 6]
    lineage = [json.loads(x) for x in open(collector_lineage(tmp_path))]
    kinds = {rec["plugin"]: rec["value"] for rec in lineage}
    assert {rec["plugin"]: rec["mode"] for rec in lineage}["train_lineage"] == "train"
    assert kinds["custom_lineage_data"] == {"version": "v1", "depth": 2}
    train = kinds["train_lineage"]
    assert train["optimizer"] == "SGD" and train["epoch"] == 1 and train["steps"] == 7
    assert train["learning_rate"] == pytest.approx(0.05)
    assert train["loss"] == pytest.approx(losses[7], rel=1e-6)
    assert train["parameter_count"] == sum(int(np.prod(p.shape)) for p in net.get_parameters())
    assert kinds["graph"]["class"] == "TrainOneStepCell"


def collector_lineage(d):
    names = [n for n in os.listdir(d) if n.endswith(".jsonl")]
    assert len(names) == 1
    return os.path.join(d, names[0])


def test_collector_default_histograms_and_no_default_action(tmp_path):
    net, opt, train_net = _setup()
    a = tmp_path / "a"
    _drive(SummaryCollector(str(a), collect_freq=2), steps=2, batch_num=2,
           train_net=train_net, opt=opt, net=net)
    got = load_summaries(str(a))
    names = [p.name + "/auto" for p in opt.parameters][:5]
    assert sorted(got["histogram"]) == sorted(names)
    b = tmp_path / "b"
    _drive(SummaryCollector(str(b), collect_freq=1,
                            collect_specified_data={"collect_metric": True},
                            keep_default_action=False),
           steps=2, batch_num=2, train_net=train_net, opt=opt, net=net)
    got = load_summaries(str(b))
    assert sorted(got["scalar"]) == ["learning_rate/auto", "loss/auto"]
    assert got["histogram"] == {} and got["image"] == {}
    assert [s for s, _, _ in got["tensor"]["logits"]] == [1, 2]   # operators always


def test_collector_learning_rate_of_a_schedule_leaves_the_step_alone(tmp_path):
    ms.set_seed(0)
    net = SmallNet()
    schedule = nn.PolynomialDecayLR(0.1, 0.01, 10, 1.0)
    opt = nn.SGD(net.trainable_params(), schedule)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), opt)
    _drive(SummaryCollector(str(tmp_path), collect_freq=1), steps=4, batch_num=4,
           train_net=train_net, opt=opt, net=net)
    assert int(opt.global_step.asnumpy()[0]) == 4           # collecting did not advance it
    got = load_summaries(str(tmp_path))["scalar"]["learning_rate/auto"]
    expected = [(0.1 - 0.01) * (1 - min(k, 10) / 10) + 0.01 for k in range(4)]
    assert [s for s, _, _ in got] == [1, 2, 3, 4]
    np.testing.assert_allclose([v for _, _, v in got], expected, rtol=1e-6)
    # the rate of the last step, however often it is asked for
    for _ in range(2):
        assert current_learning_rate(opt) == [pytest.approx(expected[-1], rel=1e-6)]
    assert int(opt.global_step.asnumpy()[0]) == 4


def test_collector_tensor_range_and_non_image_input(tmp_path):
    net, opt, train_net = _setup()
    collector = SummaryCollector(str(tmp_path), collect_freq=2, collect_tensor_freq=3)
    _drive(collector, steps=7, batch_num=7, train_net=train_net, opt=opt, net=net)
    got = load_summaries(str(tmp_path))
    assert [s for s, _, _ in got["scalar"]["loss/auto"]] == [1, 2, 4, 6]
    assert [s for s, _, _ in got["tensor"]["logits"]] == [1, 3, 6]


def test_collector_skips_a_loss_it_cannot_read(tmp_path):
    net, opt, train_net = _setup()
    collector = SummaryCollector(str(tmp_path), collect_freq=1)
    _drive(collector, steps=2, batch_num=2, train_net=train_net, opt=opt, net=net,
           outputs="not a loss")
    got = load_summaries(str(tmp_path))
    assert "loss/auto" not in got["scalar"] and "learning_rate/auto" in got["scalar"]


def test_collector_argument_checks(tmp_path):
    d = str(tmp_path)
    for kwargs, exc, word in [
        (dict(summary_dir=1), TypeError, "summary_dir"),
        (dict(summary_dir=" "), ValueError, "summary_dir"),
        (dict(summary_dir=d, collect_freq=0), ValueError, "collect_freq"),
        (dict(summary_dir=d, collect_freq=1.0), TypeError, "collect_freq"),
        (dict(summary_dir=d, collect_freq=True), TypeError, "collect_freq"),
        (dict(summary_dir=d, collect_tensor_freq=-1), ValueError, "collect_tensor_freq"),
        (dict(summary_dir=d, collect_tensor_freq="2"), TypeError, "collect_tensor_freq"),
        (dict(summary_dir=d, max_file_size=0), ValueError, "max_file_size"),
        (dict(summary_dir=d, max_file_size=2.0), TypeError, "max_file_size"),
        (dict(summary_dir=d, keep_default_action=1), TypeError, "keep_default_action"),
        (dict(summary_dir=d, collect_specified_data=[1]), TypeError, "collect_specified_data"),
        (dict(summary_dir=d, collect_specified_data={"nope": True}), ValueError, "nope"),
        (dict(summary_dir=d, collect_specified_data={1: True}), TypeError, "For `1`"),
        (dict(summary_dir=d, collect_specified_data={"collect_metric": 1}), TypeError,
         "collect_metric"),
        (dict(summary_dir=d, collect_specified_data={"histogram_regular": 3}), TypeError,
         "histogram_regular"),
        (dict(summary_dir=d, collect_specified_data={"histogram_regular": "(["}), ValueError,
         "regular expression"),
        (dict(summary_dir=d, custom_lineage_data=[1]), TypeError, "custom_lineage_data"),
        (dict(summary_dir=d, custom_lineage_data={1: "a"}), TypeError,
         "custom_lineage_data -> 1"),
        (dict(summary_dir=d, custom_lineage_data={"a": [1]}), TypeError,
         "custom_lineage_data -> a"),
    ]:
        with pytest.raises(exc, match=word):
            SummaryCollector(**kwargs)


def test_two_collectors_in_one_callback_list_is_an_error(tmp_path):
    net, opt, train_net = _setup()
    first = SummaryCollector(str(tmp_path / "a"))
    second = SummaryCollector(str(tmp_path / "b"))
    with pytest.raises(ValueError, match="more than one SummaryCollector"):
        _drive(first, steps=1, batch_num=1, train_net=train_net, opt=opt, net=net,
               callbacks=[first, second])


def test_collector_with_model_train_and_eval(tmp_path):
    from mscore.train import Model
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    data = [((rng.integers(0, 256, (4, 1, 4, 4)) / 255.0).astype(np.float32),
             rng.integers(0, 3, 4).astype(np.int32)) for _ in range(3)]
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.SGD(net.trainable_params(), 0.1), metrics={"acc"})
    collector = SummaryCollector(str(tmp_path), collect_freq=2)
    model.train(2, data, callbacks=[collector])
    result = model.eval(data, callbacks=[collector])
    got = load_summaries(str(tmp_path))
    assert [s for s, _, _ in got["scalar"]["loss/auto"]] == [1, 2, 4, 6]
    assert [s for s, _, _ in got["image"]["input_data/auto"]] == [1, 2, 4, 6]
    lineage = []
    for name in os.listdir(tmp_path):
        if name.endswith(".jsonl"):
            lineage += [json.loads(x) for x in open(tmp_path / name)]
    evals = [r["value"] for r in lineage if r["plugin"] == "eval_lineage"]
    assert evals and evals[0]["metrics"]["acc"] == pytest.approx(result["acc"])


# -- mscore plot ---------------------------------------------------------------------------
def test_plot_draws_a_png_of_the_loss_curve(tmp_path, capsys):
    from PIL import Image

    from mscore.cli import main as cli_main
    from mscore.train.summary.plot import main
    with SummaryRecord(str(tmp_path / "run")) as sr:
        for s in range(1, 21):
            sr.add_value("scalar", "loss/auto", ms.Tensor(np.float32(2.0 / s)))
            sr.add_value("scalar", "learning_rate/auto", ms.Tensor(np.float32(0.1 * 0.9 ** s)))
            sr.record(s)
    out = tmp_path / "loss.png"
    assert main([str(tmp_path / "run"), "-o", str(out)]) == 0
    image = np.array(Image.open(out).convert("RGB"))
    assert image.shape[0] > 400 and image.shape[1] > 500    # two panels, 8 inches wide
    assert (image < 200).any() and (image == 255).any()      # lines on a white canvas
    assert f"wrote {out}" in capsys.readouterr().out
    out2 = tmp_path / "only_lr.png"
    assert cli_main(["plot", str(tmp_path / "run"), "-o", str(out2),
                     "--lr-tag", "learning_rate/auto", "--loss-tag", "loss/auto"]) == 0
    assert out2.stat().st_size > 1000


def test_plot_reports_nothing_to_draw(tmp_path, capsys):
    from mscore.train.summary.plot import main, plot_summary
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([str(empty), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "no event files" in err and err.startswith("mscore plot: error: log_dir:")
    assert err.count("\n") == 1
    with SummaryRecord(str(tmp_path / "h")) as sr:
        sr.add_value("histogram", "w", ms.Tensor(np.ones(3, np.float32)))
        sr.record(1)
    with pytest.raises(ValueError, match="no loss or learning-rate scalars"):
        plot_summary(str(tmp_path / "h"), str(tmp_path / "x.png"))
    assert not (tmp_path / "x.png").exists()
    with pytest.raises(TypeError, match="loss_tags"):
        plot_summary(str(tmp_path / "h"), str(tmp_path / "x.png"), loss_tags="loss")


def test_collector_draws_nhwc_inputs_and_caps_the_batch(tmp_path):
    import io

    from PIL import Image

    from mscore.train.summary import collector as collector_module
    rng = np.random.default_rng(3)
    batch = rng.integers(0, 256, (70, 5, 6, 3), dtype=np.uint8)      # NHWC, RGB
    sr_dir = str(tmp_path)
    collector = SummaryCollector(sr_dir, collect_freq=1)
    cb = CallbackParam(mode="train", epoch_num=1, batch_num=1, cur_step_num=1,
                       cur_epoch_num=1, list_callback=[collector], net_outputs=None,
                       train_dataset_element=[ms.Tensor(batch)], optimizer=None,
                       train_network=None, dataset_sink_mode=False)
    ctx = RunContext(cb)
    with collector:
        collector.on_train_begin(ctx)
        collector.on_train_step_end(ctx)
        collector.on_train_end(ctx)
    image = load_summaries(sr_dir)["image"]["input_data/auto"][0][2]
    cap = collector_module.MAX_INPUT_IMAGES
    assert (image["height"], image["width"], image["colorspace"]) == (cap // 8 * 5, 8 * 6, 3)
    png = np.array(Image.open(io.BytesIO(image["png"])))
    np.testing.assert_array_equal(png[:5, :6], batch[0])
    np.testing.assert_array_equal(png[5:10, 6:12], batch[9])


def test_seed_collector_examples_with_model(tmp_path):
    from mscore.train import Model
    ms.set_seed(0)
    rng = np.random.default_rng(1)
    dataset = [((rng.integers(0, 256, (2, 1, 4, 4)) / 255.0).astype(np.float32),
                rng.integers(0, 3, 2).astype(np.int32)) for _ in range(2)]
    net = SmallNet()
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.SGD(net.trainable_params(), 0.1))
    epoch = 1
    summary_collector = SummaryCollector(summary_dir=str(tmp_path / "a"))
    model.train(epoch, dataset, callbacks=summary_collector)
    specified = {'collect_metric': False, 'histogram_regular': '^conv.*'}
    summary_collector = SummaryCollector(summary_dir=str(tmp_path / "b"),
                                         collect_specified_data=specified)
    model.train(epoch, dataset, callbacks=summary_collector)
    specified = {'collect_metric': True}
    summary_collector = SummaryCollector(str(tmp_path / "c"),
                                         collect_specified_data=specified,
                                         keep_default_action=False,
                                         custom_lineage_data={'version': 'resnet50_v1'})
    model.train(epoch, dataset, callbacks=summary_collector)
    a, b, c = (load_summaries(str(tmp_path / k)) for k in "abc")
    assert [s for s, _, _ in a["scalar"]["loss/auto"]] == [1]        # collect_freq=10
    assert sorted(a["histogram"]) == sorted(p.name + "/auto" for p in net.trainable_params())
    assert "loss/auto" not in b["scalar"]
    assert sorted(b["histogram"]) == sorted(p.name + "/auto" for p in net.trainable_params()
                                            if p.name.startswith("conv"))
    assert b["histogram"] and "fc.weight/auto" not in b["histogram"]
    assert sorted(c["scalar"]) == ["learning_rate/auto", "loss/auto"] and not c["histogram"]
    lineage = [json.loads(x) for x in open(collector_lineage(tmp_path / "c"))]
    custom = [r["value"] for r in lineage if r["plugin"] == "custom_lineage_data"]
    assert custom == [{"version": "resnet50_v1"}]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_collector_stops_training_on_a_full_disk(tmp_path):
    net, opt, train_net = _setup()
    collector = SummaryCollector(str(tmp_path), collect_freq=1)
    calls = {"n": 0}
    original = collector.step_end

    def step_end(run_context):
        original(run_context)
        calls["n"] += 1
        if calls["n"] == 1:         # after the first step the disk is full
            w = collector.summary_record._writer
            w._file.close()
            w._file = open("/dev/full", "wb")
    collector.step_end = step_end
    with pytest.raises(RuntimeError, match="No space left on device"):
        _drive(collector, steps=6, batch_num=3, train_net=train_net, opt=opt, net=net)
    assert calls["n"] <= 3          # the epoch-end flush at step 3 at the latest


def test_collector_with_model_fit_records_eval_metrics(tmp_path):
    from mscore.train import Model
    ms.set_seed(0)
    rng = np.random.default_rng(2)
    data = [((rng.integers(0, 256, (4, 1, 4, 4)) / 255.0).astype(np.float32),
             rng.integers(0, 3, 4).astype(np.int32)) for _ in range(3)]
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss, nn.SGD(net.trainable_params(), 0.1), metrics={"acc"})
    seen = []

    class Spy(ms.train.Callback):
        def on_train_epoch_end(self, run_context):
            seen.append(run_context.original_args().metrics["acc"])
    collector = SummaryCollector(str(tmp_path), collect_freq=2)
    model.fit(2, data, data, callbacks=[collector, Spy()])
    got = load_summaries(str(tmp_path))
    acc = got["scalar"]["eval/acc/auto"]
    assert [s for s, _, _ in acc] == [3, 6]
    np.testing.assert_allclose([v for _, _, v in acc], seen, rtol=1e-6)
    # evaluation in the middle did not stop the operators being recorded in train mode
    assert [s for s, _, _ in got["tensor"]["logits"]] == [1, 2, 4, 6]
    assert [s for s, _, _ in got["scalar"]["loss/auto"]] == [1, 2, 4, 6]


def test_a_with_block_keeps_one_event_file_across_model_train(tmp_path):
    """Model.train enters its callbacks again (a nested block): the user's outer block keeps
    the files open, so two runs and a value added after them share one event file, in
    step order."""
    from mscore.dataset import NumpySlicesDataset
    from mscore.train import Model
    from mscore.train.summary.reader import load_summaries
    ms.set_context(backend="numpy")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = x[:, :3].argmax(1).astype(np.int32)
    net = nn.Dense(4, 3)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.1, 0.9))
    data = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(2)
    collector = SummaryCollector(str(tmp_path), collect_freq=1)
    with collector:
        model.train(1, data, callbacks=[collector])
        assert collector.summary_record is not None          # still open after the run
        collector.summary_record.add_value("scalar", "eval/accuracy",
                                           ms.Tensor(0.5, ms.float32))
        collector.summary_record.record(4)
    assert collector.summary_record is None                  # closed by the outer block
    (events,) = [name for name in os.listdir(tmp_path) if ".tfevents." in name]
    scalars = load_summaries(str(tmp_path))["scalar"]
    assert [step for step, _, _ in scalars["loss/auto"]] == [1, 2, 3, 4]
    assert [(step, value) for step, _, value in scalars["eval/accuracy"]] == [(4, 0.5)]
