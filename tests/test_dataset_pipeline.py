"""mscore.dataset pipelines: sampler distributions and resumable orders, batching against
numpy, dataset callbacks (with Model, in and out of sink mode), ``data_sink``, the device
queue, and datasets through ``Model.train`` on every installed backend."""
import subprocess
import sys
import threading

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms
from mscore import _state, nn
from mscore import dataset as ds
from mscore.dataset import transforms, vision
from mscore.train import Callback, Model


@pytest.fixture(autouse=True)
def _fresh_config():
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()
    ms.set_context(backend="numpy")


def _col(d, epochs=1):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    out = [[np.asarray(r[0]).tolist() for r in it] for _ in range(epochs)]
    return out[0] if epochs == 1 else out


# -- samplers -------------------------------------------------------------------------------------
def test_random_sampler_orders_are_uniform_and_resumable():
    ds.config.set_seed(7)
    d = ds.NumpySlicesDataset(np.arange(8))
    epochs = _col(d, epochs=400)
    assert all(sorted(e) == list(range(8)) for e in epochs)
    where_zero = np.bincount([e.index(0) for e in epochs], minlength=8)
    chi2 = ((where_zero - 50) ** 2 / 50).sum()
    assert chi2 < 24.3   # chi-square, 7 degrees of freedom, p = 0.001
    resumed = ds.NumpySlicesDataset(np.arange(8))
    resumed._advance_epoch_to(250)
    assert _col(resumed) == epochs[250]


def test_weighted_sampler_frequencies_follow_the_weights():
    weights = np.array([1.0, 0.0, 3.0, 6.0])
    ds.config.set_seed(11)
    draws = _col(ds.NumpySlicesDataset(np.arange(20000), sampler=ds.WeightedRandomSampler(
        weights.tolist(), num_samples=20000)))
    counts = np.bincount(draws, minlength=4)
    p = weights / weights.sum()
    assert counts[1] == 0 and counts.sum() == 20000
    assert np.all(np.abs(counts - 20000 * p) <= 4 * np.sqrt(20000 * p * (1 - p)) + 1)
    firsts = []
    for seed in range(1500):
        ds.config.set_seed(seed)
        firsts.append(_col(ds.NumpySlicesDataset(np.arange(4), sampler=ds.WeightedRandomSampler(
            weights.tolist(), num_samples=2, replacement=False)))[0])
    counts = np.bincount(firsts, minlength=4)
    assert counts[1] == 0
    assert np.all(np.abs(counts - 1500 * p) <= 4 * np.sqrt(1500 * p * (1 - p)) + 1)


def test_distributed_shards_partition_the_same_shuffled_order():
    ds.config.set_seed(3)
    shards = [_col(ds.NumpySlicesDataset(np.arange(11), num_shards=3, shard_id=i), epochs=2)
              for i in range(3)]
    for e in range(2):
        rows = [s[e] for s in shards]
        assert [len(r) for r in rows] == [4, 4, 4]
        assert sorted(set(sum(rows, []))) == list(range(11))   # one row padded in twice
    assert shards[0][0] != shards[0][1]


def test_split_randomized_keeps_its_rows_across_epochs():
    ds.config.set_seed(4)
    a, b = ds.NumpySlicesDataset(np.arange(20), shuffle=False).split([0.25, 0.75])
    ea = _col(a, epochs=3)
    assert ea[0] == ea[1] == ea[2] and len(ea[0]) == 5
    assert sorted(ea[0] + _col(b)) == list(range(20))


# -- batching -----------------------------------------------------------------------------------
def test_padded_and_bucketed_batches_against_numpy():
    rng = np.random.default_rng(0)
    seqs = [rng.integers(1, 9, rng.integers(1, 7)) for _ in range(11)]

    def gen():
        for s in seqs:
            yield (s,)

    batches = _col(ds.GeneratorDataset(gen, ["s"]).padded_batch(4, pad_info={"s": (None, -1)}))
    for k, batch in enumerate(batches):
        chunk = seqs[4 * k:4 * k + 4]
        width = max(len(s) for s in chunk)
        assert batch == [list(s) + [-1] * (width - len(s)) for s in chunk]
    bucketed = _col(ds.GeneratorDataset(gen, ["s"]).bucket_batch_by_length(["s"], [3, 5],
                                                                            [2, 2, 2]))
    lengths = [len(s) for s in seqs]
    seen = sorted(tuple(v for v in row if v != 0) for b in bucketed for row in b)
    assert seen == sorted(tuple(s) for s in seqs)
    for b in bucketed:   # a batch holds one bucket's rows
        buckets = {int(np.searchsorted([3, 5], sum(1 for v in row if v != 0), "right"))
                   for row in b}
        assert len(buckets) == 1
    assert sum(len(b) for b in bucketed) == len(lengths)


