"""`y = x.detach()` shares x's memory in eager code (as in PyTorch and Paddle): a write into
either shows in both. Converted code follows it; where x needs a gradient the write cannot be
expressed by a program and is a clear error."""
import numpy as np
import pytest

import d2s
import runtime as rt

from tests.finite_differences import numeric_grad


def _t(a, grad=False):
    v = rt.to_tensor(np.asarray(a, "float32"))
    v.stop_gradient = not grad
    return v


def _same(fn, *inputs):
    static = d2s.to_static(fn)
    for args in inputs:
        eager = fn(*[_t(a) for a in args])
        got = static(*[_t(a) for a in args])
        for e, s in zip(eager, got, strict=True):
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6)
    assert len(static.program_cache) == 1
    return static


def test_a_write_into_a_detached_view_changes_the_base_on_the_path_taken():
    def clip_first(x):
        h = x * 2
        view = h.detach()
        if h.sum() > 0:  # a tensor condition
            view[0] = 0.0
        return h + 0, view

    _same(clip_first, ([1.0, 2.0],), ([-1.0, -2.0],))
    static = d2s.to_static(clip_first)
    h, view = static(_t([1.0, 2.0]))
    np.testing.assert_allclose(h.numpy(), [0.0, 4.0])  # NumPy: h[0] written through the view
    np.testing.assert_allclose(view.numpy(), [0.0, 4.0])


def test_a_write_into_the_base_shows_in_its_detached_views():
    def snapshot_then_write(x):
        h = x + 1
        a = h.detach()
        b = a.detach()
        h[1] = 10.0
        b[0] = -1.0
        return a, b, h

    _same(snapshot_then_write, ([1.0, 2.0, 3.0],))
    a, b, h = d2s.to_static(snapshot_then_write)(_t([1.0, 2.0, 3.0]))
    for v in (a, b, h):
        np.testing.assert_allclose(v.numpy(), [-1.0, 10.0, 4.0])


def test_writes_through_a_view_in_a_graph_loop():
    def zero_prefix(x, n):
        h = x * 1
        view = h.detach()
        i = 0
        while i < n:  # n is a tensor: a graph loop
            view[i] = 0.0
            i += 1
        return (h,)

    _same(zero_prefix, ([1.0, 2.0, 3.0], 2), ([4.0, 5.0, 6.0], 0))


def test_a_write_that_a_gradient_path_cannot_follow_is_refused():
    def loss_fn(x, w):
        h = x * w
        frozen = h.detach()
        frozen[0] = 0.0  # eager: changes h's values, not its gradient path
        return h.sum()

    with pytest.raises(TypeError, match=r"shares memory through detach\(\) .*\.clone\(\)"):
        d2s.to_static(loss_fn)(_t([1.0, 2.0]), _t([3.0, 4.0], grad=True))


def test_a_detached_copy_keeps_the_base_and_its_gradient():
    def loss_fn(x, w):
        h = x * w
        frozen = h.detach().clone()
        frozen[0] = 0.0
        return (h * frozen).sum() + h.sum()

    x, w0 = np.array([1.0, 2.0], "float32"), np.array([3.0, 4.0], "float32")
    static = d2s.to_static(loss_fn)
    w = _t(w0, grad=True)
    loss = static(_t(x), w)
    loss.backward()
    # NumPy: loss = sum(h * c) + sum(h), c = [0, h1] held constant
    c = x * w0
    c[0] = 0.0
    np.testing.assert_allclose(float(loss), float((x * w0 * c).sum() + (x * w0).sum()),
                               rtol=1e-6)
    numeric = numeric_grad(lambda wv: float((x * wv * c).sum() + (x * wv).sum()),
                           w0.astype("float64"))
    np.testing.assert_allclose(w.grad.numpy(), numeric, rtol=1e-4, atol=1e-4)
