"""`rt.split(x, [i, -1])` and a pool's padding `i`, where `i` is the counter of a loop over
`range(n_tensor)` (issue 35): the number of parts is the sections list's length (static:
the parts unpack into names), their sizes and the pool's output size are known when the
program runs. Eager vs static vs NumPy, one program for every count, gradients against finite
differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import shown
from tests.finite_differences import numeric_grad

F = rt.nn.functional
X6 = np.array([[0.5, -1.0, 2.0, 1.5, -0.25, 3.0], [1.0, 0.75, -2.0, 0.1, 2.5, -0.5]])


def head_and_rest(x, n):
    total = x.sum() * 0
    for i in range(n):
        head, rest = rt.split(x, [i, -1], axis=1)           # the first i columns, the rest
        left, mid, right = x.split([i + 1, 2, -1], axis=1)
        total = total + head.sum() * 2 + (rest ** 2).sum() * 0.5 + left.max(axis=1).sum()
        total = total + mid.mean() * 3 + right.sum() + len(rt.chunk(x, 3, axis=1))
        for part, sign in zip(rt.split(x, [2, i, -1], axis=1), [1.0, -1.0, 0.5]):
            total = total + part.sum() * sign
    return total


def reference_head_and_rest(x, n):
    total = 0.0
    for i in range(n):
        head, rest = x[:, :i], x[:, i:]
        left, mid, right = x[:, :i + 1], x[:, i + 1:i + 3], x[:, i + 3:]
        total += head.sum() * 2 + (rest ** 2).sum() * 0.5 + left.max(axis=1).sum()
        total += mid.mean() * 3 + right.sum() + 3
        total += x[:, :2].sum() - x[:, 2:2 + i].sum() + x[:, 2 + i:].sum() * 0.5
    return total


def test_sections_from_the_counter_unpack_into_parts():
    static = d2s.to_static(head_and_rest, full_graph=True)
    for n in (0, 1, 3):
        want = reference_head_and_rest(X6, n)
        for fn in (head_and_rest, static):
            got = fn(rt.to_tensor(X6.astype("float32")), rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    assert len(static.program_cache) == 1


def test_sections_from_the_counter_gradient():
    static = d2s.to_static(head_and_rest, full_graph=True)
    for n in (1, 3):
        t = rt.to_tensor(X6.astype("float32"), stop_gradient=False)
        static(t, rt.to_tensor(n)).backward()
        want = numeric_grad(lambda v, n=n: reference_head_and_rest(v, n), X6)
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def too_long_head(x, n):
    total = x.sum()
    for i in range(n):
        head, rest = rt.split(x, [i + 3, 2])
        total = total + head.sum() - rest.sum()
    return total


def test_sections_that_do_not_fit_fail_as_eagerly():
    static = d2s.to_static(too_long_head, full_graph=True)
    np.testing.assert_allclose(static(rt.ones([5]), rt.to_tensor(1)).numpy(), 6.0)
    for fn in (too_long_head, static):                    # sections [3, 2], then [4, 2]
        with pytest.raises(ValueError, match=r"sections \[4, 2\] sum to 6") as e:
            fn(rt.ones([5]), rt.to_tensor(2))
    line = too_long_head.__code__.co_firstlineno + 3
    assert f'File "{__file__}", line {line}' in shown(e.value)


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


def padded_pools(x, n):
    total = x.sum() * 0
    for i in range(n):                                    # padding 0, 1, 2: longer outputs
        total = total + (F.avg_pool1d(x, 5, stride=1, padding=i) ** 2).sum()
        total = total + F.max_pool1d(x, 4, stride=2, padding=i).sum() * 0.5
        total = total + F.avg_pool1d(x, 4, stride=1, padding=i, exclusive=False).sum()
    return total


def reference_padded_pools(x, n):
    total = 0.0
    for i in range(n):
        total += (reference_pool1d(x, 5, 1, i, "avg") ** 2).sum()
        total += reference_pool1d(x, 4, 2, i, "max").sum() * 0.5
        total += reference_pool1d(x, 4, 1, i, "avg", exclusive=False).sum()
    return total


XL = np.array([[[0.3, -1.2, 2.5, 0.8, -0.4, 1.9, -2.2]],
               [[1.1, 0.2, -0.7, 3.1, 0.6, -1.5, 0.05]]])


def test_1d_pools_padded_by_the_counter():
    static = d2s.to_static(padded_pools, full_graph=True)
    for n in (0, 1, 3):
        want = reference_padded_pools(XL, n)
        for fn in (padded_pools, static):
            t = rt.to_tensor(XL.astype("float32"), stop_gradient=False)
            got = fn(t, rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
            if n:
                got.backward()
                grad = numeric_grad(lambda v, n=n: reference_padded_pools(v, n), XL)
                np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 1


def padded_image_pools(x, n):
    outs = []
    for i in range(n):
        outs.append(F.max_pool2d(x, 3, stride=1, padding=i))
        outs.append(F.avg_pool2d(x, [3, 2], stride=1, padding=[i, 1], exclusive=False))
        outs.append(F.avg_pool2d(x, 3, stride=2, padding=[0, i, i, 1], data_format="NHWC"))
        out, mask = F.max_pool2d(x, [2, 3], padding=[1, i], return_mask=True, ceil_mode=True)
        outs.append(out)
        outs.append(mask.astype("float32"))
    return outs


def test_2d_pools_padded_by_the_counter_match_eager():
    static = d2s.to_static(padded_image_pools, full_graph=True)
    x = np.random.RandomState(3).randn(1, 3, 5, 5).astype("float32")
    for n in (0, 1, 2):
        want = padded_image_pools(rt.to_tensor(x), rt.to_tensor(n))
        got = static(rt.to_tensor(x), rt.to_tensor(n))
        assert len(got) == len(want) == 5 * n
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def test_a_padding_over_half_the_kernel_fails_as_eagerly():
    static = d2s.to_static(padded_image_pools, full_graph=True)
    x = rt.ones([1, 3, 5, 5])
    for fn in (padded_image_pools, static):              # padding 2 of a 3-wide kernel
        with pytest.raises(ValueError, match="must be at most half the kernel size") as e:
            fn(x, rt.to_tensor(3))
    line = padded_image_pools.__code__.co_firstlineno + 3
    assert f'File "{__file__}", line {line}' in shown(e.value)


def reference_pool3d(x, k, stride, pad, reduce):
    """NCDHW x pooled over [k, k, k] windows (stride, padding the same on every axis); the
    mean counts only the positions inside x."""
    size = x.shape[2:]
    starts = [range(-pad, n + pad - k + 1, stride) for n in size]
    out = np.zeros(x.shape[:2] + tuple(len(s) for s in starts))
    for j in np.ndindex(out.shape[2:]):
        lo = [max(s[a], 0) for s, a in zip(starts, j)]
        hi = [min(s[a] + k, n) for s, a, n in zip(starts, j, size)]
        win = x[:, :, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]].reshape(x.shape[:2] + (-1,))
        out[(slice(None), slice(None)) + j] = win.max(-1) if reduce == "max" else win.mean(-1)
    return out


def volume_pools(x, n):
    total = x.sum() * 0
    for i in range(n):                                    # kernels 1, 2, 3; paddings 0, 1
        total = total + (F.avg_pool3d(x, i + 1, stride=1) ** 2).sum()
        total = total + F.max_pool3d(x, 3, stride=i + 1, padding=i % 2).sum() * 0.5
    return total


def reference_volume_pools(x, n):
    total = 0.0
    for i in range(n):
        total += (reference_pool3d(x, i + 1, 1, 0, "avg") ** 2).sum()
        total += reference_pool3d(x, 3, i + 1, i % 2, "max").sum() * 0.5
    return total


def test_3d_pools_sized_and_padded_by_the_counter():
    static = d2s.to_static(volume_pools, full_graph=True)
    x = np.random.RandomState(7).permutation(36).reshape(1, 1, 3, 3, 4) * 0.125 - 2.0
    for n in (0, 1, 3):
        want = reference_volume_pools(x, n)
        for fn in (volume_pools, static):
            t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
            got = fn(t, rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
            if n:
                got.backward()
                grad = numeric_grad(lambda v, n=n: reference_volume_pools(v, n), x)
                np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 1


def volume_pool_forms(x, n):
    outs = []
    for i in range(n):
        outs.append(F.max_pool3d(x, [i + 1, 2, 1], stride=1, padding=[0, 1, 0]))
        outs.append(F.avg_pool3d(x, 2, stride=1, padding=i % 2, exclusive=False))
        outs.append(F.avg_pool3d(x, 3, stride=[1, 2, 1], padding=[i % 2, 1, 1, 0, 0, 1],
                                 data_format="NDHWC"))
        outs.append(F.max_pool3d(x, 2, stride=i + 1, padding="SAME"))
    return outs


def test_3d_pool_forms_sized_by_the_counter_match_eager():
    static = d2s.to_static(volume_pool_forms, full_graph=True)
    x = np.random.RandomState(0).randn(1, 2, 4, 3, 5).astype("float32")
    for n in (0, 1, 3):
        want = volume_pool_forms(rt.to_tensor(x), rt.to_tensor(n))
        got = static(rt.to_tensor(x), rt.to_tensor(n))
        assert len(got) == len(want) == 4 * n
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def reference_adaptive3d(x, size, reduce):
    """NCDHW x over adaptive bins: bin j of an axis of n covers [j*n // o, ceil((j+1)*n / o))."""
    def bins(n, o):
        return [(j * n // o, -(-(j + 1) * n // o)) for j in range(o)]
    out = np.zeros(x.shape[:2] + tuple(size))
    for j in np.ndindex(*size):
        lo_hi = [bins(n, o)[a] for n, o, a in zip(x.shape[2:], size, j)]
        win = x[:, :, lo_hi[0][0]:lo_hi[0][1], lo_hi[1][0]:lo_hi[1][1], lo_hi[2][0]:lo_hi[2][1]]
        win = win.reshape(x.shape[:2] + (-1,))
        out[(slice(None), slice(None)) + j] = win.max(-1) if reduce == "max" else win.mean(-1)
    return out


def adaptive_volumes(x, n):
    total = x.sum() * 0
    for i in range(n):                                    # output sizes 1, 2, 3 along D
        total = total + (F.adaptive_avg_pool3d(x, [i + 1, 2, None]) ** 2).sum()
        total = total + F.adaptive_max_pool3d(x, [2, i + 1, 1]).sum() * 0.5
    return total


def reference_adaptive_volumes(x, n):
    total = 0.0
    for i in range(n):
        total += (reference_adaptive3d(x, [i + 1, 2, x.shape[4]], "avg") ** 2).sum()
        total += reference_adaptive3d(x, [2, i + 1, 1], "max").sum() * 0.5
    return total


def test_adaptive_3d_pools_sized_by_the_counter():
    static = d2s.to_static(adaptive_volumes, full_graph=True)
    x = np.random.RandomState(2).permutation(36).reshape(1, 1, 3, 4, 3) * 0.125 - 2.0
    for n in (0, 1, 3):
        want = reference_adaptive_volumes(x, n)
        for fn in (adaptive_volumes, static):
            t = rt.to_tensor(x.astype("float32"), stop_gradient=False)
            got = fn(t, rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
            if n == 3:
                got.backward()
                grad = numeric_grad(lambda v: reference_adaptive_volumes(v, 3), x)
                np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 1


def test_adaptive_3d_pools_of_python_sizes():
    x = np.random.RandomState(4).randn(2, 3, 5, 4, 3)
    got = F.adaptive_avg_pool3d(rt.to_tensor(x.astype("float32")), 2, data_format="NDHWC")
    want = reference_adaptive3d(x.transpose(0, 4, 1, 2, 3), [2, 2, 2], "avg")
    np.testing.assert_allclose(got.numpy(), want.transpose(0, 2, 3, 4, 1), rtol=1e-5)
    got = F.adaptive_max_pool3d(rt.to_tensor(x.astype("float32")), [1, 3, 2])
    np.testing.assert_allclose(got.numpy(), reference_adaptive3d(x, [1, 3, 2], "max"),
                               rtol=1e-6)