def test_zip_concat_and_skip_take_against_numpy():
    a = ds.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False)
    b = ds.NumpySlicesDataset({"y": np.arange(5) * 3.0}, shuffle=False)
    rows = [(int(r["x"]), float(r["y"])) for r in ds.zip((a, b)).create_dict_iterator(
        output_numpy=True)]
    assert rows == [(i, 3.0 * i) for i in range(5)]
    joined = ds.NumpySlicesDataset(np.arange(3), shuffle=False) + \
        ds.NumpySlicesDataset(np.arange(10, 14), shuffle=False)
    assert _col(joined.skip(2).take(3)) == [2, 10, 11]


_BASE_MODULE_ONLY = """
import numpy as np
from mscore.dataset.engine.datasets import Dataset

class Rows(Dataset):
    def __init__(self, values, name):
        super().__init__()
        self.values, self.name = list(values), name
    def _rows(self, epoch):
        return ((np.asarray(v),) for v in self.values)
    def _size(self):
        return len(self.values)
    def _columns(self):
        return [self.name]

def column(d):
    return [np.asarray(r[0]).tolist() for r in d.create_tuple_iterator(output_numpy=True)]

a = Rows(range(6), "x")
print(column(a.map(lambda x: x * 10).filter(lambda x: x % 20 == 0).batch(2)))
print(column(a.skip(1).take(3).repeat(2).rename("x", "y").project(["y"])))
print(column(a.concat(Rows([7], "x")).zip(Rows(range(9), "z")).padded_batch(4, pad_info={})))
print(sorted(column(a.shuffle(2).bucket_batch_by_length(
    ["x"], [2], [6, 6], element_length_function=lambda x: 1))[0]))
print([d.get_dataset_size() for d in a.split([4, 2], randomize=False)])
"""


def test_pipeline_methods_build_their_nodes_after_importing_only_the_base_module(tmp_path):
    # Dataset's methods find the nodes the operation modules define above it through a
    # table those modules fill; importing the base module alone must fill it too.
    out = subprocess.run([sys.executable, "-c", _BASE_MODULE_ONLY], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    mapped, renamed, zipped, shuffled, sizes = out.stdout.splitlines()
    assert mapped == str([[0, 20], [40]])
    assert renamed == str([1, 2, 3, 1, 2, 3])
    assert zipped == str([[0, 1, 2, 3], [4, 5, 7]])
    assert shuffled == str([0, 1, 2, 3, 4, 5])
    assert sizes == str([4, 2])


# -- dataset callbacks -----------------------------------------------------------------------------
class _Steps(ds.DSCallback):
    def __init__(self, step_size=1):
        super().__init__(step_size)
        self.events = []

    def ds_epoch_begin(self, ctx):
        self.events.append(("epoch", ctx.cur_epoch_num))

    def ds_step_begin(self, ctx):
        self.events.append(("step", ctx.cur_step_num))


class _Sync(ds.WaitedDSCallback):
    def __init__(self, step_size):
        super().__init__(step_size)
        self.seen = []
        self.threads = set()

    def sync_step_begin(self, train_run_context, ds_run_context):
        self.threads.add(threading.get_ident())
        self.seen.append((ds_run_context.cur_step_num,
                          train_run_context.original_args().cur_step_num))


def _data(n=24, batch=8, callbacks=None):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    return ds.NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).map(
        lambda v: v, "x", callbacks=callbacks).batch(batch)


def _model():
    net = nn.Dense(4, 2)
    return Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))


