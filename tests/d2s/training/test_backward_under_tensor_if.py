"""`loss.backward()`, with `opt.step()` and `opt.clear_grad()`, under an `if` whose condition
is a tensor, and behind an early `return` under one, in a converted training step (issue 35):
the gradients and the update happen on the runs that take the branch, as eagerly.

Eager vs converted from the same start, over inputs that take both paths through one program
(`program_cache` holds one): the results (values, Python types, `stop_gradient`), the
parameters, which `.grad` is None and its values, the optimizer's state_dict (keys, their
order, values: momentum, Adam's moments and beta powers, which advance only on the runs that
step) after every call; the gradients of the taken path against central differences of a
NumPy forward."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from runtime.nn import functional as F

from tests.d2s.corpus.training_steps import same

from .helpers import MLP, OPTS, TwoHeads, make_opt, same_training_state

def _data(n, seed=0, nan_at=3):
    """Batches whose losses lie on both sides of 1.2 (scaled inputs); one holds a nan."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = rng.standard_normal((5, 4)).astype("float32") * (1 + i % 4)
        if i == nan_at:
            x[0, 0] = np.nan
        out.append((rt.to_tensor(x), rt.to_tensor(rng.integers(0, 3, 5))))
    return out


def _run(make_step, models, opt_name, kw, data, clear_after=False):
    """Eager and converted calls of `make_step(*models, *optimizers)` over `data`, the same
    after each (then, with `clear_after`, the caller's `opt.clear_grad(set_to_zero=False)`);
    returns the eager results."""
    rt.seed(0)
    eager = [m() for m in models]
    conv = copy.deepcopy(eager)
    opts = [[make_opt(opt_name, m.parameters(), **kw) for m in ms] for ms in (eager, conv)]
    fn, static = make_step(*eager, *opts[0]), d2s.to_static(make_step(*conv, *opts[1]))
    results = []
    for i, batch in enumerate(data):
        with np.errstate(all="ignore"):
            want, got = fn(*batch), static(*batch)
        same(want, got, f"call {i}", 1e-5, 1e-6)
        for m1, o1, m2, o2 in zip(eager, opts[0], conv, opts[1], strict=True):
            same_training_state(m1, o1, m2, o2, f"call {i}")
            for o in (o1, o2) if clear_after else ():
                o.clear_grad(set_to_zero=False)
        results.append(want)
    assert len(static.program_cache) == 1
    return results


def _both_paths(results, k=-1):
    assert {r[k] for r in results} == {True, False}  # (one program took both)


# ---- skipping a step whose loss is not finite or too large ----------------------------------

@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_skip_a_non_finite_step_with_an_early_return(opt_name, kw):
    def make(model, opt):
        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            if not rt.isfinite(loss).all():
                return loss, False
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss, True
        return train_step

    _both_paths(_run(make, [TwoHeads], opt_name, kw, _data(6)))


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_backward_and_step_only_for_small_losses_gradients_kept(opt_name, kw):
    """No clear_grad(): `.grad` is None until the first run that takes the branch, then the
    gradients of the taken runs add up, as eagerly."""
    def make(model, opt):
        loss_fn = nn.CrossEntropyLoss()

        def train_step(x, y):
            loss = loss_fn(model(x), y)
            took = False
            if loss < 1.2:
                loss.backward()
                opt.step()
                took = True
            return loss, took
        return train_step

    data = _data(9, nan_at=None)
    results = _run(make, [MLP], opt_name, kw, data[5:] + data[:5])
    _both_paths(results)
    assert not results[0][1]  # (the first run leaves every .grad None)


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_backward_if_finite_then_step_outside_the_if(opt_name, kw):
    """`if rt.isfinite(loss): loss.backward()`, then `opt.step()` for every run: parameters
    without a gradient on this run (the head the run did not use, or all on a skipped run)
    are not updated, not even by weight decay or momentum."""
    def make(model, opt):
        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            ok = rt.isfinite(loss)
            if ok:
                loss.backward()
            opt.step()
            opt.clear_grad(set_to_zero=False)
            return loss, bool(ok)
        return train_step

    _both_paths(_run(make, [TwoHeads], opt_name, kw, _data(8, seed=3)))


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_backward_in_both_branches(opt_name, kw):
    """Another loss, and two backward() calls, on the other branch; the step after the `if`
    uses whichever gradients the run computed."""
    def make(model, opt):
        def train_step(x, y):
            logits = model(x)
            if logits.mean() > 0:
                (F.cross_entropy(logits, y) * 2.0).backward()
            else:
                F.cross_entropy(logits, y).backward()
                opt.clear_grad()
                F.cross_entropy(model(x * 0.5), y).backward()
            opt.step()
            opt.clear_grad()
            return logits.mean(), bool(logits.mean() > 0)
        return train_step

    _both_paths(_run(make, [MLP], opt_name, kw, _data(8, nan_at=None)))


# ---- GAN balancing, clipping, accumulation --------------------------------------------------

