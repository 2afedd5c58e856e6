"""`opt.clear_grad()` in one branch of a tensor `if` and `opt.step()` (or a clip writing
`p.grad`) in the other: skipping a step whose loss or gradient norm is not finite, as fairseq
and HF trainers do (`if not isfinite(norm): opt.zero_grad(); return None`). Eager code runs
one branch; the converted step traced the second branch from the gradients as the first left
them and refused the step ("whether clear_grad() left zeros or None depends on the run").
Each branch is now built from the gradients as they were before the `if`. Eager vs converted
from the same start, over calls that take both branches (a non-finite batch in between):
results, parameters, `.grad` (None or its value) and the optimizer state after every call."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.nn import functional as F

from .helpers import MLP, make_opt, same_training_state


def skip_non_finite_with_return(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    if not rt.isfinite(loss):
        opt.clear_grad()
        return None
    opt.step()
    opt.clear_grad()
    return loss.item()


def clip_or_zero_grad(model, opt, x, y, max_norm=0.5):
    """A hand-written clip_grad_norm_ in one branch, zero_grad(set_to_none) in the other,
    then one step: whether the step sees gradients or None is decided by the run (refused at
    the step's line; see the test below)."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    total = rt.sqrt(sum((g ** 2).sum() for g in grads))
    if rt.isfinite(total):
        coef = max_norm / (total + 1e-6)
        for p in model.parameters():
            p.grad = p.grad * rt.clip(coef, max=1.0)
    else:
        opt.clear_grad(set_to_zero=False)
    opt.step()
    opt.clear_grad()
    return float(total) if math.isfinite(float(total)) else -1.0


def step_in_either_branch(model, opt, x, y):
    """Both branches change the gradients: a scaled step in one, a plain one in the other."""
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    if loss > 1.1:
        for p in model.parameters():
            p.grad = p.grad * 0.5
        opt.step()
        opt.clear_grad()
    else:
        opt.step()
        opt.clear_grad(set_to_zero=False)
    return loss


def _batches():
    rng = np.random.default_rng(4)
    out = []
    for i in range(5):
        x = rng.standard_normal((5, 4)).astype("float32") * (1 + i % 3)
        if i == 2:
            x[0, 1] = np.inf
        out.append((x, rng.integers(0, 3, 5).astype("int64")))
    return out


@pytest.mark.parametrize("step", [skip_non_finite_with_return, step_in_either_branch])
@pytest.mark.parametrize("opt_name, kw", [("Momentum", {"weight_decay": 0.01}),
                                          ("Adam", {"weight_decay": 0.01})])
def test_each_branch_starts_from_the_gradients_before_the_if(step, opt_name, kw):
    rt.seed(0)
    m1 = MLP()
    m2 = copy.deepcopy(m1)
    o1 = make_opt(opt_name, m1.parameters(), **kw)
    o2 = make_opt(opt_name, m2.parameters(), **kw)
    static = d2s.to_static(step)
    with np.errstate(all="ignore"):
        for i, (x, y) in enumerate(_batches()):
            want = step(m1, o1, rt.to_tensor(x), rt.to_tensor(y))
            got = static(m2, o2, rt.to_tensor(x), rt.to_tensor(y))
            where = f"{step.__name__} {opt_name} call {i}"
            assert type(got) is type(want), where
            if want is not None:
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5,
                                           atol=1e-6, err_msg=where)
            same_training_state(m1, o1, m2, o2, where)
    assert len(static.program_cache) == 1


def test_a_step_after_branches_that_leave_gradients_or_none_is_refused_at_its_line():
    rt.seed(0)
    model = MLP()
    opt = make_opt("Momentum", model.parameters())
    x, y = _batches()[0]
    with pytest.raises(RuntimeError, match="depends on the run") as info:
        d2s.to_static(clip_or_zero_grad)(model, opt, rt.to_tensor(x), rt.to_tensor(y))
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert "opt.step()" in text and "test_branches_see_the_gradients_before.py" in text
    assert not any(bad in text for bad in ("_retval", "Variable(%", "<undefined"))