@pytest.mark.parametrize("sink", [False, True])
def test_waited_callback_syncs_pipeline_steps_with_training_steps(sink):
    ds.config.set_callback_timeout(10)
    sync, steps = _Sync(step_size=8), _Steps(step_size=8)
    data = _data(callbacks=[sync, steps])
    _model().train(2, data, callbacks=[sync], dataset_sink_mode=sink)
    # the rows of training step k + 1 are prepared once step k has ended
    assert sync.seen == [(9, 1), (17, 2), (25, 3), (33, 4), (41, 5)]
    assert steps.events == [("epoch", 1), ("step", 1), ("step", 9), ("step", 17),
                            ("epoch", 2), ("step", 25), ("step", 33), ("step", 41)]
    main = threading.get_ident()
    assert (main in sync.threads) != sink   # sink mode: the prefetch thread waited


def test_callback_without_overrides_fails_when_the_pipeline_runs():
    class Empty(ds.DSCallback):
        pass

    d = _data(callbacks=Empty())
    with pytest.raises(AttributeError, match="without overriding"):
        _col(d)


# -- data_sink and the device queue ----------------------------------------------------------------
def test_data_sink_runs_sink_size_steps_per_call_across_epochs():
    seen = []

    def step(x, y):
        seen.append((int(x.asnumpy()), int(y.asnumpy())))
        return x + y

    d = ds.NumpySlicesDataset((np.arange(5), np.arange(5) * 10), shuffle=False)
    sink = ms.data_sink(step, d, sink_size=2)
    assert [int(sink().asnumpy()) for _ in range(4)] == [11, 33, 0, 22]
    assert [s[0] for s in seen] == [0, 1, 2, 3, 4, 0, 1, 2]
    assert sink.__name__ == "step"
    with pytest.raises(ValueError, match="sink_size"):
        ms.data_sink(step, d, sink_size=0)
    with pytest.raises(TypeError, match="sink_size"):
        ms.data_sink(step, d, sink_size=1.5)


def test_data_sink_trains_a_network():
    net = nn.Dense(4, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                               nn.SGD(net.trainable_params(), 0.5))
    sink = ms.data_sink(step, _data(n=32), sink_size=4)
    losses = [float(sink().asnumpy()) for _ in range(6)]
    assert losses[-1] < losses[0]


def test_device_queue_gives_device_batches_each_epoch():
    queue = _data().device_que()
    for _ in range(2):
        batches = list(queue)
        assert len(batches) == 3 and all(isinstance(t, ms.Tensor) for b in batches for t in b)
    assert [list(s) for s in queue.get_data_info()[1]] == [[8, 4], [8]]
    queue.release()


# -- through Model.train on every backend ----------------------------------------------------------
def _cifar_like(folder, n=24):
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, n).astype(np.uint8)
    imgs = rng.integers(0, 60, (n, 3, 32, 32)).astype(np.uint8)
    for i, c in enumerate(labels):
        imgs[i, c] = 200   # each class lights one channel
    records = np.concatenate([labels[:, None], imgs.reshape(n, -1)], 1)
    (folder / "data_batch_1.bin").write_bytes(records.tobytes())


class _Count(Callback):
    def __init__(self):
        self.steps, self.losses = 0, []

    def on_train_step_end(self, run_context):
        self.steps += 1
        self.losses.append(float(run_context.original_args().net_outputs.asnumpy()))


@pytest.mark.parametrize("backend", available_backends(exclude=("cupy",)))
def test_cifar_pipeline_trains_through_model(backend, tmp_path):
    use_backend(backend)
    _cifar_like(tmp_path)
    ds.config.set_seed(0)
    data = ds.Cifar10Dataset(str(tmp_path), sampler=ds.RandomSampler())
    data = data.map([vision.Resize((4, 4)), vision.RandomHorizontalFlip(),
                     vision.RandomColorAdjust(brightness=0.1, contrast=0.1),
                     vision.Rescale(1 / 255, 0), vision.Normalize([0.5] * 3, [0.25] * 3),
                     vision.HWC2CHW()], "image")
    data = data.map(transforms.TypeCast(ms.int32), "label").batch(8, drop_remainder=True)
    net = nn.SequentialCell(nn.Flatten(), nn.Dense(48, 3))
    model = Model(net, nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9),
                  metrics={"acc"})
    count = _Count()
    model.train(3, data, callbacks=[count])
    assert count.steps == 9 and count.losses[-1] < count.losses[0]
    assert model.eval(data)["acc"] > 0.6
