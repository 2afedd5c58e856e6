"""The counter of a loop over `range(n_tensor)` used where eager code has a Python int
(issue 35): a pad width and fill value, randint bounds, a nested range, a slice bound, a
shape, a linspace count. Each converts (eager vs static vs NumPy, one program for every
count, gradients against finite differences), or raises at the user's line saying what to
write instead."""
import math

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line
from tests.finite_differences import numeric_grad

F = rt.nn.functional
COUNTS = [0, 1, 3]


def widening_pad(x, n):
    for i in range(n):
        x = F.pad(x, [0, i], value=i)      # each step widens the last axis by i, filled with i
    return x


def reference_pad(x, n):
    for i in range(n):
        x = np.pad(x, [(0, 0), (0, i)], constant_values=i)
    return x


def test_pad_by_the_counter():
    static = d2s.to_static(widening_pad, full_graph=True)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    for n in COUNTS:
        want = reference_pad(x, n)
        for fn in (widening_pad, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(n)).numpy()
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want)
    assert len(static.program_cache) == 1


def test_pad_by_the_counter_gradient():
    static = d2s.to_static(widening_pad, full_graph=True)
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    for n in (0, 3):
        t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        (static(t, rt.to_tensor(n)) ** 2).sum().backward()
        want = numeric_grad(lambda v, n=n: (reference_pad(v, n) ** 2).sum(), x)
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def reflect_by_counter(x, n):
    for i in range(n):
        x = F.pad(x, [i, i], mode="reflect")
    return x


def test_reflect_pad_by_a_tensor_width_says_to_pass_ints():
    static = d2s.to_static(reflect_by_counter, full_graph=True)
    with pytest.raises(TypeError, match="need mode='constant'") as info:
        static(rt.ones([1, 2, 5]), rt.to_tensor(2))
    assert_at_user_line(info.value, __file__, reflect_by_counter.__code__.co_firstlineno + 2)


def draws_by_counter(x, n):
    total = x.sum()
    for i in range(n):
        exact = rt.randint(i, i + 1, [])         # [i, i + 1) holds only i
        near = rt.randint(i, i + 2, [4])
        in_range = rt.logical_and(near >= i, near < i + 2).all()
        total = total + exact.astype("float32") + in_range.astype("float32")
    return total


@pytest.mark.parametrize("n", COUNTS)
def test_randint_with_counter_bounds(n):
    static = d2s.to_static(draws_by_counter, full_graph=True)
    x = np.array([1.0, 2.0], "float32")
    want = x.sum() + sum(range(n)) + n
    for fn in (draws_by_counter, static):
        np.testing.assert_allclose(fn(rt.to_tensor(x), rt.to_tensor(n)).numpy(), want)


def empty_draw(x, n):
    for i in range(n):
        x = x + rt.randint(i, i, [])
    return x


def test_randint_with_empty_counter_bounds_fails_as_eagerly():
    static = d2s.to_static(empty_draw, full_graph=True)
    for fn in (empty_draw, static):
        with pytest.raises(ValueError, match=r"high \(0\) must be greater than low \(0\)"):
            fn(rt.zeros([]), rt.to_tensor(2))


def triangle_sums(x, n):
    s = x.sum() * 0
    for i in range(n):
        for j in range(i):                       # a nested graph loop bounded by the counter
            s = s + x[:, :i].sum() * j           # and a slice bound
        s = s + rt.full([i], 0.5).sum()          # and a shape
        s = s + rt.linspace(0.0, 1.0, i + 2).sum()   # and a count beside float bounds
    return s


def reference_triangle(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i):
            s += x[:, :i].sum() * j
        s += 0.5 * i + np.linspace(0.0, 1.0, i + 2).sum()
    return s


def test_nested_range_slice_and_shape_of_the_counter():
    static = d2s.to_static(triangle_sums, full_graph=True)
    x = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 1.0]], "float32")
    for n in (0, 1, 2, 4):
        want = reference_triangle(x, n)
        for fn in (triangle_sums, static):
            np.testing.assert_allclose(fn(rt.to_tensor(x), rt.to_tensor(n)).numpy(), want,
                                       rtol=1e-6)
    assert len(static.program_cache) == 1


def repeated_list(x, n):
    total = x.sum()
    for i in range(n):
        zeros = [0] * i
        total = total + len(zeros)
    return total


