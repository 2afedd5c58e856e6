"""Layers that rearrange image pixels: `PixelShuffle` (sub-pixel upsampling) and its inverse
`PixelUnshuffle`, `ChannelShuffle` (ShuffleNet) and `Unfold` (sliding patches as columns,
im2col)."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class PixelShuffle(Layer):
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r] with r = `upscale_factor`.

    >>> import runtime as rt
    >>> rt.nn.PixelShuffle(3)(rt.ones([2, 9, 4, 4])).shape
    [2, 1, 12, 12]
    """

    def __init__(self, upscale_factor: int, data_format: str = "NCHW", name=None):
        super().__init__()
        self._upscale_factor, self._data_format = upscale_factor, data_format

    def forward(self, x):
        return F.pixel_shuffle(x, self._upscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return f"upscale_factor={self._upscale_factor}, data_format={self._data_format}"


class Unfold(Layer):
    """Sliding [kh, kw] patches of an NCHW image as columns: [N, C*kh*kw, L] (see
    `F.unfold`; Paddle's argument order: kernel_sizes, dilations, paddings, strides).

    >>> import runtime as rt
    >>> rt.nn.Unfold(kernel_sizes=[2, 3])(rt.ones([1, 2, 4, 5])).shape
    [1, 12, 9]
    """

    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None):
        super().__init__()
        self._kernel_sizes, self._dilations = kernel_sizes, dilations
        self._paddings, self._strides = paddings, strides

    def forward(self, x):
        return F.unfold(x, self._kernel_sizes, self._strides, self._paddings, self._dilations)

    def extra_repr(self) -> str:
        return (f"kernel_sizes={self._kernel_sizes}, dilations={self._dilations}, "
                f"paddings={self._paddings}, strides={self._strides}")


class PixelUnshuffle(Layer):
    """[N, C, H*r, W*r] -> [N, C*r*r, H, W] (see `F.pixel_unshuffle`)."""

    def __init__(self, downscale_factor: int, data_format: str = "NCHW", name=None):
        super().__init__()
        self._factor, self._data_format = downscale_factor, data_format

    def forward(self, x):
        return F.pixel_unshuffle(x, self._factor, self._data_format)

    def extra_repr(self) -> str:
        return f"downscale_factor={self._factor}, data_format={self._data_format}"


class ChannelShuffle(Layer):
    """ShuffleNet's channel shuffle over `groups` (see `F.channel_shuffle`)."""

    def __init__(self, groups: int, data_format: str = "NCHW", name=None):
        super().__init__()
        self._groups, self._data_format = groups, data_format

    def forward(self, x):
        return F.channel_shuffle(x, self._groups, self._data_format)

    def extra_repr(self) -> str:
        return f"groups={self._groups}, data_format={self._data_format}"
