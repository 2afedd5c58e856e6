"""A whole training step converted (issue 17): `loss.backward()`, `optimizer.step()` and
`optimizer.clear_grad()` inside `@d2s.to_static` are one program, and after N calls the
parameters, buffers, `.grad` and the optimizer's state are what N eager steps leave."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from tests.finite_differences import numeric_grad

from .helpers import (MLP, ConvNet, assert_no_variable, assert_same_state, batches, convert,
                      pair, step_fn)


@pytest.mark.parametrize("opt_name,clear", [
    (o, c) for o in ("SGD", "Momentum", "Adam", "AdamW") for c in (True, False)] + [
    (o, True) for o in ("RMSProp", "Adagrad", "Adamax", "Lamb")])
def test_mlp_steps_match_eager(opt_name, clear):
    eager, static = pair(MLP, opt_name)
    e, s = step_fn(*eager, clear=clear), convert(step_fn(*static, clear=clear))
    for x, y in batches(4, (5, 4)):
        np.testing.assert_allclose(s(x, y).numpy(), e(x, y).numpy(), rtol=1e-5)
    assert_same_state(eager, static)
    assert_no_variable(*static)
    assert len(s.program_cache) == 1  # one program for every call
    if not clear:  # the gradient of the last step, as a Tensor
        assert all(isinstance(p.grad, rt.Tensor) for p in static[0].parameters())
    else:  # clear_grad(): zeros (Paddle's default set_to_zero=True)
        assert all(not p.grad.numpy().any() for p in static[0].parameters())


@pytest.mark.parametrize("p", [0.0, 0.5])
def test_conv_batchnorm_dropout_train_then_eval(p):
    """Running statistics are written by the program; Dropout draws the same masks from the
    same seed; switching to eval mode between calls traces the eval step."""
    eager, static = pair(lambda: ConvNet(p), "Adam")
    e, s = step_fn(*eager), convert(step_fn(*static))
    data = batches(3, (4, 2, 5, 5))
    for mode in ("train", "eval"):
        for m in (eager[0], static[0]):
            getattr(m, mode)()
        for x, y in data:
            rt.seed(7)
            le = e(x, y)
            rt.seed(7)
            np.testing.assert_allclose(s(x, y).numpy(), le.numpy(), rtol=1e-5)
        assert_same_state(eager, static)
    assert_no_variable(*static)
    assert len(s.program_cache) == 2


def test_sgd_matches_numpy():
    """A linear least-squares step by hand: W -= lr * 2/N X^T (XW + b - Y)."""
    rt.seed(0)
    fc = nn.Linear(3, 2)
    w0, b0 = fc.weight.numpy().astype(np.float64), fc.bias.numpy().astype(np.float64)
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=fc.parameters())

    @d2s.to_static
    def step(x, y):
        loss = ((fc(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    rng = np.random.default_rng(1)
    w, b = w0, b0
    for _ in range(3):
        x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
        step(rt.to_tensor(x.astype("float32")), rt.to_tensor(y.astype("float32")))
        r = x @ w + b - y
        n = r.size
        w, b = w - 0.1 * 2 / n * x.T @ r, b - 0.1 * 2 / n * r.sum(0)
    np.testing.assert_allclose(fc.weight.numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fc.bias.numpy(), b, rtol=1e-5, atol=1e-6)


def test_gradient_matches_finite_differences():
    """`.grad` after one converted step (not cleared) is d loss / d w."""
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((3, 2))
    x = rng.standard_normal((4, 3))
    w = rt.Parameter(w0.copy(), name="fd_w")
    opt = rt.optimizer.SGD(learning_rate=0.0, parameters=[w])

    @d2s.to_static
    def step(xt):
        loss = rt.sum(rt.tanh(rt.matmul(xt, w)) ** 2)
        loss.backward()
        opt.step()
        return loss

    step(rt.to_tensor(x))
    expected = numeric_grad(lambda v: float(np.sum(np.tanh(x @ v) ** 2)), w0)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("how", ["scheduler", "set_lr"])
def test_learning_rate_is_read_when_the_program_runs(how):
    if how == "scheduler":
        make = lambda: rt.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)  # noqa: E731
        eager, static = pair(MLP, "SGD")
        (m1, _), (m2, _) = eager, static
        s1, s2 = make(), make()
        eager = (m1, rt.optimizer.SGD(learning_rate=s1, parameters=m1.parameters()))
        static = (m2, rt.optimizer.SGD(learning_rate=s2, parameters=m2.parameters()))
    else:
        eager, static = pair(MLP, "Adam")
    e, s = step_fn(*eager), convert(step_fn(*static))
    for i, (x, y) in enumerate(batches(4, (5, 4))):
        e(x, y)
        s(x, y)
        if how == "scheduler":
            s1.step()
            s2.step()
        else:
            eager[1].set_lr(0.1 / (i + 2))
            static[1].set_lr(0.1 / (i + 2))
    assert_same_state(eager, static)
    assert len(s.program_cache) == 1  # the rate is program state, not a constant


def test_clipping_and_weight_decay():
    clip = nn.ClipGradByGlobalNorm(0.05)
    eager, static = pair(MLP, "Momentum", grad_clip=clip,
                         weight_decay=rt.regularizer.L2Decay(0.01))
    e, s = step_fn(*eager), convert(step_fn(*static))
    for x, y in batches(3, (5, 4)):
        e(x, y)
        s(x, y)
    assert_same_state(eager, static)


def test_gradients_accumulate_onto_gradients_from_before():
    """An eager backward before the calls, steps that never clear, a clear that sets None
    between calls: `.grad` adds up as eager's does."""
    eager, static = pair(MLP, "SGD")
    e, s = step_fn(*eager, clear=False), convert(step_fn(*static, clear=False))
    data = batches(4, (5, 4))
    for m in (eager[0], static[0]):
        nn.CrossEntropyLoss()(m(data[0][0]), data[0][1]).backward()
    for i, (x, y) in enumerate(data):
        e(x, y)
        s(x, y)
        if i == 1:
            eager[1].clear_grad(set_to_zero=False)
            static[1].clear_grad(set_to_zero=False)
    assert_same_state(eager, static)
    assert_no_variable(*static)


