"""`finally` decides the result as in Python: a `return` in it overrides the `try`'s, and a
`break` or `continue` in it discards a pending return; with tensor and Python conditions,
for tensors and plain Python values."""
# ruff: noqa: B012  (jumps in `finally` are what is tested)
import numpy as np
import pytest

import d2s
import runtime as rt


def override(x, flag):
    try:
        return x + 1
    finally:
        if flag:
            return x * 10


def python_values(x, flag):
    try:
        return 1
    finally:
        if x.mean() > 0:
            return 2


def continue_cancels_return(x, flag):
    total = x * 0
    for i in range(3):
        try:
            total = total + i
            if x.mean() > 0:
                return total
        finally:
            if flag:
                continue
    return total - 100


def continue_in_tensor_while(x, flag):
    i = rt.zeros([], "int64")
    out = x
    while i < 3:
        i += 1
        try:
            out = out + 1
            return out
        finally:
            if x.mean() > 0:
                continue
    return out * 100


def break_cancels_return(x, flag):
    out = x
    for i in range(4):
        try:
            out = out + 1
            if x.sum() > i:
                return out
        finally:
            if flag:
                break
    return -out


def ref_override(x, flag):
    return x * 10 if flag else x + 1


def ref_python_values(x, flag):
    return 2 if x.mean() > 0 else 1


def ref_continue_cancels_return(x, flag):
    if flag or x.mean() <= 0:
        return np.zeros_like(x) + 3 - 100
    return np.zeros_like(x)


def ref_continue_in_tensor_while(x, flag):
    return (x + 3) * 100 if x.mean() > 0 else x + 1


def ref_break_cancels_return(x, flag):
    if flag:
        return -(x + 1)
    return x + 1 if x.sum() > 0 else -(x + 4)


def value(v):
    return v.numpy() if isinstance(v, rt.Tensor) else np.asarray(v)


CASES = [(override, ref_override), (python_values, ref_python_values),
         (continue_cancels_return, ref_continue_cancels_return),
         (continue_in_tensor_while, ref_continue_in_tensor_while),
         (break_cancels_return, ref_break_cancels_return)]


@pytest.mark.parametrize("fn, reference", CASES, ids=[c[0].__name__ for c in CASES])
def test_finally_jumps_follow_python(fn, reference):
    static = d2s.to_static(fn)
    for data in ([1.0, 2.0], [-1.0, -2.0], [0.5, -0.25]):
        x = np.array(data, "float32")
        for flag in (True, False):
            want = reference(x, flag)
            eager, got = fn(rt.to_tensor(x), flag), static(rt.to_tensor(x), flag)
            np.testing.assert_allclose(value(eager), want)
            np.testing.assert_allclose(value(got), want)
