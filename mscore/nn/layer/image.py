"""Image layers: ``nn.Upsample``, ``nn.PixelShuffle``, ``nn.PixelUnshuffle``,
``nn.ChannelShuffle``, ``nn.CentralCrop``, ``nn.ImageGradients`` and the image-quality
measures ``nn.PSNR``, ``nn.SSIM`` and ``nn.MSSSIM`` (as MindSpore computes them: a Gaussian
window convolved per channel, 'valid' padding)."""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_int, check_tensor
from mscore.nn.layer.container import CellList
from mscore.nn.layer.conv import Conv2d
from mscore.ops import functional as F


class Upsample(Cell):
    """Resize with :func:`mscore.ops.interpolate` (same arguments)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def construct(self, x):
        return ops.interpolate(x, self.size, self.scale_factor, self.mode,
                               self.align_corners, self.recompute_scale_factor)


class PixelShuffle(Cell):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input):
        return ops.pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Cell):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def construct(self, input):
        return ops.pixel_unshuffle(input, self.downscale_factor)


class ChannelShuffle(Cell):
    """Channels of (N, C, *) split into ``groups`` and interleaved."""

    def __init__(self, groups):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int):
            raise TypeError(f"For ChannelShuffle, the param `groups` must be int, but got "
                            f"{type(groups)}.")
        if groups < 1:
            raise ValueError(f"For ChannelShuffle, the param `groups` must be larger than 0, "
                             f"but got {groups}.")
        self.groups = groups

    def construct(self, x):
        return ops.channel_shuffle(x, self.groups)


class CentralCrop(Cell):
    """The central ``central_fraction`` (in (0, 1]) of the last two axes of a (C, H, W)
    or (N, C, H, W) image."""

    def __init__(self, central_fraction):
        super().__init__()
        if not isinstance(central_fraction, float):
            raise TypeError(f"For 'CentralCrop', the type of 'central_fraction' should be "
                            f"'float', but got type '{type(central_fraction).__name__}'.")
        if not 0.0 < central_fraction <= 1.0:
            raise ValueError(f"For 'CentralCrop', the 'central_fraction' must be in range of "
                             f"(0.0, 1.0], but got {central_fraction}.")
        self.central_fraction = central_fraction

    def construct(self, image):
        check_tensor(image, "image", "CentralCrop")
        if image.ndim not in (3, 4):
            raise ValueError(f"CentralCrop image must be 3d or 4d, but got shape "
                             f"{image.shape}")
        if self.central_fraction == 1.0:
            return image
        h, w = image.shape[-2:]
        top = int((float(h) - float(h * self.central_fraction)) / 2)
        left = int((float(w) - float(w * self.central_fraction)) / 2)
        return F.getitem(image, (Ellipsis, slice(top, h - top), slice(left, w - left)))


class ImageGradients(Cell):
    """``(dy, dx)`` of an (N, C, H, W) image: forward differences along H and W, the last
    row / column zero."""

    def construct(self, images):
        check_tensor(images, "images", "ImageGradients")
        if images.ndim != 4:
            raise ValueError(f"For 'ImageGradients', the dimension of 'images' must be 4d, but "
                             f"got {images.ndim}.")
        dy = F.sub(F.getitem(images, (Ellipsis, slice(1, None), slice(None))),
                   F.getitem(images, (Ellipsis, slice(None, -1), slice(None))))
        dx = F.sub(F.getitem(images, (Ellipsis, slice(1, None))),
                   F.getitem(images, (Ellipsis, slice(None, -1))))
        return F.pad(dy, (0, 0, 0, 1)), F.pad(dx, (0, 1))


def _check_max_val(max_val, cls):
    if isinstance(max_val, bool) or not isinstance(max_val, (int, float)):
        raise TypeError(f"For '{cls}', the type of 'max_val' should be one of '['int', "
                        f"'float']', but got type '{type(max_val).__name__}'.")
    if max_val <= 0:
        raise ValueError(f"For '{cls}', the 'max_val' must be > 0, but got {max_val}.")
    return max_val


def _as_float_image(img, max_val):
    """The image in float32 scaled to [0, 1] for integer dtypes, and ``max_val`` scaled
    alike (MindSpore's conversion)."""
    dtype_max = 1.0
    if not img.dtype.is_floating:
        dtype_max = float(np.iinfo(np.dtype(img.dtype.name)).max)
    out = F.cast(img, mdt.float32)
    if dtype_max > 1.0:
        out = F.mul(out, 1.0 / dtype_max)
        max_val = max_val / dtype_max
    return out, float(max_val)


def _check_pair(img1, img2, cls, dims=(4,)):
    check_tensor(img1, "img1", cls)
    check_tensor(img2, "img2", cls)
    for name, img in (("img1", img1), ("img2", img2)):
        if img.ndim not in dims:
            raise ValueError(f"For '{cls}', the dimension of '{name}' must be 4d, but got "
                             f"{img.ndim}.")
    if img1.dtype is not img2.dtype or img1.shape != img2.shape:
        raise TypeError(f"For '{cls}', 'img1' and 'img2' must have the same dtype and shape, "
                        f"got {img1.dtype}{img1.shape} and {img2.dtype}{img2.shape}")


class PSNR(Cell):
    """Peak signal-to-noise ratio per image: ``10 log10(max_val^2 / mse)`` over the
    (C, H, W) axes of (N, C, H, W) inputs."""

    def __init__(self, max_val=1.0):
        super().__init__()
        self.max_val = _check_max_val(max_val, "PSNR")

    def construct(self, img1, img2):
        _check_pair(img1, img2, "PSNR")
        a, max_val = _as_float_image(img1, self.max_val)
        b, _ = _as_float_image(img2, self.max_val)
        d = F.sub(a, b)
        mse = F.mean(F.mul(d, d), (-3, -2, -1))
        return F.mul(F.log(F.div(max_val * max_val, mse)), 10.0 / np.log(10.0))


def _gaussian_window(size, sigma):
    coords = np.arange(-size // 2 + 1, size // 2 + 1, dtype=np.float32)
    x, y = np.meshgrid(coords, coords, indexing="ij")
    g = np.exp(-(x ** 2 + y ** 2) / (2 * sigma ** 2))
    return (g / g.sum()).reshape(1, 1, size, size).astype(np.float32)


def _window_conv(size, sigma):
    conv = Conv2d(1, 1, size, pad_mode="valid", has_bias=False,
                  weight_init=Tensor(_gaussian_window(size, sigma)))
    conv.weight.requires_grad = False
    return conv


def _ssim_terms(c1, c2, img1, img2, conv):
    """Per-channel mean SSIM and contrast-structure term, both (N, C)."""
    c = img1.shape[1]
    ssims, css = [], []
    for k in range(c):
        a = F.getitem(img1, (slice(None), slice(k, k + 1)))
        b = F.getitem(img2, (slice(None), slice(k, k + 1)))
        mu1, mu2 = conv(a), conv(b)
        mu1_sq, mu2_sq, mu12 = F.mul(mu1, mu1), F.mul(mu2, mu2), F.mul(mu1, mu2)
        s1 = F.sub(conv(F.mul(a, a)), mu1_sq)
        s2 = F.sub(conv(F.mul(b, b)), mu2_sq)
        s12 = F.sub(conv(F.mul(a, b)), mu12)
        v1 = F.add(F.mul(s12, 2.0), c2)
        v2 = F.add(F.add(s1, s2), c2)
        num = F.mul(F.add(F.mul(mu12, 2.0), c1), v1)
        den = F.mul(F.add(F.add(mu1_sq, mu2_sq), c1), v2)
        ssims.append(F.div(num, den))
        css.append(F.div(v1, v2))
    return F.mean(F.concat(ssims, 1), (2, 3)), F.mean(F.concat(css, 1), (2, 3))


def _check_filter(filter_size, filter_sigma, k1, k2, cls):
    size = check_int(filter_size, "filter_size", cls, minimum=1)
    if isinstance(filter_sigma, bool) or not isinstance(filter_sigma, float) or \
            filter_sigma <= 0:
        raise (TypeError if not isinstance(filter_sigma, float) else ValueError)(
            f"For '{cls}', 'filter_sigma' must be a positive float, got {filter_sigma!r}")
    for name, v in (("k1", k1), ("k2", k2)):
        if not isinstance(v, float):
            raise TypeError(f"For '{cls}', the type of '{name}' should be 'float', but got "
                            f"type '{type(v).__name__}'.")
    return size


class SSIM(Cell):
    """Structural similarity per image (mean over channels) of (N, C, H, W) float16/float32
    images; the Gaussian window is a frozen ``conv`` (as in MindSpore)."""

    def __init__(self, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self.max_val = _check_max_val(max_val, "SSIM")
        self.filter_size = _check_filter(filter_size, filter_sigma, k1, k2, "SSIM")
        self.filter_sigma = filter_sigma
        self.k1, self.k2 = k1, k2
        self.conv = _window_conv(self.filter_size, filter_sigma)

    def construct(self, img1, img2):
        cls = "SSIM"
        check_tensor(img1, "img1", cls)
        if img1.dtype not in (mdt.float16, mdt.float32):
            raise TypeError(f"For '{cls}', 'img1' must be float16 or float32, got {img1.dtype}")
        _check_pair(img1, img2, cls)
        if img1.shape[2] < self.filter_size or img1.shape[3] < self.filter_size:
            raise ValueError(f"For '{cls}', the spatial size of 'img1' {img1.shape[2:]} must be "
                             f">= filter_size {self.filter_size}")
        a, max_val = _as_float_image(img1, self.max_val)
        b, _ = _as_float_image(img2, self.max_val)
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        ssim, _ = _ssim_terms(c1, c2, a, b, self.conv)
        return F.mean(ssim, -1)


class MSSSIM(Cell):
    """Multi-scale SSIM per image: at each of ``len(power_factors)`` scales (2x2 average
    pooling between them) the contrast-structure term, the SSIM at the last, each to its
    power factor, multiplied; mean over channels."""

    def __init__(self, max_val=1.0, power_factors=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333),
                 filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self.max_val = _check_max_val(max_val, "MSSSIM")
        if not isinstance(power_factors, (tuple, list)):
            raise TypeError(f"For 'MSSSIM', the type of 'power_factors' should be one of "
                            f"'['tuple', 'list']', but got type "
                            f"'{type(power_factors).__name__}'.")
        self.filter_size = _check_filter(filter_size, filter_sigma, k1, k2, "MSSSIM")
        self.k1, self.k2 = k1, k2
        self.level = len(power_factors)
        self.power_factors = tuple(float(p) for p in power_factors)
        self.multi_convs_list = CellList([_window_conv(self.filter_size, filter_sigma)
                                          for _ in range(self.level)])

    def construct(self, img1, img2):
        cls = "MSSSIM"
        _check_pair(img1, img2, cls)
        if img1.dtype not in (mdt.float64, mdt.float32, mdt.float16, mdt.uint8):
            raise TypeError(f"For '{cls}', 'img1' must be float64, float32, float16 or uint8, "
                            f"got {img1.dtype}")
        a, max_val = _as_float_image(img1, self.max_val)
        b, _ = _as_float_image(img2, self.max_val)
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        terms = []
        sim = None
        for i in range(self.level):
            sim, cs = _ssim_terms(c1, c2, a, b, self.multi_convs_list[i])
            terms.append(F.relu(cs))
            a = F.avg_pool(a, 2, 2, 0, True, 2)
            b = F.avg_pool(b, 2, 2, 0, True, 2)
        terms[-1] = F.relu(sim)
        ms_ssim = None
        for term, power in zip(terms, self.power_factors):
            factor = F.pow(term, power)
            ms_ssim = factor if ms_ssim is None else F.mul(ms_ssim, factor)
        return F.mean(ms_ssim, -1)
