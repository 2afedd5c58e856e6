"""3-D convolution and pooling layers (`Conv3D`, `MaxPool3D`, `AvgPool3D`) over
`rt.nn.functional.conv3d` / `max_pool3d` / `avg_pool3d`, Paddle's arguments and init."""
from __future__ import annotations

from .. import functional as F
from .compat import bias_attr_of, refuse
from .conv import _ConvNd
from .pool import _WindowPool


class Conv3D(_ConvNd):
    """3-D convolution over `[N, C, D, H, W]` ('NCDHW') or channels last ('NDHWC').

    >>> import runtime as rt
    >>> conv = rt.nn.Conv3D(2, 4, 3, padding=1)
    >>> conv.weight.shape, conv(rt.ones([1, 2, 3, 5, 5])).shape
    ([4, 2, 3, 3, 3], [1, 4, 3, 5, 5])
    """

    _convolve = staticmethod(F.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, weight_attr=None, bias_attr=None,
                 data_format: str = "NCDHW"):
        if padding_mode != "zeros":
            refuse("Conv3D", "padding_mode", padding_mode, "only zero padding in 3-D")
        super().__init__(in_channels, out_channels, kernel_size, False, 3, stride=stride,
                         padding=padding, dilation=dilation, groups=groups,
                         weight_attr=weight_attr, bias_attr=bias_attr_of(bias, bias_attr),
                         data_format=data_format)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)


class MaxPool3D(_WindowPool):
    """Max over `kernel_size` windows of `[N, C, D, H, W]`; `stride` defaults to the kernel.

    >>> import runtime as rt
    >>> rt.nn.MaxPool3D(2)(rt.ones([1, 3, 4, 4, 4])).shape
    [1, 3, 2, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NCDHW", name=None):
        super().__init__(kernel_size, stride, padding)
        self.return_mask, self.ceil_mode, self.data_format = return_mask, ceil_mode, data_format

    def forward(self, x):
        return F.max_pool3d(x, self.ksize, self.stride, self.padding, ceil_mode=self.ceil_mode,
                            return_mask=self.return_mask, data_format=self.data_format)


class AvgPool3D(_WindowPool):
    """Mean over `kernel_size` windows of `[N, C, D, H, W]`; `exclusive=True` leaves
    padding out of the count.

    >>> import runtime as rt
    >>> rt.nn.AvgPool3D(2)(rt.ones([1, 3, 4, 4, 4])).shape
    [1, 3, 2, 2, 2]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override=None, data_format: str = "NCDHW",
                 name=None):
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode, self.exclusive = ceil_mode, exclusive
        self.divisor, self.data_format = divisor_override, data_format

    def forward(self, x):
        return F.avg_pool3d(x, self.ksize, self.stride, self.padding, ceil_mode=self.ceil_mode,
                            exclusive=self.exclusive, divisor_override=self.divisor,
                            data_format=self.data_format)


__all__ = ["AvgPool3D", "Conv3D", "MaxPool3D"]
