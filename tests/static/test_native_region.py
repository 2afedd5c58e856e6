"""A tensor `if` and the tensor loop after it as one C call (`runtime/program/native_region.py`):
the mean deciding the branch has NumPy's bits (so the C takes the branch eager code takes,
also for means within a rounding of the threshold), both branches and the loop equal the
Python code of the same program (`D2S_NATIVE=0`), eager code and NumPy, on inputs that take
each branch through one program; what does not fit keeps the Python code."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build, native_region
from tests.finite_differences import numeric_grad

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")


def _native_calls() -> int:
    return native_build.stats()["native_calls"]


def gate_while(x):
    """A tensor `if` on a mean, then a 10-step tensor `while` on what it chose."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    i = rt.zeros([1], "int64")
    while i < 10:
        y = y * 0.5 + 1.0
        i += 1
    return y


def numpy_gate_while(x):
    t = x.dtype.type
    y = x * t(2.0) if x.mean() > 0 else -x
    for _ in range(10):
        y = y * t(0.5) + t(1.0)
    return y


def _run(fn, setting, monkeypatch, *args):
    """fn converted under `D2S_NATIVE=setting`: (outputs as NumPy arrays, C calls made)."""
    monkeypatch.setenv("D2S_NATIVE", setting)
    static = d2s.to_static(fn)
    out = static(*[rt.to_tensor(a) for a in args])  # (the first call compiles)
    before = _native_calls()
    out = static(*[rt.to_tensor(a) for a in args])
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [t.numpy() for t in out], _native_calls() - before


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4,), (4, 16), (300,)])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_if_and_the_loop_in_one_call_equal_python_eager_and_numpy(
        monkeypatch, dtype, shape, sign):
    x = (sign * np.random.default_rng(3).uniform(0.1, 2.0, shape)).astype(dtype)
    native, calls = _run(gate_while, "sync", monkeypatch, x)
    assert calls == 1  # (the mean, the branch and the loop: one C call)
    python, calls = _run(gate_while, "0", monkeypatch, x)
    assert calls == 0
    _assert_same(native, python)
    _assert_same(native, [numpy_gate_while(x)])
    with rt.no_grad():
        _assert_same(native, [gate_while(rt.to_tensor(x)).numpy()])


@pytest.mark.parametrize("n", [1, 5, 8, 9, 64, 127, 128, 129, 131, 300, 1000, 4096])
def test_a_mean_at_the_threshold_takes_numpys_branch(monkeypatch, n):
    """Values whose mean is within a rounding of 0: a sum in another order could take the
    other branch; the C sums as NumPy does, so it takes NumPy's."""
    rng = np.random.default_rng(n)
    for dtype in ("float32", "float64"):
        for trial in range(3):
            x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)).astype(dtype)
            x[-1] = -(x[:-1].astype("float64").sum())  # (sum near 0 in exact arithmetic)
            x = x.reshape(4, -1) if n % 4 == 0 and trial else x  # (2-D: summed as 1-D)
            native, calls = _run(gate_while, "sync", monkeypatch, x)
            assert calls == 1
            _assert_same(native, [numpy_gate_while(x)])


@pytest.mark.parametrize("n", [1, 7, 8, 15, 16, 129, 300, 4096])
def test_pairwise_sum_is_numpys(n):
    rng = np.random.default_rng(n)
    assert native_region._numpy_sums_pairwise()
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)).astype(dtype)
        assert native_region._pairwise(x, dtype) == np.add.reduce(x)
    for shape in ((4, 16), (16, 33), (64, 64), (2, 3, 5)):  # (the mean reads a 2-D value)
        x = rng.standard_normal(shape).astype(np.float32) * np.float32(1e3)
        assert native_region._pairwise(x.ravel(), np.float32) == np.add.reduce(x, axis=None)


def test_a_transposed_input_keeps_the_python_code(monkeypatch):
    """NumPy sums a transposed array in memory order: the C (which sums in index order) is
    not called, the values are the Python code's."""
    monkeypatch.setenv("D2S_NATIVE", "sync")

    @d2s.to_static
    def f(x):
        return gate_while(rt.transpose(x, [1, 0]))

    x = np.random.default_rng(0).standard_normal((16, 4)).astype("float32")
    f(rt.to_tensor(x))
    before = _native_calls()
    got = f(rt.to_tensor(x)).numpy()
    np.testing.assert_array_equal(got, numpy_gate_while(np.ascontiguousarray(x.T)))
    assert got.shape == (4, 16)
    assert _native_calls() - before in (0, 1)  # (the loop alone may still run in C)


def gate_read_after(x, b):
    """Values the region makes read after the loop (the branch's result, the mean): the
    region shrinks to what is read only inside it; a literal and an outer value as results."""
    m = rt.mean(x)
    if m > 0.5:
        y = x
        s = b * 3.0
    else:
        y = x - b
        s = b + 0.0
    z = y
    for _ in range(3):
        z = rt.maximum(z * 0.5, s)
    return z, y, m


