"""Training in a static program: `opt.minimize(loss)` inside `program_guard` appends backward
and the same update ops, and runs to the same numbers as eager training; AMP casts and QAT
fake-quant ops appear in programs and match eager."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
from runtime import quantization as Q
from runtime import static

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 4)).astype(np.float32)
Y = RNG.standard_normal((8, 2)).astype(np.float32)
W0 = RNG.standard_normal((4, 2)).astype(np.float32)
STEPS = 3


def _make_opt(cls, w, sched, clip):
    grad_clip = rt.nn.ClipGradByGlobalNorm(0.5) if clip else None
    return getattr(rt.optimizer, cls)(sched, parameters=[w], grad_clip=grad_clip)


def _eager(cls, clip):
    w = rt.Parameter(W0.copy())
    sched = rt.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    opt = _make_opt(cls, w, sched, clip)
    losses = []
    for _ in range(STEPS):
        loss = ((rt.matmul(rt.to_tensor(X), w) - rt.to_tensor(Y)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        losses.append(float(loss))
    return losses, w.numpy()


def _static(cls, clip):
    w = rt.Parameter(W0.copy())
    sched = rt.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [-1, 4], "float32")
        y = static.data("y", [-1, 2], "float32")
        loss = ((rt.matmul(x, w) - y) ** 2).mean()
        _, params_grads = _make_opt(cls, w, sched, clip).minimize(loss)
    assert [p for p, _ in params_grads] == [w]
    exe = static.Executor()
    losses = []
    for _ in range(STEPS):
        (value,) = exe.run(main, feed={"x": X, "y": Y}, fetch_list=[loss])
        sched.step()  # the program reads the scheduler's rate variable at each run
        losses.append(float(value))
    return losses, w.numpy(), main


@pytest.mark.parametrize("clip", [False, True], ids=["plain", "clip"])
@pytest.mark.parametrize("cls", ["SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad", "Adamax",
                                 "Lamb"])
def test_static_minimize_matches_eager(cls, clip):
    eager_losses, eager_w = _eager(cls, clip)
    static_losses, static_w, program = _static(cls, clip)
    np.testing.assert_allclose(static_losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(static_w, eager_w, rtol=1e-6, atol=1e-7)
    assert not np.allclose(static_w, W0)
    text = str(program)
    assert f"{cls.lower()}_update(" in text and "write_persistable(" in text


def test_amp_casts_appear_in_static_programs():
    w = rt.Parameter(W0.copy())
    main = static.Program()
    with static.program_guard(main), rt.amp.auto_cast():
        x = static.data("x", [-1, 4], "float32")
        h = rt.matmul(x, w)
        out = rt.exp(h)
    assert h.dtype == "float16" and out.dtype == "float32"
    text = str(main)
    assert text.count("cast(") == 3  # x and w down to float16, h back up for exp
    (got,) = static.Executor().run(main, feed={"x": X}, fetch_list=[out])
    with rt.amp.auto_cast():
        want = rt.exp(rt.matmul(rt.to_tensor(X), w))
    np.testing.assert_array_equal(got, want.numpy())


def test_qat_layer_in_static_program_updates_scale_like_eager():
    model = rt.nn.Sequential(rt.nn.Linear(4, 3))
    eager_q = Q.QAT().quantize(model)
    static_q = Q.QAT().quantize(model)
    want = [eager_q(rt.to_tensor(X * k)).numpy() for k in (1.0, 2.0)]
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [-1, 4], "float32")
        out = static_q(x)
    assert "moving_average_abs_max_scale(" in str(main)
    exe = static.Executor()
    got = [exe.run(main, feed={"x": X * k}, fetch_list=[out])[0] for k in (1.0, 2.0)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(static_q[0].activation_quanter.scale.numpy(),
                               eager_q[0].activation_quanter.scale.numpy(), rtol=1e-6)


def test_static_minimize_without_parameter_list_updates_every_trainable_parameter():
    w = rt.Parameter(W0.copy())
    frozen = rt.Parameter(np.ones((2,), np.float32), trainable=False)
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [-1, 4], "float32")
        loss = (rt.matmul(x, w) * frozen).sum()
        opt = rt.optimizer.SGD(0.1)
        _, params_grads = opt.minimize(loss)
    assert [p for p, _ in params_grads] == [w]
    static.Executor().run(main, feed={"x": X}, fetch_list=[loss])
    want = W0 - 0.1 * X.sum(0)[:, None] * np.ones((1, 2), np.float32)
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-5)
    np.testing.assert_array_equal(frozen.numpy(), np.ones(2))
