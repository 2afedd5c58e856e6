"""The array functions behind `rt.vision.transforms` (Paddle's `transforms.functional`
names): NumPy images in HWC layout (or HW for one channel) in, NumPy images out."""
from __future__ import annotations

import numpy as np


def _size_pair(size) -> tuple:
    return (size, size) if isinstance(size, int) else tuple(size)


def resize(img: np.ndarray, size, interpolation: str = "bilinear") -> np.ndarray:
    """Resize an HWC image. An int `size` sets the shorter side (the aspect ratio is kept, as
    Paddle); (h, w) sets both. Bilinear uses half-pixel centers (OpenCV's and Paddle's cv2
    backend's rule); integer images are rounded back to their dtype.

    >>> import numpy as np
    >>> from runtime.vision.transforms import functional as TF
    >>> TF.resize(np.zeros((4, 8, 3), np.uint8), 2).shape
    (2, 4, 3)
    """
    h, w = img.shape[:2]
    if isinstance(size, int):
        short, long_ = (h, w) if h <= w else (w, h)
        new_long = int(size * long_ / short)
        oh, ow = (size, new_long) if h <= w else (new_long, size)
    else:
        oh, ow = _size_pair(size)
    if interpolation == "nearest":
        rows = np.minimum((np.arange(oh) * h / oh).astype(np.int64), h - 1)
        cols = np.minimum((np.arange(ow) * w / ow).astype(np.int64), w - 1)
        return img[rows][:, cols]
    if interpolation != "bilinear":
        raise ValueError(f"resize: interpolation must be 'bilinear' or 'nearest', got "
                         f"{interpolation!r}")
    y = np.clip((np.arange(oh) + 0.5) * h / oh - 0.5, 0, h - 1)
    x = np.clip((np.arange(ow) + 0.5) * w / ow - 0.5, 0, w - 1)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy = (y - y0).reshape(-1, 1, *[1] * (img.ndim - 2))
    wx = (x - x0).reshape(1, -1, *[1] * (img.ndim - 2))
    src = img.astype(np.float64)
    top = src[y0][:, x0] * (1 - wx) + src[y0][:, x1] * wx
    bottom = src[y1][:, x0] * (1 - wx) + src[y1][:, x1] * wx
    out = top * (1 - wy) + bottom * wy
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(img.dtype)
    return out.astype(img.dtype)


def center_crop(img: np.ndarray, output_size) -> np.ndarray:
    """The central (h, w) window of an HWC image (the top-left pixel of the window is rounded
    as Paddle: round((H - h) / 2))."""
    th, tw = _size_pair(output_size)
    h, w = img.shape[:2]
    if th > h or tw > w:
        raise ValueError(f"center_crop: crop size {(th, tw)} is larger than the image "
                         f"{(h, w)}")
    top, left = round((h - th) / 2.0), round((w - tw) / 2.0)
    return img[top:top + th, left:left + tw]


def hflip(img: np.ndarray) -> np.ndarray:
    """The image mirrored left to right."""
    return img[:, ::-1]


def normalize(img: np.ndarray, mean, std, data_format: str = "CHW",
              to_rgb: bool = False) -> np.ndarray:
    """(img - mean) / std per channel; the channel axis is first ('CHW') or last ('HWC');
    `to_rgb` reverses the channel order (BGR -> RGB) first."""
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: data_format must be 'CHW' or 'HWC', got {data_format!r}")
    axis = 0 if data_format == "CHW" else -1
    img = np.asarray(img, dtype=np.float32)
    if to_rgb:
        img = np.flip(img, axis=axis)
    shape = [-1, 1, 1] if data_format == "CHW" else [1, 1, -1]
    mean = np.asarray(mean, np.float32).reshape(shape)
    std = np.asarray(std, np.float32).reshape(shape)
    return (img - mean) / std
