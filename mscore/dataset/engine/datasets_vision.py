"""Image corpora: MNIST and its kin (IDX files), CIFAR-10/100 (binary records), a folder of
class sub-folders, and random images."""
from __future__ import annotations

import numbers
import os

import numpy as np

from mscore.dataset.engine import validators as v
from mscore.dataset.engine.binary_files import map_records, read_idx
from mscore.dataset.engine.mappable import MappableDataset

__all__ = ["MnistDataset", "FashionMnistDataset", "KMnistDataset", "Cifar10Dataset",
           "Cifar100Dataset", "ImageFolderDataset", "FakeImageDataset", "decode_image"]


def _check_dir(dataset_dir):
    if not isinstance(dataset_dir, (str, os.PathLike)):
        raise TypeError(f"dataset_dir: expected a str, got {type(dataset_dir).__name__}")
    if not os.path.isdir(dataset_dir):
        raise ValueError(f"dataset_dir: the folder {os.fspath(dataset_dir)!r} does not exist or "
                         f"is not a directory")
    return os.fspath(dataset_dir)


def _check_usage(usage, valid=("train", "test", "all")):
    usage = "all" if usage is None else usage
    if usage not in valid:
        raise ValueError(f"usage: expected one of {list(valid)}, got {usage!r}")
    return usage


# -- IDX corpora ---------------------------------------------------------------------------------
_IDX_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _find(folder, name):
    for candidate in (name, name + ".gz", name.replace("-idx", ".idx")):
        path = os.path.join(folder, candidate)
        if os.path.isfile(path):
            return path
    return None


class MnistDataset(MappableDataset):
    """The MNIST IDX files of folder ``dataset_dir``: columns ``image`` (uint8, H x W x 1)
    and ``label`` (uint32 scalar).

    ``usage``: ``'train'`` (``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``),
    ``'test'`` (``t10k-*``) or ``'all'`` (both, test first; the default). ``.gz`` files are
    read too.
    """

    class_column = "label"
    _corpus = "MNIST"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        folder = _check_dir(dataset_dir)
        usage = _check_usage(usage)
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id,
                         num_parallel_workers)
        # 'all' reads the files in name order, as MindSpore does: t10k-* before train-*
        parts = ["test", "train"] if usage == "all" else [usage]
        images, labels = [], []
        for part in parts:
            img_name, lbl_name = _IDX_FILES[part]
            img_path, lbl_path = _find(folder, img_name), _find(folder, lbl_name)
            if img_path is None or lbl_path is None:
                if usage == "all":
                    continue
                raise ValueError(f"dataset_dir: {img_name} and {lbl_name} not found in "
                                 f"{folder!r}")
            img, lbl = read_idx(img_path), read_idx(lbl_path)
            if img.ndim != 3 or lbl.ndim != 1 or len(img) != len(lbl):
                raise ValueError(f"{img_path}: expected N x H x W images and N labels, got "
                                 f"{img.shape} and {lbl.shape}")
            images.append(img.astype(np.uint8, copy=False))
            labels.append(lbl.astype(np.uint32))
        if not images:
            raise ValueError(f"dataset_dir: no {self._corpus} IDX files in {folder!r}")
        self._images = np.concatenate(images)[..., None]
        self._label_array = np.concatenate(labels)

    def _columns(self):
        return ["image", "label"]

    def _len(self):
        return len(self._label_array)

    def _get(self, index):
        return self._images[index], self._label_array[index]

    def _labels(self):
        return self._label_array


class FashionMnistDataset(MnistDataset):
    """Fashion-MNIST: the same IDX files and columns as :class:`MnistDataset`."""
    _corpus = "Fashion-MNIST"


class KMnistDataset(MnistDataset):
    """KMNIST (Kuzushiji-MNIST): the same IDX files and columns as :class:`MnistDataset`."""
    _corpus = "KMNIST"