class Gen(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(3, 8), nn.Linear(8, 4)

    def forward(self, z):
        return self.fc2(F.relu(self.fc1(z)))


class Disc(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.leaky_relu(self.fc1(x), 0.2))


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_gan_generator_updated_only_while_the_discriminator_wins(opt_name, kw):
    def make(net_g, net_d, opt_g, opt_d):
        def train_step(real, z):
            fake = net_g(z)
            loss_d = (F.softplus(-net_d(real)) + F.softplus(net_d(fake.detach()))).mean()
            loss_d.backward()
            opt_d.step()
            opt_d.clear_grad()
            g_updated = False
            if loss_d < 1.35:
                loss_g = F.softplus(-net_d(fake)).mean()
                loss_g.backward()
                opt_g.step()
                opt_g.clear_grad()
                opt_d.clear_grad()  # (loss_g's gradients reached D too)
                g_updated = True
            return loss_d.item(), g_updated
        return train_step

    rng = np.random.default_rng(1)
    data = [(rt.to_tensor((rng.standard_normal((6, 4)) * s + s).astype("float32")),
             rt.to_tensor(rng.standard_normal((6, 3)).astype("float32")))
            for s in (0.1, 3.0, 0.2, 2.0, 0.1, 4.0)]
    _both_paths(_run(make, [Gen, Disc], opt_name, kw, data))


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_clip_the_gradients_when_their_norm_is_large(opt_name, kw):
    """backward() under a tensor `if`, then in it a tensor `if` on the global norm that
    rescales the gradients in place before the step."""
    def make(model, opt):
        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            stepped = False
            if loss < 1.3:
                loss.backward()
                grads = [p.grad for p in model.parameters() if p.grad is not None]
                norm = rt.sqrt(sum((g * g).sum() for g in grads))
                if norm > 0.5:
                    for g in grads:
                        g.set_value(g * (0.5 / norm))
                opt.step()
                opt.clear_grad()
                stepped = True
            return loss, stepped
        return train_step

    _both_paths(_run(make, [MLP], opt_name, kw, _data(8, nan_at=None)))


@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_accumulate_finite_micro_batches_until_a_token_budget(opt_name, kw):
    """Gradient accumulation whose backward() is skipped for a non-finite loss and whose
    step is decided by a tensor count kept on the model object between calls."""
    def make(model, opt):
        model.tokens = rt.zeros([], "int64")

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            if rt.isfinite(loss).all():
                (loss / 2).backward()
                model.tokens = model.tokens + x.shape[0]
            stepped = False
            if model.tokens >= 10:
                opt.step()
                opt.clear_grad()
                model.tokens = rt.zeros([], "int64")
                stepped = True
            return loss, stepped
        return train_step

    _both_paths(_run(make, [TwoHeads], opt_name, kw, _data(9, seed=2)))


# ---- Adam's step count, and the gradients against finite differences ------------------------

def test_adam_beta_powers_advance_only_on_taken_steps():
    rt.seed(0)
    model = MLP()
    opt = rt.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())

    @d2s.to_static
    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        if loss < 1.2:
            loss.backward()
            opt.step()
            opt.clear_grad()
        return loss

    losses = [float(train_step(x, y)) for x, y in _data(8, nan_at=None)]
    taken = sum(v < 1.2 for v in losses)
    assert 0 < taken < len(losses)
    pows = {k: float(v.numpy()) for k, v in opt.state_dict().items() if "beta1_pow" in k}
    # (Paddle's beta1_pow_acc starts at beta1: beta1 ** (steps + 1))
    assert pows and all(np.isclose(v, 0.9 ** (taken + 1)) for v in pows.values()), pows