def test_grad_read_and_set_inside_the_step():
    """Reading `.grad` after backward and replacing it (a hand-written scaling) as eager."""
    eager, static = pair(MLP, "Adam")

    def make(model, opt):
        loss_fn = nn.CrossEntropyLoss()

        def step(x, y):
            loss = loss_fn(model(x), y)
            loss.backward()
            for p in model.parameters():
                p.grad = p.grad * 0.5
            opt.step()
            model.clear_gradients()
            return loss
        return step
    e, s = make(*eager), convert(make(*static))
    for x, y in batches(3, (5, 4)):
        e(x, y)
        s(x, y)
    assert_same_state(eager, static)
    assert all(p.grad is None for p in static[0].parameters())


def test_update_is_in_the_printed_program_and_result_graph_is_freed():
    eager, static = pair(MLP, "Adam")
    s = convert(step_fn(*static))
    x, y = batches(1, (5, 4))[0]
    loss = s(x, y)
    text = str(s.concrete_program.main_program)
    assert text.count("adam_update(") == 4 and "grad_clear(" in text
    assert "write_persistable(%" in text
    eager_loss = step_fn(*eager)(x, y)
    # backward already ran inside: the loss requires a gradient, as eager's does, through a
    # graph that backward freed, so a second backward raises eager's error
    assert loss.stop_gradient is eager_loss.stop_gradient is False
    for t in (loss, eager_loss):
        with pytest.raises(RuntimeError, match="already freed"):
            (t * 2).backward()


@pytest.mark.parametrize("opt_name", ["Adam", "AdamW"])
def test_large_update_is_one_fused_run_equal_to_eager(opt_name, monkeypatch):
    """A parameter above the fusion threshold gets its Adam update as elementwise ops, which
    the executor runs as one fused call; the results are the eager kernel's."""
    monkeypatch.setenv("D2S_NATIVE", "0")  # the NumPy fused code (the C code: a tolerance)
    eager, static = pair(lambda: nn.Linear(512, 256), opt_name)

    def make(model, opt):
        def step(x, y):
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step
    e, s = make(*eager), convert(make(*static))
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, y = (rt.to_tensor(rng.standard_normal(shape).astype("float32"))
                for shape in ((8, 512), (8, 256)))
        e(x, y)
        s(x, y)
    assert_same_state(eager, static, rtol=0, atol=0)
    src = s.program_cache.last_entry.compiled.source
    assert src.count(" = FU") == 1  # the [512, 256] weight's update; the bias's is one op
    assert "adam" in str(s.concrete_program.main_program)


def test_paddle_idiom_with_everything_passed_in():
    """Paddle's test_train_step form: the net, loss function and optimizer are arguments,
    the rate follows a cosine schedule stepped between calls."""
    def train_step(net, x, y, loss_fn, opt):
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    eager, static = pair(MLP, "SGD")
    opts = []
    for m, _ in (eager, static):
        sched = rt.optimizer.lr.CosineAnnealingDecay(0.1, T_max=4)
        opts.append(rt.optimizer.Momentum(learning_rate=sched, parameters=m.parameters()))
    st = d2s.to_static(train_step)
    ce = nn.CrossEntropyLoss()
    for x, y in batches(5, (5, 4)):
        le = train_step(eager[0], x, y, ce, opts[0])
        ls = st(static[0], x, y, ce, opts[1])
        np.testing.assert_allclose(ls.numpy(), le.numpy(), rtol=1e-5)
        for o in opts:
            o._learning_rate.step()
    assert_same_state((eager[0], opts[0]), (static[0], opts[1]))
    assert len(st.program_cache) == 1
