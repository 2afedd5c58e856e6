"""The generated code reads each kernel and each typed number through one global
(`_Gen.const`, `_Gen.number`): a program of thousands of ops compiles thousands of names less,
and numbers that compare equal but differ (0.0 and -0.0, 1 and 1.0) keep their own."""
from __future__ import annotations

import numpy as np

import runtime as rt


def _run(build, feed: dict):
    main = rt.static.Program()
    with rt.static.program_guard(main):
        fetch = build()
    exe = rt.static.Executor()
    out = exe.run(main, feed=feed, fetch_list=fetch)
    compiled = next(iter(main._compiled.values()))
    return out, compiled.fn.__globals__


def test_a_kernel_called_by_many_ops_is_one_global():
    x0 = np.linspace(-1.0, 1.0, 6, dtype="float32").reshape(2, 3)

    def chain():
        x = rt.static.data("x", [2, 3], "float32")
        h = x
        for i in range(50):
            h = rt.tanh(h * 1.5 + 0.25) - 0.125
        return [h]

    (got,), ns = _run(chain, {"x": x0})
    want = x0
    for _ in range(50):
        want = np.tanh(want * np.float32(1.5) + np.float32(0.25)) - np.float32(0.125)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    multiply = [k for k, v in ns.items() if v is np.multiply]
    assert len(multiply) == 1
    numbers = [k for k, v in ns.items() if isinstance(v, np.float32)]
    assert sorted(float(ns[k]) for k in numbers) == [0.125, 0.25, 1.5]


def test_numbers_that_compare_equal_keep_their_own_constants():
    x0 = np.array([1.0, 2.0, 3.0], dtype="float32")

    def signed_zeros():
        x = rt.static.data("x", [3], "float32")
        return [1.0 / (x * 0.0), 1.0 / (x * -0.0), x + 1, x + 1.0]

    with np.errstate(divide="ignore"):
        (pos, neg, plus_int, plus_float), _ = _run(signed_zeros, {"x": x0})
        np.testing.assert_array_equal(pos, 1.0 / (x0 * np.float32(0.0)))
        np.testing.assert_array_equal(neg, 1.0 / (x0 * np.float32(-0.0)))
    assert np.all(pos == np.inf) and np.all(neg == -np.inf)
    np.testing.assert_array_equal(plus_int, x0 + 1)
    np.testing.assert_array_equal(plus_float, x0 + 1.0)
    assert plus_int.dtype == plus_float.dtype == np.float32