def _numpy_loss(params, x, y):
    w1, b1, w2, b2 = params
    logits = np.tanh(x @ w1 + b1) @ w2 + b2
    logits = logits - logits.max(1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean()


def test_gradients_of_the_taken_path_match_finite_differences():
    rt.seed(0)
    model = MLP()

    @d2s.to_static
    def grads_if_small(x, y):
        loss = F.cross_entropy(model(x), y)
        if loss < 1.2:
            loss.backward()
        return loss

    data = _data(8, nan_at=None)
    losses = [float(F.cross_entropy(model(x), y)) for x, y in data]
    small = next(i for i, v in enumerate(losses) if v < 1.2)
    large = next(i for i, v in enumerate(losses) if v >= 1.2)
    grads_if_small(*data[large])
    assert all(p.grad is None for p in model.parameters())  # (not taken: none, as eagerly)
    x, y = data[small]
    grads_if_small(x, y)
    params = [p.numpy().astype("float64") for p in model.parameters()]
    xs, ys = x.numpy().astype("float64"), y.numpy()
    eps = 1e-6
    for p, value in zip(model.parameters(), params, strict=True):
        fd = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            hi, lo = value.copy(), value.copy()
            hi[idx] += eps
            lo[idx] -= eps
            swap = [hi if q is value else q for q in params]
            f_hi = _numpy_loss(swap, xs, ys)
            swap = [lo if q is value else q for q in params]
            fd[idx] = (f_hi - _numpy_loss(swap, xs, ys)) / (2 * eps)
        np.testing.assert_allclose(p.grad.numpy(), fd, rtol=1e-3, atol=1e-5, err_msg=p.name)


# ---- a backward() after the `if` ------------------------------------------------------------

@pytest.mark.parametrize(("opt_name", "kw"), OPTS)
def test_a_second_backward_after_the_if_adds_to_the_run_gradients(opt_name, kw):
    """The branch keeps its graph (`retain_graph=True`); the backward() after the `if` adds
    into `.grad` as the run left it, and the step then reads that."""
    def make(model, opt):
        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            if loss > 1.1:
                loss.backward(retain_graph=True)
            (loss * 0.5).backward()
            opt.step()
            opt.clear_grad()
            return loss, bool(loss > 1.1)
        return train_step

    # (the first run does not take the branch: no `.grad` before the backward() after it)
    _both_paths(_run(make, [TwoHeads], opt_name, kw, _data(8, nan_at=None)))


def test_a_backward_through_the_graph_the_branch_freed_raises_on_those_runs():
    def make(model, opt):
        def train_step(x):
            loss = model(x).mean()
            if loss > 0:
                loss.backward()
            (loss * 2).backward()
            opt.step()
            opt.clear_grad()
            return loss
        return train_step

    rt.seed(0)
    models = [nn.Linear(4, 3)]
    models.append(copy.deepcopy(models[0]))
    steps = [make(m, rt.optimizer.SGD(0.1, parameters=m.parameters())) for m in models]
    steps[1] = d2s.to_static(steps[1])
    for i, s in enumerate((-1.0, 1.0, -1.0)):
        x = rt.ones([2, 4]) * s
        errors = []
        for fn in steps:
            try:
                fn(x)
                errors.append(None)
            except RuntimeError as e:
                errors.append(str(e))
        assert errors[0] == errors[1], f"call {i}: {errors}"
        assert (errors[0] is None) == (s < 0), f"call {i}"
        for p, q in zip(models[0].parameters(), models[1].parameters(), strict=True):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-6, err_msg=f"call {i}")
            assert (p.grad is None) == (q.grad is None)
            if p.grad is not None:
                np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-6)


# ---- which parameters the branch's backward() reaches (found by `--gen observe-params`) -----

class Recurrent(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 6)
        self.cell = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)
        self.other = nn.Linear(6, 3)


@pytest.mark.parametrize(("opt_name", "kw"), OPTS[:2])
def test_truncated_backprop_in_the_branch_leaves_the_embedding_without_a_gradient(opt_name,
                                                                                  kw):
    """In the branch, a graph loop whose trips `detach()` the state when it grows: on those
    runs the embedding gets no gradient (eager: `.grad` None, so weight decay and momentum
    leave it alone), on the others it does."""
    def make(net, opt):
        def train_step(x, y):
            h = rt.tanh(net.embed(x))
            if h.mean() > -0.02:
                steps = rt.cast(rt.clip(x[0, 0].abs() * 2, 1.0, 3.0), "int64")
                for _ in range(steps):
                    h = rt.tanh(net.cell(h))
                    if h.abs().sum() > 15.0:
                        h = h.detach()
                loss = F.cross_entropy(net.head(h), y)
                loss.backward()
                cut = net.embed.weight.grad is None
                opt.step()
                opt.clear_grad(set_to_zero=False)
                return loss, cut
            loss = F.cross_entropy(net.other(h), y)
            return loss, None
        return train_step

    results = _run(make, [Recurrent], opt_name, kw, _data(8, seed=4, nan_at=None))
    assert {r[1] for r in results} == {True, False, None}


@pytest.mark.parametrize(("opt_name", "kw"), OPTS[:2])
def test_step_in_a_nested_branch_after_an_if_whose_other_branch_detaches(opt_name, kw):
    """An early return two tensor `if`s deep (backward() and the step there) after code
    whose other branch detaches: the conditions of that earlier `if` are read in the
    branch. (The caller clears the gradients after each call.)"""
    def make(net, opt):
        def train_step(x, y):
            h = rt.tanh(net.embed(x))
            if h.max() > 0.3:
                h = rt.tanh(net.cell(h))
                if h.sum() > 0.5:
                    loss = F.cross_entropy(net.head(h), y)
                    loss.backward()
                    opt.step()
                    return loss, 1
            else:
                if h.sum() > 0.5:
                    h = h.detach() * 0.5
            loss = F.cross_entropy(net.other(h), y)
            loss.backward()
            opt.step()
            return loss, 2
        return train_step

    results = _run(make, [Recurrent], opt_name, kw, _data(8, seed=5, nan_at=None),
                   clear_after=True)
    assert {r[1] for r in results} == {1, 2}
