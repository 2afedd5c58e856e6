"""Pooling layers over `rt.nn.functional` (Paddle arguments and defaults)."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class _WindowPool(Layer):
    """What the window pools share: kernel size, stride and padding, shown in the repr."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class _AdaptivePool(Layer):
    """What the adaptive pools share: the output size, shown in the repr."""

    def __init__(self, output_size):
        super().__init__()
        self._output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"


class MaxPool2D(_WindowPool):
    """Max over `kernel_size` windows; `stride` defaults to `kernel_size`.

    >>> import runtime as rt
    >>> rt.nn.MaxPool2D(2)(rt.ones([1, 3, 8, 8])).shape
    [1, 3, 4, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCHW", name=None):
        super().__init__(kernel_size, stride, padding)
        self.return_mask, self.ceil_mode, self.data_format = return_mask, ceil_mode, data_format

    def forward(self, x):
        return F.max_pool2d(x, self.ksize, self.stride, self.padding,
                            return_mask=self.return_mask, ceil_mode=self.ceil_mode,
                            data_format=self.data_format)


class AvgPool2D(_WindowPool):
    """Mean over `kernel_size` windows; `exclusive=True` leaves padding out of the count.

    >>> import runtime as rt
    >>> rt.nn.AvgPool2D(2)(rt.ones([1, 3, 8, 8])).shape
    [1, 3, 4, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override=None, data_format: str = "NCHW",
                 name=None):
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode, self.exclusive = ceil_mode, exclusive
        self.divisor, self.data_format = divisor_override, data_format

    def forward(self, x):
        return F.avg_pool2d(x, self.ksize, self.stride, self.padding, ceil_mode=self.ceil_mode,
                            exclusive=self.exclusive, divisor_override=self.divisor,
                            data_format=self.data_format)


class AdaptiveAvgPool2D(_AdaptivePool):
    """Average pooling to a fixed `output_size` (an int or (h, w); None keeps that dim).

    >>> import runtime as rt
    >>> rt.nn.AdaptiveAvgPool2D(1)(rt.ones([2, 3, 7, 5])).shape
    [2, 3, 1, 1]
    """

    def __init__(self, output_size, data_format: str = "NCHW", name=None):
        super().__init__(output_size)
        self._data_format = data_format

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self._output_size, data_format=self._data_format)


class MaxPool1D(_WindowPool):
    """Max over windows of `[N, C, L]`; `stride` defaults to `kernel_size`.

    >>> import runtime as rt
    >>> rt.nn.MaxPool1D(2)(rt.ones([2, 3, 8])).shape
    [2, 3, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, name=None):
        super().__init__(kernel_size, stride, padding)
        self.return_mask, self.ceil_mode = return_mask, ceil_mode

    def forward(self, x):
        return F.max_pool1d(x, self.ksize, self.stride, self.padding,
                            return_mask=self.return_mask, ceil_mode=self.ceil_mode)


class AvgPool1D(_WindowPool):
    """Mean over windows of `[N, C, L]`; `exclusive=True` leaves padding out of the count."""

    def __init__(self, kernel_size, stride=None, padding=0, exclusive: bool = True,
                 ceil_mode: bool = False, name=None):
        super().__init__(kernel_size, stride, padding)
        self.exclusive, self.ceil_mode = exclusive, ceil_mode

    def forward(self, x):
        return F.avg_pool1d(x, self.ksize, self.stride, self.padding, exclusive=self.exclusive,
                            ceil_mode=self.ceil_mode)


class AdaptiveAvgPool1D(_AdaptivePool):
    """Average pooling of `[N, C, L]` to `output_size` positions.

    >>> import runtime as rt
    >>> rt.nn.AdaptiveAvgPool1D(1)(rt.ones([2, 3, 7])).shape
    [2, 3, 1]
    """

    def __init__(self, output_size: int, name=None):
        super().__init__(output_size)

    def forward(self, x):
        return F.adaptive_avg_pool1d(x, self._output_size)


class AdaptiveMaxPool2D(_AdaptivePool):
    """Max pooling to a fixed `output_size`; `return_mask` also returns the argmax indices.

    >>> import runtime as rt
    >>> rt.nn.AdaptiveMaxPool2D(2)(rt.ones([1, 3, 5, 4])).shape
    [1, 3, 2, 2]
    """

    def __init__(self, output_size, return_mask: bool = False, name=None):
        super().__init__(output_size)
        self._return_mask = return_mask

    def forward(self, x):
        return F.adaptive_max_pool2d(x, self._output_size, return_mask=self._return_mask)


class AdaptiveMaxPool1D(AdaptiveMaxPool2D):
    """Max pooling of [N, C, L] to a fixed `output_size`; `return_mask` also returns the
    argmax indices along L."""

    def forward(self, x):
        return F.adaptive_max_pool1d(x, self._output_size, return_mask=self._return_mask)
