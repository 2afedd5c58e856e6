"""Lists whose length a tensor `if` decides, and mixed lists grown in graph loops (issue 35,
item 5): lists of tensors or of Python numbers of one type that the branches leave with
different lengths become tensor arrays (Python numbers were refused), returned or used after
the `if`; a loop counter appended to a list of float tensors is that float; a float tensor
appended to a list of Python ints is a StateChangeError at the `append` (was an internal
`array_write: x is f32[] but array 't5' holds int64`). Eager vs static vs NumPy on both
paths through one program, gradients against finite differences."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line

INPUTS = [np.array([1.0, 2.0], "float32"), np.array([-1.0, 0.5], "float32")]


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def terms(x):
    out = [x]
    if x.sum() > 0:
        out.append(x * x)
        out.append(x * 3.0)
    total = out[0] * 0.0
    for t in out:
        total = total + t
    return total, len(out)


def test_tensor_lists_of_branch_dependent_length_with_gradients():
    static = d2s.to_static(terms, full_graph=True)
    for xv in INPUTS:
        positive = xv.sum() > 0

        def f(v, positive=positive):
            return float((v + v * v + 3 * v).sum() if positive else v.sum())
        want = (xv + xv * xv + 3 * xv if positive else xv, 3 if positive else 1)
        for fn in (terms, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            total, n = fn(x)
            np.testing.assert_allclose(total.numpy(), want[0], rtol=1e-6)
            assert int(n) == want[1]
            total.sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, xv.astype("float64")),
                                       rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def scores(x):
    if x.sum() > 0:
        return [x, x * 2.0]
    return [x]


def test_returned_lists_of_different_lengths():
    static = d2s.to_static(scores, full_graph=True)
    for xv in INPUTS:
        want = [xv, xv * 2.0] if xv.sum() > 0 else [xv]
        for fn in (scores, static):
            got = fn(rt.to_tensor(xv))
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g.numpy(), w)


def thresholds(x):
    levels = []
    if x.sum() > 0:
        levels.append(0.5)
        levels.append(1.5)
    return x * (1.0 + len(levels)), sum(levels)


def test_python_numbers_appended_in_one_branch():
    static = d2s.to_static(thresholds, full_graph=True)
    for xv in INPUTS:
        k = 2 if xv.sum() > 0 else 0
        for fn in (thresholds, static):
            y, s = fn(rt.to_tensor(xv))
            np.testing.assert_allclose(y.numpy(), xv * (1.0 + k))
            assert float(s) == (2.0 if k else 0.0)
    assert len(static.program_cache) == 1


def with_positions(x, n):
    out = [x.sum()]
    for i in range(n):
        out.append(i)  # noqa: PERF402  (a Python int in eager code)
    return len(out), out[-1] * 1.0


def with_float_positions(x, n):
    out = [x.sum()]
    for i in range(n):
        out.append(rt.to_tensor(i, dtype="float32"))  # (a tensor, as the error advises)
    return len(out), out[-1] * 1.0


def test_a_counter_appended_to_a_list_of_float_tensors_is_refused_where_read():
    """Eager's list holds the Python int beside the float32 tensors; an array of float32
    items would give it back as a float32 tensor (it did, silently). The list converts (each
    item's Python type kept beside it); reading an item that is such an int is refused on
    the runs where it is one, at the line of the read."""
    x = rt.to_tensor([1.0, 2.0])
    assert type(with_positions(x, rt.to_tensor(2))[1]) is float  # (eager: the int times 1.0)
    static = d2s.to_static(with_positions, full_graph=True)
    n, last = static(x, rt.to_tensor(0))
    assert int(n) == 1 and isinstance(last, rt.Tensor) and float(last) == 3.0
    with pytest.raises(TypeError) as info:
        static(x, rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(with_positions, "return len"))
    assert "is a Python int or bool on this run" in text
    assert "rt.to_tensor(v, dtype='float32')" in text
    static = d2s.to_static(with_float_positions, full_graph=True)
    for k in (0, 1, 3):
        want = (1 + k, 3.0 if k == 0 else float(k - 1))
        for fn in (with_float_positions, static):
            n, last = fn(x, rt.to_tensor(k))
            assert int(n) == want[0] and float(last) == want[1]
    assert len(static.program_cache) == 1


def ints_then_means(x, n):
    out = [0, 1]
    for i in range(n):
        out.append(x.mean())
    return out


def test_float_tensors_appended_to_a_list_of_ints_keep_the_ints():
    # (refused at the append before: the ints are kept beside the tensors, each its type)
    x = rt.to_tensor([1.0, 2.0])
    static = d2s.to_static(ints_then_means, full_graph=True)
    for k in (0, 1, 3):
        for fn in (ints_then_means, static):
            out = fn(x, rt.to_tensor(k))
            assert [type(v) for v in out[:2]] == [int, int] and out[:2] == [0, 1]
            assert all(isinstance(v, rt.Tensor) and v.dtype == rt.float32 and float(v) == 1.5
                       for v in out[2:]) and len(out) == 2 + k
    assert len(static.program_cache) == 1


def weights(x, n):
    ws = []
    for i in range(n):
        ws.append(0.25)
        ws.append(1)  # a Python int into a list the loop makes an array of floats
    return x * sum(ws), len(ws)


def test_a_python_int_appended_to_a_list_of_floats_in_a_graph_loop():
    # found by the observe fuzzer: array_write: x is i64[] but array 't20' holds float32
    static = d2s.to_static(weights, full_graph=True)
    xv = np.array([1.0, -2.0], "float32")
    for k in (1, 3):
        for fn in (weights, static):
            y, n = fn(rt.to_tensor(xv), rt.to_tensor(k))
            np.testing.assert_allclose(y.numpy(), xv * 1.25 * k, rtol=1e-6)
            assert int(n) == 2 * k
    assert len(static.program_cache) == 1
