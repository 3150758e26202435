"""mscore.dataset sources on files and generated data, checked against numpy: CIFAR binary
records, image folders, IDX kin, text and CSV files, schemas, random and padded data."""
import json
import os
import sys

import numpy as np
import pytest

import mscore as ms
from mscore import _state
from mscore import dataset as ds


@pytest.fixture(autouse=True)
def _fresh_config():
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()


def _rows(d):
    return [tuple(np.asarray(x) for x in r)
            for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]


# -- CIFAR -----------------------------------------------------------------------------------------
def _cifar_file(path, images_chw, *label_columns):
    labels = np.stack(label_columns, 1).astype(np.uint8)
    records = np.concatenate([labels, images_chw.reshape(len(images_chw), -1)], 1)
    path.write_bytes(records.astype(np.uint8).tobytes())


def test_cifar10_reads_records_in_name_order_as_hwc(tmp_path):
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, (3, 3, 32, 32), dtype=np.uint8)
    test = rng.integers(0, 256, (2, 3, 32, 32), dtype=np.uint8)
    _cifar_file(tmp_path / "data_batch_2.bin", train[2:], np.array([9]))
    _cifar_file(tmp_path / "data_batch_1.bin", train[:2], np.array([4, 7]))
    _cifar_file(tmp_path / "test_batch.bin", test, np.array([1, 2]))
    (tmp_path / "batches.meta.txt").write_text("airplane\n")
    rows = _rows(ds.Cifar10Dataset(str(tmp_path), shuffle=False))
    assert [int(r[1]) for r in rows] == [4, 7, 9, 1, 2]
    want = np.concatenate([train, test]).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(np.stack([r[0] for r in rows]), want)
    assert rows[0][0].dtype == np.uint8 and rows[0][1].dtype == np.uint32
    assert ds.Cifar10Dataset(str(tmp_path), usage="train").get_dataset_size() == 3
    assert [int(r[1]) for r in _rows(ds.Cifar10Dataset(str(tmp_path), usage="test",
                                                       shuffle=False))] == [1, 2]


def test_cifar100_columns_and_labels(tmp_path):
    imgs = np.arange(2 * 3072, dtype=np.int64).reshape(2, 3, 32, 32) % 251
    _cifar_file(tmp_path / "train.bin", imgs.astype(np.uint8), np.array([3, 5]), np.array([30, 55]))
    d = ds.Cifar100Dataset(str(tmp_path), usage="train", shuffle=False)
    assert d.get_col_names() == ["image", "coarse_label", "fine_label"]
    rows = _rows(d)
    assert [(int(r[1]), int(r[2])) for r in rows] == [(3, 30), (5, 55)]
    np.testing.assert_array_equal(rows[1][0], imgs[1].transpose(1, 2, 0))


