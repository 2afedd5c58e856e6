"""`F.batch_norm`, `F.layer_norm`, `F.group_norm`, `F.instance_norm`,
`F.local_response_norm` with Paddle's signatures."""
from __future__ import annotations

from ...autograd import no_grad
from ...ops import combine as _combine
from ...ops import index as _index
from ...ops import math as _math
from ...ops import nn_norm as _norm
from ...ops import reduce as _reduce
from ...ops import shape as _shape


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.9, epsilon: float = 1e-5, data_format: str = "NCHW",
               use_global_stats=None, name=None):
    """Normalize each channel. In training (unless `use_global_stats`) the batch statistics
    are used and the running ones updated in place: running = momentum * running +
    (1 - momentum) * batch (biased variance, as Paddle).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> mean, var = rt.zeros([3]), rt.ones([3])
    >>> y = F.batch_norm(rt.ones([2, 3, 4, 4]), mean, var, training=True)
    >>> mean.tolist()
    [0.10000000149011612, 0.10000000149011612, 0.10000000149011612]
    """
    batch_stats = training if use_global_stats is None else not use_global_stats
    if data_format in ("NC", "NCL", "NCDHW"):
        data_format = "NCHW"
    elif data_format in ("NLC", "NDHWC"):
        data_format = "NHWC"
    if not batch_stats:
        return _norm.batch_norm(x, running_mean, running_var, weight, bias, False, epsilon,
                                data_format)[0]
    y, mean, var = _norm.batch_norm(x, None, None, weight, bias, True, epsilon, data_format)
    with no_grad():
        running_mean.set_value(running_mean * momentum + mean * (1.0 - momentum))
        running_var.set_value(running_var * momentum + var * (1.0 - momentum))
    return y


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon: float = 1e-5,
               name=None):
    """Normalize over the trailing dims given by `normalized_shape`."""
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return _norm.layer_norm(x, weight, bias, x.ndim - n, epsilon)


def group_norm(x, num_groups: int, epsilon: float = 1e-5, weight=None, bias=None,
               data_format: str = "NCHW", name=None):
    """Normalize each group of channels of each sample ([N, C, ...] input)."""
    return _norm.group_norm(x, weight, bias, num_groups, epsilon)


def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.9, eps: float = 1e-5,
                  data_format: str = "NCHW", name=None):
    """Normalize each channel of each sample over its spatial dims (group_norm with one
    channel per group); running statistics are not used."""
    return _norm.group_norm(x, weight, bias, x.shape[1], eps)


def local_response_norm(x, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                        data_format: str = "NCHW", name=None):
    """AlexNet's normalization across channels: x / (k + alpha / size * s) ** beta, where s
    sums x**2 over the `size` channels around each one (zeros past the ends). Any rank >= 3;
    `data_format` 'NC...' or 'N...C'.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.local_response_norm(rt.ones([1, 3, 1, 1]), 3, alpha=3.0, beta=1.0).flatten().tolist()
    [0.3333333432674408, 0.25, 0.3333333432674408]
    """
    nd = len(x.shape)
    if nd < 3:
        raise ValueError(f"local_response_norm: x must have at least 3 dims, got {nd}")
    channel = 1 if data_format[1] == "C" else nd - 1
    c = x.shape[channel]
    sq = x * x
    before, after = size // 2, (size - 1) // 2
    padded = _combine.concat([_zeros_along(sq, channel, before + 1), sq,
                              _zeros_along(sq, channel, after)], channel)
    running = _reduce.cumsum(padded, axis=channel)
    upper = _index.slice(running, [channel], [size], [size + c])
    lower = _index.slice(running, [channel], [0], [c])
    return x / _math.pow(k + (upper - lower) * (alpha / size), beta)


def _zeros_along(x, axis: int, n: int):
    """Zeros shaped like x but n long on `axis`."""
    part = _index.slice(x, [axis], [0], [1]) * 0.0
    return _shape.expand(part, [n if i == axis else -1 for i in range(len(x.shape))]) if n \
        else _index.slice(part, [axis], [0], [0])
