"""Instance normalisation layers (Paddle's `InstanceNorm1D/2D/3D`): each channel of each
sample normalised over its spatial dims, then scaled and shifted per channel. As in Paddle the
parameters are named `scale` and `bias`, and `weight_attr=False` / `bias_attr=False` leave
them out."""
from __future__ import annotations

from ...ops import math as _math
from ...ops import reduce as _reduce
from ...ops import shape as _shape
from ..initializer import Constant
from ..layer import Layer


class _InstanceNorm(Layer):
    _rank = 4
    _formats: tuple = ()

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str | None = None, name=None):
        super().__init__()
        fmt = data_format or self._formats[0]
        if fmt not in self._formats:
            raise ValueError(f"{type(self).__name__}: data_format must be one of "
                             f"{list(self._formats)}, got {data_format!r}")
        self._num_features, self._epsilon, self._data_format = num_features, epsilon, fmt
        # `momentum` is accepted: Paddle's instance norm keeps no running statistics either
        self.scale = self.create_parameter([num_features], attr=weight_attr,
                                           default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_features], attr=bias_attr, is_bias=True)

    def forward(self, x):
        if len(x.shape) != self._rank:
            raise ValueError(f"{type(self).__name__}: x must be {self._rank}-D, got shape "
                             f"{list(x.shape)}")
        channels_last = self._data_format[-1] == "C"
        axes = list(range(1, self._rank - 1)) if channels_last else list(range(2, self._rank))
        mean = _reduce.mean(x, axis=axes, keepdim=True)
        centered = x - mean
        var = _reduce.mean(centered * centered, axis=axes, keepdim=True)
        y = centered * _math.rsqrt(var + self._epsilon)
        shape = [1] * self._rank
        shape[-1 if channels_last else 1] = -1
        if self.scale is not None:
            y = y * _shape.reshape(self.scale, shape)
        if self.bias is not None:
            y = y + _shape.reshape(self.bias, shape)
        return y

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNorm):
    """Instance norm over [N, C, L] ('NCL') or [N, L, C] ('NLC')."""

    _rank, _formats = 3, ("NCL", "NLC")

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCL", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class InstanceNorm2D(_InstanceNorm):
    """Instance norm over [N, C, H, W] ('NCHW') or [N, H, W, C] ('NHWC').

    >>> import runtime as rt
    >>> norm = rt.nn.InstanceNorm2D(2)
    >>> norm(rt.randn([1, 2, 4, 4])).shape, list(norm.state_dict())
    ([1, 2, 4, 4], ['scale', 'bias'])
    """

    _rank, _formats = 4, ("NCHW", "NHWC")

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


class InstanceNorm3D(_InstanceNorm):
    """Instance norm over [N, C, D, H, W] ('NCDHW') or channels last ('NDHWC')."""

    _rank, _formats = 5, ("NCDHW", "NDHWC")

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9,
                 weight_attr=None, bias_attr=None, data_format: str = "NCDHW", name=None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format,
                         name)


__all__ = ["InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D"]
