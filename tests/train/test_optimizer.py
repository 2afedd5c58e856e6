"""Optimizers vs textbook NumPy updates over several steps (float64 references), with weight
decay, gradient clipping, schedulers, state_dict round trips and AMP master weights."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt

STEPS = 4


def _setup(shape=(3, 4), n=2, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]
    grads = [[rng.standard_normal(shape).astype(np.float32) for _ in range(n)]
             for _ in range(STEPS)]
    params = [rt.Parameter(a.copy()) for a in init]
    return params, init, grads


def _run(opt, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = rt.to_tensor(g)
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in params]


def _ref_sgd(p, gs, lr, wd=0.0):
    p = p.astype(np.float64)
    for g in gs:
        p = p - lr * (g + wd * p)
    return p


def _ref_momentum(p, gs, lr, mu, nesterov=False, wd=0.0):
    p, v = p.astype(np.float64), np.zeros(p.shape)
    for g in gs:
        g = g + wd * p
        v = mu * v + g
        p = p - lr * (g + mu * v if nesterov else v)
    return p


def _ref_adam(p, gs, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=0.0):
    p, m, v = p.astype(np.float64), np.zeros(p.shape), np.zeros(p.shape)
    for t, g in enumerate(gs, start=1):
        p = p * (1 - lr * decoupled)
        g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def _ref_rmsprop(p, gs, lr, rho=0.95, eps=1e-6, momentum=0.0, centered=False, wd=0.0):
    p = p.astype(np.float64)
    ms, mg, mom = np.zeros(p.shape), np.zeros(p.shape), np.zeros(p.shape)
    for g in gs:
        g = g + wd * p
        ms = rho * ms + (1 - rho) * g * g
        if centered:
            mg = rho * mg + (1 - rho) * g
            mom = momentum * mom + lr * g / np.sqrt(ms - mg * mg + eps)
        else:
            mom = momentum * mom + lr * g / np.sqrt(ms + eps)
        p = p - mom
    return p


CASES = {
    "sgd": (lambda ps: rt.optimizer.SGD(0.1, parameters=ps),
            lambda p, gs: _ref_sgd(p, gs, 0.1)),
    "sgd_l2": (lambda ps: rt.optimizer.SGD(0.1, parameters=ps, weight_decay=0.05),
               lambda p, gs: _ref_sgd(p, gs, 0.1, wd=0.05)),
    "sgd_L2Decay": (lambda ps: rt.optimizer.SGD(
        0.1, parameters=ps, weight_decay=rt.regularizer.L2Decay(0.2)),
        lambda p, gs: _ref_sgd(p, gs, 0.1, wd=0.2)),
    "momentum": (lambda ps: rt.optimizer.Momentum(0.05, momentum=0.8, parameters=ps),
                 lambda p, gs: _ref_momentum(p, gs, 0.05, 0.8)),
    "momentum_nesterov_l2": (
        lambda ps: rt.optimizer.Momentum(0.05, 0.9, ps, use_nesterov=True, weight_decay=0.01),
        lambda p, gs: _ref_momentum(p, gs, 0.05, 0.9, nesterov=True, wd=0.01)),
    "adam": (lambda ps: rt.optimizer.Adam(0.01, parameters=ps),
             lambda p, gs: _ref_adam(p, gs, 0.01)),
    "adam_l2_betas": (
        lambda ps: rt.optimizer.Adam(0.02, beta1=0.5, beta2=0.9, epsilon=1e-3, parameters=ps,
                                     weight_decay=0.1),
        lambda p, gs: _ref_adam(p, gs, 0.02, 0.5, 0.9, 1e-3, wd=0.1)),
    "adamw": (lambda ps: rt.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.3),
              lambda p, gs: _ref_adam(p, gs, 0.01, decoupled=0.3)),
    "rmsprop": (lambda ps: rt.optimizer.RMSProp(0.01, parameters=ps),
                lambda p, gs: _ref_rmsprop(p, gs, 0.01)),
    "rmsprop_centered_momentum_l2": (
        lambda ps: rt.optimizer.RMSProp(0.01, rho=0.9, epsilon=1e-4, momentum=0.5, centered=True,
                                        parameters=ps, weight_decay=0.02),
        lambda p, gs: _ref_rmsprop(p, gs, 0.01, 0.9, 1e-4, 0.5, True, wd=0.02)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_update_matches_numpy(case):
    make, ref = CASES[case]
    params, init, grads = _setup()
    got = _run(make(params), params, grads)
    for k in range(len(params)):
        want = ref(init[k], [g[k] for g in grads])
        np.testing.assert_allclose(got[k], want, rtol=2e-5, atol=2e-6)
        assert params[k].dtype == "float32"
        assert not np.allclose(got[k], init[k])  # the update did something


def test_adamw_apply_decay_param_fun_and_default_coeff():
    params, init, grads = _setup(n=2)
    params[1].name = "no_decay_bias"
    opt = rt.optimizer.AdamW(0.01, parameters=params,
                             apply_decay_param_fun=lambda n: not n.startswith("no_decay"))
    got = _run(opt, params, grads)
    np.testing.assert_allclose(got[0], _ref_adam(init[0], [g[0] for g in grads], 0.01,
                                                 decoupled=0.01), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got[1], _ref_adam(init[1], [g[1] for g in grads], 0.01),
                               rtol=2e-5, atol=2e-6)


def test_params_without_grad_or_frozen_are_left_alone():
    params, init, _ = _setup(n=3)
    params[2].stop_gradient = True
    params[0].grad = rt.ones([3, 4])
    params[2].grad = rt.ones([3, 4])
    rt.optimizer.Momentum(0.1, parameters=params).step()
    np.testing.assert_allclose(params[0].numpy(), init[0] - 0.1, rtol=1e-6)
    np.testing.assert_array_equal(params[1].numpy(), init[1])
    np.testing.assert_array_equal(params[2].numpy(), init[2])


def _global_norm_clip(gs, clip_norm):
    norm = np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in gs))
    return [g * (clip_norm / max(norm, clip_norm)) for g in gs]


def test_grad_clip_by_global_norm():
    params, init, grads = _setup()
    grads = [[g * 3 for g in step] for step in grads]  # norms well above the threshold
    opt = rt.optimizer.SGD(0.1, parameters=params,
                           grad_clip=rt.nn.ClipGradByGlobalNorm(clip_norm=1.0))
    got = _run(opt, params, grads)
    ref = [p.astype(np.float64) for p in init]
    for step in grads:
        clipped = _global_norm_clip(step, 1.0)
        ref = [p - 0.1 * g for p, g in zip(ref, clipped, strict=True)]
    for g_, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(g_, r, rtol=1e-5, atol=1e-6)


def test_scheduler_drives_learning_rate():
    params, init, grads = _setup(n=1)
    sched = rt.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5)
    opt = rt.optimizer.SGD(sched, parameters=params)
    p, lrs = init[0].astype(np.float64), []
    for step_grads in grads:
        lrs.append(opt.get_lr())
        p = p - opt.get_lr() * step_grads[0]
        params[0].grad = rt.to_tensor(step_grads[0])
        opt.step()
        sched.step()
    assert lrs == [0.1, 0.1, 0.05, 0.05]
    np.testing.assert_allclose(params[0].numpy(), p, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="LRScheduler"):
        opt.set_lr(0.3)


def test_set_lr():
    params, init, _ = _setup(n=1)
    opt = rt.optimizer.SGD(0.1, parameters=params)
    opt.set_lr(0.5)
    assert opt.get_lr() == 0.5
    params[0].grad = rt.ones([3, 4])
    opt.step()
    np.testing.assert_allclose(params[0].numpy(), init[0] - 0.5, rtol=1e-6)


@pytest.mark.parametrize("cls", ["Momentum", "Adam", "AdamW", "RMSProp"])
def test_state_dict_round_trip_through_save_load(cls, tmp_path):
    params, _, grads = _setup()
    sched = rt.optimizer.lr.ExponentialDecay(0.05, gamma=0.9)
    opt = getattr(rt.optimizer, cls)(sched, parameters=params)
    _run(opt, params, grads[:2])
    sched.step()
    rt.save({"opt": opt.state_dict(), "params": [p.numpy() for p in params]},
            tmp_path / "opt.pdopt")

    loaded = rt.load(tmp_path / "opt.pdopt")
    params2 = [rt.Parameter(a, name=p.name) for a, p in zip(loaded["params"], params)]
    sched2 = rt.optimizer.lr.ExponentialDecay(0.05, gamma=0.9)
    opt2 = getattr(rt.optimizer, cls)(sched2, parameters=params2)
    opt2.set_state_dict(loaded["opt"])
    assert sched2.last_epoch == sched.last_epoch and sched2() == pytest.approx(sched())

    a = _run(opt, params, grads[2:])
    b = _run(opt2, params2, grads[2:])
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)


def test_state_dict_names_follow_paddle():
    w = rt.Parameter(np.ones(2, np.float32), name="fc.w_0")
    opt = rt.optimizer.Adam(parameters=[w])
    w.grad = rt.ones([2])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"fc.w_0_moment1_0", "fc.w_0_moment2_0", "fc.w_0_beta1_pow_acc_0",
                       "fc.w_0_beta2_pow_acc_0"}
    assert float(sd["fc.w_0_beta1_pow_acc_0"]) == pytest.approx(0.81)


def test_set_state_dict_shape_mismatch_is_clear():
    w = rt.Parameter(np.ones(2, np.float32), name="p_w")
    opt = rt.optimizer.Momentum(parameters=[w])
    opt.set_state_dict({"p_w_velocity_0": np.zeros(3, np.float32)})
    w.grad = rt.ones([2])
    with pytest.raises(ValueError, match=r"p_w_velocity_0 has shape \[3\]"):
        opt.step()


def test_minimize_eager_applies_existing_grads():
    params, init, _ = _setup(n=1)
    x = rt.to_tensor(np.ones((3, 4), np.float32))
    params[0].grad = x
    opt = rt.optimizer.SGD(0.25, parameters=params)
    _, pg = opt.minimize(None)
    assert pg[0][0] is params[0]
    np.testing.assert_allclose(params[0].numpy(), init[0] - 0.25, rtol=1e-6)


def test_clear_grad_sets_zero_or_none():
    params, _, _ = _setup(n=2)
    params[0].grad = rt.ones([3, 4])
    opt = rt.optimizer.SGD(0.1, parameters=params)
    opt.clear_grad()
    np.testing.assert_array_equal(params[0].grad.numpy(), np.zeros((3, 4)))
    assert params[1].grad is None
    opt.clear_grad(set_to_zero=False)
    assert params[0].grad is None


def test_errors():
    with pytest.raises(ValueError, match="parameters"):
        rt.optimizer.SGD(0.1)
    with pytest.raises(TypeError, match="learning_rate"):
        rt.optimizer.SGD("fast", parameters=[])
    with pytest.raises(ValueError, match="beta1"):
        rt.optimizer.Adam(beta1=1.5, parameters=[])
    with pytest.raises(TypeError, match="weight_decay"):
        rt.optimizer.SGD(0.1, parameters=[], weight_decay="big")
    twins = [rt.Parameter(np.ones(2, np.float32), name="same") for _ in range(2)]
    with pytest.raises(ValueError, match="both named 'same'"):
        rt.optimizer.Adam(parameters=twins)


def test_update_op_shape_error_names_op():
    from runtime.ops import optim
    with pytest.raises(ValueError, match=r"sgd_update: param has shape \[2\] but grad has "
                                         r"shape \[3\]"):
        optim.sgd_update(rt.ones([2]), rt.ones([3]), 0.1)


def test_multi_precision_keeps_float32_master():
    init = np.linspace(-1, 1, 6).astype(np.float32)
    w = rt.Parameter(init.astype(np.float16))
    opt = rt.optimizer.SGD(1e-4, parameters=[w], multi_precision=True)
    for _ in range(10):
        w.grad = rt.to_tensor(np.full(6, 0.3, np.float16))
        opt.step()
    master = opt.state_dict()[f"{w.name}_fp32_master_0"]
    assert master.dtype == "float32" and w.dtype == "float16"
    want = init.astype(np.float16).astype(np.float64) - 10 * 1e-4 * np.float64(np.float16(0.3))
    np.testing.assert_allclose(master.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(w.numpy(), master.numpy().astype(np.float16))
    # without a master copy, float16 rounding swallows every one of these tiny steps at 1.0
    w2 = rt.Parameter(init.astype(np.float16))
    opt2 = rt.optimizer.SGD(1e-4, parameters=[w2])
    for _ in range(10):
        w2.grad = rt.to_tensor(np.full(6, 0.3, np.float16))
        opt2.step()
    assert w2.numpy()[5] == 1.0 and w.numpy()[5] < 1.0


def test_param_attr_learning_rate_and_regularizer():
    layer = rt.nn.Linear(3, 2, weight_attr=rt.ParamAttr(learning_rate=0.5),
                         bias_attr=rt.ParamAttr(regularizer=rt.regularizer.L2Decay(0.1)))
    w0, b0 = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    opt = rt.optimizer.SGD(0.2, parameters=layer.parameters(), weight_decay=0.01)
    layer.weight.grad = rt.ones([3, 2])
    layer.bias.grad = rt.ones([2])
    opt.step()
    np.testing.assert_allclose(layer.weight.numpy(), w0 - 0.1 * (1 + 0.01 * w0), rtol=1e-6)
    np.testing.assert_allclose(layer.bias.numpy(), b0 - 0.2 * (1 + 0.1 * b0), rtol=1e-6)
