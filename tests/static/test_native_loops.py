"""Tensor loops run as one generated C function (`runtime/program/native_loops.py`): the same
values as the Python loop of the compiled program (`D2S_NATIVE=0`), eager code and NumPy, bit
for bit for + - * / and integer arithmetic, on inputs that take 0, 1 and many trips through
one program; loops that do not fit (a matmul in the body, a backward pass) keep the Python
loop, with the same values and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build, native_loops
from tests.finite_differences import numeric_grad

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")


def _i64(v):
    return rt.to_tensor(np.array([v], "int64"))


def _native_calls() -> int:
    return native_build.stats()["native_calls"]


def _both(fn, monkeypatch, *args):
    """(values with the loop in C, values with the Python loop, C calls made): each a list
    of NumPy arrays, from two programs converted from `fn` under each setting."""
    results = []
    calls = 0
    for setting in ("sync", "0"):
        monkeypatch.setenv("D2S_NATIVE", setting)
        before = _native_calls()
        out = d2s.to_static(fn)(*[rt.to_tensor(a) for a in args])
        calls = calls or _native_calls() - before
        out = out if isinstance(out, (tuple, list)) else (out,)
        results.append([t.numpy() for t in out])
    return results[0], results[1], calls


def _assert_equal_lists(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def gate_then_count(x, n):
    """A tensor `if`, then a tensor `while` of n steps on the branch's result."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    i = rt.zeros([1], "int64")
    while i < n:
        y = y * 0.75 + 1.0
        i += 1
    return y, i


def numpy_gate_then_count(x, n):
    y = x * x.dtype.type(2.0) if x.mean() > 0 else -x
    i = 0
    while i < n:
        y = y * y.dtype.type(0.75) + y.dtype.type(1.0)
        i += 1
    return y, np.array([i], "int64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [0, 1, 10])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_loop_in_c_equals_the_python_loop_and_numpy(monkeypatch, dtype, n, sign):
    x = (sign * np.linspace(0.5, 2.0, 64).reshape(4, 16)).astype(dtype)
    native, python, calls = _both(gate_then_count, monkeypatch, x, np.array([n], "int64"))
    assert calls == 1
    _assert_equal_lists(native, python)
    _assert_equal_lists(native, list(numpy_gate_then_count(x, n)))
    eager = gate_then_count(rt.to_tensor(x), _i64(n))
    _assert_equal_lists(native, [t.numpy() for t in eager])


def bias_steps(x, b, s, n):
    """Operands broadcast over the rows ([16] bias) and over everything ([1] scale)."""
    for _ in range(n):
        x = rt.maximum(x * s + b, x - 1.0) / 2.0
    return x


@pytest.mark.parametrize("n", [0, 1, 7])
def test_broadcast_operands(monkeypatch, n):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 16)).astype("float32")
    b = rng.standard_normal(16).astype("float32")
    s = np.array([1.25], "float32")
    native, python, calls = _both(bias_steps, monkeypatch, x, b, s, np.array([n], "int64"))
    assert calls == 1
    _assert_equal_lists(native, python)
    want = x
    for _ in range(n):
        want = np.maximum(want * s + b, want - np.float32(1.0)) / np.float32(2.0)
    np.testing.assert_array_equal(native[0], want)


def collatz_steps(x):
    """Integer carried values and a condition on a carried value (no counter)."""
    steps = rt.zeros([1], "int32")
    total = rt.zeros([3], "int32")
    while x > 1:
        x = x - 1
        steps = steps + 1
        total = total * 3 + steps
    return x, steps, total


@pytest.mark.parametrize("start", [0, 1, 2, 40])
def test_integer_carried_values_wrap_as_numpy(monkeypatch, start):
    native, python, calls = _both(collatz_steps, monkeypatch, np.array([start], "int32"))
    assert calls == 1
    _assert_equal_lists(native, python)
    total = np.zeros(3, "int32")
    k = max(start - 1, 0)
    with np.errstate(over="ignore"):
        for s in range(1, k + 1):
            total = total * np.int32(3) + np.int32(s)
    np.testing.assert_array_equal(native[2], total)  # (3**39 wraps around int32)
    np.testing.assert_array_equal(native[1], [k])


def float_condition(x, limit):
    while x < limit:
        x = x * 2.0
    return x


@pytest.mark.parametrize("start", [5.0, 0.5, 1e-3])
def test_condition_on_a_float_value(monkeypatch, start):
    x = np.array([start], "float64")
    native, python, calls = _both(float_condition, monkeypatch, x, np.array([3.0]))
    assert calls == 1
    _assert_equal_lists(native, python)
    want = start
    while want < 3.0:
        want *= 2.0
    assert native[0][0] == want


def tanh_steps(x, n):
    for _ in range(n):
        x = rt.tanh(x) + rt.exp(x * -1.0) * 0.5
    return x


def test_transcendental_functions_within_a_rounding(monkeypatch):
    x = np.linspace(-1.0, 1.0, 32).astype("float32")
    native, python, calls = _both(tanh_steps, monkeypatch, x, np.array([5], "int64"))
    assert calls == 1
    np.testing.assert_allclose(native[0], python[0], rtol=1e-5, atol=1e-6)


def matmul_steps(x, w, n):
    for _ in range(n):
        x = rt.matmul(x, w) + 1.0
    return x


def test_a_body_that_is_not_elementwise_keeps_the_python_loop(monkeypatch):
    """A batched matmul (3-D operands) is not one the C loop computes."""
    x = np.stack([np.eye(3, dtype="float32")] * 2)
    w = np.full((2, 3, 3), 0.5, "float32")
    native, python, calls = _both(matmul_steps, monkeypatch, x, w, np.array([3], "int64"))
    assert calls == 0
    _assert_equal_lists(native, python)
    want = x
    for _ in range(3):
        want = want @ w + np.float32(1.0)
    np.testing.assert_array_equal(native[0], want)


