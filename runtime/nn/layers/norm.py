"""Normalisation layers: BatchNorm1D/2D, LayerNorm, GroupNorm (Paddle defaults),
LocalResponseNorm.

BatchNorm keeps its running statistics as persistable buffers `_mean` and `_variance`
(state_dict keys 'bn._mean', 'bn._variance', as in Paddle). In training, `F.batch_norm`
normalises with the batch statistics and updates the buffers with
`running = momentum * running + (1 - momentum) * batch` (momentum 0.9, Paddle's convention);
in eval mode it uses the buffers.
"""
from __future__ import annotations

from typing import ClassVar

from ...tensor import Tensor
from .. import functional as F
from ..initializer import Constant
from ..layer import Layer
from .compat import bias_attr_of, check_ignored


def _affine(layer, shape, weight_attr, bias_attr):
    """Paddle's scale/shift parameters: weight=1, bias=0; `*_attr=False` keeps a frozen
    constant (BatchNorm, GroupNorm) instead of dropping it."""
    layer.weight = layer.create_parameter(shape, attr=None if weight_attr is False else
                                          weight_attr, default_initializer=Constant(1.0))
    layer.bias = layer.create_parameter(shape, attr=None if bias_attr is False else bias_attr,
                                        is_bias=True)
    if weight_attr is False:
        layer.weight.stop_gradient = True
    if bias_attr is False:
        layer.bias.stop_gradient = True


class _BatchNormBase(Layer):
    _formats: ClassVar[tuple] = ()

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5,
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW",
                 use_global_stats: bool | None = None, name=None):
        super().__init__()
        if data_format not in self._formats:
            raise ValueError(f"{type(self).__name__}: data_format must be one of "
                             f"{list(self._formats)}, got {data_format!r}")
        self._num_features, self._momentum, self._epsilon = num_features, momentum, epsilon
        self._data_format, self._use_global_stats = data_format, use_global_stats
        _affine(self, [num_features], weight_attr, bias_attr)
        self.register_buffer("_mean", Tensor(Constant(0.0).generate([num_features], self._dtype)))
        self.register_buffer("_variance",
                             Tensor(Constant(1.0).generate([num_features], self._dtype)))

    def forward(self, x):
        return F.batch_norm(x, self._mean, self._variance, weight=self.weight, bias=self.bias,
                            training=self.training, momentum=self._momentum,
                            epsilon=self._epsilon, data_format=self._data_format,
                            use_global_stats=self._use_global_stats)

    def extra_repr(self) -> str:
        return (f"num_features={self._num_features}, momentum={self._momentum}, "
                f"epsilon={self._epsilon}, data_format={self._data_format}")


class BatchNorm1D(_BatchNormBase):
    """Batch normalisation over `[N, C]` or `[N, C, L]` ('NCL'; 'NLC' for channels last).

    >>> import runtime as rt
    >>> bn = rt.nn.BatchNorm1D(4)
    >>> bn(rt.randn([8, 4])).shape, list(bn.state_dict())
    ([8, 4], ['weight', 'bias', '_mean', '_variance'])
    """

    _formats: ClassVar[tuple] = ("NC", "NCL", "NLC")

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5,
                 weight_attr=None, bias_attr=None, data_format: str = "NCL",
                 use_global_stats: bool | None = None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)


class BatchNorm2D(_BatchNormBase):
    """Batch normalisation over `[N, C, H, W]` ('NCHW') or `[N, H, W, C]` ('NHWC').

    >>> import runtime as rt
    >>> rt.nn.BatchNorm2D(3)(rt.randn([2, 3, 4, 4])).shape
    [2, 3, 4, 4]
    """

    _formats: ClassVar[tuple] = ("NCHW", "NHWC")


class BatchNorm3D(_BatchNormBase):
    """Batch normalisation over `[N, C, D, H, W]` ('NCDHW') or channels last ('NDHWC')."""

    _formats: ClassVar[tuple] = ("NCDHW", "NDHWC")

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5,
                 weight_attr=None, bias_attr=None, data_format: str = "NCDHW",
                 use_global_stats: bool | None = None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)


