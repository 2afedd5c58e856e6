"""Parameter initializers with Paddle's formulas and defaults (`rt.nn.initializer`).

An initializer draws on the host from the process-wide generator that `rt.seed(n)` resets, so
a seeded script builds the same parameters every run, then moves the values to the device.
Fans follow Paddle: a 2-D weight `[in, out]` (Linear) has fan_in = in, fan_out = out; a conv
weight `[out, in, *kernel]` has fan_in = in * prod(kernel), fan_out = out * prod(kernel).

>>> import runtime as rt
>>> w = rt.nn.Linear(4, 3, weight_attr=rt.nn.initializer.Constant(0.5)).weight
>>> float(w.sum())
6.0
"""
from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..dtypes import convert_dtype
from ..ops import random as _random


def compute_fans(shape) -> tuple[int, int]:
    """(fan_in, fan_out) of a parameter shape, as Paddle computes them."""
    shape = list(shape)
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (Paddle / PyTorch values).

    >>> round(calculate_gain('relu'), 4)
    1.4142
    """
    linear = ("linear", "sigmoid", "conv1d", "conv2d", "conv3d", "conv1d_transpose",
              "conv2d_transpose", "conv3d_transpose")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}")


_GLOBAL: dict = {"weight": None, "bias": None}


def set_global_initializer(weight_init: Initializer | None,
                           bias_init: Initializer | None = None) -> None:
    """Initialise every parameter created from now on with `weight_init` (weights) and
    `bias_init` (biases), unless its ParamAttr names an initializer. None restores the
    layers' own defaults.

    >>> import runtime as rt
    >>> rt.nn.initializer.set_global_initializer(rt.nn.initializer.Constant(0.5))
    >>> float(rt.nn.Linear(2, 2).weight.sum())
    2.0
    >>> rt.nn.initializer.set_global_initializer(None)
    """
    for kind, init in (("weight", weight_init), ("bias", bias_init)):
        if init is not None and not isinstance(init, Initializer):
            raise TypeError(f"set_global_initializer: {kind}_init must be an Initializer or "
                            f"None, got {type(init).__name__}")
        _GLOBAL[kind] = init


def global_initializer(is_bias: bool) -> Initializer | None:
    """The initializer set by `set_global_initializer` for biases or weights, if any."""
    return _GLOBAL["bias" if is_bias else "weight"]


class Initializer:
    """Base class: `generate(shape, dtype)` returns a host NumPy array; calling the
    initializer on a parameter overwrites the parameter's values in place."""

    def generate(self, shape, dtype) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__}.generate")

    def __call__(self, param, block=None):
        value = self.generate(param.shape, param.dtype)
        param.set_value(backend.asarray(value))
        return param

    def _cast(self, values, dtype) -> np.ndarray:
        return np.asarray(values).astype(convert_dtype(dtype).np)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Constant(Initializer):
    """Fill with `value` (default 0.0)."""

    def __init__(self, value: float = 0.0):
        self.value = value

    def generate(self, shape, dtype):
        return np.full(shape, self.value, dtype=convert_dtype(dtype).np)


class Assign(Initializer):
    """Fill with a given array (a NumPy array, list or Tensor) of the parameter's shape."""

    def __init__(self, value, name=None):
        self.value = np.asarray(value)

    def generate(self, shape, dtype):
        if list(self.value.shape) != list(shape):
            raise ValueError(f"Assign initializer: value has shape {list(self.value.shape)} "
                             f"but the parameter has shape {list(shape)}")
        return self._cast(self.value, dtype)


class Normal(Initializer):
    """Draw from N(mean, std**2)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, name=None):
        self.mean, self.std = mean, std

    def generate(self, shape, dtype):
        return self._cast(_random.host_generator().normal(self.mean, self.std, shape), dtype)


class TruncatedNormal(Initializer):
    """Draw from N(mean, std**2) restricted to [a, b] (default: mean -/+ 2 std, as Paddle 2.x)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float | None = None,
                 b: float | None = None, name=None):
        self.mean, self.std = mean, std
        self.a = mean - 2 * std if a is None else a
        self.b = mean + 2 * std if b is None else b

    def generate(self, shape, dtype):
        rng = _random.host_generator()
        out = rng.normal(self.mean, self.std, shape)
        bad = (out < self.a) | (out > self.b)
        while bad.any():  # resampling keeps the exact truncated distribution
            out[bad] = rng.normal(self.mean, self.std, int(bad.sum()))
            bad = (out < self.a) | (out > self.b)
        return self._cast(out, dtype)


class Uniform(Initializer):
    """Draw from U(low, high)."""

    def __init__(self, low: float = -1.0, high: float = 1.0, name=None):
        self.low, self.high = low, high

    def generate(self, shape, dtype):
        return self._cast(_random.host_generator().uniform(self.low, self.high, shape), dtype)


class _Xavier(Initializer):
    """What the Glorot initializers share: fans from the shape unless given."""

    def __init__(self, fan_in: float | None = None, fan_out: float | None = None,
                 gain: float = 1.0, name=None):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def _fans(self, shape) -> tuple:
        fi, fo = compute_fans(shape)
        return (self.fan_in if self.fan_in is not None else fi,
                self.fan_out if self.fan_out is not None else fo)


class XavierUniform(_Xavier):
    """U(-limit, limit), limit = gain * sqrt(6 / (fan_in + fan_out)) (Glorot). The default
    initializer for weights that a layer gives no other default."""

    def generate(self, shape, dtype):
        fi, fo = self._fans(shape)
        limit = self.gain * math.sqrt(6.0 / (fi + fo))
        return self._cast(_random.host_generator().uniform(-limit, limit, shape), dtype)


class XavierNormal(_Xavier):
    """N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))."""

    def generate(self, shape, dtype):
        fi, fo = self._fans(shape)
        std = self.gain * math.sqrt(2.0 / (fi + fo))
        return self._cast(_random.host_generator().normal(0.0, std, shape), dtype)


class _Kaiming(Initializer):
    """What the He initializers share: fan_in from the shape unless given, the gain of the
    nonlinearity."""

    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", name=None):
        self.fan_in, self.negative_slope, self.nonlinearity = fan_in, negative_slope, nonlinearity

    def _gain_and_fan_in(self, shape) -> tuple:
        fi = self.fan_in if self.fan_in is not None else compute_fans(shape)[0]
        return calculate_gain(self.nonlinearity, self.negative_slope), fi


class KaimingUniform(_Kaiming):
    """U(-limit, limit), limit = gain * sqrt(3 / fan_in) (He; gain sqrt(2) for relu)."""

    def generate(self, shape, dtype):
        gain, fi = self._gain_and_fan_in(shape)
        limit = gain * math.sqrt(3.0 / fi)
        return self._cast(_random.host_generator().uniform(-limit, limit, shape), dtype)


class KaimingNormal(_Kaiming):
    """N(0, std**2), std = gain / sqrt(fan_in)."""

    def generate(self, shape, dtype):
        gain, fi = self._gain_and_fan_in(shape)
        std = gain / math.sqrt(fi)
        return self._cast(_random.host_generator().normal(0.0, std, shape), dtype)


__all__ = [
    "Assign",
    "Constant",
    "Initializer",
    "KaimingNormal",
    "KaimingUniform",
    "Normal",
    "TruncatedNormal",
    "Uniform",
    "XavierNormal",
    "XavierUniform",
    "calculate_gain",
    "compute_fans",
    "global_initializer",
    "set_global_initializer",
]
