"""mscore.dataset: sources, pipeline operations, iterators, transforms, MNIST IDX files."""
import gzip
import os

import numpy as np
import pytest

import mscore as ms
from mscore import _state
from mscore import dataset as ds
from mscore.dataset import (
    GeneratorDataset,
    MnistDataset,
    NumpySlicesDataset,
    read_idx,
    transforms,
    vision,
    write_idx,
)


@pytest.fixture(autouse=True)
def _numpy_backend():
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    yield
    _state.reset()


def _rows(dataset):
    return [tuple(np.asarray(v) for v in row)
            for row in dataset.create_tuple_iterator(output_numpy=True, num_epochs=1)]


# -- sources -----------------------------------------------------------------------------------
def test_numpy_slices_tuple_dict_list_columns_and_values():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int32)
    d = NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False)
    assert d.get_col_names() == ["x", "y"]
    assert d.get_dataset_size() == 6 and len(d) == 6
    rows = _rows(d)
    np.testing.assert_array_equal(np.stack([r[0] for r in rows]), x)
    np.testing.assert_array_equal(np.array([r[1] for r in rows]), y)
    assert rows[0][0].dtype == np.float32 and rows[0][1].dtype == np.int32

    d2 = NumpySlicesDataset({"a": x, "b": y}, shuffle=False)
    assert d2.get_col_names() == ["a", "b"]
    np.testing.assert_array_equal(_rows(d2)[3][0], x[3])

    d3 = NumpySlicesDataset([1, 2, 3], shuffle=False)
    assert d3.get_col_names() == ["column_0"]
    assert [int(r[0]) for r in _rows(d3)] == [1, 2, 3]