# -- CIFAR ------------------------------------------------------------------------------------
class Cifar10Dataset(MappableDataset):
    """The CIFAR-10 binary files of ``dataset_dir`` (``data_batch_*.bin`` for ``'train'``,
    ``test_batch.bin`` for ``'test'``, both in name order for ``'all'``, the default):
    columns ``image`` (uint8, 32 x 32 x 3) and ``label`` (uint32)."""

    class_column = "label"
    _labels_per_record = 1
    _label_columns = ("label",)

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        folder = _check_dir(dataset_dir)
        usage = _check_usage(usage)
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id,
                         num_parallel_workers)
        files = sorted(f for f in os.listdir(folder) if self._wanted(f, usage))
        if not files:
            raise ValueError(f"dataset_dir: no {type(self).__name__[:-7]} binary files for "
                             f"usage {usage!r} in {folder!r}")
        record = self._labels_per_record + 3 * 32 * 32
        self._parts = [map_records(os.path.join(folder, f), record) for f in files]
        self._starts = np.cumsum([0] + [len(p) for p in self._parts])

    @staticmethod
    def _wanted(name, usage):
        train = name.startswith("data_batch") and name.endswith(".bin")
        test = name == "test_batch.bin"
        return {"train": train, "test": test, "all": train or test}[usage]

    def _columns(self):
        return ["image"] + list(self._label_columns)

    def _len(self):
        return int(self._starts[-1])

    def _record(self, index):
        part = int(np.searchsorted(self._starts, index, side="right")) - 1
        return self._parts[part][index - self._starts[part]]

    def _get(self, index):
        rec = np.asarray(self._record(index))
        k = self._labels_per_record
        image = rec[k:].reshape(3, 32, 32).transpose(1, 2, 0).copy()
        return (image,) + tuple(np.uint32(x) for x in rec[:k])

    def _labels(self):
        col = self._labels_per_record - 1
        return np.concatenate([np.asarray(p[:, col]) for p in self._parts]).astype(np.uint32)


class Cifar100Dataset(Cifar10Dataset):
    """The CIFAR-100 binary files (``train.bin``, ``test.bin``): columns ``image`` (uint8,
    32 x 32 x 3), ``coarse_label`` and ``fine_label`` (uint32)."""

    class_column = "fine_label"
    _labels_per_record = 2
    _label_columns = ("coarse_label", "fine_label")

    @staticmethod
    def _wanted(name, usage):
        return {"train": name == "train.bin", "test": name == "test.bin",
                "all": name in ("train.bin", "test.bin")}[usage]


# -- a folder of class folders ---------------------------------------------------------------------
def decode_image(data, where="image"):
    """An encoded image (bytes or a 1-D uint8 array) decoded to an RGB H x W x 3 uint8 array
    with Pillow."""
    pil = _pillow()
    import io
    try:
        raw = data if isinstance(data, bytes) else np.asarray(data, np.uint8).tobytes()
        with pil.Image.open(io.BytesIO(raw)) as img:
            return np.asarray(img.convert("RGB"))
    except (OSError, ValueError, SyntaxError, pil.Image.DecompressionBombError) as exc:
        raise ValueError(f"{where}: cannot decode the image ({exc})") from None


def _pillow():
    try:
        import PIL.Image
    except ImportError:
        raise ImportError("decoding images needs Pillow: pip install 'mscore[vision]' "
                          "(or pip install pillow)") from None
    import PIL
    return PIL


