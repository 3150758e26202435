"""mscore.dataset transforms: random transforms (seeded streams, distributions), resizing and
colour conversion against independent references, and MindSpore's import paths."""
import importlib

import numpy as np
import pytest

import mscore as ms
from mscore import _state
from mscore import dataset as ds
from mscore.dataset import transforms, vision


@pytest.fixture(autouse=True)
def _fresh_config():
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()


IMG = (np.arange(8 * 10 * 3).reshape(8, 10, 3) * 7 % 256).astype(np.uint8)


def _mapped(op, n=200, epochs=1, img=IMG):
    d = ds.NumpySlicesDataset(np.stack([img] * n), shuffle=False).map(op)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    out = [[r[0] for r in it] for _ in range(epochs)]
    return out[0] if epochs == 1 else out


def test_flip_frequency_follows_prob_and_streams_continue_across_epochs():
    ds.config.set_seed(1)
    e0, e1 = _mapped(vision.RandomVerticalFlip(0.3), epochs=2)
    flips0 = [int(np.array_equal(o, IMG[::-1])) for o in e0]
    flips1 = [int(np.array_equal(o, IMG[::-1])) for o in e1]
    assert abs(np.mean(flips0 + flips1) - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 400)
    assert flips0 != flips1                       # epoch 2 continues the stream
    again = _mapped(vision.RandomVerticalFlip(0.3))
    assert [int(np.array_equal(o, IMG[::-1])) for o in again] == flips0   # same seed, same start


def test_random_crop_offsets_are_uniform():
    ds.config.set_seed(2)
    outs = _mapped(vision.RandomCrop((3, 4)), n=700)
    tops, lefts = [], []
    for o in outs:
        hit = [(y, x) for y in range(6) for x in range(7)
               if np.array_equal(IMG[y:y + 3, x:x + 4], o)]
        tops.append(hit[0][0])
        lefts.append(hit[0][1])
    for values, k in ((tops, 6), (lefts, 7)):
        counts = np.bincount(values, minlength=k)
        expected = len(values) / k
        assert ((counts - expected) ** 2 / expected).sum() < 25   # chi-square, p < 0.001


def test_random_rotation_angles_and_resized_crop_boxes_stay_in_range():
    ds.config.set_seed(3)
    square = np.zeros((21, 21), np.uint8)
    square[9:12, 14:17] = 255   # a blob 5 pixels right of the centre
    for out in _mapped(vision.RandomRotation((10, 80)), n=40, img=square):
        ys, xs = np.nonzero(out)
        assert len(ys) >= 5
        angle = np.degrees(np.arctan2(10 - ys.mean(), xs.mean() - 10))
        assert 10 - 12 <= angle <= 80 + 12   # counter-clockwise, within a pixel's rounding
    crop = vision.RandomResizedCrop((4, 5), scale=(0.2, 0.6), ratio=(0.5, 2.0))
    gen = __import__("mscore.dataset.engine._stdrandom", fromlist=["x"]).StdMT19937(0)
    for _ in range(300):
        top, left, h, w = crop._box(40, 50, gen)
        assert 0 <= top <= 40 - h and 0 <= left <= 50 - w
        assert 0.2 * 2000 - 2 * (h + w) <= h * w <= 0.6 * 2000 + 2 * (h + w)
        assert 0.5 - 0.1 <= w / h <= 2.0 + 0.25
    assert _mapped(crop, n=3, img=np.zeros((40, 50, 3), np.uint8))[0].shape == (4, 5, 3)


def test_random_apply_choice_order_frequencies():
    ds.config.set_seed(4)
    applied = [int(v) for v in _mapped(transforms.RandomApply([transforms.Fill(1)], 0.25),
                                       n=800, img=np.zeros((), np.int64))]
    assert abs(np.mean(applied) - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 800)
    chosen = [int(v) for v in _mapped(transforms.RandomChoice(
        [transforms.Fill(k) for k in range(3)]), n=600, img=np.zeros((), np.int64))]
    assert np.all(np.abs(np.bincount(chosen, minlength=3) - 200) < 4 * np.sqrt(200))
    ops = [transforms.Concatenate(0, np.array([k])) for k in (1, 2, 3)]
    orders = {tuple(v[:3]) for v in _mapped(transforms.RandomOrder(ops), n=60,
                                             img=np.zeros(1, np.int64))}
    assert len(orders) == 6


