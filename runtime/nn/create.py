"""`rt.create_parameter`: a Parameter made outside a Layer (Paddle's `paddle.create_parameter`)."""
from __future__ import annotations

from .layer import Layer
from .param_attr import ParamAttr


def create_parameter(shape, dtype, name=None, attr=None, is_bias: bool = False,
                     default_initializer=None):
    """A trainable Parameter of `shape` and `dtype`, initialised as `Layer.create_parameter`
    does (XavierUniform for weights, zeros for biases, or `default_initializer` / `attr`).

    >>> import runtime as rt
    >>> w = rt.create_parameter([2, 3], "float32")
    >>> w.shape, w.stop_gradient
    ([2, 3], False)
    """
    if attr is None and name is not None:
        attr = ParamAttr(name=name)
    return Layer().create_parameter(list(shape), attr=attr, dtype=dtype, is_bias=is_bias,
                                    default_initializer=default_initializer)
