"""AMP: per-op precision from the registry, automatic casts of mismatched inputs, custom lists,
gradients through casts, accuracy vs float32, GradScaler dynamics and O2 decorate."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
import runtime.nn.functional as F
from runtime.ops.registry import STATE


def _t(*shape, seed=0, stop_gradient=True):
    rng = np.random.default_rng(seed)
    return rt.to_tensor(rng.standard_normal(shape).astype(np.float32),
                        stop_gradient=stop_gradient)


def test_op_precision_follows_categories():
    x, w = _t(4, 8), _t(8, 5, seed=1)
    img, k = _t(2, 3, 6, 6, seed=2), _t(4, 3, 3, 3, seed=3)
    with rt.amp.auto_cast():
        y = rt.matmul(x, w)                 # white
        c = F.conv2d(img, k)                # white
        r = F.relu(y)                       # promote, float16 input: stays float16
        e = rt.exp(y)                       # black
        s = F.softmax(y)                    # black
        mixed = y + rt.ones([5])            # promote with float16 + float32: float32
        keep = rt.reshape(y, [20])          # keep
        idx = rt.argmax(y, axis=1)          # integer output untouched
        cat = rt.concat([y, rt.ones([4, 5])])  # a list input with mixed precision
        same = rt.concat([y, y])               # agreeing inputs are left alone
    assert (y.dtype, c.dtype, r.dtype) == ("float16", "float16", "float16")
    assert (e.dtype, s.dtype, mixed.dtype) == ("float32", "float32", "float32")
    assert keep.dtype == "float16" and idx.dtype == "int64"
    assert cat.dtype == "float32" and same.dtype == "float16"
    np.testing.assert_array_equal(cat.numpy()[:4], y.numpy().astype(np.float32))
    assert STATE.amp is None  # restored on exit
    assert rt.matmul(x, w).dtype == "float32"


def test_values_close_to_float32():
    x, w = _t(16, 32), _t(32, 8, seed=1)
    ref = F.softmax(rt.matmul(x, w)).numpy()
    with rt.amp.auto_cast():
        got = F.softmax(rt.matmul(x, w))
    np.testing.assert_allclose(got.numpy(), ref, rtol=2e-2, atol=2e-3)
    # the matmul really ran in float16: the result differs from float32 in low bits
    with rt.amp.auto_cast():
        y16 = rt.matmul(x, w).numpy()
    assert not np.array_equal(y16.astype(np.float32), rt.matmul(x, w).numpy())


def test_float64_is_never_cast():
    x = rt.to_tensor(np.ones((2, 3)), dtype="float64")
    with rt.amp.auto_cast():
        assert rt.matmul(x, x.transpose([1, 0])).dtype == "float64"


def test_custom_lists():
    x, w = _t(3, 4), _t(4, 4, seed=1)
    with rt.amp.auto_cast(custom_white_list=["exp"], custom_black_list=["matmul"]):
        y = rt.matmul(x, w)
        e = rt.exp(y.astype("float16"))
        assert "exp" in rt.amp.white_list() and "matmul" in rt.amp.black_list()
    assert y.dtype == "float32" and e.dtype == "float16"
    assert "matmul" in rt.amp.white_list() and "exp" in rt.amp.black_list()
    with pytest.raises(ValueError, match="unknown ops"):
        rt.amp.auto_cast(custom_white_list=["matmul_v2"])
    with pytest.raises(ValueError, match="both"):
        rt.amp.auto_cast(custom_white_list=["exp"], custom_black_list=["exp"])


def test_disable_nested_decorator_and_bfloat16():
    x, w = _t(2, 4), _t(4, 3, seed=1)

    @rt.amp.auto_cast()
    def f(a, b):
        with rt.amp.auto_cast(enable=False):
            inner = rt.matmul(a, b)
        return rt.matmul(a, b), inner

    out, inner = f(x, w)
    assert out.dtype == "float16" and inner.dtype == "float32"
    with rt.amp.auto_cast(dtype="bfloat16", custom_white_list=["multiply"]):
        t = x * 3.0
    assert t.dtype == "bfloat16"
    np.testing.assert_allclose(t.numpy().astype(np.float32), x.numpy() * 3, rtol=1e-2)
    with pytest.raises(ValueError, match="level"):
        rt.amp.auto_cast(level="O3")
    with pytest.raises(ValueError, match="dtype"):
        rt.amp.auto_cast(dtype="float64")


def test_gradients_flow_through_casts_to_float32_params():
    x = _t(6, 4)
    w = rt.Parameter(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))
    ref = rt.grad([F.softmax(rt.matmul(x, w)).sum() * 0 + rt.exp(rt.matmul(x, w)).sum()],
                  [w])[0].numpy()
    with rt.amp.auto_cast():
        loss = rt.exp(rt.matmul(x, w)).sum()
    loss.backward()
    assert w.grad.dtype == "float32" and loss.dtype == "float32"
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=2e-2, atol=2e-2)


def test_o2_promotes_as_paddle_use_promote():
    x = _t(2, 3)
    with rt.amp.auto_cast(level="O2"):  # use_promote=True: float32 inputs stay float32
        y = x * 2.0 + 1.0
        h = x.astype("float16") * 2.0
        assert "add" not in rt.amp.white_list()
    assert y.dtype == "float32" and h.dtype == "float16"
    with rt.amp.auto_cast(level="O2", use_promote=False):
        y = x * 2.0 + 1.0
        e = rt.exp(x)
        assert "add" in rt.amp.white_list()
    assert y.dtype == "float16" and e.dtype == "float32"


# ---- GradScaler ----------------------------------------------------------------------------

def _param_and_opt(lr=0.5):
    w = rt.Parameter(np.array([1.0, 2.0, 3.0], np.float32))
    return w, rt.optimizer.SGD(lr, parameters=[w])


def test_scaler_scales_and_unscales():
    w, opt = _param_and_opt()
    scaler = rt.amp.GradScaler(init_loss_scaling=1024.0)
    loss = (w * w).sum()
    scaled = scaler.scale(loss)
    np.testing.assert_allclose(float(scaled), 1024 * 14.0, rtol=1e-6)
    scaled.backward()
    np.testing.assert_allclose(w.grad.numpy(), 1024 * 2 * np.array([1, 2, 3]), rtol=1e-6)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(w.numpy(), [1 - 0.5 * 2, 2 - 0.5 * 4, 3 - 0.5 * 6], rtol=1e-6)


def test_scaler_skips_inf_steps_and_adapts_scale():
    w, opt = _param_and_opt()
    scaler = rt.amp.GradScaler(init_loss_scaling=8.0, incr_every_n_steps=2,
                               decr_every_n_nan_or_inf=1, incr_ratio=2.0, decr_ratio=0.25)
    before = w.numpy().copy()
    w.grad = rt.to_tensor(np.array([1.0, np.inf, 1.0], np.float32))
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.numpy(), before)  # skipped
    assert float(scaler.get_loss_scaling()) == 2.0
    for k in range(2):
        opt.clear_grad()
        w.grad = rt.to_tensor(np.full(3, 2.0, np.float32))  # scaled grad 2 -> unscaled 1
        scaler.step(opt)
        scaler.update()
        np.testing.assert_allclose(w.numpy(), before - 0.5 * (k + 1), rtol=1e-6)
    assert float(scaler.get_loss_scaling()) == 4.0  # grew after 2 clean steps
    w.grad = rt.to_tensor(np.array([np.nan, 1.0, 1.0], np.float32))
    scaler.minimize(opt, None)
    assert float(scaler.get_loss_scaling()) == 1.0
    np.testing.assert_allclose(w.numpy(), before - 1.0, rtol=1e-6)


def test_scaler_decrease_needs_consecutive_bad_steps_and_static_scaling_never_moves():
    w, opt = _param_and_opt()
    scaler = rt.amp.GradScaler(init_loss_scaling=16.0, decr_every_n_nan_or_inf=2)
    bad = np.array([np.inf, 0, 0], np.float32)
    for grad, want in ((bad, 16.0), (np.ones(3, np.float32), 16.0), (bad, 16.0), (bad, 8.0)):
        w.grad = rt.to_tensor(grad)
        scaler.step(opt)
        scaler.update()
        assert float(scaler.get_loss_scaling()) == want
    fixed = rt.amp.GradScaler(init_loss_scaling=16.0, decr_every_n_nan_or_inf=1,
                              use_dynamic_loss_scaling=False)
    w.grad = rt.to_tensor(bad)
    fixed.step(opt)
    fixed.update()
    assert float(fixed.get_loss_scaling()) == 16.0


def test_scaler_misuse_and_state_dict():
    w, opt = _param_and_opt()
    scaler = rt.amp.GradScaler(init_loss_scaling=4.0)
    w.grad = rt.ones([3])
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step"):
        scaler.step(opt)
    scaler.update()
    other = rt.amp.GradScaler()
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    off = rt.amp.GradScaler(enable=False)
    loss = (w * w).sum()
    assert off.scale(loss) is loss and off.state_dict() == {}


# ---- training ------------------------------------------------------------------------------

def _data(n=64, d=8, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, d)) * 2.5
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.standard_normal((n, d))
    return rt.to_tensor(x.astype(np.float32)), rt.to_tensor(y.astype(np.int64))


def _mlp(like=None):
    model = rt.nn.Sequential(rt.nn.Linear(8, 16), rt.nn.ReLU(), rt.nn.Linear(16, 3))
    if like is not None:
        model.set_state_dict(like.state_dict())
    return model


def _train(model, opt, x, y, steps, amp_level=None, scaler=None):
    losses = []
    for _ in range(steps):
        with rt.amp.auto_cast(enable=amp_level is not None, level=amp_level or "O1"):
            loss = F.cross_entropy(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_mixed_precision_training_tracks_float32(level):
    x, y = _data()
    ref_model = _mlp()
    init = _mlp(like=ref_model)
    ref = _train(ref_model, rt.optimizer.Adam(0.05, parameters=ref_model.parameters()), x, y, 15)
    model = _mlp(like=init)
    opt = rt.optimizer.Adam(0.05, parameters=model.parameters())
    if level == "O2":
        model, opt = rt.amp.decorate(model, opt, level="O2")
        assert model[0].weight.dtype == "float16"
    got = _train(model, opt, x, y, 15, amp_level=level,
                 scaler=rt.amp.GradScaler(init_loss_scaling=1024.0))
    assert got[-1] < 0.5 * got[0]
    np.testing.assert_allclose(got, ref, rtol=1e-2, atol=2e-3)


def test_decorate_keeps_norm_layers_float32_and_seeds_master_weights():
    model = rt.nn.Sequential(rt.nn.Linear(4, 4), rt.nn.LayerNorm(4))
    w32 = model[0].weight.numpy().copy()
    opt = rt.optimizer.SGD(0.0, parameters=model.parameters())
    rt.amp.decorate(model, opt, level="O2")
    assert model[0].weight.dtype == "float16" and model[1].weight.dtype == "float32"
    for p in model.parameters():
        p.grad = rt.to_tensor(np.zeros(p.shape, p.dtype.np))
    opt.step()
    master = opt.state_dict()[f"{model[0].weight.name}_fp32_master_0"]
    np.testing.assert_array_equal(master.numpy(), w32)  # not the float16-rounded values
    assert model is rt.amp.decorate(model, level="O1")


def test_state_key_describes_the_settings_in_force():
    assert rt.amp.state_key() is None
    with rt.amp.auto_cast(custom_black_list=["matmul"]):
        key = rt.amp.state_key()
    with rt.amp.auto_cast():
        assert rt.amp.state_key() != key
        with rt.amp.auto_cast(enable=False):
            assert rt.amp.state_key() is None
    assert key == ("float16", "O1", (("matmul", "black"),))


def test_decorated_recursive_function_restores_state():
    @rt.amp.auto_cast()
    def depth(n):
        return rt.amp.state_key() if n == 0 else depth(n - 1)

    with rt.amp.auto_cast(level="O2"):
        assert depth(3) == ("float16", "O1", ())
        assert rt.amp.state_key() == ("float16", "O2", ())
    assert rt.amp.state_key() is None