def transposed_matmul_steps(x, w, v, n):
    """Products with each operand transposed, and one of a carried value with itself."""
    for _ in range(n):
        x = rt.tanh(rt.matmul(x, w, transpose_y=True) * 0.5 + rt.matmul(v, x,
                                                                          transpose_x=True))
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [0, 1, 10])
def test_a_small_matmul_in_the_c_loop(monkeypatch, dtype, n):
    """2-D products run in the C loop, equal to BLAS's within a rounding (each element sums
    its products in order)."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((4, 4)).astype(dtype)
    w = (rng.standard_normal((4, 4)) * 0.5).astype(dtype)
    v = (rng.standard_normal((4, 4)) * 0.5).astype(dtype)
    nt = np.array([n], "int64")
    for fn, args in ((matmul_steps, (x * 0.1, w, nt)), (transposed_matmul_steps, (x, w, v, nt))):
        native, python, calls = _both(fn, monkeypatch, *args)
        assert calls == 1
        assert len(native) == len(python) == 1
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(native[0], python[0], rtol=tol, atol=tol)
        assert native[0].dtype == python[0].dtype
    want = x
    for _ in range(n):
        want = np.tanh(want @ w.T * want.dtype.type(0.5) + v.T @ want)
    np.testing.assert_allclose(native[0], want, rtol=tol, atol=tol)


def test_with_native_code_off_the_python_loop_runs(monkeypatch):
    monkeypatch.setenv("D2S_NATIVE", "0")
    f = d2s.to_static(gate_then_count)
    before = _native_calls()
    y, _ = f(rt.to_tensor(np.ones((4, 16), "float32")), _i64(3))
    assert _native_calls() == before
    assert "NL" not in f.program_cache.last_entry.compiled.source
    np.testing.assert_array_equal(y.numpy(), numpy_gate_then_count(np.ones((4, 16), "float32"),
                                                                   3)[0])


@pytest.mark.parametrize("n", [2, 3, 10])
def test_a_loop_paused_between_calls_resumes_where_it_stopped(monkeypatch, n):
    """The C function stops after TRIPS_PER_CALL iterations (so that Ctrl-C reaches Python
    in a loop that never ends) and the next call resumes from the carried values."""
    monkeypatch.setattr(native_loops, "TRIPS_PER_CALL", 3)
    x = np.linspace(-1.0, 1.0, 64).reshape(4, 16).astype("float32")
    native, python, calls = _both(gate_then_count, monkeypatch, x, np.array([n], "int64"))
    assert calls == 1
    _assert_equal_lists(native, python)
    _assert_equal_lists(native, list(numpy_gate_then_count(x, n)))


def test_division_by_zero_reports_as_numpy_does(monkeypatch):
    def halve_by(x, d, n):
        for _ in range(n):
            x = x / d
        return x

    monkeypatch.setenv("D2S_NATIVE", "sync")
    f = d2s.to_static(halve_by)
    x, d = rt.to_tensor(np.ones(4, "float64")), rt.to_tensor(np.zeros(4, "float64"))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        f(x, d, _i64(2))  # the C raised the flag: the Python loop runs and reports it
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(f(x, d, _i64(2)).numpy(), np.full(4, np.inf))


def test_gradient_of_a_training_loop(monkeypatch):
    """A loop that keeps values for the backward pass runs in Python; its gradient is the
    finite differences'."""
    monkeypatch.setenv("D2S_NATIVE", "sync")

    @d2s.to_static
    def f(x, b, n):
        y = x
        for _ in range(n):
            y = y * 0.5 + b
        return rt.sum(y * y)

    x = np.array([[0.3, -0.7], [1.1, 0.2]])
    b = np.array([0.25, -0.5])
    xt = rt.to_tensor(x)
    xt.stop_gradient = False
    f(xt, rt.to_tensor(b), _i64(3)).backward()

    def ref(v):
        y = v
        for _ in range(3):
            y = y * 0.5 + b
        return float(np.sum(y * y))

    np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(ref, x), rtol=1e-6)


def python_float_stepped_by_a_counter(x):
    """A Python float carried with a 0-d int64 counter (kept by the C code in its state
    buffer), then arrays made after the loop: they must not share the state's memory."""
    y = x * 1.0
    s = 0.5
    i = rt.zeros([], "int64")
    while i < 2:
        s = s + 0.25
        i = i + 1
    return y * s, y + s


def test_the_state_buffer_lives_as_long_as_the_loop(monkeypatch, tmp_path):
    # (found as values of a later array overwritten with the loop's counter and float: the
    # state buffer was freed once its caller was built, and NumPy reused its memory)
    import gc
    monkeypatch.setenv("D2S_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("D2S_NATIVE", "sync")
    static = d2s.to_static(python_float_stepped_by_a_counter)
    x = np.array([-3.0, 0.5, 1.0, -3.0], "float32")
    before = _native_calls()
    for _ in range(3):
        gc.collect()
        junk = [np.full(4, 7.0, "float32") for _ in range(64)]  # (reuse freed memory)
        a, b = static(rt.to_tensor(x))
        del junk
        np.testing.assert_array_equal(a.numpy(), x * np.float32(1.0))
        np.testing.assert_array_equal(b.numpy(), x + np.float32(1.0))
        eager = python_float_stepped_by_a_counter(rt.to_tensor(x))
        assert [(t.dtype, t.stop_gradient) for t in (a, b)] == [
            (t.dtype, t.stop_gradient) for t in eager]
    assert _native_calls() - before == 3  # (the loop ran in C each time)