def test_numpy_slices_argument_errors():
    with pytest.raises(ValueError, match="same length"):
        NumpySlicesDataset((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="column_names"):
        NumpySlicesDataset((np.zeros(3), np.zeros(3)), column_names=["a"])
    with pytest.raises(TypeError, match="data"):
        NumpySlicesDataset(5)
    with pytest.raises(TypeError, match="shuffle"):
        NumpySlicesDataset([1, 2], shuffle="yes")
    with pytest.raises(ValueError, match="shard_id"):
        NumpySlicesDataset([1, 2], num_shards=2, shard_id=2)
    with pytest.raises(ValueError, match="num_shards and shard_id"):
        NumpySlicesDataset([1, 2], num_shards=2)


def test_default_shuffle_is_a_seeded_permutation_that_changes_per_epoch():
    data = np.arange(50)
    d = NumpySlicesDataset(data)  # shuffle=None shuffles, as in MindSpore
    e0 = [int(r[0]) for r in d]
    # a second iterator replays the first epoch, as in MindSpore
    # (tests/data/training_api_oracle.json); one iterator's epochs differ
    assert [int(r[0]) for r in d] == e0
    it = d.create_tuple_iterator(num_epochs=2)
    assert [int(r[0]) for r in it] == e0
    e1 = [int(r[0]) for r in it]
    assert sorted(e0) == list(range(50)) and sorted(e1) == list(range(50))
    assert e0 != list(range(50)) and e0 != e1
    # a fresh pipeline with the same seed repeats the same sequence of epochs
    d2 = NumpySlicesDataset(data)
    assert [int(r[0]) for r in d2] == e0
    # resuming at epoch 1 gives epoch 1's order (Model.train(initial_epoch=1) does this)
    d3 = NumpySlicesDataset(data)
    d3._advance_epoch_to(1)
    assert [int(r[0]) for r in d3] == e1
    ds.config.set_seed(123)
    assert [int(r[0]) for r in NumpySlicesDataset(data)] != e0


def test_num_samples_sampler_and_shards():
    data = np.arange(10)
    assert [int(r[0]) for r in NumpySlicesDataset(data, shuffle=False, num_samples=4)] == \
        [0, 1, 2, 3]
    assert [int(r[0]) for r in NumpySlicesDataset(data, sampler=[9, 0, 5])] == [9, 0, 5]
    shards = [[int(r[0]) for r in NumpySlicesDataset(data, shuffle=False, num_shards=3,
                                                     shard_id=i)] for i in range(3)]
    assert [len(s) for s in shards] == [4, 4, 4]  # padded by wrapping round, as MindSpore
    assert sorted(set(sum(shards, []))) == list(range(10))
    assert NumpySlicesDataset(data, num_shards=3, shard_id=0).get_dataset_size() == 4


def test_generator_dataset_callable_random_access_and_iterable():
    def gen():
        for i in range(5):
            yield np.full((2,), i, np.float32), np.int64(i)

    g = GeneratorDataset(gen, ["data", "label"])
    assert g.get_dataset_size() == 5
    assert [int(r[1]) for r in _rows(g)] == [0, 1, 2, 3, 4]
    assert [int(r[1]) for r in _rows(g)] == [0, 1, 2, 3, 4]  # a callable restarts each epoch

    class Source:
        def __getitem__(self, i):
            return np.array([i, i * i], np.int32), np.int32(i % 2)

        def __len__(self):
            return 7

    r = GeneratorDataset(Source(), ["x", "y"], shuffle=False)
    rows = _rows(r)
    assert len(rows) == 7 and rows[3][0].tolist() == [3, 9] and int(rows[3][1]) == 1
    shuffled = [int(row[0][0]) for row in _rows(GeneratorDataset(Source(), ["x", "y"]))]
    assert sorted(shuffled) == list(range(7))

    it = GeneratorDataset([(np.ones(1), 1), (np.zeros(1), 0)], ["a", "b"])
    assert it.get_dataset_size() == 2

    # MindSpore ignores shuffle for a source that can only be iterated, and refuses shards
    assert [int(r[1]) for r in _rows(GeneratorDataset(gen, ["a", "b"], shuffle=True))] == \
        [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="random-accessible"):
        GeneratorDataset(gen, ["a", "b"], num_shards=2, shard_id=0)
    with pytest.raises(TypeError, match="source"):
        GeneratorDataset(42, ["a"])
    with pytest.raises(RuntimeError, match="column_names has 1"):
        _rows(GeneratorDataset(gen, ["only"]))


def test_generator_dataset_column_types():
    g = GeneratorDataset(lambda: iter([(np.array([1.5]),)]), ["a"], column_types=[ms.float16])
    assert _rows(g)[0][0].dtype == np.float16


# -- operations ------------------------------------------------------------------------------
def test_batch_sizes_values_and_drop_remainder():
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    y = np.arange(10, dtype=np.int32)
    d = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(4)
    assert d.get_dataset_size() == 3 and d.get_batch_size() == 4
    batches = _rows(d)
    assert [b[0].shape for b in batches] == [(4, 1), (4, 1), (2, 1)]
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), y)
    d2 = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(4, drop_remainder=True)
    assert d2.get_dataset_size() == 2 and len(_rows(d2)) == 2
    with pytest.raises(ValueError, match="batch_size"):
        NumpySlicesDataset(x).batch(0)
    with pytest.raises(TypeError, match="drop_remainder"):
        NumpySlicesDataset(x).batch(2, drop_remainder=1)


def test_batch_ragged_rows_raise_and_per_batch_map_pads():
    def gen():
        for n in (1, 3, 2):
            yield (np.arange(n),)

    with pytest.raises(RuntimeError, match="different shapes"):
        _rows(GeneratorDataset(gen, ["v"]).batch(3))

    def pad(col, info):
        width = max(len(v) for v in col)
        return ([np.pad(v, (0, width - len(v))) for v in col],)

    out = _rows(GeneratorDataset(gen, ["v"]).batch(3, per_batch_map=pad))
    np.testing.assert_array_equal(out[0][0], [[0, 0, 0], [0, 1, 2], [0, 1, 0]])


def test_map_single_multiple_and_new_columns():
    x = np.arange(4, dtype=np.float32)
    y = np.arange(4, dtype=np.int64)
    d = NumpySlicesDataset((x, y), ["x", "y"], shuffle=False)
    m = d.map([lambda v: v * 2, lambda v: v + 1], "x")
    np.testing.assert_array_equal([r[0] for r in _rows(m)], x * 2 + 1)
    both = d.map(lambda a, b: (a + b, a - b), ["x", "y"], ["s", "d"])
    assert both.get_col_names() == ["s", "d"]   # as many outputs as inputs: in place
    r = _rows(both)[3]
    assert float(r[0]) == 6.0 and float(r[1]) == 0.0
    dup = d.map(transforms.Duplicate(), "y", ["y1", "y2"])
    assert dup.get_col_names() == ["y1", "y2", "x"]  # more outputs: first, then the others
    order = d.map(lambda v: v, "x", column_order=["y", "x"])
    assert order.get_col_names() == ["y", "x"] and int(_rows(order)[2][0]) == 2
    with pytest.raises(RuntimeError, match="input_columns"):   # when the pipeline runs
        _rows(d.map(lambda v: v, "nope"))
    with pytest.raises(ValueError, match="operations"):
        d.map([1], "x")
    with pytest.raises(RuntimeError, match="output_columns"):
        _rows(d.map(lambda v: (v, v), "x"))


