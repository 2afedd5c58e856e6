"""A name changed in place and then rebound in a graph loop's body (`h[i] = v; h = h * 2`;
found by the breadth fuzzer, issue 35): eager code changes the loop's starting object in the
first trip only and the new values later. Where nothing else reads the starting tensor the
loop carries the name's value and it converts (eager vs static vs NumPy, gradients against
finite differences); where something does (another name, the caller's tensor) it is an error
at the loop's line (it once gave the values of the in-place changes alone); the advice it
gives, and in-place changes alone, convert."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line
from tests.finite_differences import numeric_grad


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


def reference_rebound(x, n):
    h = x.copy()
    for i in range(n):
        h[i] = h[i] + 1.0
        h = h * 2.0
    return h


@pytest.mark.parametrize("fn", [changed_then_rebound, changed_then_rebound_while])
def test_changed_in_place_then_rebound_converts(fn):
    static = d2s.to_static(fn, full_graph=True)
    x = np.array([0.5, -1.25, 2.0], "float32")
    for n in (0, 1, 3):
        want = reference_rebound(x, n)
        for f in (fn, static):
            np.testing.assert_allclose(f(rt.to_tensor(x), rt.to_tensor(n)).numpy(), want)
    assert len(static.program_cache) == 1


def squared_rebound(x, n):
    h = x * 1.0
    for i in range(n):
        h[i] = h[i] * h[i]
        h = h * 1.5 + h[0]
    return (h * h).sum()


def reference_squared(x, n):
    h = x.copy()
    for i in range(n):
        h[i] = h[i] * h[i]
        h = h * 1.5 + h[0]
    return (h * h).sum()


def test_changed_in_place_then_rebound_gradient():
    static = d2s.to_static(squared_rebound, full_graph=True)
    x = np.array([0.5, -1.25, 0.75])
    for n in (0, 2, 3):
        t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        got = static(t, rt.to_tensor(n))
        np.testing.assert_allclose(got.numpy(), reference_squared(x, n), rtol=1e-5)
        got.backward()
        want = numeric_grad(lambda v, n=n: reference_squared(v, n), x)
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def rebound_beside_another_name(x, n):
    h = x * 1.0
    first = h
    for i in range(n):
        h[i] = h[i] + 1.0
        h = h * 2.0
    return h, first


def rebound_argument(h, n):
    for i in range(n):
        h[i] = h[i] + 1.0
        h = h * 2.0
    return h


@pytest.mark.parametrize("fn, line, other", [
    (rebound_beside_another_name, 3, "the local name 'first'"),
    (rebound_argument, 1, "the caller's tensor")])
def test_a_starting_tensor_read_elsewhere_is_an_error_at_the_loop(fn, line, other):
    static = d2s.to_static(fn, full_graph=True)
    with pytest.raises(d2s.StateChangeError, match="'h' is changed in place and rebound") as e:
        static(rt.ones([3]), rt.to_tensor(2))
    text = assert_at_user_line(e.value, __file__, fn.__code__.co_firstlineno + line)
    assert "h = h.clone()" in text and other in text


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


def swapped_pair(x, n):
    pair = [x * 1.0, x * 0.5]
    for i in range(n):
        pair[0] = pair[0] + 1.0                  # in place: the first trip's list only
        pair = [pair[1] * 2.0, pair[0]]          # then a new list
    return pair[0] * pair[1]


def reference_pair(x, n):
    pair = [x.copy(), x * 0.5]
    for i in range(n):
        pair[0] = pair[0] + 1.0
        pair = [pair[1] * 2.0, pair[0]]
    return pair[0] * pair[1]


def test_a_list_changed_in_place_then_rebound_converts():
    # (it gave the in-place changes of the starting list only: 3.0 for 4.0 at n = 1)
    static = d2s.to_static(swapped_pair, full_graph=True)
    x = np.array([0.5, -1.5, 2.0])
    for n in (0, 1, 3):
        want = reference_pair(x, n)
        for fn in (swapped_pair, static):
            got = fn(rt.to_tensor(x.astype("float32")), rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        static(t, rt.to_tensor(n)).sum().backward()
        grad = numeric_grad(lambda v, n=n: reference_pair(v, n).sum(), x)
        np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)


def swapped_beside_another_name(x, n):
    pair = [x * 1.0, x * 0.5]
    start = pair
    for i in range(n):
        pair[0] = pair[0] + 1.0
        pair = [pair[1] * 2.0, pair[0]]
    return pair[0] + start[0]


def test_a_starting_list_read_elsewhere_is_an_error_at_the_loop():
    static = d2s.to_static(swapped_beside_another_name, full_graph=True)
    with pytest.raises(d2s.StateChangeError, match="'pair' is changed in place and rebound") as e:
        static(rt.ones([3]), rt.to_tensor(2))
    text = assert_at_user_line(e.value, __file__,
                               swapped_beside_another_name.__code__.co_firstlineno + 3)
    assert "the local name 'start'" in text and "pair = list(pair)" in text


def grown_then_sliced(x, n):
    window = [x]
    for i in range(n):
        window.append(x * 2.0)
        window = window[1:]
    return rt.stack(window).sum()


def test_a_list_grown_then_rebound_says_to_build_it_out_of_place():
    static = d2s.to_static(grown_then_sliced, full_graph=True)
    with pytest.raises(d2s.StateChangeError, match="changes length in place") as e:
        static(rt.ones([3]), rt.to_tensor(2))
    text = assert_at_user_line(e.value, __file__,
                               grown_then_sliced.__code__.co_firstlineno + 2)
    assert "window = window[1:] + [v]" in text


def sliced_out_of_place(x, n):
    window = [x]
    for i in range(n):
        window = window[1:] + [x * 2.0 + i]
    return rt.stack(window).sum()


def test_the_out_of_place_form_converts():
    static = d2s.to_static(sliced_out_of_place, full_graph=True)
    x = np.array([0.5, -1.0, 2.0], "float32")
    for n in (0, 1, 3):
        want = (x * 2.0 + n - 1).sum() if n else x.sum()
        for fn in (sliced_out_of_place, static):
            np.testing.assert_allclose(fn(rt.to_tensor(x), rt.to_tensor(n)).numpy(), want,
                                       rtol=1e-6)


def swapped_dict(x, n):
    d = {"a": x * 1.0, "b": x * 0.5}
    for i in range(n):
        d["a"] = d["a"] + 1.0                    # in place: the first trip's dict only
        d = {"a": d["b"] * 2.0, "b": d["a"]}     # then a new dict
    return d["a"] * d["b"]


def reference_dict(x, n):
    d = {"a": x.copy(), "b": x * 0.5}
    for i in range(n):
        d["a"] = d["a"] + 1.0
        d = {"a": d["b"] * 2.0, "b": d["a"]}
    return d["a"] * d["b"]


def test_a_dict_changed_in_place_then_rebound_converts():
    static = d2s.to_static(swapped_dict, full_graph=True)
    x = np.array([1.0, -0.5, 0.25])
    for n in (0, 1, 3):
        want = reference_dict(x, n)
        for fn in (swapped_dict, static):
            got = fn(rt.to_tensor(x.astype("float32")), rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        static(t, rt.to_tensor(n)).sum().backward()
        grad = numeric_grad(lambda v, n=n: reference_dict(v, n).sum(), x)
        np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)


def dict_beside_another_name(x, n):
    d = {"a": x * 1.0, "b": x * 0.5}
    keep = d
    for i in range(n):
        d["a"] = d["a"] + 1.0
        d = {"a": d["b"] * 2.0, "b": d["a"]}
    return d["a"] * d["b"] + keep["a"]


def dict_of_the_caller(x, n, d):
    for i in range(n):
        d["a"] = d["a"] + 1.0
        d = {"a": d["b"] * 2.0, "b": d["a"]}
    return d["a"] * d["b"]


@pytest.mark.parametrize("fn, line, other", [
    (dict_beside_another_name, 3, "the local name 'keep'"),
    (dict_of_the_caller, 1, "the caller's dict")])
def test_a_starting_dict_read_elsewhere_is_an_error_at_the_loop(fn, line, other):
    # (it left `keep` without the first trip's change: x for eager's x + 1)
    static = d2s.to_static(fn, full_graph=True)
    args = (rt.ones([2]), rt.to_tensor(2)) + (({"a": rt.ones([2]), "b": rt.ones([2])},)
                                               if fn is dict_of_the_caller else ())
    with pytest.raises(d2s.StateChangeError, match="'d' is changed in place and rebound") as e:
        static(*args)
    text = assert_at_user_line(e.value, __file__, fn.__code__.co_firstlineno + line)
    assert "d = dict(d)" in text and other in text