def test_cifar_bad_files_are_value_errors_naming_them(tmp_path):
    (tmp_path / "data_batch_1.bin").write_bytes(b"\0" * (3073 * 2 + 5))
    with pytest.raises(ValueError, match=r"data_batch_1\.bin: .*whole number of 3073-byte"):
        ds.Cifar10Dataset(str(tmp_path))
    (tmp_path / "data_batch_1.bin").write_bytes(b"")
    with pytest.raises(ValueError, match=r"data_batch_1\.bin"):
        ds.Cifar10Dataset(str(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no Cifar10 binary files"):
        ds.Cifar10Dataset(str(empty))


def test_pk_sampler_takes_num_val_rows_of_each_class(tmp_path):
    labels = np.array([2, 0, 2, 1, 0, 2, 2])
    imgs = np.zeros((len(labels), 3, 32, 32), np.uint8)
    imgs[:, 0, 0, 0] = np.arange(len(labels))
    _cifar_file(tmp_path / "data_batch_1.bin", imgs, labels)
    rows = _rows(ds.Cifar10Dataset(str(tmp_path), sampler=ds.PKSampler(2)))
    assert [int(r[1]) for r in rows] == [0, 0, 1, 1, 2, 2]   # class 1 has one row: repeated
    assert [int(r[0][0, 0, 0]) for r in rows] == [1, 4, 3, 3, 0, 2]
    shuffled = _rows(ds.Cifar10Dataset(str(tmp_path), sampler=ds.PKSampler(2, shuffle=True)))
    assert sorted(int(r[1]) for r in shuffled) == [0, 0, 1, 1, 2, 2]


# -- image folders ---------------------------------------------------------------------------------
def _image_folder(root):
    from PIL import Image
    arrays = {}
    for cls, names in (("b_cls", ["2.png", "1.png"]), ("a_cls", ["x.png"])):
        (root / cls).mkdir()
        for k, name in enumerate(names):
            arr = np.full((3, 4, 3), 40 * k + len(cls) + len(name), np.uint8)
            arr[0, 0] = [k, 1, 2]
            Image.fromarray(arr).save(root / cls / name)
            arrays[f"{cls}/{name}"] = arr
    return arrays


def test_image_folder_decodes_with_pillow_in_class_and_name_order(tmp_path):
    arrays = _image_folder(tmp_path)
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False, decode=True)
    rows = _rows(d)
    order = ["a_cls/x.png", "b_cls/1.png", "b_cls/2.png"]
    assert [int(r[1]) for r in rows] == [0, 1, 1]
    for (img, _), name in zip(rows, order):
        np.testing.assert_array_equal(img, arrays[name])
    raw = _rows(ds.ImageFolderDataset(str(tmp_path), shuffle=False))
    assert bytes(raw[0][0]) == (tmp_path / "a_cls" / "x.png").read_bytes()
    assert d.num_classes() == 2 and d.get_class_indexing() == {"a_cls": 0, "b_cls": 1}


def test_without_pillow_decoding_names_the_missing_package(tmp_path, monkeypatch):
    _image_folder(tmp_path)
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(ImportError, match=r"Pillow.*mscore\[vision\]"):
        ds.ImageFolderDataset(str(tmp_path), decode=True)
    with pytest.raises(ImportError, match="Pillow"):
        ds.vision.Decode()(np.frombuffer((tmp_path / "a_cls" / "x.png").read_bytes(), np.uint8))
    assert len(_rows(ds.ImageFolderDataset(str(tmp_path)))) == 3   # raw bytes need no Pillow


# -- IDX kin ---------------------------------------------------------------------------------------
def test_fashion_and_kmnist_read_the_mnist_layout(tmp_path):
    imgs = np.arange(3 * 2 * 2, dtype=np.uint8).reshape(3, 2, 2)
    ds.write_idx(str(tmp_path / "train-images-idx3-ubyte"), imgs)
    ds.write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.array([5, 6, 7], np.uint8))
    for cls in (ds.FashionMnistDataset, ds.KMnistDataset):
        rows = _rows(cls(str(tmp_path), usage="train", shuffle=False))
        np.testing.assert_array_equal(np.stack([r[0] for r in rows]), imgs[..., None])
        assert [int(r[1]) for r in rows] == [5, 6, 7] and rows[0][1].dtype == np.uint32
    with pytest.raises(ValueError, match="t10k-images"):
        ds.KMnistDataset(str(tmp_path), usage="test")


# -- text and CSV ---------------------------------------------------------------------------------
def _text_files(tmp_path):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("a0\na1\n\na2\na3\n")
    b.write_text("b0\nb1\n")
    return [str(a), str(b)]


def test_text_files_interleave_shard_and_shuffle(tmp_path):
    files = _text_files(tmp_path)
    lines = lambda d: [str(r[0]) for r in _rows(d)]  # noqa: E731
    assert lines(ds.TextFileDataset(files, shuffle=False)) == ["a0", "b0", "a1", "b1", "a2", "a3"]
    shards = [lines(ds.TextFileDataset(files, shuffle=False, num_shards=4, shard_id=i))
              for i in range(4)]
    assert [len(s) for s in shards] == [2, 2, 2, 2]   # 6 rows padded round to 8
    assert sorted(set(sum(shards, []))) == ["a0", "a1", "a2", "a3", "b0", "b1"]
    ds.config.set_seed(3)
    glob1 = lines(ds.TextFileDataset(files))
    glob2 = lines(ds.TextFileDataset(files))
    assert sorted(glob1) == sorted(lines(ds.TextFileDataset(files, shuffle=False)))
    assert glob1 == glob2   # the same seed, the same order
    infile = lines(ds.TextFileDataset(files, shuffle=ds.Shuffle.INFILE))
    assert [x[0] for x in infile] == ["a", "b", "a", "b", "a", "a"]
    two_epochs = ds.TextFileDataset(files).create_tuple_iterator(num_epochs=2, output_numpy=True)
    e0, e1 = [str(r[0]) for r in two_epochs], [str(r[0]) for r in two_epochs]
    assert sorted(e0) == sorted(e1) and e0 != e1