def test_repeat_take_skip_project_rename_shuffle():
    d = NumpySlicesDataset((np.arange(5), np.arange(5) * 10), ["a", "b"], shuffle=False)
    rep = d.repeat(3)
    assert rep.get_dataset_size() == 15 and rep.get_repeat_count() == 3
    assert [int(r[0]) for r in _rows(rep)] == list(range(5)) * 3
    assert d.repeat().get_dataset_size() == 5   # one repetition, as MindSpore counts it
    assert [int(r[0]) for r in _rows(d.take(2))] == [0, 1]
    assert [int(r[0]) for r in _rows(d.skip(3))] == [3, 4]
    assert d.skip(3).get_dataset_size() == 2 and d.take(9).get_dataset_size() == 5
    p = d.project(["b"])
    assert p.get_col_names() == ["b"] and int(_rows(p)[1][0]) == 10
    rn = d.rename(["a"], ["alpha"])
    assert rn.get_col_names() == ["alpha", "b"]
    sh = d.shuffle(5)
    vals = [int(r[0]) for r in _rows(sh)]
    assert sorted(vals) == list(range(5))
    with pytest.raises(ValueError, match="buffer_size"):
        d.shuffle(1)
    with pytest.raises(ValueError, match="count"):
        d.repeat(0)


def test_repeat_after_shuffle_reshuffles_each_repetition():
    d = NumpySlicesDataset(np.arange(30)).repeat(2)
    vals = [int(r[0]) for r in d]
    assert sorted(vals[:30]) == list(range(30)) and sorted(vals[30:]) == list(range(30))
    assert vals[:30] != vals[30:]


# -- iterators -----------------------------------------------------------------------------------
def test_tuple_and_dict_iterators_give_tensors_of_the_active_backend():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    d = NumpySlicesDataset({"x": x, "y": np.array([1, 2, 3], np.uint32)}, shuffle=False)
    first = next(iter(d.create_tuple_iterator()))
    assert isinstance(first, list) and isinstance(first[0], ms.Tensor)
    np.testing.assert_array_equal(first[0].asnumpy(), x[0])
    # unsigned 32-bit (MNIST labels) has no mscore dtype: it becomes int64
    assert first[1].dtype == ms.int64
    rows = list(d.create_dict_iterator(output_numpy=True))
    assert set(rows[0]) == {"x", "y"} and isinstance(rows[0]["x"], np.ndarray)
    only_y = list(d.create_tuple_iterator(columns=["y"], output_numpy=True))
    assert [int(r[0]) for r in only_y] == [1, 2, 3]
    with pytest.raises(RuntimeError, match="columns"):
        list(d.create_tuple_iterator(columns=["z"]))


def test_iterator_epochs_and_num_epochs_limit():
    d = NumpySlicesDataset(np.arange(3), shuffle=False)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [int(r[0]) for r in it] == [0, 1, 2]
    assert [int(r[0]) for r in it] == [0, 1, 2]
    with pytest.raises(RuntimeError, match="num_epochs=2"):
        list(it)
    with pytest.raises(RuntimeError, match="num_epochs"):
        d.create_tuple_iterator(num_epochs=0)
    with pytest.raises(ValueError, match="num_epochs"):
        d.create_tuple_iterator(num_epochs=-2)


def test_output_shapes_and_types():
    d = NumpySlicesDataset((np.zeros((4, 3, 2), np.float32), np.zeros(4, np.int32)),
                           ["a", "b"], shuffle=False).batch(2)
    assert d.output_shapes() == [[2, 3, 2], [2]]
    assert d.output_types() == [np.float32, np.int32]


