"""A converted call's outputs are recorded as ONE autograd node, but a backward() without
retain_graph frees only what it went through, as eager autograd does: a second backward()
through outputs computed apart from the first's runs and accumulates into `.grad` (checked
against finite differences), one through an output that shares an op with them raises eager's
"already freed" error, and `retain_graph=True` keeps everything. Inputs take both paths of a
tensor `if`; each converted function is called several times (its later calls take the fast
call path)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

XS = [np.array([0.5, 1.0, 2.0], "float32"), np.array([-1.5, 0.25, -2.0], "float32")]
W0 = np.array([0.3, -0.7, 1.1], "float32")
V0 = np.array([-0.4, 0.9, 0.2], "float32")


def two_heads(x, w, v):
    h = rt.tanh(x * w)
    if x.sum() > 0:
        g = rt.sin(x * v) + w * v
    else:
        g = (x * v) ** 2
    return h, g


def _two_heads_np(x, w, v):
    h = np.tanh(x * w)
    g = np.sin(x * v) + w * v if x.sum() > 0 else (x * v) ** 2
    return h, g


def shared_body(x, w):
    t = x * w
    if x.sum() > 0:
        t = t * 2
    return rt.tanh(t), rt.sin(t)


def _leaves():
    return (rt.to_tensor(W0, stop_gradient=False), rt.to_tensor(V0, stop_gradient=False))


def _grad_np(x, which: int, first: int, second: int) -> np.ndarray:
    """d(sum of output `first`) + d(sum of output `second`) of `two_heads` with respect to
    its leaf `which` (0: w, 1: v), by finite differences in float64."""
    x, w0, v0 = (a.astype("float64") for a in (x, W0, V0))

    def f(p):
        w, v = (p, v0) if which == 0 else (w0, p)
        outs = _two_heads_np(x, w, v)
        return outs[first].sum() + outs[second].sum()

    return numeric_grad(f, (w0, v0)[which])


def _freed_error(t) -> str:
    with pytest.raises(RuntimeError) as info:
        t.sum().backward()
    return str(info.value)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_second_backward_through_a_separate_output_runs(order):
    static = d2s.to_static(two_heads)
    for x0 in XS:
        grads = []
        for fn in (two_heads, static):
            w, v = _leaves()
            outs = fn(rt.to_tensor(x0), w, v)
            assert len(outs) == 2
            np.testing.assert_allclose([o.numpy() for o in outs],
                                       _two_heads_np(x0, W0, V0), rtol=1e-6)
            outs[order[0]].sum().backward()
            outs[order[1]].sum().backward()  # computed apart from the first: runs
            assert (w.grad is None, v.grad is None) == (False, False)
            grads.append((w.grad.numpy(), v.grad.numpy()))
        for which, (eager, converted) in enumerate(zip(*grads, strict=True)):
            np.testing.assert_allclose(converted, eager, rtol=1e-6)
            np.testing.assert_allclose(converted, _grad_np(x0, which, *order), rtol=1e-4,
                                       atol=1e-6)


def test_backward_through_a_freed_output_raises_as_eagerly():
    static = d2s.to_static(two_heads)
    for x0 in XS:
        errors = []
        for fn in (two_heads, static):
            h, g = fn(rt.to_tensor(x0), *_leaves())
            h.sum().backward()
            g.sum().backward()
            errors.append((_freed_error(h), _freed_error(g)))
        assert "already freed" in errors[0][0]
        assert errors[1] == errors[0]


def test_outputs_sharing_an_op_raise_eagers_error():
    static = d2s.to_static(shared_body)
    for x0 in XS:
        errors = []
        for fn in (shared_body, static):
            w = rt.to_tensor(W0, stop_gradient=False)
            a, b = fn(rt.to_tensor(x0), w)
            a.sum().backward()
            errors.append(_freed_error(b))
            scale = 2 if x0.sum() > 0 else 1
            np.testing.assert_allclose(  # (the first backward's gradient stays)
                w.grad.numpy(), scale * x0 * (1 - np.tanh(scale * x0 * W0) ** 2), rtol=1e-5)
        assert "already freed" in errors[0]
        assert errors[1] == errors[0]


def test_retain_graph_keeps_the_shared_graph():
    static = d2s.to_static(shared_body)
    for x0 in XS:
        grads = []
        for fn in (shared_body, static):
            w = rt.to_tensor(W0, stop_gradient=False)
            a, b = fn(rt.to_tensor(x0), w)
            a.sum().backward(retain_graph=True)
            b.sum().backward()
            grads.append(w.grad.numpy())
        scale = 2 if x0.sum() > 0 else 1

        def f(p, x=x0.astype("float64"), scale=scale):
            t = x * p * scale
            return np.tanh(t).sum() + np.sin(t).sum()

        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
        np.testing.assert_allclose(grads[1], numeric_grad(f, W0.astype("float64")),
                                   rtol=1e-4, atol=1e-6)


def test_a_sum_of_both_outputs_frees_both():
    static = d2s.to_static(two_heads)
    errors = []
    for fn in (two_heads, static):
        h, g = fn(rt.to_tensor(XS[0]), *_leaves())
        (h + g).sum().backward()
        errors.append((_freed_error(h), _freed_error(g)))
    assert "already freed" in errors[0][0]
    assert errors[1] == errors[0]


def test_eager_graphs_before_the_call_are_freed_only_where_a_backward_went():
    """The call's inputs computed by eager ops: a backward through one output frees the eager
    graph of the inputs that output is computed from, not the others'."""
    static = d2s.to_static(two_heads)
    x0 = XS[0]
    grads, errors = [], []
    for fn in (two_heads, static):
        w, v = _leaves()
        h, g = fn(rt.to_tensor(x0), w * 2, v * 3)  # g reads both, h only w * 2
        g.sum().backward()
        errors.append(_freed_error(h))  # its input w * 2 was freed by g's backward
        u = w * 1.5
        h, g = fn(rt.to_tensor(x0), u, v * 3)
        g2 = fn(rt.to_tensor(x0), w, v)[1]
        h.sum().backward()
        g2.sum().backward()  # another call's output: runs
        grads.append((w.grad.numpy(), v.grad.numpy()))
    assert "already freed" in errors[0]
    assert errors[1] == errors[0]
    assert len(grads[0]) == len(grads[1])
    for eager, converted in zip(*grads, strict=True):
        np.testing.assert_allclose(converted, eager, rtol=1e-6)


