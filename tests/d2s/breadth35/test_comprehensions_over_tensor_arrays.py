"""A comprehension with more than one `for`, where one iterates a tensor array (a list grown
in a graph loop) (issue 35): it converts as the nested `for` statements that append would,
one graph loop per `for` over an array, the items in Python's order. Eager vs static vs
NumPy, one program for every length, gradients against finite differences."""
import itertools

import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def products(x, n):
    scaled = []
    for i in range(n):
        scaled.append(x * (i + 1))
    gates = [x, x * 2]
    crossed = [a * b for a in scaled for b in gates]            # array, then a Python list
    diffs = [g - s for g in gates for s in scaled]              # a Python list, then array
    pairs = [a + b for a in scaled for b in scaled if b.sum() > a.sum()]
    weighted = [s.sum() * (j + 1) for s in scaled for j in range(2)]
    total = rt.stack(crossed + [x]).sum() + rt.stack(diffs + [x]).sum() * 0.5
    total = total + rt.stack(pairs + [x]).sum() * 0.25 + rt.stack(weighted + [x.sum()]).sum()
    return total, len(crossed), len(pairs)


def reference_products(x, n):
    scaled = [x * (i + 1) for i in range(n)]
    gates = [x, x * 2]
    crossed = [a * b for a in scaled for b in gates]
    diffs = [g - s for g in gates for s in scaled]
    pairs = [a + b for a in scaled for b in scaled if b.sum() > a.sum()]
    weighted = [s.sum() * (j + 1) for s in scaled for j in range(2)]
    total = (sum(v.sum() for v in crossed) + x.sum() + (sum(v.sum() for v in diffs) + x.sum())
             * 0.5 + (sum(v.sum() for v in pairs) + x.sum()) * 0.25 + sum(weighted) + x.sum())
    return total, len(crossed), len(pairs)


X = np.array([0.5, -1.0, 2.0, 1.5])


def test_two_fors_over_a_tensor_array_and_a_list():
    static = d2s.to_static(products, full_graph=True)
    for n in (0, 1, 3):
        want = reference_products(X, n)
        for fn in (products, static):
            got = fn(rt.to_tensor(X.astype("float32")), rt.to_tensor(n))
            assert len(got) == len(want)
            np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-5)
            assert [int(v) for v in got[1:]] == list(want[1:])
    assert len(static.program_cache) == 1


def test_two_fors_over_a_tensor_array_gradient():
    static = d2s.to_static(products, full_graph=True)
    for n in (1, 3):
        t = rt.to_tensor(X.astype("float32"), stop_gradient=False)
        static(t, rt.to_tensor(n))[0].backward()
        want = numeric_grad(lambda v, n=n: reference_products(v, n)[0], X)
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def flattened_rows(x, n):
    rows = []
    for i in range(n):
        rows.append(x[i] * (i + 1))
    flat = [v * 2 for row in rows for v in row]                 # the rows' items, in order
    return flat


def test_a_flattened_tensor_array_is_its_items_in_order():
    static = d2s.to_static(flattened_rows, full_graph=True)
    x = np.arange(12, dtype="float32").reshape(4, 3) - 5
    for n in (0, 1, 3):
        want = [v * 2 for i in range(n) for v in x[i] * (i + 1)]
        for fn in (flattened_rows, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(n))
            assert isinstance(got, list) and len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == []
                np.testing.assert_allclose(g.numpy(), w)
    assert len(static.program_cache) == 1


def python_pairs(xs):
    return [a * b for a in xs for b in range(a) if (a + b) % 2]  # Python only: Python's list


def test_python_only_nested_comprehension_is_unchanged():
    static = d2s.to_static(python_pairs)
    assert static([1, 2, 3, 4]) == python_pairs([1, 2, 3, 4])


def generated_sums(x, n):
    scaled = []
    for i in range(n):
        scaled.append(x * (i + 1))
    gates = [x, x * 2]
    total = sum(((a * b).sum() for a in scaled for b in gates), x.sum() * 0)
    stacked = rt.stack(list(a - b for a in scaled for b in scaled) + [x])  # noqa: C400
    first = next(j * k for j in itertools.count(1) for k in range(3))  # (lazy: endless)
    return total, stacked.sum(0), first


def reference_sums(x, n):
    scaled = [x * (i + 1) for i in range(n)]
    total = sum((a * b).sum() for a in scaled for b in [x, x * 2])
    return total, sum(a - b for a in scaled for b in scaled) + x, 0


def test_generator_expression_with_two_fors_over_a_tensor_array():
    static = d2s.to_static(generated_sums, full_graph=True)
    for n in (0, 1, 3):
        want = reference_sums(X, n)
        for fn in (generated_sums, static):
            got = fn(rt.to_tensor(X.astype("float32")), rt.to_tensor(n))
            assert len(got) == len(want) and got[2] == 0 and type(got[2]) is int
            np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-5)
            np.testing.assert_allclose(got[1].numpy(), want[1], rtol=1e-5)
    assert len(static.program_cache) == 1


def prefix_items(x, n):
    prefixes = []
    for i in range(n):
        prefixes.append(x[:i + 1])                            # rows of a run-time length
    doubled = [v * 2 for p in prefixes for v in p]
    picked = [(x[k] * 3).sum() for k in rt.nonzero(x > 0.75)]  # a run-time number of rows
    return rt.stack(doubled + [x.sum()]), rt.stack(picked + [x.sum()])


def test_comprehensions_over_tensors_of_a_run_time_length():
    static = d2s.to_static(prefix_items, full_graph=True)
    for n in (0, 1, 3):
        want = ([v * 2 for i in range(n) for v in X[:i + 1]] + [X.sum()],
                [X[k] * 3 for k in np.nonzero(X > 0.75)[0]] + [X.sum()])
        for fn in (prefix_items, static):
            t = rt.to_tensor(X.astype("float32"), stop_gradient=False)
            got = fn(t, rt.to_tensor(n))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
            (got[0].sum() + got[1].sum() * 0.5).backward()
            grad = numeric_grad(lambda v, n=n: sum(v[:i + 1].sum() * 2 for i in range(n))
                                + v.sum() * 1.5 + v[v > 0.75].sum() * 1.5, X)
            np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 1