# -- transforms ----------------------------------------------------------------------------------
def test_rescale_normalize_hwc2chw_typecast_against_numpy():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (5, 4, 3)).astype(np.uint8)
    r = vision.Rescale(1.0 / 255.0, -0.5)(img)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, img.astype(np.float32) / 255.0 - 0.5, rtol=1e-6, atol=1e-7)
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 2.0)
    n = vision.Normalize(mean, std)(r)
    np.testing.assert_allclose(n, (r - np.array(mean, np.float32)) / np.array(std, np.float32),
                               rtol=1e-6)
    chw = vision.HWC2CHW()(n)
    assert chw.shape == (3, 5, 4)
    np.testing.assert_array_equal(chw[2], n[:, :, 2])
    n_chw = vision.Normalize(mean, std, is_hwc=False)(r.transpose(2, 0, 1))
    np.testing.assert_allclose(n_chw, chw, rtol=1e-6)
    gray = vision.Normalize((0.1307,), (0.3081,))(np.full((2, 2, 1), 0.5, np.float32))
    np.testing.assert_allclose(gray, (0.5 - 0.1307) / 0.3081, rtol=1e-6)
    assert vision.HWC2CHW()(np.zeros((3, 4))).shape == (3, 4)   # MindSpore keeps H x W
    t = transforms.TypeCast(ms.int32)(np.array([1.7, 2.2]))
    assert t.dtype == np.int32 and t.tolist() == [1, 2]
    assert transforms.TypeCast(np.float16)(np.array([1])).dtype == np.float16
    tt = vision.ToTensor()(img)
    np.testing.assert_allclose(tt, img.transpose(2, 0, 1) / 255.0, rtol=1e-6)


def test_transform_argument_errors():
    with pytest.raises(TypeError, match="rescale"):
        vision.Rescale("x", 0)
    with pytest.raises(ValueError, match="std"):
        vision.Normalize((0.5,), (0.0,))
    with pytest.raises(ValueError, match="same length"):
        vision.Normalize((0.5, 0.5), (1.0,))
    with pytest.raises(RuntimeError, match="channel"):
        vision.Normalize((0.5, 0.5), (1.0, 1.0))(np.zeros((2, 2, 3)))
    with pytest.raises(TypeError, match="data_type"):
        transforms.TypeCast("not-a-type")
    with pytest.raises(ValueError, match="size"):
        vision.Resize((0, 3))
    with pytest.raises(RuntimeError, match="image"):
        vision.HWC2CHW()(np.zeros(3))


def test_resize_bilinear_matches_scipy_zoom_on_interior_and_nearest_repeats():
    from scipy import ndimage
    img = np.arange(16, dtype=np.float32).reshape(4, 4)
    up = vision.Resize((8, 8))(img)
    # half-pixel-centre bilinear on a linear ramp is exact away from the clamped border
    ref = ndimage.zoom(img, 2, order=1, grid_mode=True, mode="nearest")
    np.testing.assert_allclose(up[1:-1, 1:-1], ref[1:-1, 1:-1], atol=1e-5)
    near = vision.Resize((8, 8), vision.Inter.NEAREST)(img)
    np.testing.assert_array_equal(near, np.repeat(np.repeat(img, 2, 0), 2, 1))
    assert vision.Resize(6)(np.zeros((4, 8, 3), np.uint8)).shape == (6, 12, 3)
    padded = vision.Pad(2)(np.ones((3, 3, 1), np.uint8))
    assert padded.shape == (7, 7, 1) and padded.sum() == 9 and padded[2:5, 2:5].all()
    assert vision.CenterCrop(2)(np.arange(16).reshape(4, 4)).tolist() == [[5, 6], [9, 10]]


def test_onehot_and_compose():
    oh = transforms.OneHot(4)(np.array([0, 3]))
    np.testing.assert_array_equal(oh, np.eye(4, dtype=np.float32)[[0, 3]])
    comp = transforms.Compose([vision.Rescale(2.0, 0.0), transforms.TypeCast(np.int32)])
    assert comp(np.array([1.5])).tolist() == [3]


