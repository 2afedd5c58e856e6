"""A name changed in place and then rebound in a graph loop's body (`h[i] = v; h = h * 2`;
found by the breadth fuzzer, issue 35): eager code changes the loop's starting object in the
first trip only, so it is an error at the loop's line (it gave the values of the in-place
changes alone); the advice it gives, and in-place changes alone, convert."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line


def changed_then_rebound(x, n):
    h = x * 1.0
    for i in range(n):
        h[i] = h[i] + 1.0
        h = h * 2.0
    return h


def changed_then_rebound_while(x, n):
    h = x * 1.0
    k = rt.zeros([], "int64")
    while k < n:
        h[k] = h[k] + 1.0
        h = h * 2.0
        k += 1
    return h


@pytest.mark.parametrize("fn, line", [(changed_then_rebound, 2),
                                      (changed_then_rebound_while, 3)])
def test_changed_in_place_then_rebound_is_an_error_at_the_loop(fn, line):
    static = d2s.to_static(fn, full_graph=True)
    with pytest.raises(d2s.StateChangeError, match="'h' is changed in place and rebound") as e:
        static(rt.ones([3]), rt.to_tensor(2))
    text = assert_at_user_line(e.value, __file__, fn.__code__.co_firstlineno + line)
    assert "h = h.clone()" in text


def cloned_then_changed(x, n):
    h = x * 1.0
    for i in range(n):
        h = h.clone()
        h[i] = h[i] + 1.0
        h = h * 2.0
    return h


def changed_in_place(x, n):
    h = x * 1.0
    for i in range(n):
        h[i % 3] = h[i % 3] * 2.0 + 1.0
    return h


def reference(x, n, rebind: bool):
    h = x.copy()
    for i in range(n):
        h[i % 3] = h[i % 3] * (1.0 if rebind else 2.0) + 1.0
        h = h * 2.0 if rebind else h
    return h


@pytest.mark.parametrize("fn, rebind", [(cloned_then_changed, True), (changed_in_place, False)])
def test_the_advice_and_in_place_changes_alone_convert(fn, rebind):
    static = d2s.to_static(fn, full_graph=True)
    x = np.array([0.25, 2.25, -0.75], "float32")
    for n in (0, 2, 3):
        want = reference(x, n, rebind)
        for f in (fn, static):
            np.testing.assert_allclose(f(rt.to_tensor(x), rt.to_tensor(n)).numpy(), want)
    assert len(static.program_cache) == 1
