"""Shape ops beyond the generated OpInfo tests: Tensor methods, Paddle's argument forms, and
static programs whose batch dim is unknown (-1) until run time (shapes inferred, gradients
that must not bake in a shape).
"""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
from runtime import static

A = np.arange(24.0).reshape(2, 3, 4)


def test_tensor_methods_mirror_the_functions():
    x = rt.to_tensor(A)
    assert x.reshape([4, 6]).shape == [4, 6]
    assert x.T.shape == [4, 3, 2]
    np.testing.assert_array_equal(x.T.numpy(), A.T)
    assert x.transpose([1, 0, 2]).shape == [3, 2, 4]
    assert x.unsqueeze(0).squeeze(0).shape == [2, 3, 4]
    assert x.flatten(1).shape == [2, 12]
    assert x[:, :1].expand([2, 3, 4]).shape == [2, 3, 4]
    assert x.tile([1, 2, 1]).shape == [2, 6, 4]
    assert [t.shape for t in x.split(2, axis=2)] == [[2, 3, 2]] * 2
    assert len(x.chunk(3, axis=1)) == 3 and len(x.unstack()) == 2
    np.testing.assert_array_equal(x.flip(0).numpy(), A[::-1])
    np.testing.assert_array_equal(x.roll(1, axis=2).numpy(), np.roll(A, 1, 2))
    assert int(x.numel()) == 24
    assert x.moveaxis(0, -1).shape == [3, 4, 2]
    v, _ = x.topk(2)
    np.testing.assert_array_equal(v.numpy(), A[..., ::-1][..., :2])
    np.testing.assert_array_equal(x.gather(rt.to_tensor([1]), 1).numpy(), A[:, [1]])


def test_paddle_argument_forms():
    x = rt.to_tensor(A)
    assert rt.reshape(x, (0, 12)).shape == [2, 12]
    assert rt.squeeze(rt.ones([1, 2, 1])).shape == [2]
    assert rt.squeeze(rt.ones([2, 3]), axis=0).shape == [2, 3]  # non-1 axes are kept
    assert rt.unsqueeze(rt.ones([3]), [-1, 0]).shape == [1, 3, 1]
    assert rt.broadcast_to(rt.ones([3]), [2, 3]).shape == [2, 3]
    assert rt.pad(rt.ones([1, 2, 3]), [1, 2], mode="replicate", data_format="NCL").shape == [
        1, 2, 6]
    assert rt.pad(rt.ones([1, 3, 3, 2]), [1, 1, 2, 0], data_format="NHWC").shape == [1, 5, 5, 2]


def test_concat_and_stack_take_lists_of_tensors_and_their_grads_reach_each():
    a = rt.to_tensor(np.ones((2, 3)), stop_gradient=False)
    b = rt.to_tensor(np.ones((1, 3)), stop_gradient=False)
    y = rt.concat([a, b * 2.0]) * rt.to_tensor(np.arange(9.0).reshape(3, 3))
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(b.grad.numpy(), 2 * np.arange(6.0, 9.0).reshape(1, 3))


def test_split_gradient_with_unused_pieces():
    x = rt.to_tensor(A, stop_gradient=False)
    first, _, third = rt.split(x, [1, 1, -1], axis=1)
    (first * 3.0 + third).sum().backward()
    want = np.zeros_like(A)
    want[:, 0] = 3.0
    want[:, 2] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_second_order_gradients_through_shape_ops():
    x = rt.to_tensor(np.array([[0.5, -1.0], [2.0, 0.25]]), stop_gradient=False)
    y = rt.tile(rt.pad(x, [1, 0, 0, 1], mode="constant"), [2, 1])
    y = rt.reshape(rt.transpose(y, [1, 0]), [-1])
    s = (y * y * y).sum()
    (g,) = rt.grad(s, x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 2 * 3 * x.numpy() ** 2)
    (gg,) = rt.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 2 * 6 * x.numpy())


# ---- static mode: unknown dims ---------------------------------------------------------------


def _chain(x):
    """Shape ops whose grads must read shapes at run time (the batch dim is unknown)."""
    y = rt.reshape(x, [0, -1])                       # [-1, 12]
    y = rt.unsqueeze(y, 1)                           # [-1, 1, 12]
    y = rt.concat([y, y * 2.0], axis=1)              # [-1, 2, 12]
    a, b = rt.split(y, [5, -1], axis=2)              # [-1, 2, 5], [-1, 2, 7]
    y = rt.flatten(rt.concat([b, a], axis=2), 1)     # [-1, 24]
    y = rt.tile(rt.squeeze(rt.unsqueeze(y, 0), 0), [1, 2])  # [-1, 48]
    y = rt.pad(rt.reshape(y, [-1, 4, 12]), [1, 1], mode="reflect")  # [-1, 4, 14]
    y = rt.expand(rt.unsqueeze(y, 1), [-1, 2, -1, -1])  # [-1, 2, 4, 14]
    y = rt.flip(rt.roll(rt.transpose(y, [0, 2, 3, 1]), 3, axis=2), [1])
    return rt.tanh(rt.stack(rt.unstack(y, axis=3), axis=0))


def test_static_shapes_with_unknown_batch_and_gradients_match_eager():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3, 4], "float64")
        x.stop_gradient = False
        y = _chain(x)
        assert list(y.shape) == [2, -1, 4, 14]
        (gx,) = static.gradients([(y * y).sum()], [x])
    rng = np.random.default_rng(0)
    for batch in (2, 5):
        a = rng.standard_normal((batch, 3, 4))
        out, g = static.Executor().run(main, feed={"x": a}, fetch_list=[y, gx])
        w = rt.to_tensor(a, stop_gradient=False)
        ey = _chain(w)
        (ey * ey).sum().backward()
        np.testing.assert_allclose(out, ey.numpy(), rtol=1e-12)
        np.testing.assert_allclose(g, w.grad.numpy(), rtol=1e-10)


def test_static_infer_rules_report_bad_shapes_at_build_time():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3, 4], "float32")
        with pytest.raises(ValueError, match=r"reshape: cannot reshape x of shape \[-1, 3, 4\]"):
            rt.reshape(x, [0, 5, -1])
        with pytest.raises(ValueError, match=r"concat: x\[1\] has shape \[-1, 2, 4\] but x\[0\]"):
            rt.concat([x, x[:, :2, None, 0].expand([-1, 2, 4])], axis=2)
        assert list(rt.reshape(x, [-1, 6]).shape) == [-1, 6]
        assert list(rt.reshape(x, [0, -1]).shape) == [-1, 12]
        assert list(rt.reshape(x, [0, 2, 3, 2]).shape) == [-1, 2, 3, 2]
        assert list(rt.split(x, 2, axis=2)[0].shape) == [-1, 3, 2]
        assert list(rt.shape(x).shape) == [3]
