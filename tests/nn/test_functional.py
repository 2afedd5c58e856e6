"""Behaviours of `runtime.nn.functional` that the generated op tests cannot express: dropout
seeding and scaling, batch_norm running statistics, cross_entropy's ignore_index, pooling
edge cases and layouts, higher-order gradients, and static programs with a dynamic batch.
(Values and first-order gradients of every op are checked in tests/ops/opinfo_nn.py.)
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import runtime as rt
import runtime.nn.functional as F
from runtime import static
from runtime.ops import OPS


def t(a, grad=False):
    return rt.to_tensor(np.asarray(a), stop_gradient=not grad)


# ---- dropout --------------------------------------------------------------------------------

def test_dropout_scales_kept_values_and_zeroes_the_rest():
    x = rt.ones([200, 50])
    rt.seed(3)
    y = F.dropout(x, p=0.3).numpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((y == 0).mean() - 0.3) < 0.02
    rt.seed(3)
    y2 = F.dropout(x, p=0.3, mode="downscale_in_infer").numpy()
    np.testing.assert_array_equal(y2 != 0, y != 0)  # same seed, same mask
    assert set(np.unique(y2)) == {0.0, 1.0}


def test_dropout_is_reproducible_from_the_seed_and_differs_between_calls():
    x = rt.ones([64])
    rt.seed(7)
    a, b = F.dropout(x).numpy(), F.dropout(x).numpy()
    rt.seed(7)
    np.testing.assert_array_equal(F.dropout(x).numpy(), a)
    assert (a != b).any()


def test_dropout_gradient_uses_the_forward_mask():
    x = t(np.random.default_rng(0).standard_normal((8, 16)), grad=True)
    y = F.dropout(x, p=0.5)
    y.backward(t(np.ones((8, 16))))
    kept = y.numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), kept * 2.0)


def test_dropout_eval_modes_and_axis():
    x = t(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(F.dropout(x, 0.4, training=False).numpy(), x.numpy())
    np.testing.assert_allclose(F.dropout(x, 0.4, training=False, mode="downscale_in_infer")
                               .numpy(), x.numpy() * 0.6)
    rt.seed(1)
    y = F.dropout(rt.ones([4, 100]), p=0.5, axis=1).numpy()
    assert (y == y[:1]).all()  # one mask shared along axis 0


# ---- batch norm -----------------------------------------------------------------------------

def test_batch_norm_updates_running_stats_in_training_only():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 2, 2)) * 2 + 1
    mean, var = rt.zeros([3], dtype="float64"), rt.ones([3], dtype="float64")
    F.batch_norm(t(x), mean, var, training=True, momentum=0.8)
    np.testing.assert_allclose(mean.numpy(), 0.2 * x.mean(axis=(0, 2, 3)))
    np.testing.assert_allclose(var.numpy(), 0.8 + 0.2 * x.var(axis=(0, 2, 3)))  # biased
    before = mean.numpy().copy()
    y = F.batch_norm(t(x), mean, var, training=False)
    np.testing.assert_array_equal(mean.numpy(), before)
    want = (x - before.reshape(1, 3, 1, 1)) / np.sqrt(var.numpy().reshape(1, 3, 1, 1) + 1e-5)
    np.testing.assert_allclose(y.numpy(), want)
    F.batch_norm(t(x), mean, var, training=True, use_global_stats=True)
    np.testing.assert_array_equal(mean.numpy(), before)


def test_batch_norm_nhwc_matches_nchw():
    x = np.random.default_rng(1).standard_normal((3, 4, 4, 2))
    w, b = t(np.array([1.5, -0.5])), t(np.array([0.1, 0.2]))
    y = F.batch_norm(t(x), rt.zeros([2], "float64"), rt.ones([2], "float64"), w, b,
                     training=True, data_format="NHWC")
    y2 = F.batch_norm(t(x.transpose(0, 3, 1, 2)), rt.zeros([2], "float64"),
                      rt.ones([2], "float64"), w, b, training=True)
    np.testing.assert_allclose(y.numpy(), y2.numpy().transpose(0, 2, 3, 1))


# ---- cross entropy --------------------------------------------------------------------------

def test_cross_entropy_ignore_index_is_left_out_of_value_count_and_gradient():
    rng = np.random.default_rng(0)
    logits = t(rng.standard_normal((4, 3)), grad=True)
    label = t(np.array([2, -100, 0, -100]))
    loss = F.cross_entropy(logits, label)
    lp = logits.numpy() - np.log(np.exp(logits.numpy()).sum(1, keepdims=True))
    assert np.isclose(loss.item(), -(lp[0, 2] + lp[2, 0]) / 2)
    loss.backward()
    np.testing.assert_array_equal(logits.grad.numpy()[[1, 3]], 0.0)
    assert np.abs(logits.grad.numpy()[[0, 2]]).sum() > 0.1


def test_cross_entropy_all_ignored_gives_zero_not_nan():
    loss = F.cross_entropy(t(np.ones((2, 3))), t(np.array([5, 5])), ignore_index=5)
    assert loss.item() == 0.0


def test_cross_entropy_is_stable_for_huge_logits():
    loss = F.cross_entropy(t(np.array([[1000.0, -1000.0]])), t(np.array([1])))
    assert np.isclose(loss.item(), 2000.0)
    bce = F.binary_cross_entropy_with_logits(t(np.array([-800.0, 800.0])),
                                             t(np.array([1.0, 0.0])), reduction="none")
    np.testing.assert_allclose(bce.numpy(), [800.0, 800.0])


def test_cross_entropy_label_out_of_range_is_a_clear_error():
    with pytest.raises(ValueError, match=r"nll_loss: label value 7 is out of range for 3"):
        F.cross_entropy(t(np.ones((2, 3))), t(np.array([0, 7])))


# ---- pooling, convolution layouts -----------------------------------------------------------

def test_max_pool_mask_points_at_the_maxima_and_padding_never_wins():
    x = -np.abs(np.random.default_rng(2).standard_normal((1, 2, 5, 5))) - 1
    out, mask = F.max_pool2d(t(x), 3, stride=2, padding=1, return_mask=True)
    assert mask.dtype == "int64" and out.shape == [1, 2, 3, 3]
    picked = np.take_along_axis(x.reshape(1, 2, -1), mask.numpy().reshape(1, 2, -1), -1)
    np.testing.assert_array_equal(picked.reshape(out.shape), out.numpy())
    assert (out.numpy() < -1).all()  # all inputs are below -1; the zero-padding is not


def test_pool_ceil_mode_and_same_padding_shapes():
    x = rt.ones([1, 1, 7, 7])
    assert F.max_pool2d(x, 2, ceil_mode=True).shape == [1, 1, 4, 4]
    assert F.max_pool2d(x, 2).shape == [1, 1, 3, 3]
    assert F.avg_pool2d(x, 3, stride=2, padding="SAME").shape == [1, 1, 4, 4]
    np.testing.assert_allclose(F.avg_pool2d(x, 3, stride=2, padding=1).numpy(), 1.0)
    edge = F.avg_pool2d(x, 3, stride=2, padding=1, exclusive=False).numpy()
    assert np.isclose(edge[0, 0, 0, 0], 4 / 9)  # padding counted when not exclusive


@pytest.mark.parametrize("fn", [
    lambda x, fmt: F.conv2d(x, t(np.ones((4, 3, 3, 3)) * 0.1), padding=1, data_format=fmt),
    lambda x, fmt: F.max_pool2d(x, 2, data_format=fmt),
    lambda x, fmt: F.interpolate(x, scale_factor=2, mode="bilinear", data_format=fmt),
])
def test_nhwc_equals_transposed_nchw(fn):
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 4))
    got = fn(t(x.transpose(0, 2, 3, 1)), "NHWC").numpy()
    np.testing.assert_allclose(got, fn(t(x), "NCHW").numpy().transpose(0, 2, 3, 1))


def test_conv2d_transpose_output_size_and_adjointness():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 3, 3, 3))
    y = F.conv2d_transpose(t(x), t(w), stride=2, padding=1, output_size=[8, 8])
    assert y.shape == [1, 3, 8, 8]
    # <convT(x), z> == <x, conv(z)>: the transpose is the adjoint of the convolution
    z = rng.standard_normal(y.shape)
    lhs = (y.numpy() * z).sum()
    rhs = (x * F.conv2d(t(z), t(w), stride=2, padding=1).numpy()).sum()
    assert np.isclose(lhs, rhs)


# ---- higher-order gradients -----------------------------------------------------------------

@pytest.mark.parametrize("name,f", [
    ("conv2d", lambda x, w: F.conv2d(x, w, stride=2, padding=1)),
    ("conv2d_transpose", lambda x, w: F.conv2d_transpose(x, w, stride=2, padding=1)),
    ("linear", lambda x, w: F.linear(x, w)),
])
def test_second_order_gradient_of_bilinear_ops(name, f):
    """d/dw <d/dx <f(x, w), gy>, v> by autograd vs finite differences in w."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 5, 5) if name != "linear" else (3, 4))
    w = rng.standard_normal({"conv2d": (3, 2, 3, 3), "conv2d_transpose": (2, 3, 3, 3),
                             "linear": (4, 2)}[name])
    gy = rng.standard_normal(f(t(x), t(w)).shape)
    v = rng.standard_normal(x.shape)

    def first(w_arr, create=False):
        xt, wt = t(x, grad=True), t(w_arr, grad=True)
        (gx,) = rt.grad(f(xt, wt), [xt], grad_outputs=t(gy), create_graph=create)
        return gx, wt

    gx, wt = first(w, create=True)
    (gw,) = rt.grad((gx * t(v)).sum(), [wt])
    want = numeric_grad(lambda a: float((first(a)[0].numpy() * v).sum()), w)
    np.testing.assert_allclose(gw.numpy(), want, atol=1e-6)