# -- MNIST ---------------------------------------------------------------------------------------
def _write_mnist(folder, n_train=6, n_test=3, gz=False):
    rng = np.random.default_rng(1)
    data = {}
    for part, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
        lbls = rng.integers(0, 10, n).astype(np.uint8)
        data[part] = (imgs, lbls)
        for kind, arr in (("images-idx3-ubyte", imgs), ("labels-idx1-ubyte", lbls)):
            path = os.path.join(folder, f"{part}-{kind}")
            write_idx(path, arr)
            if gz:
                with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
                    g.write(f.read())
                os.remove(path)
    return data


def test_idx_roundtrip_and_header_bytes(tmp_path):
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "a", arr)
    raw = (tmp_path / "a").read_bytes()
    assert raw[:4] == bytes([0, 0, 8, 3])
    assert raw[4:16] == (2).to_bytes(4, "big") + (3).to_bytes(4, "big") + (4).to_bytes(4, "big")
    np.testing.assert_array_equal(read_idx(tmp_path / "a"), arr)
    f32 = np.linspace(-1, 1, 5).astype(np.float32)
    write_idx(tmp_path / "b", f32)
    np.testing.assert_array_equal(read_idx(tmp_path / "b"), f32)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03")
    with pytest.raises(ValueError, match="not an IDX"):
        read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(raw[:-1])
    with pytest.raises(ValueError, match="data bytes"):
        read_idx(tmp_path / "short")


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_dataset_reads_idx_folder(tmp_path, gz):
    data = _write_mnist(tmp_path, gz=gz)
    train = MnistDataset(str(tmp_path), usage="train", shuffle=False)
    assert train.get_col_names() == ["image", "label"] and train.get_dataset_size() == 6
    rows = _rows(train)
    assert rows[0][0].shape == (28, 28, 1) and rows[0][0].dtype == np.uint8
    assert rows[0][1].dtype == np.uint32
    np.testing.assert_array_equal(rows[4][0][..., 0], data["train"][0][4])
    assert [int(r[1]) for r in rows] == data["train"][1].tolist()
    assert MnistDataset(str(tmp_path), usage="test").get_dataset_size() == 3
    assert MnistDataset(str(tmp_path)).get_dataset_size() == 9
    with pytest.raises(ValueError, match="usage"):
        MnistDataset(str(tmp_path), usage="valid")
    with pytest.raises(ValueError, match="not a directory"):
        MnistDataset(str(tmp_path / "missing"))


def test_amp_tutorial_pipeline_verbatim(tmp_path):
    """The data pipeline of seed 004 with only the import changed."""
    data = _write_mnist(tmp_path, n_train=10)

    def datapipe(path, batch_size):
        image_transforms = [
            vision.Rescale(1.0 / 255.0, 0),
            vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        ]
        label_transform = transforms.TypeCast(ms.int32)

        dataset = MnistDataset(path, usage="train", shuffle=False)
        dataset = dataset.map(image_transforms, 'image')
        dataset = dataset.map(label_transform, 'label')
        dataset = dataset.batch(batch_size)
        return dataset

    train_dataset = datapipe(str(tmp_path), 4)
    size = train_dataset.get_dataset_size()
    assert size == 3
    seen = []
    for _batch, (image, label) in enumerate(train_dataset.create_tuple_iterator()):
        assert isinstance(image, ms.Tensor) and image.dtype == ms.float32
        assert label.dtype == ms.int32
        seen.append((image.asnumpy(), label.asnumpy()))
    imgs = np.concatenate([s[0] for s in seen])
    ref = (data["train"][0][..., None].astype(np.float32) / 255.0 - 0.1307) / 0.3081
    np.testing.assert_allclose(imgs, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.concatenate([s[1] for s in seen]), data["train"][1])


def test_plain_iterables_become_datasets():
    batches = [(np.ones((2, 3), np.float32), np.array([0, 1])) for _ in range(4)]
    d = ds.as_dataset(batches)
    assert d.get_dataset_size() == 4 and d.get_col_names() == ["column_0", "column_1"]
    assert len(list(d)) == 4 and len(list(d)) == 4
    one_shot = ds.as_dataset(iter(batches))
    assert len(list(one_shot)) == 4
    with pytest.raises(RuntimeError, match="one epoch only"):
        list(one_shot)
    with pytest.raises(TypeError, match="dataset"):
        ds.as_dataset(3.5)
    with pytest.raises(AttributeError, match="None"):   # MindSpore's type (and a TypeError)
        ds.as_dataset(None)
