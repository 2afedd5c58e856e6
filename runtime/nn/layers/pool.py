"""Pooling layers over `rt.nn.functional` (Paddle arguments and defaults)."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class MaxPool2D(Layer):
    """Max over `kernel_size` windows; `stride` defaults to `kernel_size`.

    >>> import runtime as rt
    >>> rt.nn.MaxPool2D(2)(rt.ones([1, 3, 8, 8])).shape
    [1, 3, 4, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCHW", name=None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.return_mask, self.ceil_mode, self.data_format = return_mask, ceil_mode, data_format

    def forward(self, x):
        return F.max_pool2d(x, self.ksize, self.stride, self.padding,
                            return_mask=self.return_mask, ceil_mode=self.ceil_mode,
                            data_format=self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(Layer):
    """Mean over `kernel_size` windows; `exclusive=True` leaves padding out of the count.

    >>> import runtime as rt
    >>> rt.nn.AvgPool2D(2)(rt.ones([1, 3, 8, 8])).shape
    [1, 3, 4, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
                 name=None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.exclusive = ceil_mode, exclusive
        self.divisor, self.data_format = divisor_override, data_format

    def forward(self, x):
        return F.avg_pool2d(x, self.ksize, self.stride, self.padding, ceil_mode=self.ceil_mode,
                            exclusive=self.exclusive, divisor_override=self.divisor,
                            data_format=self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2D(Layer):
    """Average pooling to a fixed `output_size` (an int or (h, w); None keeps that dim).

    >>> import runtime as rt
    >>> rt.nn.AdaptiveAvgPool2D(1)(rt.ones([2, 3, 7, 5])).shape
    [2, 3, 1, 1]
    """

    def __init__(self, output_size, data_format: str = "NCHW", name=None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self._output_size, data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"