@pytest.mark.parametrize("shift", [0.0, 1.0])
def test_values_read_after_the_loop(monkeypatch, shift):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 16)) + shift).astype("float32")
    b = rng.standard_normal(16).astype("float32")
    native, _ = _run(gate_read_after, "sync", monkeypatch, x, b)
    python, _ = _run(gate_read_after, "0", monkeypatch, x, b)
    _assert_same(native, python)
    with rt.no_grad():
        eager = gate_read_after(rt.to_tensor(x), rt.to_tensor(b))
    _assert_same(native, [t.numpy() for t in eager])
    m = x.mean()
    y, s = (x, b * np.float32(3.0)) if m > 0.5 else (x - b, b + np.float32(0.0))
    z = y
    for _ in range(3):
        z = np.maximum(z * np.float32(0.5), s)
    _assert_same(native, [z, y, np.asarray(m)])


def test_gradient_through_the_if_and_the_loop(monkeypatch):
    """A training call keeps the Python code (values kept for the backward pass); its
    gradient on each branch is the finite differences'."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    f = d2s.to_static(gate_while)
    for sign in (1.0, -1.0):
        x = sign * np.array([[0.3, 0.7], [1.1, 0.2]])
        xt = rt.to_tensor(x)
        xt.stop_gradient = False
        rt.sum(f(xt) ** 2).backward()
        want = numeric_grad(lambda v: float(np.sum(numpy_gate_while(v) ** 2)), x)
        np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-6)


def test_an_overflow_in_the_branch_reports_as_numpy_does(monkeypatch):
    monkeypatch.setenv("D2S_NATIVE", "sync")
    f = d2s.to_static(gate_while)
    x = rt.to_tensor(np.full(4, 3e38, "float32"))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        f(x)  # (x * 2 overflows: the C raised the flag, the Python code reports it)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(f(x).numpy(), np.full(4, np.inf, "float32"))


def gate_for(x, n):
    """A tensor `if`, then `for range(n)` with a tensor n: the bound (an int made from n)
    is computed before the call."""
    if rt.mean(x) > 0:
        y = x * 2.0
    else:
        y = -x
    for _ in range(n):
        y = y - 0.25
    return y


@pytest.mark.parametrize("n", [-2, 0, 1, 10])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_for_range_with_a_tensor_bound(monkeypatch, n, sign):
    x = (sign * np.linspace(0.25, 2.0, 64).reshape(4, 16)).astype("float32")
    nt = np.array([n], "int64")
    native, calls = _run(gate_for, "sync", monkeypatch, x, nt)
    assert calls == 1
    python, _ = _run(gate_for, "0", monkeypatch, x, nt)
    _assert_same(native, python)
    y = x * np.float32(2.0) if x.mean() > 0 else -x
    for _ in range(n):
        y = y - np.float32(0.25)
    _assert_same(native, [y])


def two_regions_and_a_nested_one(x, flag):
    """Two `if` + loop regions in a row (the second reads the first's result through a fused
    chain), and one inside the branch of an outer tensor `if`."""
    for _ in range(2):  # (unrolled: two regions in one block)
        z = x * 2.0 + 1.0
        if rt.mean(z) > 0:
            y = z * 0.5
        else:
            y = -z
        i = rt.zeros([1], "int64")
        while i < 3:
            y = y * 0.5 + 0.25
            i += 1
        x = y - 1.0
    if rt.sum(flag) > 0:  # (a region inside a branch block)
        if rt.mean(x) > -0.5:
            w = x + 1.0
        else:
            w = x - 1.0
        j = rt.zeros([1], "int64")
        while j < 2:
            w = w * w
            j += 1
    else:
        w = x
    return w


def numpy_two_regions(x, flag):
    t = x.dtype.type
    for _ in range(2):
        z = x * t(2.0) + t(1.0)
        y = z * t(0.5) if z.mean() > 0 else -z
        for _ in range(3):
            y = y * t(0.5) + t(0.25)
        x = y - t(1.0)
    if flag.sum() > 0:
        w = x + t(1.0) if x.mean() > -0.5 else x - t(1.0)
        for _ in range(2):
            w = w * w
        return w
    return x


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_regions_in_a_row_and_inside_a_branch(monkeypatch, sign, flag):
    x = (sign * np.random.default_rng(5).uniform(0.5, 2.0, (4, 16))).astype("float32")
    f = np.array([flag], "float32")
    native, calls = _run(two_regions_and_a_nested_one, "sync", monkeypatch, x, f)
    assert calls == (3 if flag > 0 else 2)
    python, _ = _run(two_regions_and_a_nested_one, "0", monkeypatch, x, f)
    _assert_same(native, python)
    _assert_same(native, [numpy_two_regions(x, f)])