def test_a_list_repeated_by_the_counter_says_what_to_write():
    static = d2s.to_static(repeated_list, full_graph=True)
    with pytest.raises(TypeError, match=r"rt\.full\(\[i\], 0\)") as info:
        static(rt.ones([2]), rt.to_tensor(3))
    text = assert_at_user_line(info.value, __file__, repeated_list.__code__.co_firstlineno + 3)
    assert "[0] * i" in text and "Python int bound" in text


def rows_of_widths(x):
    total = x.sum() * 0
    for i in range(x.shape[0]):                  # a trip count known when tracing
        widths = [0] * i + [1]
        total = total + F.pad(x[i:i + 1], [0, len(widths)], value=i).sum()
    return total


def test_a_static_trip_count_keeps_the_counter_a_python_int():
    static = d2s.to_static(rows_of_widths, full_graph=True)
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float32")
    want = sum(x[i].sum() + i * (i + 1) for i in range(3))
    for fn in (rows_of_widths, static):
        np.testing.assert_allclose(fn(rt.to_tensor(x)).numpy(), want)


def rolled_by_counter(x, n):
    total = x * 0
    for i in range(n):
        total = total + rt.roll(x, i, axis=1) * (i + 1) + rt.roll(x, -i)
    return total


def reference_rolled(x, n):
    return sum((np.roll(x, i, axis=1) * (i + 1) + np.roll(x, -i) for i in range(n)),
               np.zeros_like(x))


def test_roll_by_the_counter():
    static = d2s.to_static(rolled_by_counter, full_graph=True)
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])
    for n in (0, 2, 5):
        want = reference_rolled(x, n)
        for fn in (rolled_by_counter, static):
            got = fn(rt.to_tensor(x.astype("float32")), rt.to_tensor(n)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6)
        t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        (static(t, rt.to_tensor(n)) ** 2).sum().backward()
        grad = numeric_grad(lambda v, n=n: (reference_rolled(v, n) ** 2).sum(), x)
        np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 2  # (with and without a gradient)


def top_by_counter(x, n):
    total = x.sum()
    for i in range(n):
        values, _ = rt.topk(x, i % 3 + 1)  # k known when the program runs
        total = total + values.sum() + F.one_hot(rt.argmax(x), i + 3).sum(-1) * 0.5
    return total


def reference_top(x, n):
    total = x.sum()
    for i in range(n):
        total = total + np.sort(x)[::-1][:i % 3 + 1].sum() + 0.5
    return total


def test_topk_and_one_hot_sized_by_the_counter():
    static = d2s.to_static(top_by_counter, full_graph=True)
    x = np.array([1.0, -2.0, 3.0, 0.5])
    for n in (0, 1, 4):
        want = reference_top(x, n)
        for fn in (top_by_counter, static):
            t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
            got = fn(t, rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
            got.backward()
            grad = numeric_grad(lambda v, n=n: reference_top(v, n), x)
            np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)


def rooted_by_counter(x, n):
    total = x.sum()
    for i in range(n):
        total = total + math.copysign(i + 1, 2)  # (math.sqrt(i), math.hypot convert)
    return total


def test_a_call_that_needs_an_int_names_the_counter_and_the_fix():
    fn, call = rooted_by_counter, "math.copysign(i + 1, 2)"
    static = d2s.to_static(fn, full_graph=True)
    with pytest.raises(TypeError, match="counter of a `for` over `range\\(\\)` of a tensor") as e:
        static(rt.ones([4]), rt.to_tensor(2))
    text = assert_at_user_line(e.value, __file__, fn.__code__.co_firstlineno + 3)
    assert "Give the loop a Python int bound" in text and call in text


def picked_rows(x, n):
    total = x[0] * 0
    for i in range(n):
        total = total + x[[i % 3, 0]].sum(axis=0) * (i + 1)
        x[[i % 3]] = x[[i % 3]] * 0.5              # an index list with the counter, written
    return total, x


def reference_rows(x, n):
    x, total = x.copy(), x[0] * 0
    for i in range(n):
        total = total + x[[i % 3, 0]].sum(axis=0) * (i + 1)
        x[[i % 3]] = x[[i % 3]] * 0.5
    return total, x


def test_an_index_list_holding_the_counter():
    static = d2s.to_static(picked_rows, full_graph=True)
    x = np.array([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0]], "float32")
    for n in (0, 2, 4):
        want = reference_rows(x, n)
        for fn in (picked_rows, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(n))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
    assert len(static.program_cache) == 1