class BatchNorm(_BatchNormBase):
    """Paddle's older batch norm for inputs of any rank (channel axis 1 for 'NCHW'), with
    an optional activation `act` applied after it (as in many Paddle model zoos).

    >>> import runtime as rt
    >>> bool(rt.nn.BatchNorm(3, act='relu')(rt.randn([2, 3, 4])).min() >= 0)
    True
    """

    _formats: ClassVar[tuple] = ("NCHW", "NHWC")

    def __init__(self, num_channels: int, act: str | None = None, is_test: bool = False,
                 momentum: float = 0.9, epsilon: float = 1e-5, param_attr=None, bias_attr=None,
                 dtype="float32", data_layout: str = "NCHW", in_place: bool = False,
                 moving_mean_name: str | None = None, moving_variance_name: str | None = None,
                 do_model_average_for_mean_and_var: bool = True, use_global_stats: bool = False,
                 trainable_statistics: bool = False, name=None):
        if act is not None and not hasattr(F, act):
            raise ValueError(f"BatchNorm: unknown activation {act!r}")
        check_ignored("BatchNorm", in_place=in_place,
                      do_model_average_for_mean_and_var=do_model_average_for_mean_and_var)
        self._act, self._is_test = act, is_test
        # trainable_statistics: batch statistics (and running-stat updates) in eval mode too
        self._trainable_statistics = bool(trainable_statistics)
        super().__init__(num_channels, momentum, epsilon, param_attr, bias_attr, data_layout,
                         use_global_stats or None, name)
        # the running statistics' names in programs (saved models), as Paddle names them
        if moving_mean_name is not None:
            self._mean.name = moving_mean_name
        if moving_variance_name is not None:
            self._variance.name = moving_variance_name
        if dtype != "float32":
            self.to(dtype=dtype)

    def forward(self, x):
        training = (self.training and not self._is_test) or self._trainable_statistics
        y = F.batch_norm(x, self._mean, self._variance, weight=self.weight, bias=self.bias,
                         training=training, momentum=self._momentum, epsilon=self._epsilon,
                         data_format=self._data_format, use_global_stats=self._use_global_stats)
        return y if self._act is None else getattr(F, self._act)(y)


class LayerNorm(Layer):
    """Normalise over the trailing `normalized_shape` dims, then scale and shift.

    >>> import runtime as rt
    >>> ln = rt.nn.LayerNorm(8)
    >>> ln.weight.shape, ln(rt.randn([2, 5, 8])).shape
    ([8], [2, 5, 8])
    """

    def __init__(self, normalized_shape, epsilon: float = 1e-5, weight_attr=None,
                 bias_attr=None, name=None, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        if not elementwise_affine:  # Paddle 3 / PyTorch spelling of "no scale, no shift"
            weight_attr = bias_attr = False
        self._normalized_shape, self._epsilon = list(normalized_shape), epsilon
        self.weight = self.create_parameter(self._normalized_shape, attr=weight_attr,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter(self._normalized_shape,
                                          attr=bias_attr_of(bias, bias_attr), is_bias=True)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)

    def forward(self, x):
        return F.layer_norm(x, self._normalized_shape, weight=self.weight, bias=self.bias,
                            epsilon=self._epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Normalise each of `num_groups` channel groups per sample, then scale and shift per
    channel.

    >>> import runtime as rt
    >>> rt.nn.GroupNorm(2, 4)(rt.randn([3, 4, 5, 5])).shape
    [3, 4, 5, 5]
    """

    def __init__(self, num_groups: int, num_channels: int, epsilon: float = 1e-5,
                 weight_attr=None, bias_attr=None, data_format: str = "NCHW", name=None,
                 affine: bool = True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        if data_format not in ("NCHW", "NCL", "NC"):
            raise ValueError(f"GroupNorm: data_format must be channels-first, got "
                             f"{data_format!r}")
        self._num_groups, self._num_channels, self._epsilon = num_groups, num_channels, epsilon
        self._data_format = data_format
        if not affine:  # Paddle 3 / PyTorch spelling: frozen weight 1 and bias 0
            weight_attr = bias_attr = False
        _affine(self, [num_channels], weight_attr, bias_attr)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)

    def forward(self, x):
        return F.group_norm(x, self._num_groups, self._epsilon, weight=self.weight,
                            bias=self.bias, data_format=self._data_format)

    def extra_repr(self) -> str:
        return (f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
                f"epsilon={self._epsilon}")


class LocalResponseNorm(Layer):
    """AlexNet's normalization across `size` neighbouring channels (see
    `F.local_response_norm`)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                 data_format: str = "NCHW", name=None):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k
        self.data_format = data_format

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k,
                                     self.data_format)

    def extra_repr(self) -> str:
        return f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