class ImageFolderDataset(MappableDataset):
    """Images in class folders: ``dataset_dir/<class>/<file>``. Columns ``image`` (the
    file's bytes as uint8, or with ``decode=True`` the decoded RGB H x W x 3 image) and
    ``label`` (int32: the class folder's index in name order, or ``class_indexing[name]``).

    ``extensions`` (a list such as ``['.jpg', '.png']``) keeps only files with those
    endings; ``class_indexing`` keeps only the folders it names."""

    class_column = "label"

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, extensions=None, class_indexing=None, decode=False,
                 num_shards=None, shard_id=None, cache=None, decrypt=None):
        folder = _check_dir(dataset_dir)
        if extensions is not None:
            if not isinstance(extensions, list):
                raise TypeError(f"extensions: expected a list of str, got "
                                f"{type(extensions).__name__}")
            for e in extensions:
                v.check_type(e, str, "extensions")
        if class_indexing is not None:
            v.check_type(class_indexing, dict, "class_indexing")
            for k, idx in class_indexing.items():
                v.check_type(k, str, "class_indexing")
                v.check_type(idx, int, "class_indexing")
        self.decode = v.check_bool(decode, "decode")
        if decrypt is not None:
            raise NotImplementedError("decrypt: encrypted image folders are not supported")
        if self.decode:
            _pillow()
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id,
                         num_parallel_workers)
        classes = sorted(d for d in os.listdir(folder)
                         if os.path.isdir(os.path.join(folder, d)))
        if class_indexing is None:
            self._class_indexing = {c: i for i, c in enumerate(classes)}
        else:
            self._class_indexing = dict(class_indexing)
        files, labels = [], []
        for c in classes:
            if c not in self._class_indexing:
                continue
            cdir = os.path.join(folder, c)
            for name in sorted(os.listdir(cdir)):
                path = os.path.join(cdir, name)
                if os.path.isfile(path) and (extensions is None or
                                             any(name.endswith(e) for e in extensions)):
                    files.append(path)
                    labels.append(self._class_indexing[c])
        self._files = files
        self._label_array = np.asarray(labels, dtype=np.int32)

    def _columns(self):
        return ["image", "label"]

    def _len(self):
        return len(self._files)

    def _get(self, index):
        path = self._files[index]
        with open(path, "rb") as f:
            data = f.read()
        image = decode_image(data, path) if self.decode else np.frombuffer(data, np.uint8)
        return image, self._label_array[index]

    def _labels(self):
        return self._label_array

    def num_classes(self):
        return len(self._class_indexing)

    def get_class_indexing(self):
        return dict(self._class_indexing)


# -- random images -----------------------------------------------------------------------------
class FakeImageDataset(MappableDataset):
    """``num_images`` random uint8 images of ``image_size`` (H, W, C) with random uint32
    labels below ``num_classes``; image ``i`` is the same for the same ``base_seed``."""

    class_column = "label"

    def __init__(self, num_images=1000, image_size=(224, 224, 3), num_classes=10, base_seed=0,
                 num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, cache=None):
        self.num_images = v.check_int(num_images, "num_images", 1, v.INT32_MAX)
        if not isinstance(image_size, (list, tuple)) or len(image_size) != 3:
            raise ValueError(f"image_size: should be a list or tuple of length 3, got "
                             f"{image_size!r}")
        self.image_size = tuple(v.check_int(s, "image_size", 1, v.INT32_MAX)
                                for s in image_size)
        self.num_classes_ = v.check_int(num_classes, "num_classes", 1, v.INT32_MAX)
        if not isinstance(base_seed, numbers.Integral) or isinstance(base_seed, bool):
            raise TypeError(f"base_seed: expected an int, got {base_seed!r}")
        self.base_seed = int(base_seed)
        super().__init__(num_samples, shuffle, sampler, num_shards, shard_id,
                         num_parallel_workers)

    def _columns(self):
        return ["image", "label"]

    def _len(self):
        return self.num_images

    def _rng(self, index):
        return np.random.default_rng([self.base_seed % 2 ** 32, index])

    def _get(self, index):
        rng = self._rng(index)
        image = rng.integers(0, 256, size=self.image_size, dtype=np.uint8)
        return image, np.uint32(rng.integers(0, self.num_classes_))

    def _labels(self):
        return np.asarray([self._get(i)[1] for i in range(self.num_images)])

    def num_classes(self):
        return self.num_classes_
