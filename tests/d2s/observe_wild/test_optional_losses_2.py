"""A loss term that only some batches have (`if y_aux.sum() > 0: losses["aux"] = ...`),
combined after the `if` the three ways projects write it: a `for` over the loss dict, a
`.get` with a zero default, and `if "aux" in losses:`; then `backward()` and a Momentum step
with weight decay inside the converted function. Batches with and without the term run
through one program; the loss, which `.grad` is None, the gradients and the parameters after
the steps are eager's (the term's backward once raised `KeyError` on batches without it, and
`"aux" in losses` as a gradient mask an `OpTypeError`)."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

from .helpers import assert_same_model

WEIGHTS = {"main": 1.0, "aux": 0.5}


class Heads(nn.Layer):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(3, 1)
        self.aux = nn.Linear(3, 1)


def step(model, opt, x, y_aux, combine):
    losses = {"main": (model.main(x) ** 2).mean()}
    if y_aux.sum() > 0:
        losses["aux"] = ((model.aux(x).squeeze(-1) - y_aux) ** 2).mean()
    if combine == "loop":
        total = 0.0
        for k, v in losses.items():
            total = total + WEIGHTS[k] * v
    elif combine == "get":
        total = losses["main"] + WEIGHTS["aux"] * losses.get("aux", rt.zeros([]))
    else:
        total = losses["main"]
        if "aux" in losses:
            total = total + WEIGHTS["aux"] * losses["aux"]
    total.backward()
    opt.step()
    return total.item(), "aux" in losses


def _reference_total(model, x, y_aux):
    w, b = model.main.weight.numpy(), model.main.bias.numpy()
    total = float(np.mean((x @ w + b) ** 2, dtype=np.float32))
    if y_aux.sum() > 0:
        wa, ba = model.aux.weight.numpy(), model.aux.bias.numpy()
        total += 0.5 * float(np.mean(((x @ wa + ba)[:, 0] - y_aux) ** 2, dtype=np.float32))
    return total


@pytest.mark.parametrize("combine", ["loop", "get", "in"])
def test_a_loss_term_some_batches_have_trains_as_eager(combine):
    rt.seed(0)
    base = Heads()
    runs = []
    for fn in (step, d2s.to_static(step)):
        model = copy.deepcopy(base)
        runs.append((fn, model, rt.optimizer.Momentum(0.1, 0.9, parameters=model.parameters(),
                                                      weight_decay=0.1)))
    rng = np.random.default_rng(0)
    for has_aux in (True, False, False, True, False):
        x = rng.standard_normal((4, 3)).astype("float32")
        y_aux = rng.random(4).astype("float32") * has_aux
        want_total = _reference_total(runs[0][1], x, y_aux)
        outs = [fn(m, o, rt.to_tensor(x), rt.to_tensor(y_aux), combine) for fn, m, o in runs]
        assert outs[1] == outs[0] and outs[0][1] is has_aux
        assert [type(v) for v in outs[1]] == [float, bool]
        np.testing.assert_allclose(outs[1][0], want_total, rtol=1e-5)
        assert_same_model(runs[1][1], runs[0][1])
        assert (runs[1][1].aux.weight.grad is None) is (not has_aux)
        for _, _, opt in runs:
            opt.clear_grad(set_to_zero=False)
    assert runs[1][0].get_traced_count() == 1


def step_reporting_reached(model, opt, x, y_aux):
    losses = {"main": (model.main(x) ** 2).mean()}
    if y_aux.sum() > 0:
        losses["aux"] = ((model.aux(x).squeeze(-1) - y_aux) ** 2).mean()
    total = losses["main"] + losses.get("aux", rt.zeros([]))
    total.backward()
    reached = [p.grad is not None for p in model.aux.parameters()]
    opt.step()
    return reached


def test_grad_is_none_read_inside_the_step_follows_the_run():
    rt.seed(0)
    model = Heads()
    opt = rt.optimizer.SGD(0.1, parameters=model.parameters())
    static = d2s.to_static(step_reporting_reached)
    x = rt.to_tensor(np.ones((4, 3), "float32"))
    assert static(model, opt, x, rt.ones([4])) == [True, True]
    opt.clear_grad(set_to_zero=False)
    assert static(model, opt, x, rt.zeros([4])) == [False, False]  # as eager
