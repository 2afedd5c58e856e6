"""`rt.split(x, i)` and pools with kernel `i`, where `i` is the counter of a loop over
`range(n_tensor)` (issue 35): the split's parts are a tensor array as long as the run-time
count (indexed, looped over, stacked: the uses an array has), and a pool's windows are sized
when the program runs. Eager vs static vs NumPy, one program for every count, gradients
against finite differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import assert_at_user_line
from tests.finite_differences import numeric_grad

F = rt.nn.functional


def chunked_scores(x, n):
    total = x.sum() * 0
    for i in range(n):
        chunks = rt.split(x, i + 1, axis=1)           # i + 1 chunks of the feature axis
        total = total + chunks[0].sum() * 2 + chunks[-1].mean() + len(chunks)
        total = total + (rt.stack(chunks) ** 2).sum() * 0.1
        for c in chunks:
            total = total + c.max(axis=1).sum()
    return total


def reference_chunks(x, n):
    total = 0.0
    for i in range(n):
        chunks = np.split(x, i + 1, axis=1)
        total += chunks[0].sum() * 2 + chunks[-1].mean() + len(chunks)
        total += (np.stack(chunks) ** 2).sum() * 0.1
        total += sum(c.max(axis=1).sum() for c in chunks)
    return total


X6 = np.array([[0.5, -1.0, 2.0, 1.5, -0.25, 3.0], [1.0, 0.75, -2.0, 0.1, 2.5, -0.5]])


def test_split_by_the_counter_is_an_array_of_its_parts():
    static = d2s.to_static(chunked_scores, full_graph=True)
    for n in (0, 1, 2, 3):                           # 1, 2 and 3 chunks of 6 columns
        want = reference_chunks(X6, n)
        for fn in (chunked_scores, static):
            got = fn(rt.to_tensor(X6.astype("float32")), rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    assert len(static.program_cache) == 1


def test_split_by_the_counter_gradient():
    static = d2s.to_static(chunked_scores, full_graph=True)
    for n in (1, 3):
        t = rt.to_tensor(X6.astype("float32"), stop_gradient=False)
        static(t, rt.to_tensor(n)).backward()
        want = numeric_grad(lambda v, n=n: reference_chunks(v, n), X6)
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def chunk_maxima(x, n):
    total = x.sum() * 0
    for i in range(n):
        total = total + rt.stack(rt.chunk(x, i + 1)).max(0).sum() + x.chunk(i + 1)[-1].sum()
    return total


def test_chunk_by_the_counter():
    static = d2s.to_static(chunk_maxima, full_graph=True)
    x = np.array([0.5, -1.0, 2.0, 1.5, -0.25, 3.0], "float32")
    for n in (0, 1, 3):
        want = sum(np.stack(np.split(x, i + 1)).max(0).sum() + np.split(x, i + 1)[-1].sum()
                   for i in range(n))
        for fn in (chunk_maxima, static):
            np.testing.assert_allclose(fn(rt.to_tensor(x), rt.to_tensor(n)).numpy(), want,
                                       rtol=1e-6)


def uneven_split(x, n):
    total = x.sum()
    for i in range(n):
        total = total + rt.split(x, i + 2)[0].sum()
    return total


def test_an_uneven_split_by_the_counter_fails_as_eagerly():
    static = d2s.to_static(uneven_split, full_graph=True)
    np.testing.assert_allclose(static(rt.ones([6]), rt.to_tensor(1)).numpy(), 9.0)
    for fn in (uneven_split, static):                # 6 rows in 2, then in 3, then in 4
        with pytest.raises(ValueError, match="not divisible by 4"):
            fn(rt.ones([6]), rt.to_tensor(3))


def unpacked_halves(x, n):
    total = x.sum()
    for i in range(n):
        head, tail = rt.split(x, i + 2)
        total = total + head.sum() - tail.sum()
    return total


def test_unpacking_the_parts_says_to_give_a_python_count():
    static = d2s.to_static(unpacked_halves, full_graph=True)
    with pytest.raises(TypeError, match="parts of `split` with a count known only when") as e:
        static(rt.ones([4]), rt.to_tensor(1))
    text = assert_at_user_line(e.value, __file__, unpacked_halves.__code__.co_firstlineno + 3)
    assert "Give the count as a Python int" in text


def reference_pool1d(x, k, stride, pad, reduce, exclusive=True):
    """[N, C, L] pooled over windows of k, stride, pad (before = after)."""
    n = x.shape[-1]
    out = []
    for start in range(-pad, n + pad - k + 1, stride):
        lo, hi = max(start, 0), min(start + k, n)
        win = x[..., lo:hi]
        out.append(win.max(-1) if reduce == "max" else
                   win.sum(-1) / ((hi - lo) if exclusive else k))
    return np.stack(out, -1)


def reference_adaptive1d(x, size):
    n = x.shape[-1]
    return np.stack([x[..., (j * n) // size:-(-((j + 1) * n) // size)].mean(-1)
                     for j in range(size)], -1)


def widening_pools(x, n):
    total = x.sum() * 0
    for i in range(n):
        total = total + F.avg_pool1d(x, i + 1).sum()
        total = total + F.max_pool1d(x, i + 2, stride=1, padding=1).sum() * 0.5
        total = total + F.avg_pool1d(x, i + 2, stride=2, padding=1).sum() * 0.25
        total = total + (F.adaptive_avg_pool1d(x, i + 1) ** 2).sum()
    return total


def reference_pools(x, n):
    total = 0.0
    for i in range(n):
        total += reference_pool1d(x, i + 1, i + 1, 0, "avg").sum()
        total += reference_pool1d(x, i + 2, 1, 1, "max").sum() * 0.5
        total += reference_pool1d(x, i + 2, 2, 1, "avg").sum() * 0.25
        total += (reference_adaptive1d(x, i + 1) ** 2).sum()
    return total


XL = np.array([[[0.3, -1.2, 2.5, 0.8, -0.4, 1.9, -2.2]],
               [[1.1, 0.2, -0.7, 3.1, 0.6, -1.5, 0.05]]])


def test_1d_pools_sized_by_the_counter():
    static = d2s.to_static(widening_pools, full_graph=True)
    for n in (0, 1, 3):
        want = reference_pools(XL, n)
        for fn in (widening_pools, static):
            got = fn(rt.to_tensor(XL.astype("float32")), rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
        t = rt.to_tensor(XL.astype("float32"), stop_gradient=False)
        static(t, rt.to_tensor(n)).backward()
        if n:
            grad = numeric_grad(lambda v, n=n: reference_pools(v, n), XL)
            np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 2               # (with and without a gradient)


def image_pools(x, n):
    outs = []
    for i in range(n):
        out, mask = F.max_pool2d(x, [i + 1, 2], stride=[1, 2], padding=[0, 1],
                                 return_mask=True)
        outs.append(out.flatten())
        outs.append(mask.astype("float32").flatten())
        outs.append(F.max_pool2d(x, i + 1, ceil_mode=True).flatten())
        outs.append(F.avg_pool2d(x, i + 1, data_format="NHWC").flatten())
        outs.append(F.avg_pool2d(x, [2, i + 2], padding=1, exclusive=False).flatten())
        outs.append(F.avg_pool2d(x, i + 1, divisor_override=3).flatten())
        outs.append(F.adaptive_avg_pool2d(x, [2, i + 1]).flatten())
        big, where = F.adaptive_max_pool2d(x, [i + 1, 2], return_mask=True)
        outs.append(big.flatten())
        outs.append(where.astype("float32").flatten())
    return outs


def test_2d_pools_sized_by_the_counter_match_eager():
    static = d2s.to_static(image_pools, full_graph=True)
    x = np.random.RandomState(3).randn(1, 3, 4, 5).astype("float32")
    x[0, 0, 1, 1] = x[0, 0, 1, 2]                      # a tie: the first maximum's index
    for n in (0, 1, 3):
        want = image_pools(rt.to_tensor(x), rt.to_tensor(n))
        got = static(rt.to_tensor(x), rt.to_tensor(n))
        assert len(got) == len(want) == 9 * n
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def square_max_pools(x, n):
    total = x.sum() * 0
    for i in range(n):
        total = total + (F.max_pool2d(x, i + 1, stride=1) ** 2).sum()
    return total


def reference_square_max(x, n):
    total = 0.0
    for i in range(n):
        k = i + 1
        h, w = x.shape[2] - k + 1, x.shape[3] - k + 1
        for r in range(h):
            for c in range(w):
                total += (x[:, :, r:r + k, c:c + k].max(axis=(2, 3)) ** 2).sum()
    return total


def test_2d_max_pool_sized_by_the_counter_gradient():
    static = d2s.to_static(square_max_pools, full_graph=True)
    x = np.random.RandomState(5).permutation(24).reshape(1, 2, 3, 4) * 0.25 - 2.0
    for n in (1, 3):
        t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
        got = static(t, rt.to_tensor(n))
        np.testing.assert_allclose(got.numpy(), reference_square_max(x, n), rtol=1e-5)
        got.backward()
        grad = numeric_grad(lambda v, n=n: reference_square_max(v, n), x)
        np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)


def shrinking(x, n):
    for i in range(n):
        x = F.avg_pool1d(x, i + 2)
    return x


def test_a_kernel_that_does_not_fit_fails_as_eagerly():
    static = d2s.to_static(shrinking, full_graph=True)
    np.testing.assert_allclose(static(rt.ones([1, 1, 6]), rt.to_tensor(2)).numpy(),
                               np.ones([1, 1, 1]))
    for fn in (shrinking, static):                     # 6 -> 3 -> 1, then a kernel of 4
        with pytest.raises(ValueError, match="does not fit"):
            fn(rt.ones([1, 1, 6]), rt.to_tensor(3))
