"""Activation functions (`F.relu`, `F.gelu`, `F.softmax`, ..., `F.maxout`,
`F.gumbel_softmax`) with Paddle's signatures."""
from __future__ import annotations

from ...core import is_variable
from ...dtypes import convert_dtype
from ...ops import math as _math
from ...ops import nn as _nn
from ...ops import random as _random
from ...ops import reduce as _reduce
from ...ops import shape as _shape
from ...ops.combine import split as _split
from ...ops.scatter_update import put_along_axis as _put

relu = _nn.relu
relu6 = _nn.relu6
hardtanh = _nn.hardtanh
hardsigmoid = _nn.hardsigmoid
leaky_relu = _nn.leaky_relu
sigmoid = _nn.sigmoid
silu = _nn.silu
gelu = _nn.gelu
softplus = _nn.softplus
tanh = _math.tanh


def swish(x, name=None):
    """x * sigmoid(x) (the same as `silu`)."""
    return _nn.silu(x)


def hardswish(x, name=None):
    """x * relu6(x + 3) / 6.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.hardswish(rt.to_tensor([-4.0, 0.0, 4.0])).tolist()
    [-0.0, 0.0, 4.0]
    """
    return x * _nn.relu6(x + 3.0) * (1.0 / 6.0)


def _maybe_cast(x, dtype):
    return x if dtype is None or x.dtype == convert_dtype(dtype) else _math.cast(x, dtype)


def softmax(x, axis: int = -1, dtype=None, name=None):
    """exp(x) / sum(exp(x)) along `axis`; `dtype` casts x first (Paddle).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.softmax(rt.to_tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    return _nn.softmax(_maybe_cast(x, dtype), axis)


def log_softmax(x, axis: int = -1, dtype=None, name=None):
    """log(softmax(x)) along `axis`, computed stably."""
    return _nn.log_softmax(_maybe_cast(x, dtype), axis)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), finite for any x.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.log_sigmoid(rt.to_tensor([-200.0])).tolist()
    [-200.0]
    """
    return -_nn.softplus(-x)


def elu(x, alpha: float = 1.0, name=None):
    """x for x > 0, alpha * (exp(x) - 1) otherwise (exp never sees a positive x, so large
    inputs cannot overflow it)."""
    return _nn.relu(x) + alpha * (_math.exp(_math.minimum(x, 0.0)) - 1.0)


def mish(x, name=None):
    """x * tanh(softplus(x))."""
    return x * _math.tanh(_nn.softplus(x))


def prelu(x, weight, data_format: str = "NCHW", name=None):
    """max(x, 0) + weight * min(x, 0); weight has 1 element or one per channel."""
    if weight.shape[0] != 1:
        channel = 1 if data_format.startswith("NC") else x.ndim - 1
        weight = _shape.reshape(weight, [-1 if i == channel else 1 for i in range(x.ndim)])
    return _nn.relu(x) - weight * _nn.relu(-x)


def softsign(x, name=None):
    """x / (1 + |x|).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.softsign(rt.to_tensor([-1.0, 3.0])).tolist()
    [-0.5, 0.75]
    """
    return _math.divide(x, _math.add(_math.abs(x), 1.0))


def glu(x, axis: int = -1, name=None):
    """The gated linear unit: x = [a, b] split in halves along `axis`, a * sigmoid(b).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.glu(rt.to_tensor([[1.0, 2.0, 0.0, 0.0]])).tolist()
    [[0.5, 1.0]]
    """
    if x.shape[axis] >= 0 and x.shape[axis] % 2:  # (-1: known when the program runs)
        raise ValueError(f"glu: x has shape {list(x.shape)}; its size on axis {axis} must be "
                         "even (it is split in two halves)")
    a, b = _split(x, 2, axis)
    return a * _nn.sigmoid(b)


def selu(x, scale: float = 1.0507009873554804934193349852946,
         alpha: float = 1.6732632423543772848170429916717, name=None):
    """scale * (x for x > 0, alpha * (exp(x) - 1) otherwise): self-normalising networks."""
    return scale * elu(x, alpha)


