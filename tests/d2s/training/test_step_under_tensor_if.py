"""`opt.step()`, `opt.clear_grad()` and `scheduler.step()` under an `if` whose condition is a
tensor (`if loss.isfinite().all(): opt.step()`), in a converted step: the update happens on
the runs that take the branch, as eagerly. Eager vs converted from the same start, over
inputs that take both paths through one program: the results, parameters, which `.grad` is
None and its values, the optimizer's state_dict (keys, their order, values) and the
scheduler's epoch and rate after every call."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.nn import functional as F

from .helpers import MLP, OPTS, TwoHeads, grads_of, make_opt

def _data(n, seed=0):
    """Batches whose losses lie on both sides of 1.2 (scaled inputs), one with a nan."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = rng.standard_normal((5, 4)).astype("float32") * (1 + i % 4)
        if i == 3:
            x[0, 0] = np.nan
        out.append((rt.to_tensor(x), rt.to_tensor(rng.integers(0, 3, 5))))
    return out


def _pairs(make_model, opt_name, kw, scheduled=False):
    rt.seed(0)
    m1 = make_model()
    m2 = copy.deepcopy(m1)
    out = []
    for m in (m1, m2):
        lr = rt.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5) if scheduled else 0.05
        out.append((m, make_opt(opt_name, m.parameters(), lr=lr, **kw), lr))
    return out


def _same(a, b, where):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for x, y in zip(a, b, strict=True):
            _same(x, y, where)
    elif isinstance(a, rt.Tensor):
        assert isinstance(b, rt.Tensor) and a.dtype == b.dtype, where
        assert a.stop_gradient == b.stop_gradient, where
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=where)
    else:
        assert type(a) is type(b), where
        np.testing.assert_equal(a, b, err_msg=where)


def _same_state(eager, conv, where):
    (m1, o1, s1), (m2, o2, s2) = eager, conv
    for (k, x), (k2, y) in zip(m1.state_dict().items(), m2.state_dict().items(), strict=True):
        assert k == k2
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{where}: {k}")
    for x, y in zip(grads_of(m1), grads_of(m2), strict=True):
        assert (x is None) == (y is None), f"{where}: .grad is None differs"
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=where)
    d1, d2 = o1.state_dict(), o2.state_dict()
    assert list(d1) == list(d2), f"{where}: state_dict keys"
    for k in d1:
        if isinstance(d1[k], dict):
            assert d1[k] == d2[k], f"{where}: {k}"
        else:
            np.testing.assert_allclose(d1[k].numpy(), d2[k].numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{where}: {k}")
    if isinstance(s1, rt.optimizer.lr.LRScheduler):
        assert (s1.last_epoch, s1.last_lr) == (s2.last_epoch, s2.last_lr), where


def _run(fn, eager, conv, batches, taken):
    static = d2s.to_static(fn)
    for i, (x, y) in enumerate(batches):
        with np.errstate(all="ignore"):
            want = fn(*eager, x, y)
            got = static(*conv, x, y)
        _same(want, got, f"call {i}")
        _same_state(eager, conv, f"call {i}")
    assert set(taken) == {True, False}  # (both paths, one program)
    assert len(static.program_cache) == 1


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_step_when_the_loss_is_finite_and_small(opt_name, kw):
    taken = []

    def step(model, opt, sched, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if loss.isfinite().all() and loss < 1.2:
            opt.step()
        opt.clear_grad()
        taken.append(bool(loss.isfinite().all() and loss < 1.2))
        return loss

    eager, conv = _pairs(MLP, opt_name, kw)
    _run(step, eager, conv, _data(8), taken)


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_step_clear_and_schedule_in_the_branch(opt_name, kw):
    """Gradients accumulate over the calls that skip the branch; the scheduler advances on
    the others; the rate the step returns is the run's."""
    taken = []

    def step(model, opt, sched, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        step_ok = loss.isfinite().all() and loss < 1.2
        if step_ok:
            opt.step()
            opt.clear_grad()
            sched.step()
        taken.append(bool(step_ok))
        return loss, opt.get_lr()

    eager, conv = _pairs(MLP, opt_name, kw, scheduled=True)
    batches = _data(9)
    batches[3] = batches[4]  # (no nan here: it would stay in the accumulated gradients)
    _run(step, eager, conv, batches, taken)


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_routed_heads_stepped_on_some_runs(opt_name, kw):
    """A head the run reaches and a step the run decides: state_dict lists each parameter's
    state from its first update, in eager's order; `.grad` None where eager leaves None."""
    taken = []

    def step(model, opt, sched, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if loss < 1.3:
            opt.step()
        else:
            opt.clear_grad(set_to_zero=False)
        taken.append(bool(loss < 1.3))
        return loss

    eager, conv = _pairs(TwoHeads, opt_name, kw)
    _run(step, eager, conv, _data(10, seed=3), taken)


def test_a_python_loop_over_micro_batches_steps_per_micro_batch():
    taken = []

    def step(model, opt, sched, xs, ys):
        total = 0.0
        for x, y in zip(xs, ys):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if loss.isfinite().all():
                opt.step()
            opt.clear_grad()
            taken.append(bool(loss.isfinite().all()))
            total = total + loss
        return total

    eager, conv = _pairs(MLP, "AdamW", {"weight_decay": 0.05})
    data = _data(8)
    batches = [([a[0] for a in data[i:i + 2]], [a[1] for a in data[i:i + 2]])
               for i in (0, 2, 4, 6)]
    _run(step, eager, conv, batches, taken)


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_gradients_scaled_under_a_tensor_if_for_routed_heads(opt_name, kw):
    """`p.grad.set_value(p.grad * 0.5)` under a tensor `if`, for parameters the run decides
    whether backward() reached (`if p.grad is not None`): the step after the `if` updates
    those with a gradient, with the run's gradient."""
    taken = []

    def step(model, opt, sched, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if loss > 1.2:
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.set_value(p.grad * 0.5)
        taken.append(bool(loss > 1.2))
        opt.step()
        opt.clear_grad(set_to_zero=False)
        return loss

    eager, conv = _pairs(TwoHeads, opt_name, kw)
    _run(step, eager, conv, _data(10, seed=3), taken)
