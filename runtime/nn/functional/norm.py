"""`F.batch_norm`, `F.layer_norm`, `F.group_norm` with Paddle's signatures."""
from __future__ import annotations

from ...autograd import no_grad
from ...ops import nn_norm as _norm


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
