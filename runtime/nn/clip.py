"""Gradient clipping (`rt.nn.ClipGradByGlobalNorm`, `ClipGradByNorm`, `ClipGradByValue`).

An optimizer built with `grad_clip=...` calls the clip object on its list of
`(parameter, gradient)` pairs before updating, as Paddle does. The clips are written with ops
only, so they work on eager gradients and while a static training program is built.
Parameters with `need_clip = False` (see `ParamAttr`) are passed through unchanged.

>>> import runtime as rt
>>> fc = rt.nn.Linear(4, 2)
>>> opt = rt.optimizer.SGD(0.1, parameters=fc.parameters(),
...                        grad_clip=rt.nn.ClipGradByGlobalNorm(clip_norm=1.0))
"""
from __future__ import annotations

from ..dtypes import float32
from ..ops.math import cast, clip, maximum, sqrt, square
from ..ops.reduce import sum as reduce_sum


def _clipped(param) -> bool:
    return getattr(param, "need_clip", True)


def _map_clipped(params_grads, fn) -> list:
    """(p, fn(g)) for the gradients to clip; the others pass through."""
    return [(p, fn(g) if g is not None and _clipped(p) else g) for p, g in params_grads]


def _norm_factor(norm, clip_norm: float):
    """clip_norm / max(norm, clip_norm): what brings a norm down to at most clip_norm."""
    return clip_norm / maximum(norm, clip_norm)


def _scaled(g, factor):
    return g * (factor if factor.dtype == g.dtype else cast(factor, g.dtype))


def _sum_squares(g):
    """sum(g**2) in at least float32, so float16 gradients do not overflow."""
    if g.dtype.itemsize < 4:
        g = cast(g, float32)
    return reduce_sum(square(g))


class ClipGradBase:
    """Base class: `clip(params_grads)` returns new `(param, grad)` pairs."""

    def __call__(self, params_grads):
        return self._clip(list(params_grads))

    def _clip(self, params_grads):
        raise NotImplementedError(f"{type(self).__name__}._clip")


class ClipGradByGlobalNorm(ClipGradBase):
    """Scale all gradients by `clip_norm / max(global_norm, clip_norm)`, where global_norm is
    the L2 norm of all (clipped) gradients together: their direction is kept.

    >>> import runtime as rt
    >>> w = rt.Parameter(rt.zeros([2]).numpy())
    >>> clip = rt.nn.ClipGradByGlobalNorm(1.0)
    >>> [(p, g)] = clip([(w, rt.to_tensor([3.0, 4.0]))])
    >>> g.numpy().tolist()
    [0.6000000238418579, 0.800000011920929]
    """

    def __init__(self, clip_norm: float, group_name: str = "default_group",
                 auto_skip_clip: bool = False):
        self.clip_norm = float(clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def _clip(self, params_grads):
        squares = [_sum_squares(g) for p, g in params_grads if g is not None and _clipped(p)]
        if not squares:
            return params_grads
        total = squares[0]
        for s in squares[1:]:
            total = total + s
        factor = _norm_factor(sqrt(total), self.clip_norm)
        return _map_clipped(params_grads, lambda g: _scaled(g, factor))

    def __repr__(self):
        return f"ClipGradByGlobalNorm(global_clip_norm={self.clip_norm})"


class ClipGradByNorm(ClipGradBase):
    """Scale each gradient on its own so that its L2 norm is at most `clip_norm`."""

    def __init__(self, clip_norm: float):
        self.clip_norm = float(clip_norm)

    def _clip(self, params_grads):
        return _map_clipped(params_grads, lambda g: _scaled(
            g, _norm_factor(sqrt(_sum_squares(g)), self.clip_norm)))

    def __repr__(self):
        return f"ClipGradByNorm(clip_norm={self.clip_norm})"


class ClipGradByValue(ClipGradBase):
    """Clamp every gradient element to [min, max] (min defaults to -max)."""

    def __init__(self, max: float, min: float | None = None):
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise ValueError(f"ClipGradByValue: min ({self.min}) > max ({self.max})")

    def _clip(self, params_grads):
        return _map_clipped(params_grads, lambda g: clip(g, self.min, self.max))

    def __repr__(self):
        return f"ClipGradByValue(min={self.min}, max={self.max})"
