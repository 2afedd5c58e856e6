"""Fields of argument objects read by a trace are guarded: the caller changing `cfg.scale`
between calls gets a program traced for the new value, as eager code reads it anew. Objects
that are unhashable (a plain dataclass, `__eq__` without `__hash__`) are keyed by identity."""
import dataclasses

import numpy as np

import d2s
import runtime as rt


class Config:
    def __init__(self, scale, mode="add", inner=None):
        self.scale = scale
        self.mode = mode
        self.inner = inner


@dataclasses.dataclass
class Options:  # eq=True without frozen: `__hash__` is None
    bias: float
    steps: int


def scaled(x, cfg):
    y = x * cfg.scale
    if cfg.mode == "add":
        y = y + cfg.inner.shift
    if y.mean() > 0:  # a tensor branch in the same program
        y = y * 2.0
    return y


def helper(x, opts):
    for _ in range(opts.steps):
        x = x + opts.bias
    return x


def through_helper(x, opts):
    return helper(x, opts) * 0.5


def reference(x, scale, mode, shift):
    y = x * scale
    if mode == "add":
        y = y + shift
    return y * 2.0 if y.mean() > 0 else y


def test_fields_changed_between_calls_are_read_again():
    static = d2s.to_static(scaled)
    inner = Config(scale=None)
    inner.shift = 1.0
    cfg = Config(scale=2.0, inner=inner)
    cases = [(2.0, "add", 1.0, [1.0, 2.0]), (-3.0, "add", 1.0, [1.0, 2.0]),
             (-3.0, "mul", 1.0, [1.0, 2.0]), (-3.0, "add", -4.0, [0.5, 0.5]),
             (2.0, "add", 1.0, [-5.0, 1.0])]
    for scale, mode, shift, data in cases:
        cfg.scale, cfg.mode, inner.shift = scale, mode, shift
        x = np.array(data, "float32")
        want = reference(x, scale, mode, shift)
        np.testing.assert_allclose(scaled(rt.to_tensor(x), cfg).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(x), cfg).numpy(), want)
    assert static._cache.traces == 4  # one per distinct (scale, mode, shift); the last reuses


def test_fields_read_by_a_called_function_are_guarded():
    static = d2s.to_static(through_helper)
    opts = Options(bias=1.0, steps=2)
    x = np.array([1.0, -2.0], "float32")
    for bias, steps in [(1.0, 2), (0.5, 2), (0.5, 3), (1.0, 2)]:
        opts.bias, opts.steps = bias, steps
        want = (x + bias * steps) * 0.5
        np.testing.assert_allclose(through_helper(rt.to_tensor(x), opts).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(x), opts).numpy(), want)
    assert static._cache.traces == 3


def test_unhashable_argument_is_keyed_by_identity():
    static = d2s.to_static(helper)
    a, b = Options(bias=1.0, steps=1), Options(bias=1.0, steps=1)
    x = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    np.testing.assert_allclose(static(x, a).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(static(x, b).numpy(), [2.0, 3.0])
    a.steps = 3
    np.testing.assert_allclose(static(x, a).numpy(), [4.0, 5.0])
    np.testing.assert_allclose(static(x, b).numpy(), [2.0, 3.0])


def make_counter_object(x):
    opts = Options(bias=3.0, steps=1)
    y = helper(x, opts)
    opts.bias = 4.0  # an object made by the call itself: not guarded, made anew every call
    return y + opts.bias


def test_objects_made_inside_the_call_do_not_retrace():
    static = d2s.to_static(make_counter_object)
    x = rt.to_tensor(np.array([1.0], "float32"))
    for _ in range(3):
        np.testing.assert_allclose(static(x).numpy(), [8.0])
    assert static._cache.traces == 1