def test_eager_random_ops_repeat_with_a_seed_and_vary_without():
    ds.config.set_seed(5)
    op = vision.RandomHorizontalFlip(0.5)
    assert len({op(IMG).tobytes() for _ in range(8)}) == 1   # MindSpore: a new stream per call
    _state.reset()
    assert not ds.config.seed_is_set()
    assert len({op(IMG).tobytes() for _ in range(40)}) == 2


def _bilinear_reference(img, th, tw):
    """Half-pixel-centre bilinear interpolation in float64, clamped at the borders."""
    h, w = img.shape[:2]

    def taps(n_in, n_out):
        pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        lo = np.floor(pos).astype(int)
        return lo, np.minimum(lo + 1, n_in - 1), pos - lo

    r0, r1, fr = taps(h, th)
    c0, c1, fc = taps(w, tw)
    x = img.astype(np.float64)
    fc = fc[None, :, None] if img.ndim == 3 else fc[None, :]
    fr = fr[:, None, None] if img.ndim == 3 else fr[:, None]
    top = x[r0][:, c0] * (1 - fc) + x[r0][:, c1] * fc
    bottom = x[r1][:, c0] * (1 - fc) + x[r1][:, c1] * fc
    return top * (1 - fr) + bottom * fr


@pytest.mark.parametrize("shape", [(5, 7), (16, 9), (3, 3), (12, 20)])
def test_resize_bilinear_against_float64_reference(shape):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (10, 12, 3)).astype(np.uint8)
    ref = _bilinear_reference(img, *shape)
    out = vision.Resize(shape)(img)
    assert out.dtype == np.uint8 and np.abs(out - ref).max() <= 1.0   # 11-bit fixed point
    f = vision.Resize(shape)(img.astype(np.float32))
    np.testing.assert_allclose(f, ref, rtol=1e-5, atol=1e-4)
    near = vision.Resize(shape, vision.Inter.NEAREST)(img)
    rows = (np.arange(shape[0]) * 10 // shape[0])
    cols = (np.arange(shape[1]) * 12 // shape[1])
    np.testing.assert_array_equal(near, img[rows][:, cols])


def test_grayscale_and_convert_color_against_their_weights():
    from PIL import Image
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (6, 5, 3)).astype(np.uint8)
    np.testing.assert_array_equal(vision.Grayscale()(img),
                                  np.asarray(Image.fromarray(img).convert("L")))
    gray = vision.ConvertColor(vision.ConvertMode.COLOR_RGB2GRAY)(img)
    ref = img.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    assert np.abs(gray.astype(np.float64) - ref).max() <= 0.51
    bgr = vision.ConvertColor(vision.ConvertMode.COLOR_RGB2BGR)(img)
    np.testing.assert_array_equal(bgr, img[..., ::-1])


def test_onehot_negative_label_is_a_row_of_zeros():
    # recorded by hand from MindSpore 2.10 (the case breaks its engine, see the generator)
    out = transforms.OneHot(3)(np.array([-1, 2]))
    np.testing.assert_array_equal(out, [[0, 0, 0], [0, 0, 1]])
    assert out.dtype == np.int64


@pytest.mark.parametrize("path, names", [
    ("mscore.dataset.transforms.c_transforms", ["TypeCast", "OneHot", "Compose"]),
    ("mscore.dataset.transforms.py_transforms", ["Compose", "OneHot"]),
    ("mscore.dataset.vision.c_transforms", ["Decode", "Resize", "RandomCrop", "HWC2CHW"]),
    ("mscore.dataset.vision.py_transforms", ["ToTensor", "Normalize", "RandomHorizontalFlip"]),
    ("mscore.dataset.samplers", ["DistributedSampler", "RandomSampler"]),
    ("mscore.dataset.callback", ["DSCallback", "WaitedDSCallback"]),
])
def test_mindspore_import_paths(path, names):
    module = importlib.import_module(path)
    for name in names:
        assert callable(getattr(module, name)), f"{path}.{name}"


def test_vision_transforms_module_holds_every_vision_transform():
    # MindSpore's mindspore.dataset.vision.transforms defines all of them (user code imports
    # from that path as well as from mindspore.dataset.vision).
    from mscore.dataset.vision import transforms as vt
    for name in vision.__all__:
        assert getattr(vt, name) is getattr(vision, name), name
    with pytest.raises(AttributeError, match="NoSuchTransform"):
        _ = vt.NoSuchTransform