def test_csv_types_defaults_and_bad_lines(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('id,score,name\n1,0.5,"x, y"\n2,,z\n')
    rows = _rows(ds.CSVDataset(str(path), column_defaults=[0, -1.0, ""], shuffle=False))
    assert [(int(r[0]), float(r[1]), str(r[2])) for r in rows] == [(1, 0.5, "x, y"), (2, -1.0, "z")]
    assert rows[0][0].dtype == np.int32 and rows[0][1].dtype == np.float32
    path.write_text("1,2\n3\n")
    with pytest.raises(ValueError, match=r"d\.csv: line 2 has 1 field"):
        _rows(ds.CSVDataset(str(path), column_names=["a", "b"], shuffle=False))


# -- generated data, schemas -------------------------------------------------------------------
def test_random_and_fake_image_datasets_are_seeded(tmp_path):
    schema = ds.Schema()
    schema.add_column("img", ms.uint8, [2, 3])
    schema.add_column("v", "float32", [-1])
    ds.config.set_seed(5)
    a = _rows(ds.RandomDataset(total_rows=4, schema=schema, shuffle=False))
    b = _rows(ds.RandomDataset(total_rows=4, schema=schema, shuffle=False))
    assert len(a) == 4 and all(np.array_equal(x, y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
    assert all(r[0].shape == (2, 3) and r[0].dtype == np.uint8 for r in a)
    assert all(r[1].ndim == 1 and 1 <= len(r[1]) <= 32 and r[1].dtype == np.float32 for r in a)
    fake = ds.FakeImageDataset(num_images=6, image_size=(4, 5, 3), num_classes=3, base_seed=2,
                               shuffle=False)
    f1, f2 = _rows(fake), _rows(ds.FakeImageDataset(6, (4, 5, 3), 3, 2, shuffle=False))
    assert all(np.array_equal(x[0], y[0]) and int(x[1]) == int(y[1]) for x, y in zip(f1, f2))
    assert {r[0].shape for r in f1} == {(4, 5, 3)} and all(int(r[1]) < 3 for r in f1)
    other = _rows(ds.FakeImageDataset(6, (4, 5, 3), 3, 3, shuffle=False))
    assert not np.array_equal(f1[0][0], other[0][0])


def test_schema_files_round_trip_and_bad_files(tmp_path):
    schema = ds.Schema()
    schema.add_column("image", ms.uint8, [2, 2])
    schema.add_column("label", "int32")
    path = tmp_path / "schema.json"
    path.write_text(schema.to_json())
    again = ds.Schema(str(path))
    assert json.loads(again.to_json()) == json.loads(schema.to_json())
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"schema\.json"):
        ds.Schema(str(path))
    path.write_text(json.dumps({"columns": {"a": {"type": "float99"}}}))
    with pytest.raises(ValueError, match=r"schema\.json.*float99"):
        ds.Schema(str(path))
    gen = ds.GeneratorDataset(lambda: iter([(np.array([1, 2], np.int64), np.array(3))]),
                              schema=schema)
    assert gen.get_col_names() == ["image", "label"]
    assert [r.dtype for r in _rows(gen)[0]] == [np.uint8, np.int32]


def test_padded_dataset_values(tmp_path):
    d = ds.PaddedDataset([{"a": np.arange(2), "b": "x"}, {"a": np.arange(2) + 5, "b": "y"}])
    rows = _rows(d)
    assert [r[0].tolist() for r in rows] == [[0, 1], [5, 6]]
    assert [str(r[1]) for r in rows] == ["x", "y"]
    bad = ds.PaddedDataset([{"a": 1}, {"b": 2}])
    with pytest.raises(RuntimeError, match="columns"):
        bad.get_col_names()


def test_config_load_reads_a_settings_file(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"numParallelWorkers": 3, "seed": 9, "prefetchSize": 2}))
    ds.config.load(str(path))
    assert (ds.config.get_num_parallel_workers(), ds.config.get_seed(),
            ds.config.get_prefetch_size()) == (3, 9, 2)
    path.write_text("[1]")
    with pytest.raises(ValueError, match=r"cfg\.json"):
        ds.config.load(str(path))
    with pytest.raises(ValueError, match="nope"):
        ds.config.load(os.path.join(str(tmp_path), "nope.json"))
