"""Programs the control-flow fuzzer (`tests/fuzz`) found failing, kept as regression tests:
eager against static over inputs that take different paths through one program.

- the index of a `for ... in range` loop that turns into a `while` op part-way (a tensor
  `break`) stands for a Python int, as in eager mode: `0.0 + index` stays float64;
- a value standing for a Python float (carried through a graph loop, under `no_grad`) meeting
  a float32 tensor in the other branch of a tensor `if` merges as float32 (eager:
  `tensor + python_float` is float32), also inside a returned tuple (was an OpTypeError:
  cond rejected the float32/float64 mix), also when a tensor `if` in the loop body updates
  the number (was float64 where eager gives float32: the disagreement class of the 2000
  campaign); a name bound in a `try` body whose run-time check failed, rebound later (was
  a Python UnboundLocalError while converting: the body's guard dropped the dead name)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def index_feeds_python_float(x):
    k = 0.0
    for j in range(4):
        if x[j] < -0.5:
            pos = j
            break
    else:
        pos = -1
    return x * 1.0, k + pos


def python_float_through_no_grad(x):
    y = x * 1.0
    k = 0.0
    for j in range(3):
        if x[j] > -0.5:
            return y * (j + 1), k + j
    with rt.no_grad():
        s = 0.5
        i = rt.zeros([], "int64")
        while i < 2:
            s = s + 0.25
            i = i + 1
        if (y * x).sum() < -2.0:
            s = y.sum() * 0.0 + s
    k = k + s
    return y * s, k


def float_loop_with_if_meets_float32(x):
    y = x * 1.0
    k = 0.0
    i = rt.zeros([], "int64")
    acc = 1e-3
    while i < 3:
        if x[i] > 0:  # a tensor `if` in the body keeps acc a Python float
            acc = acc + 0.25
        i = i + 1
    k = k + acc
    with rt.no_grad():
        s = 0.5
        if y.sum() > -2.0:
            s = y.sum() * 0.0 + s
    return y, k + s  # float32 when s is a tensor, as in eager mode


def name_bound_in_a_failed_try_then_rebound(x):
    y = x * 1.0
    k = 0.0
    try:
        if x.mean() < 4.0:
            raise ValueError("first")
        i = rt.zeros([], "int64")
        while i < 2:
            y = y + x[i]
            i = i + 1
    except ValueError:
        y = x * 3.0
    if x[0] > 0.5:
        raise KeyError("second")
    try:
        if x.mean() < 4.0:
            raise ValueError("third")
        i = rt.zeros([], "int64")
        while i < 2:
            y = y + x[i]
            i = i + 1
    except ValueError:
        y = x * 2.0
    with rt.no_grad():
        s = 0.5
        i = rt.zeros([], "int64")  # unbound before on the failed paths: never read there
        while i < 2:
            s = s + 0.25
            i = i + 1
    return y * s, k + s


INPUTS = [[-3.0, 0.5, 1.0, -3.0], [-0.25, 0.0, -1.0, 3.0], [-3.0, -1.0, -3.0, 0.5],
          [-1.0, -1.0, -1.0, -1.0], [1.0, 1.0, 1.0, 1.0]]


@pytest.mark.parametrize("fn", [index_feeds_python_float, python_float_through_no_grad,
                                float_loop_with_if_meets_float32,
                                name_bound_in_a_failed_try_then_rebound])
def test_fuzz_found_programs_match_eager(fn):
    static = d2s.to_static(fn)
    for row in INPUTS:
        x = rt.to_tensor(np.asarray(row, "float32"))
        try:
            (ey, ek) = fn(x)
        except KeyError:
            with pytest.raises(KeyError):
                static(x)
            continue
        (sy, sk) = static(x)
        np.testing.assert_allclose(sy.numpy(), ey.numpy(), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(sk.numpy() if hasattr(sk, "numpy") else sk),
                                   np.asarray(ek.numpy() if hasattr(ek, "numpy") else ek),
                                   rtol=1e-6)
    assert len(static.program_cache) == 1


def test_python_float_meeting_float32_is_float32_as_in_eager():
    x = rt.to_tensor([1.0, -0.25, -0.25, 0.0])
    _, k = d2s.to_static(float_loop_with_if_meets_float32)(x)
    assert k.dtype == rt.float32 and k.item() == float_loop_with_if_meets_float32(x)[1].item()


def test_loop_index_keeps_python_precision():
    _, k = d2s.to_static(index_feeds_python_float)(rt.to_tensor([1.0, 1.0, -2.0, 1.0]))
    assert type(k) is float and k == 2.0  # a Python float, as eager gives