def heads_in_branches(x, w, v):
    t = x * v
    if x.sum() > 0:
        a, b, c = rt.tanh(x * w), rt.sin(t), rt.cos(t)
    else:
        a, b, c = x * w * 3, t * t, t + 1
    return a, b, c


def _heads_in_branches_np(x, w, v):
    t = x * v
    if x.sum() > 0:
        return np.tanh(x * w), np.sin(t), np.cos(t)
    return x * w * 3, t * t, t + 1


def test_outputs_computed_in_one_tensor_if_are_freed_apart():
    """Outputs of one tensor `if`: `a` is computed apart from `b` and `c`, which share `t`."""
    static = d2s.to_static(heads_in_branches)
    for x0 in XS:
        grads, errors = [], []
        for fn in (heads_in_branches, static):
            w, v = _leaves()
            a, b, c = fn(rt.to_tensor(x0), w, v)
            b.sum().backward()
            a.sum().backward()  # computed apart from b: runs
            errors.append(_freed_error(c))  # shares x * v with b
            grads.append((w.grad.numpy(), v.grad.numpy()))
        assert "already freed" in errors[0]
        assert errors[1] == errors[0]
        x, w0, v0 = (p.astype("float64") for p in (x0, W0, V0))
        refs = (numeric_grad(lambda p: _heads_in_branches_np(x, p, v0)[0].sum(), w0),
                numeric_grad(lambda p: _heads_in_branches_np(x, w0, p)[1].sum(), v0))
        for eager, converted, ref in zip(*grads, refs, strict=True):
            np.testing.assert_allclose(converted, eager, rtol=1e-6)
            np.testing.assert_allclose(converted, ref, rtol=1e-4, atol=1e-6)
