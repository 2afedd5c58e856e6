"""Items 6 and 8: loop state carried through a graph loop keeps the types Python gives it.

Python numbers keep Python's precision (float64 / int64) unless the user's code combines them
with a lower-precision tensor; a value whose type the body changes the way Python changes it
(int -> float by `/`, int32 -> int64 by promotion) is promoted before the loop."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def _value(v):
    return np.asarray(v.numpy()) if hasattr(v, "numpy") else np.asarray(v)


def _check(fn, inputs, exact=True):
    static = d2s.to_static(fn)
    for args in inputs:
        args = [rt.to_tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        want, got = fn(*args), static(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got, strict=True):
            if exact:
                assert _value(g).item() == _value(w).item(), (args, w, g)
            else:
                np.testing.assert_allclose(_value(g), _value(w), rtol=1e-6)
            if hasattr(w, "dtype"):
                assert str(g.dtype) == str(w.dtype)
    return static


def float_accumulator(x):
    acc = 2.0 ** 24
    big = 0
    i = rt.zeros([], "int64")
    while i < x.shape[0]:  # a tensor loop: acc and big are carried as graph values
        if x[i] > 0:
            acc = acc + 1.0
            big = big + 2 ** 40
        i = i + 1
    return acc, big


def test_python_float_keeps_float64_precision():
    static = _check(float_accumulator, [(np.ones(3, "float32"),),
                                        (np.array([1, -1, 1], "float32"),)])
    acc, big = static(rt.ones([3]))
    assert type(acc) is float and type(big) is int  # Python numbers, as eager gives
    assert acc == 2.0 ** 24 + 3  # float32 would round this away


def float_meets_float32_tensor(x):
    total = 0.5
    i = rt.zeros([], "int64")
    while i < 3:
        total = total + x[i]  # eager: float + float32 tensor -> float32 tensor
        i = i + 1
    return total


def test_python_float_combined_with_float32_tensor_is_float32():
    static = _check(float_meets_float32_tensor, [(np.arange(3, dtype="float32"),)],
                    exact=False)
    assert static(rt.ones([3])).dtype == rt.float32


def halving_step(x):
    step = 1
    while x.sum() > step:  # step: int on entry, float after the first `/`
        step = step / 2 + x.mean() * 0  # a tensor from here on
        x = x / 4
    return step


def int_to_float_python(n):
    step = 1
    i = rt.zeros([], "int64")
    while i < n:
        step = step / 2
        i = i + 1
    return step


def test_int_becomes_float_as_in_python():
    _check(int_to_float_python, [(rt.to_tensor(3),), (rt.to_tensor(0),)])
    _check(halving_step, [(np.full(2, 8.0, "float32"),), (np.full(2, 0.1, "float32"),)],
           exact=False)


def int32_promotes(x):
    k = rt.zeros([], "int32")
    i = rt.zeros([], "int64")
    while i < x.shape[0]:
        k = k + rt.cast(x[i], "int64")  # int32 + int64 -> int64
        i = i + 1
    return k


def test_int32_state_promoted_to_int64():
    static = _check(int32_promotes, [(np.array([1, 2, 3], "float32"),),
                                     (np.array([5, 0, -1], "float32"),)])
    assert static(rt.ones([3])).dtype == rt.int64


def for_range_float(x):
    scale = 1.0
    for i in range(x.shape[0]):
        if x[i] > 0:  # a tensor if inside a Python loop: scale becomes a graph value
            scale = scale * 3.0
    return scale


def test_float_through_tensor_if_in_python_loop():
    _check(for_range_float, [(np.array([1, -1, 2], "float32"),),
                             (np.array([-1, -1, -2], "float32"),)], exact=False)


@pytest.mark.parametrize("start", [1, True])
def test_bool_and_int_state(start):
    def f(x):
        flag = start
        i = rt.zeros([], "int64")
        while i < x.shape[0]:
            flag = flag and bool(x[i] > 0) if False else flag  # Python branch: unchanged
            i = i + 1
        return flag, i
    static = d2s.to_static(f)
    flag, i = static(rt.ones([2]))
    assert bool(flag) is bool(start) or flag.item() == start
    assert i.item() == 2
