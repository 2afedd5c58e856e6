"""`rt.vision.transforms` on NumPy HWC images, each against a per-pixel NumPy reference."""
from __future__ import annotations

import random

import numpy as np
import pytest

import runtime as rt
from runtime.vision import transforms as T


def _image(h=5, w=7, c=3, seed=0, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (h, w, c)).astype(dtype)


def _bilinear_ref(img, oh, ow):
    """Half-pixel centers, edges clamped, one output pixel at a time."""
    h, w = img.shape[:2]
    out = np.zeros((oh, ow) + img.shape[2:])
    for i in range(oh):
        for j in range(ow):
            y = min(max((i + 0.5) * h / oh - 0.5, 0), h - 1)
            x = min(max((j + 0.5) * w / ow - 0.5, 0), w - 1)
            y0, x0 = int(y), int(x)
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            dy, dx = y - y0, x - x0
            out[i, j] = ((1 - dy) * ((1 - dx) * img[y0, x0] + dx * img[y0, x1])
                         + dy * ((1 - dx) * img[y1, x0] + dx * img[y1, x1]))
    return out


def test_resize_to_a_size_and_by_the_shorter_side():
    img = _image(5, 7)
    got = T.Resize((4, 9))(img)
    assert got.dtype == np.uint8 and got.shape == (4, 9, 3)
    np.testing.assert_array_equal(got, np.rint(_bilinear_ref(img.astype(float), 4, 9)))
    short = T.Resize(10)(img)  # the shorter side (h=5) becomes 10, w scales with it: 14
    assert short.shape == (10, 14, 3)
    floats = _image(6, 4, seed=1).astype(np.float32) / 255
    # the shorter side (w=4) becomes 3, h = int(3 * 6 / 4) = 4; float images stay float
    np.testing.assert_allclose(T.Resize(3)(floats), _bilinear_ref(floats, 4, 3), rtol=1e-6)
    nearest = T.Resize((2, 3), interpolation="nearest")(img)
    np.testing.assert_array_equal(nearest, img[[0, 2]][:, [0, 2, 4]])


def test_center_crop_flip_and_transpose():
    img = _image(6, 9)
    np.testing.assert_array_equal(T.CenterCrop(4)(img), img[1:5, 2:6])
    np.testing.assert_array_equal(T.CenterCrop((3, 5))(img), img[2:5, 2:7])
    with pytest.raises(ValueError, match=r"center_crop: crop size \(7, 7\) is larger"):
        T.CenterCrop(7)(img)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(prob=1.0)(img), img[:, ::-1])
    assert T.RandomHorizontalFlip(prob=0.0)(img) is img
    chw = T.Transpose()(img)
    assert chw.shape == (3, 6, 9)
    np.testing.assert_array_equal(chw[1], img[:, :, 1])
    assert T.Transpose()(img[:, :, 0]).shape == (1, 6, 9)


def test_random_horizontal_flip_follows_pythons_random_seed():
    img = _image(2, 3)
    flip = T.RandomHorizontalFlip(prob=0.5)
    random.seed(7)
    got = [bool((flip(img) != img).any()) for _ in range(20)]
    random.seed(7)
    want = [random.random() < 0.5 for _ in range(20)]
    assert got == want and 0 < sum(got) < 20


def test_to_tensor_and_normalize_numpy_and_tensors():
    img = _image(4, 5)
    t = T.ToTensor()(img)
    assert isinstance(t, rt.Tensor) and t.dtype == rt.float32 and t.shape == [3, 4, 5]
    np.testing.assert_allclose(t.numpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert T.ToTensor(data_format="HWC")(img).shape == [4, 5, 3]
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.5]
    want = (img.transpose(2, 0, 1) / 255.0 - np.array(mean)[:, None, None]) \
        / np.array(std)[:, None, None]
    np.testing.assert_allclose(T.Normalize(mean, std)(t).numpy(), want, rtol=1e-5, atol=1e-6)
    hwc = T.Normalize(mean=[100.0, 110.0, 120.0], std=[50.0] * 3, data_format="HWC",
                      to_rgb=True)(img.astype(np.float32))
    np.testing.assert_allclose(hwc, (img[..., ::-1] - [100.0, 110.0, 120.0]) / 50.0, rtol=1e-6)


def test_compose_an_imagenet_style_pipeline():
    img = _image(20, 30, seed=3)
    pipeline = T.Compose([T.Resize(16), T.CenterCrop(12), T.RandomHorizontalFlip(prob=1.0),
                          T.ToTensor(), T.Normalize(mean=[0.5] * 3, std=[0.5] * 3)])
    resized = np.rint(_bilinear_ref(img.astype(float), 16, 24)).astype(np.uint8)
    cropped = resized[2:14, 6:18][:, ::-1]
    want = (cropped.transpose(2, 0, 1) / 255.0 - 0.5) / 0.5
    got = pipeline(img)
    assert got.shape == [3, 12, 12]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="keys=.* is not supported"):
        T.Resize(4, keys=("image", "label"))
