"""Convolution layers (Conv1D, Conv2D, Conv2DTranspose, Conv1DTranspose) with Paddle's
layouts and init. Weights are `[out_channels, in_channels / groups, *kernel]` (transposed
convolutions: `[in_channels, out_channels / groups, *kernel]`). Paddle initialises a
convolution weight from N(0, 2 / (prod(kernel) * in_channels)) and a transposed one with
XavierUniform.
"""
from __future__ import annotations

import math

from .. import functional as F
from ..initializer import Normal
from ..layer import Layer
from .compat import bias_attr_of


def _ntuple(value, n: int, what: str) -> list:
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(f"{what} must be an int or {n} ints, got {value}")
    return value


class _ConvNd(Layer):
    def __init__(self, in_channels, out_channels, kernel_size, transposed, dims, stride=1,
                 padding=0, padding_mode="zeros", output_padding=0, dilation=1, groups=1,
                 weight_attr=None, bias_attr=None, data_format="NCHW"):
        super().__init__()
        name = type(self).__name__
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{name}: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             f"'circular', got {padding_mode!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._kernel_size = _ntuple(kernel_size, dims, f"{name}: kernel_size")
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._output_padding, self._groups = output_padding, groups
        self._padding_mode, self._data_format = padding_mode, data_format
        self._pre_pad = None
        if padding_mode != "zeros":
            # Paddle pads the input with F.pad (pairs from the last spatial dim back), then
            # convolves without padding
            per_dim = _ntuple(padding, dims, f"{name}: padding with padding_mode")
            self._pre_pad = [p for d in reversed(per_dim) for p in (d, d)]
            self._padding = 0
        if transposed:
            shape = [in_channels, out_channels // groups] + self._kernel_size
            default = None  # XavierUniform, as Paddle
        else:
            shape = [out_channels, in_channels // groups] + self._kernel_size
            fan = math.prod(self._kernel_size) * in_channels
            default = Normal(0.0, (2.0 / fan) ** 0.5)
        self.weight = self.create_parameter(shape, attr=weight_attr,
                                            default_initializer=default)
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x):
        return self._forward_with(x, self.weight)

    def _forward_with(self, x, weight):
        """The plain convolutions' forward (`_convolve` is their functional form) with `weight`
        (QuantedConv2D passes the fake-quantized one)."""
        if self._pre_pad is not None:
            x = F.pad(x, self._pre_pad, mode=self._padding_mode, data_format=self._data_format)
        return self._convolve(x, weight, self.bias, stride=self._stride, padding=self._padding,
                              dilation=self._dilation, groups=self._groups,
                              data_format=self._data_format)

    def extra_repr(self) -> str:
        text = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        for key, default in (("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1),
                             ("output_padding", 0)):
            value = getattr(self, f"_{key}")
            if value != default:
                text += f", {key}={value}"
        if self._padding_mode != "zeros":
            text += f", padding_mode={self._padding_mode}"
        return text + f", data_format={self._data_format}"


class Conv1D(_ConvNd):
    """1-D convolution over `[N, C, L]` (`data_format='NCL'`) or `[N, L, C]` ('NLC').

    >>> import runtime as rt
    >>> rt.nn.Conv1D(4, 8, 3, padding=1)(rt.ones([2, 4, 10])).shape
    [2, 8, 10]
    """

    _convolve = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, padding_mode: str = "zeros", weight_attr=None,
                 bias_attr=None, data_format: str = "NCL", bias: bool = True, device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, False, 1, stride=stride,
                         padding=padding, padding_mode=padding_mode, dilation=dilation,
                         groups=groups, weight_attr=weight_attr,
                         bias_attr=bias_attr_of(bias, bias_attr), data_format=data_format)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)


class Conv2D(_ConvNd):
    """2-D convolution over `[N, C, H, W]` ('NCHW') or `[N, H, W, C]` ('NHWC').

    >>> import runtime as rt
    >>> conv = rt.nn.Conv2D(3, 8, 3, stride=2, padding=1)
    >>> conv.weight.shape, conv(rt.ones([1, 3, 8, 8])).shape
    ([8, 3, 3, 3], [1, 8, 4, 4])
    """

    _convolve = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, padding_mode: str = "zeros", weight_attr=None,
                 bias_attr=None, data_format: str = "NCHW", bias: bool = True, device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, False, 2, stride=stride,
                         padding=padding, padding_mode=padding_mode, dilation=dilation,
                         groups=groups, weight_attr=weight_attr,
                         bias_attr=bias_attr_of(bias, bias_attr), data_format=data_format)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)


class Conv2DTranspose(_ConvNd):
    """Transposed 2-D convolution (the gradient of Conv2D with respect to its input).

    >>> import runtime as rt
    >>> up = rt.nn.Conv2DTranspose(8, 4, 4, stride=2, padding=1)
    >>> up.weight.shape, up(rt.ones([1, 8, 5, 5])).shape
    ([8, 4, 4, 4], [1, 4, 10, 10])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups: int = 1, weight_attr=None,
                 bias_attr=None, data_format: str = "NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, True, 2, stride=stride,
                         padding=padding, output_padding=output_padding, dilation=dilation,
                         groups=groups, weight_attr=weight_attr, bias_attr=bias_attr,
                         data_format=data_format)

    def forward(self, x, output_size=None):
        return F.conv2d_transpose(x, self.weight, self.bias, stride=self._stride,
                                  padding=self._padding, output_padding=self._output_padding,
                                  groups=self._groups, dilation=self._dilation,
                                  output_size=output_size, data_format=self._data_format)


class Conv1DTranspose(_ConvNd):
    """Transposed 1-D convolution over `[N, C, L]` ('NCL') or `[N, L, C]` ('NLC'): the
    upsampling of vocoders and decoders.

    >>> import runtime as rt
    >>> up = rt.nn.Conv1DTranspose(8, 4, 4, stride=2, padding=1)
    >>> up.weight.shape, up(rt.ones([1, 8, 5])).shape
    ([8, 4, 4], [1, 4, 10])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, dilation=1, weight_attr=None,
                 bias_attr=None, data_format: str = "NCL"):
        super().__init__(in_channels, out_channels, kernel_size, True, 1, stride=stride,
                         padding=padding, output_padding=output_padding, dilation=dilation,
                         groups=groups, weight_attr=weight_attr, bias_attr=bias_attr,
                         data_format=data_format)

    def forward(self, x, output_size=None):
        return F.conv1d_transpose(x, self.weight, self.bias, stride=self._stride,
                                  padding=self._padding, output_padding=self._output_padding,
                                  groups=self._groups, dilation=self._dilation,
                                  output_size=output_size, data_format=self._data_format)