def celu(x, alpha: float = 1.0, name=None):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.celu(rt.to_tensor([1.0, 0.0])).tolist()
    [1.0, 0.0]
    """
    if is_variable(alpha):  # (`float(t)` in converted code: checked when the program runs)
        from ...program.debug_ops import assert_text
        assert_text(alpha != 0, ["celu: alpha must not be 0"], error=ValueError)
    elif alpha == 0:
        raise ValueError("celu: alpha must not be 0")
    return _nn.relu(x) + alpha * (_math.exp(_math.minimum(x, 0.0) / alpha) - 1.0)


def _outside(x, threshold: float):
    """1 where |x| > threshold, else 0 (in x's dtype): the shrink functions' mask."""
    return _math.cast(_math.abs(x) > threshold, x.dtype)


def hardshrink(x, threshold: float = 0.5, name=None):
    """x where |x| > threshold, else 0.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.hardshrink(rt.to_tensor([-1.0, 0.3, 0.8])).tolist()
    [-1.0, 0.0, 0.800000011920929]
    """
    return x * _outside(x, threshold)


def softshrink(x, threshold: float = 0.5, name=None):
    """x - threshold above it, x + threshold below -threshold, else 0."""
    if is_variable(threshold):  # (`float(t)` in converted code: checked when the program runs)
        from ...program.debug_ops import assert_text
        assert_text(threshold >= 0, ["softshrink: threshold must be >= 0, got ", threshold],
                    error=ValueError)
    elif threshold < 0:
        raise ValueError(f"softshrink: threshold must be >= 0, got {threshold}")
    return (x - _math.sign(x) * threshold) * _outside(x, threshold)


def tanhshrink(x, name=None):
    """x - tanh(x)."""
    return x - _math.tanh(x)


def thresholded_relu(x, threshold: float = 1.0, value: float = 0.0, name=None):
    """x where x > threshold, else `value`."""
    above = _math.cast(x > threshold, x.dtype)
    return x * above + value * (1.0 - above)


def maxout(x, groups: int, axis: int = 1, name=None):
    """The maximum over each run of `groups` consecutive channels along `axis` (C channels
    become C / groups).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.maxout(rt.to_tensor([[1.0, 4.0, 3.0, 2.0]]), 2).tolist()
    [[4.0, 3.0]]
    """
    nd = len(x.shape)
    axis = axis % nd
    c = x.shape[axis]
    if c != -1 and c % groups:
        raise ValueError(f"maxout: x has {c} channels on axis {axis}, not a multiple of "
                         f"groups {groups}")
    shape = [0] * axis + [-1, groups] + [0] * (nd - axis - 1)
    runs = _shape.reshape(x, shape[:axis + 2] + [d for d in x.shape[axis + 1:]])
    return _reduce.max(runs, axis + 1)


def gumbel_softmax(x, temperature: float = 1.0, hard: bool = False, axis: int = -1,
                   name=None):
    """A sample from the Gumbel-softmax distribution over `axis`: softmax((x + g) /
    temperature) with Gumbel noise g; `hard=True` gives one-hot vectors whose gradient is the
    soft sample's (straight-through). The noise comes from the generator seeded by
    `rt.seed`."""
    if temperature <= 0:
        raise ValueError(f"gumbel_softmax: temperature must be > 0, got {temperature}")
    size = _shape.shape(x) if -1 in x.shape else list(x.shape)
    u = _random.uniform(size, dtype=x.dtype.name, min=1e-10, max=1.0)
    soft = _nn.softmax((x - _math.log(-_math.log(u))) / temperature, axis)
    if not hard:
        return soft
    index = _shape.unsqueeze(_reduce.argmax(soft, axis), axis)
    one_hot = _put(soft * 0.0, index, 1.0, axis)
    return one_hot - soft.detach() + soft
