"""Lists grown inside graph loops are tensor arrays: len, indexing (negative too),
iteration, enumerate, stack / concat, and backward through them."""
import numpy as np

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t


def grow_then_enumerate(x):
    out = []
    i = 0
    while i < rt.sum(x):
        out.append(x * i)
        i += 1
    s = x * 0.0
    for j, v in enumerate(out):   # was run once with j == 0 (a silent wrong result)
        s = s + v * j
    for v in out:
        s = s + v
    return s + out[-1] + len(out) + rt.stack(out).sum(0) + rt.concat(out).sum()


def ref_grow_then_enumerate(x):
    n = int(np.ceil(x.sum()))
    out = [x * i for i in range(n)]
    s = sum((v * j for j, v in enumerate(out)), np.zeros_like(x)) + sum(out)
    return s + out[-1] + n + np.stack(out).sum(0) + np.concatenate(out).sum()


def test_enumerate_len_negative_index_stack_concat_after_graph_loop():
    check(grow_then_enumerate, ref_grow_then_enumerate,
          [([1.0, 2.0],), ([0.5, 1.0],), ([2.0, 2.5],)])


def weighted(x, w):
    hs = []
    i = rt.zeros([])
    h = x
    while i < 3:
        h = rt.tanh(h * w)
        hs.append(h)
        i = i + 1.0
    return rt.stack(hs).sum()


def test_backward_through_a_tensor_array_matches_finite_differences():
    sf = d2s.to_static(weighted)
    x0 = np.array([0.3, -0.2], np.float64)
    w = t([0.7, 1.1])
    x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
    sf(x, w).backward()

    def f(v):
        h, total = v, 0.0
        for _ in range(3):
            h = np.tanh(h * np.asarray([0.7, 1.1]))
            total += h.sum()
        return total

    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, x0), rtol=1e-3, atol=1e-4)


def branch_lengths(x):
    items = [x * 1.0]
    if rt.mean(x) > 0:         # a different number of appends per branch: a tensor array
        items.append(x * 2.0)
        items.append(rt.tanh(x))
    else:
        items.append(x - 1.0)
    return rt.stack(items).sum(0) + len(items)


def ref_branch_lengths(x):
    items = [x * 1.0] + ([x * 2.0, np.tanh(x)] if x.mean() > 0 else [x - 1.0])
    return np.stack(items).sum(0) + len(items)


def test_list_length_depending_on_a_tensor_if_becomes_an_array():
    check(branch_lengths, ref_branch_lengths, [([1.0, 2.0],), ([-1.0, -2.0],), ([3.0, -1.0],)])


def nested_if_in_while(x, n):
    feats = []                  # starts empty; grows by 1 or 2 per step
    i = rt.zeros([], "int64")
    while i < n:
        if x[i % 2] > 0:
            feats.append(x * 2.0)
            feats.append(rt.tanh(x))
        else:
            feats.append(x - 1.0)
        i = i + 1
    return (rt.stack(feats) ** 2).sum()


def ref_nested(x, n):
    feats = []
    for i in range(n):
        feats += [x * 2.0, np.tanh(x)] if x[i % 2] > 0 else [x - 1.0]
    return (np.stack(feats) ** 2).sum()


def test_tensor_if_inside_a_graph_loop_appends_to_an_array_with_gradients():
    sf = d2s.to_static(nested_if_in_while)
    for v, n in (([1.0, -2.0], 3), ([-1.0, 2.0], 2), ([0.5, 0.5], 1)):
        x0 = np.asarray(v, np.float64)
        x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
        out = sf(x, rt.to_tensor(n))
        np.testing.assert_allclose(out.numpy(), ref_nested(x0, n), rtol=1e-5)
        eager = nested_if_in_while(rt.to_tensor(x0.astype(np.float32)), rt.to_tensor(n))
        np.testing.assert_allclose(eager.numpy(), ref_nested(x0, n), rtol=1e-5)
        out.backward()
        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda v: ref_nested(v, n), x0),
                                   rtol=1e-3, atol=1e-4)
    assert len(sf.program_cache) == 1