@pytest.mark.parametrize("wrt", ["x", "gy"])
def test_second_order_gradient_of_conv2d_grad_filter(wrt):
    """d/dx and d/dgy of <d/dw <conv2d(x, w), gy>, v>: the gradient of `conv2d_grad_filter`
    in its other two inputs (the test above reaches it only through `conv2d_grad_input`)."""
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    gy = rng.standard_normal(F.conv2d(t(x), t(w), stride=2, padding=1).shape)
    v = rng.standard_normal(w.shape)

    def grad_w(x_arr, gy_arr, create=False):
        xt, wt, gt = t(x_arr, grad=True), t(w, grad=True), t(gy_arr, grad=True)
        (gw,) = rt.grad(F.conv2d(xt, wt, stride=2, padding=1), [wt], grad_outputs=gt,
                        create_graph=create)
        return gw, xt, gt

    gw, xt, gt = grad_w(x, gy, create=True)
    (got,) = rt.grad((gw * t(v)).sum(), [xt if wrt == "x" else gt])
    if wrt == "x":
        want = numeric_grad(lambda a: float((grad_w(a, gy)[0].numpy() * v).sum()), x)
    else:
        want = numeric_grad(lambda a: float((grad_w(x, a)[0].numpy() * v).sum()), gy)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


@pytest.mark.parametrize("f", [
    lambda x: F.softmax(x * x, axis=1),
    lambda x: F.log_softmax(x * x),
    lambda x: F.layer_norm(x * x, x.shape[-1]),
    lambda x: F.batch_norm(x * x, rt.zeros([4], "float64"), rt.ones([4], "float64"),
                           training=True),
    lambda x: F.gelu(x * x),
    lambda x: F.max_pool2d(x.reshape([1, 1, 3, 4]) * x.reshape([1, 1, 3, 4]), 2),
    lambda x: F.avg_pool2d(x.reshape([1, 1, 3, 4]) ** 3, 2, stride=1),
    lambda x: F.interpolate(x.reshape([1, 1, 3, 4]) ** 3, size=[4, 5], mode="bilinear"),
])
def test_second_order_gradient_of_nonlinear_ops(f):
    """The Hessian-vector product from double backward vs finite differences of the grad."""
    rng = np.random.default_rng(6)
    x0, gy, v = (rng.standard_normal((3, 4)) for _ in range(3))
    gy = rng.standard_normal(f(t(x0)).shape)

    def grad_at(a, create=False):
        xt = t(a, grad=True)
        (g,) = rt.grad(f(xt), [xt], grad_outputs=t(gy), create_graph=create)
        return g, xt

    g, xt = grad_at(x0, create=True)
    (hv,) = rt.grad((g * t(v)).sum(), [xt])
    want = numeric_grad(lambda a: float((grad_at(a)[0].numpy() * v).sum()), x0)
    np.testing.assert_allclose(hv.numpy(), want, atol=1e-5)


