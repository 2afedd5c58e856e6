"""`p.grad is None` / `is not None` read inside a converted training step, after a
`backward()` whose loss has a term only some batches add (a tensor `if`): the answer is the
run's, as eager's, not the traced run's. Batches with and without the term run through one
program: `if p.grad is not None:` is a tensor `if`, a returned `[p.grad is not None ...]`
holds Python bools, and the gradients summed under it match finite differences."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from tests.finite_differences import numeric_grad


class TwoHeads(nn.Layer):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(3, 1)
        self.aux = nn.Linear(3, 1)


def step_with_grad_norm(model, opt, x, y_aux):
    loss = (model.main(x) ** 2).mean()
    if y_aux.sum() > 0:
        loss = loss + ((model.aux(x).squeeze(-1) - y_aux) ** 2).mean()
    loss.backward()
    sq_norm = rt.zeros([])
    reached = []
    for p in model.aux.parameters():
        if p.grad is not None:
            sq_norm = sq_norm + (p.grad ** 2).sum()
        reached.append(p.grad is not None)
    missing = [p.grad is None for p in model.aux.parameters()]
    opt.step()
    return sq_norm, reached, missing


def _aux_grads(model, x, y_aux):
    """d/d(aux weight, aux bias) of the aux term, by finite differences (float64)."""
    w = model.aux.weight.numpy().astype("float64")
    b = model.aux.bias.numpy().astype("float64")

    def term(w_, b_):
        return float(np.mean(((x @ w_ + b_)[:, 0] - y_aux) ** 2))

    return numeric_grad(lambda w_: term(w_, b), w), numeric_grad(lambda b_: term(w, b_), b)


def test_grad_is_none_follows_each_run_as_eager():
    rt.seed(0)
    base = TwoHeads()
    runs = []
    for fn in (step_with_grad_norm, d2s.to_static(step_with_grad_norm)):
        model = copy.deepcopy(base)
        runs.append((fn, model, rt.optimizer.SGD(0.1, parameters=model.parameters())))
    rng = np.random.default_rng(1)
    for has_aux in (True, False, True, False):
        x = rng.standard_normal((4, 3)).astype("float32")
        y_aux = (rng.random(4).astype("float32") + 0.5) * has_aux
        gw, gb = _aux_grads(runs[0][1], x.astype("float64"), y_aux.astype("float64"))
        want_norm = float((gw ** 2).sum() + (gb ** 2).sum()) if has_aux else 0.0
        outs = [fn(m, o, rt.to_tensor(x), rt.to_tensor(y_aux)) for fn, m, o in runs]
        for sq_norm, reached, missing in outs:
            np.testing.assert_allclose(float(sq_norm), want_norm, rtol=1e-3, atol=1e-6)
            assert len(reached) == len(missing) == 2
            assert reached == [has_aux, has_aux] and missing == [not has_aux, not has_aux]
            assert all(type(v) is bool for v in reached + missing)
        assert (runs[1][1].aux.weight.grad is None) is (not has_aux)
        for _, model, opt in runs:
            opt.clear_grad(set_to_zero=False)
        for p_static, p_eager in zip(runs[1][1].parameters(), runs[0][1].parameters(),
                                     strict=True):
            np.testing.assert_allclose(p_static.numpy(), p_eager.numpy(), rtol=1e-5)
    assert runs[1][0].get_traced_count() == 1
    assert "_d2s.is_not_none(p.grad)" in runs[1][0].code


def step_reading_a_grad_then_clearing(model, opt, x, y_aux):
    loss = (model.main(x) ** 2).mean()
    if y_aux.sum() > 0:
        loss = loss + (model.aux(x) ** 2).mean()
    loss.backward()
    g = model.aux.weight.grad
    opt.clear_grad(set_to_zero=False)
    return g is None


def test_is_none_of_a_grad_read_before_clear_grad_is_the_reads():
    # (`g is None` answers for the tensor read, as in eager code, though clear_grad() came
    # between: the read's presence is taken when the program reads it; was refused)
    rt.seed(0)
    m1 = TwoHeads()
    m2 = copy.deepcopy(m1)
    o1 = rt.optimizer.SGD(0.1, parameters=m1.parameters())
    o2 = rt.optimizer.SGD(0.1, parameters=m2.parameters())
    static = d2s.to_static(step_reading_a_grad_then_clearing)
    for sign in (1.0, -1.0, 1.0, -1.0):
        y = rt.ones([4]) * sign
        eager, got = step_reading_a_grad_then_clearing(m1, o1, rt.ones([4, 3]), y), static(
            m2, o2, rt.ones([4, 3]), y)
        assert eager is got is (sign < 0)
        assert m2.aux.weight.grad is None and m1.aux.weight.grad is None
    assert static.get_traced_count() == 1


def step_returning_a_grad(model, x, y_aux):
    loss = (model.main(x) ** 2).mean()
    if y_aux.sum() > 0:
        loss = loss + (model.aux(x) ** 2).mean()
    loss.backward()
    return loss, model.aux.weight.grad, model.main.weight.grad


def test_a_grad_returned_is_none_on_the_runs_whose_backward_missed_it():
    # (it came back as zeros where eager returns None)
    rt.seed(1)
    m1 = TwoHeads()
    m2 = copy.deepcopy(m1)
    static = d2s.to_static(step_returning_a_grad)
    x = rt.to_tensor(np.linspace(-1, 1, 12, dtype="float32").reshape(4, 3))
    for sign in (1.0, -1.0, -1.0, 1.0):
        for m in (m1, m2):
            for p in m.parameters():
                p.clear_grad()
        y = rt.ones([4]) * sign
        (l1, a1, w1), (l2, a2, w2) = step_returning_a_grad(m1, x, y), static(m2, x, y)
        np.testing.assert_allclose(l2.numpy(), l1.numpy(), rtol=1e-6)
        assert (a1 is None) is (a2 is None) is (sign < 0)
        if a1 is not None:
            np.testing.assert_allclose(a2.numpy(), a1.numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(w2.numpy(), w1.numpy(), rtol=1e-5, atol=1e-7)
    assert static.get_traced_count() == 1


def scaled(x, scale=None):
    if scale is None:
        return x * 2.0
    return x * scale, scale is not None, x is None


def test_is_none_of_other_values_stays_python():
    static = d2s.to_static(scaled)
    x = rt.to_tensor(np.arange(3, dtype="float32"))
    np.testing.assert_allclose(static(x).numpy(), [0.0, 2.0, 4.0])
    out, given, x_missing = static(x, rt.to_tensor(3.0))
    np.testing.assert_allclose(out.numpy(), [0.0, 3.0, 6.0])
    assert given is True and x_missing is False


def step_skipping_missing_grads(model, opt, x, y_aux):
    loss = (model.main(x) ** 2).mean()
    if y_aux.sum() > 0:
        loss = loss + ((model.aux(x).squeeze(-1) - y_aux) ** 2).mean()
    loss.backward()
    sq_norm, counted = rt.zeros([]), 0
    for p in model.parameters():
        if p.grad is None:
            continue
        sq_norm = sq_norm + (p.grad ** 2).sum()
        counted += 1
    opt.step()
    return sq_norm, counted


def test_skipping_parameters_without_a_gradient_counts_per_run():
    rt.seed(0)
    base = TwoHeads()
    runs = []
    for fn in (step_skipping_missing_grads, d2s.to_static(step_skipping_missing_grads)):
        model = copy.deepcopy(base)
        runs.append((fn, model, rt.optimizer.SGD(0.1, parameters=model.parameters())))
    for has_aux in (True, False, False, True):
        x, y_aux = rt.ones([4, 3]), rt.ones([4]) * float(has_aux)
        (want_norm, want_n), (got_norm, got_n) = [fn(m, o, x, y_aux) for fn, m, o in runs]
        assert type(got_n) is int and got_n == want_n == (4 if has_aux else 2)
        np.testing.assert_allclose(got_norm.numpy(), want_norm.numpy(), rtol=1e-5)
        for _, _, opt in runs:
            opt.clear_grad(set_to_zero=False)
    assert runs[1][0].get_traced_count() == 1
