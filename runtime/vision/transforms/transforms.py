"""Image transforms at Paddle's names: callables on NumPy HWC images, chained by `Compose`.

>>> import numpy as np
>>> import runtime as rt
>>> from runtime.vision import transforms as T
>>> pipeline = T.Compose([T.Resize(16), T.CenterCrop(12), T.ToTensor(),
...                       T.Normalize(mean=[0.5] * 3, std=[0.5] * 3)])
>>> pipeline(np.zeros((20, 30, 3), np.uint8)).shape
[3, 12, 12]
"""
from __future__ import annotations

import random

import numpy as np

from ...tensor import to_tensor
from . import functional as TF


class Compose:
    """Apply `transforms` one after another."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, data):
        for transform in self.transforms:
            data = transform(data)
        return data

    def __repr__(self):
        return "Compose(" + ", ".join(repr(t) for t in self.transforms) + ")"


class BaseTransform:
    """A transform of one image; `keys` (Paddle's multi-input form) is not supported."""

    def __init__(self, keys=None):
        if keys is not None:
            raise ValueError(f"{type(self).__name__}: keys={keys!r} (transforming several "
                             "inputs at once) is not supported; apply it to the image")

    def __call__(self, img):
        return self._apply_image(img)

    def _apply_image(self, img):
        raise NotImplementedError(f"{type(self).__name__}._apply_image")


class Resize(BaseTransform):
    """Resize to `size` (an int sets the shorter side, keeping the aspect ratio)."""

    def __init__(self, size, interpolation: str = "bilinear", keys=None):
        super().__init__(keys)
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img):
        return TF.resize(np.asarray(img), self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """The central `size` (int or (h, w)) window."""

    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = size

    def _apply_image(self, img):
        return TF.center_crop(np.asarray(img), self.size)


class RandomHorizontalFlip(BaseTransform):
    """Mirror left to right with probability `prob` (Python's `random`, as Paddle)."""

    def __init__(self, prob: float = 0.5, keys=None):
        super().__init__(keys)
        self.prob = prob

    def _apply_image(self, img):
        return TF.hflip(np.asarray(img)) if random.random() < self.prob else img


class Transpose(BaseTransform):
    """Permute the axes (default HWC -> CHW); a 2-D image gets a channel axis first."""

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = tuple(order)

    def _apply_image(self, img):
        img = np.asarray(img)
        if img.ndim == 2:
            img = img[..., None]
        return img.transpose(self.order)


class ToTensor(BaseTransform):
    """An HWC (or HW) NumPy image as a float Tensor in `data_format` ('CHW' by default);
    uint8 images are scaled from [0, 255] to [0, 1]."""

    def __init__(self, data_format: str = "CHW", keys=None):
        super().__init__(keys)
        if data_format not in ("CHW", "HWC"):
            raise ValueError(f"ToTensor: data_format must be 'CHW' or 'HWC', got "
                             f"{data_format!r}")
        self.data_format = data_format

    def _apply_image(self, img):
        img = np.asarray(img)
        if img.ndim == 2:
            img = img[..., None]
        scaled = img.astype(np.float32) / 255.0 if img.dtype == np.uint8 else \
            img.astype(np.float32)
        if self.data_format == "CHW":
            scaled = scaled.transpose(2, 0, 1)
        return to_tensor(np.ascontiguousarray(scaled))


class Normalize(BaseTransform):
    """(img - mean) / std per channel, for NumPy images and Tensors (after `ToTensor`)."""

    def __init__(self, mean=0.0, std=1.0, data_format: str = "CHW", to_rgb: bool = False,
                 keys=None):
        super().__init__(keys)
        channels = 3 if isinstance(mean, (int, float)) else len(mean)
        self.mean = [mean] * channels if isinstance(mean, (int, float)) else list(mean)
        self.std = [std] * channels if isinstance(std, (int, float)) else list(std)
        self.data_format, self.to_rgb = data_format, to_rgb

    def _apply_image(self, img):
        if hasattr(img, "numpy"):
            return to_tensor(TF.normalize(img.numpy(), self.mean, self.std, self.data_format,
                                          self.to_rgb))
        return TF.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)
