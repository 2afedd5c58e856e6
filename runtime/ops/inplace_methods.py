"""Paddle's in-place tensor methods (`x.add_(y)`, `x.scale_(2.0)`, `w.zero_()`, `b.fill_(0.1)`,
`w.uniform_(-a, a)`): the out-of-place op's value written into `x` (`inplace.write_into`), and
`x` returned, so chained calls and `p.add_(...)` under `no_grad` in a hand-written update rule
work as in Paddle.

As in Paddle, the result keeps `x`'s shape and dtype: a broadcast that would grow `x` is a
`ValueError`, and a leaf tensor that requires grad refuses an in-place write outside `no_grad`
(`RuntimeError`, from `Tensor._inplace_update`). Inside converted code the Variable handle is
re-pointed at the new value, and a captured tensor (a parameter) is written when the program runs.
"""
from __future__ import annotations

from .. import backend, core
from .inplace import write_into
from .registry import STATE


def _written(x, value, name: str):
    if list(value.shape) != list(x.shape):
        raise ValueError(f"{name}: the result has shape {list(value.shape)} but the tensor "
                         f"written in place has shape {list(x.shape)} (an in-place op cannot "
                         f"broadcast its tensor to a larger shape)")
    if value.dtype != x.dtype:
        value = value.astype(x.dtype)
    write_into(x, value)
    return x


def _before(x):
    """What the op reads: in eager mode a handle on `x`'s value and history now, since `x`
    itself is about to be rebound (`x[...] = v` does the same: the op's backward must see the
    version it used)."""
    if STATE.builder is None and isinstance(x, core.TensorBase) and x._node is not None:
        return x._shallow_copy()
    return x


def _from(method: str):
    name = method + "_"

    def inplace(x, *args, **kwargs):
        return _written(x, getattr(_before(x), method)(*args, **kwargs), name)

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"`x.{method}(...)` written into `x`; returns `x`."
    return inplace


def zero_(x):
    """Set every element of `x` to 0; returns `x`."""
    from .creation import zeros_like
    return _written(x, zeros_like(x), "zero_")


def fill_(x, value):
    """Set every element of `x` to `value`; returns `x`."""
    from .creation import full_like
    return _written(x, full_like(x, value), "fill_")


def uniform_(x, min=-1.0, max=1.0, seed=0):  # noqa: A002 (Paddle's argument names)
    """Fill `x` with values drawn uniformly from [min, max); returns `x`."""
    from .random import uniform
    return _written(x, uniform(x.shape, dtype=x.dtype, min=min, max=max, seed=seed), "uniform_")


_OUT_OF_PLACE = ("add", "subtract", "multiply", "divide", "pow", "scale", "clip", "exp", "sqrt",
                 "rsqrt", "tanh", "abs", "ceil", "floor", "round", "reciprocal", "neg", "sin",
                 "cos", "log")

METHODS = {m + "_": _from(m) for m in _OUT_OF_PLACE}
METHODS.update(zero_=zero_, fill_=fill_, uniform_=uniform_)

__all__: list = []


def set_traced(self, value) -> None:
    """`t.set_value(v)` of a tensor computed in the program (a gradient before the
    optimizer's step, `p.grad.set_value(p.grad * scale)`): later reads of this handle
    read `v`'s values, cast to its dtype, with no gradient path through them, as eager's
    overwrite of the tensor's data. A value of another shape is eager's ValueError; a
    handle that needs a gradient cannot take values that have none."""
    from .math import assign, cast
    if self.kind == "array":
        raise AttributeError("'list' object has no attribute 'set_value'")
    new = assign(value if isinstance(value, (core.TensorBase, core.VariableBase)) else
                 core.wrap(backend.XP.asarray(value)))
    if list(new.shape) != list(self.shape) and -1 not in [*self.shape, *new.shape]:
        raise ValueError(f"set_value: value has shape {list(new.shape)} but the tensor "
                         f"has shape {list(self.shape)}")
    if not self.stop_gradient:
        raise TypeError(
            "set_value() inside converted code on a tensor that needs a gradient: eager "
            "code overwrites its values and keeps its gradient path, which a program "
            "cannot express. Compute the new tensor (`t = v`), or detach it first.")
    if new.dtype != self.dtype:
        new = cast(new, self.dtype)
    new.stop_gradient = True
    write_into(self, new)  # (`builder.overwrote`: a branch or loop gives it out)
