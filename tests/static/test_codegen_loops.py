"""Compiled loops whose counter is a Python int (`runtime/program/codegen_loops.py`) and the
ops emitted as direct array calls (`runtime/program/codegen_direct.py`): the same values as
eager code and NumPy, bit for bit where the kernels are compared, on inputs that take
different paths through one program (no iterations, some, a wrapped-around counter)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import static
from runtime.ops.registry import OPS
from tests.finite_differences import numeric_grad


def _source(sf) -> str:
    return sf.program_cache.last_entry.compiled.source


def _i64(v):
    return rt.to_tensor(np.array([v], "int64"))


def weighted_sum(x, n):
    total = x * 0.0
    for i in range(n):  # the counter read as a tensor in the body
        total = total + x * i
    return total


@pytest.mark.parametrize("n", [-3, 0, 1, 5])
def test_range_loop_reading_its_counter(n):
    f = d2s.to_static(weighted_sum)
    x = np.array([1.0, -2.0, 0.5], "float32")
    got = f(rt.to_tensor(x), _i64(n))
    want = x * float(sum(range(max(n, 0))))
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(got.numpy(), weighted_sum(rt.to_tensor(x), _i64(n)).numpy())
    assert "i_v_" in _source(f)  # the counter is a Python int in the compiled loop


def countdown(x, start):
    i = start
    steps = rt.zeros([1], "int64")
    while i > 0:  # `subtract` steps, counter on the left
        x = x * 0.5
        i -= 2
        steps += 1
    while 3 > steps:  # counter on the right of the comparison, a literal bound
        x = x + 1.0
        steps += 1
    return x, i, steps  # both final counters read after their loops


@pytest.mark.parametrize("start", [-1, 0, 1, 4, 7])
def test_counters_compared_and_stepped_every_way_and_read_after(start):
    f = d2s.to_static(countdown)
    x = np.array([8.0, -4.0], "float32")
    got = [t.numpy() for t in f(rt.to_tensor(x), _i64(start))]
    eager = [t.numpy() for t in countdown(rt.to_tensor(x), _i64(start))]
    k = max(0, -(-start // 2))  # halvings
    want_x = x * 0.5 ** k + max(0, 3 - k)
    np.testing.assert_array_equal(got[0], want_x)
    for g, e in zip(got, eager, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[1], [start - 2 * k])
    np.testing.assert_array_equal(got[2], [max(k, 3)])
    assert _source(f).count("i_v_") >= 4


def wrapping(x, start, stop):
    i = start
    while i != stop:  # an int8 counter that passes 127 and wraps to -128, as NumPy's does
        i += 1
        x = x + 1.0
    return x, i


def test_an_int8_counter_wraps_around_as_numpy_does():
    f = d2s.to_static(wrapping)
    start = rt.to_tensor(np.array(125, "int8"))
    stop = rt.to_tensor(np.array(-127, "int8"))
    x = rt.zeros([2])
    out, i = f(x, start, stop)
    e_out, e_i = wrapping(x, start, stop)
    np.testing.assert_array_equal(out.numpy(), [4.0, 4.0])  # 126, 127, -128, -127
    np.testing.assert_array_equal(out.numpy(), e_out.numpy())
    assert i.numpy().dtype == np.int8 and i.numpy().shape == ()
    np.testing.assert_array_equal(i.numpy(), e_i.numpy())
    assert "-= 256" in _source(f)


def test_a_counter_compared_with_a_float_stays_an_array():
    @d2s.to_static
    def f(x):
        i = rt.zeros([1], "int64")
        while i < 2.5:
            x = x * 2.0
            i += 1
        return x

    np.testing.assert_array_equal(f(rt.ones([2])).numpy(), [8.0, 8.0])
    assert "i_v_" not in _source(f)


def test_gradient_through_a_range_loop_of_a_training_program():
    @d2s.to_static
    def f(x, n):
        y = x
        for _ in range(n):
            y = y * 1.5 + x
        return rt.sum(y * y)

    x = np.array([0.3, -0.7], "float64")
    xt = rt.to_tensor(x)
    xt.stop_gradient = False
    f(xt, _i64(3)).backward()

    def ref(v):
        y = v
        for _ in range(3):
            y = y * 1.5 + v
        return float(np.sum(y * y))

    np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(ref, x), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [[7], [3, 5], [1]])
def test_mean_over_all_elements_is_numpys_mean_bit_for_bit(dtype, shape):
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype) * 1e3
    main = static.Program()
    with static.program_guard(main):
        out = rt.mean(static.data("a", shape, dtype))
    got, = static.Executor().run(main, {"a": a}, [out])
    src = static.Executor().compiled(main, (out.name,)).source
    assert "K" not in src.split("):")[0]  # no kernel call left
    want = OPS["mean"].kernel(np, a)
    assert got.dtype == want.dtype and got.shape == () and got.__class__ is np.ndarray
    assert got.tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("value,dtype,shape", [(0, "int64", []), (3, "int32", [2, 3]),
                                               (1.5, "float32", [4]), (True, "bool", [1])])
def test_full_of_a_literal_is_the_kernels_array(value, dtype, shape):
    main = static.Program()
    with static.program_guard(main):
        out = rt.full(shape, value, dtype)
    got, = static.Executor().run(main, {}, [out])
    want = OPS["full"].kernel(np, value, shape=tuple(shape), dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert "K" not in static.Executor().compiled(main, (out.name,)).source.split("):")[0]