# ---- static programs ------------------------------------------------------------------------

def test_small_cnn_in_a_static_program_with_dynamic_batch_matches_eager():
    rng = np.random.default_rng(7)
    w = t(rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    lw = t(rng.standard_normal((16, 5)).astype("float32"))

    def net(x, label, mean, var):
        h = F.relu(F.batch_norm(F.conv2d(x, w, padding=1), mean, var, training=True))
        h = F.adaptive_avg_pool2d(F.max_pool2d(h, 2), 2)
        out = F.linear(rt.flatten(h, 1), lw)
        return F.cross_entropy(out, label), F.softmax(out)

    stats = (rt.zeros([4]), rt.ones([4]))
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [-1, 3, 8, 8], "float32")
        label = static.data("label", [-1], "int64")
        loss, prob = net(x, label, *stats)
    assert prob.shape == [-1, 5]
    eager_stats = (rt.zeros([4]), rt.ones([4]))
    for n in (2, 5):
        xv, lv = rng.standard_normal((n, 3, 8, 8)).astype("float32"), rng.integers(0, 5, n)
        got = static.Executor().run(main, feed={"x": xv, "label": lv}, fetch_list=[loss, prob])
        want = net(t(xv), t(lv), *eager_stats)
        np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-5)
        np.testing.assert_allclose(got[1], want[1].numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(stats[0].numpy(), eager_stats[0].numpy(), rtol=1e-6)


def test_amp_categories():
    white = ("conv2d", "conv2d_transpose", "linear", "conv2d_grad_input", "conv2d_grad_filter")
    black = ("softmax", "log_softmax", "nll_loss", "batch_norm", "layer_norm", "group_norm")
    assert all(OPS[n].amp == "white" for n in white)
    assert all(OPS[n].amp == "black" for n in black)
    assert OPS["relu"].amp == "promote"


def test_static_shape_inference_keeps_unknown_dims_unknown():
    w = rt.ones([6, 2, 3, 3])
    cases = [
        (lambda x: F.conv2d(x, w, groups=2, padding="SAME", stride=2), [-1, 6, -1, -1]),
        (lambda x: F.conv2d_transpose(x, rt.ones([4, 3, 3, 3]), stride=2), [-1, 3, -1, -1]),
        (lambda x: F.max_pool2d(x, 3), [-1, 4, -1, -1]),
        (lambda x: F.avg_pool2d(x, 2, ceil_mode=True), [-1, 4, -1, -1]),
        (lambda x: F.adaptive_avg_pool2d(x, [2, None]), [-1, 4, 2, -1]),
        (lambda x: F.interpolate(x, size=[5, 6]), [-1, 4, 5, 6]),
        (lambda x: F.group_norm(x, 2), [-1, 4, -1, -1]),
    ]
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [-1, 4, -1, -1], "float32")
        for fn, shape in cases:
            assert fn(x).shape == shape
        with pytest.raises(ValueError, match=r"conv2d: x has shape \[-1, 4, -1, -1\] \(4 "):
            F.conv2d(x, rt.ones([2, 3, 3, 3]))


def test_dropout_in_a_static_program_draws_per_run_and_its_gradient_reuses_the_mask():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [-1, 32], "float32")
        x.stop_gradient = False
        y = F.dropout(x, p=0.5)
        (dx,) = static.gradients([rt.sum(y)], [x])
    feed = {"x": np.ones((4, 32), "float32")}
    exe = static.Executor()
    rt.seed(5)
    a, ga = exe.run(main, feed=feed, fetch_list=[y, dx])
    b, _ = exe.run(main, feed=feed, fetch_list=[y, dx])
    rt.seed(5)
    c, _ = exe.run(main, feed=feed, fetch_list=[y, dx])
    assert (a != b).any()
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(ga, a)  # d(sum(x * mask * 2))/dx = mask * 2 = y for x = 1
