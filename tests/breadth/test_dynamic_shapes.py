"""Shapes computed from `rt.shape(x)` inside converted code (issue 22 item 4): interpolate to
a run-time size, reshape / expand / tile / slice with shape tensors, in one program traced with
unknown dims (InputSpec None) and run at several sizes; values vs NumPy and eager, gradients
vs eager and finite differences."""
import numpy as np

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.static import InputSpec
from tests.finite_differences import numeric_grad


def shaped(x, mode):
    s = rt.shape(x)
    n, h, w = s[0], s[2], s[3]
    up = F.interpolate(x, size=[h * 2, w + 1], mode=mode)
    up2 = F.interpolate(x, scale_factor=2, mode=mode)
    flat = rt.reshape(x, [n, -1])
    ex = rt.expand(rt.ones([1, 1], dtype=x.dtype), [n, s[1]])
    tiled = rt.tile(x, [1, 1, 1, n])
    cut = rt.slice(x, axes=[2], starts=[0], ends=[h - 1])
    return up, up2, flat, ex, tiled, cut


def _numpy_parts(x):
    n, c, h, _ = x.shape
    return (x.reshape(n, -1), np.ones((n, c), x.dtype), np.tile(x, (1, 1, 1, n)),
            x[:, :, :h - 1])


def _weights(outs, rng):
    return [rng.standard_normal(o.shape) for o in outs]


def _loss(outs, ws):
    total = None
    for o, w in zip(outs, ws):
        term = rt.sum(o * rt.to_tensor(w.astype(o.numpy().dtype)))
        total = term if total is None else total + term
    return total


def test_shapes_from_rt_shape_in_one_program_at_several_sizes():
    for mode in ("nearest", "bilinear"):
        static_fn = d2s.to_static(lambda x: shaped(x, mode),
                                  input_spec=[InputSpec([None, 2, None, None], "float64")])
        rng = np.random.default_rng(0)
        for shape in ((1, 2, 3, 4), (3, 2, 5, 2), (2, 2, 2, 3)):
            x0 = rng.standard_normal(shape)
            eager = shaped(rt.to_tensor(x0), mode)
            got = static_fn(rt.to_tensor(x0))
            n, _, h, w = shape
            assert eager[0].shape == [n, 2, 2 * h, w + 1] and eager[1].shape == [n, 2, 2 * h,
                                                                                 2 * w]
            for e, g in zip(eager, got, strict=True):
                np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)
            for g, want in zip(got[2:], _numpy_parts(x0), strict=True):
                np.testing.assert_array_equal(g.numpy(), want)


def test_gradients_through_runtime_sizes_match_eager_and_finite_differences():
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, 2, 3, 2))
    ws = _weights(shaped(rt.to_tensor(x0), "bilinear"), rng)

    def grad_of(fn):
        x = rt.to_tensor(x0, stop_gradient=False)
        _loss(fn(x), ws).backward()
        return x.grad.numpy()

    static_fn = d2s.to_static(lambda x: shaped(x, "bilinear"),
                              input_spec=[InputSpec([None, 2, None, None], "float64")])
    eager = grad_of(lambda x: shaped(x, "bilinear"))
    np.testing.assert_allclose(grad_of(static_fn), eager, rtol=1e-10, atol=1e-10)
    numeric = numeric_grad(
        lambda a: float(_loss(shaped(rt.to_tensor(a), "bilinear"), ws)), x0.copy())
    np.testing.assert_allclose(eager, numeric, rtol=1e-6, atol=1e-6)
