"""One weight read by two heads (tied, as language models tie the embedding and the output
projection): the second head, with its own bias, only on batches a tensor condition picks.
The tied weight's gradient sums both heads' where both ran, the second bias keeps `.grad`
None where its head did not, and Adam with weight decay then moves what eager moves (its
moments too). Eager vs converted over batches taking both paths through one program; the
tied gradient against finite differences of the loss."""
import copy

import numpy as np

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn
from tests.finite_differences import numeric_grad

from .helpers import assert_same_model, assert_same_optimizer, grads_none


class TiedHeads(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tied = nn.Linear(3, 3)
        self.second_bias = self.create_parameter([3], is_bias=True)

    def forward(self, x):
        first = self.tied(x)
        if x.mean() > 0:
            second = F.linear(F.tanh(first), self.tied.weight, self.second_bias)
            return (first ** 2).mean() + (second ** 2).mean()
        return (first ** 2).mean()


def step(model, opt, x):
    loss = model(x)
    loss.backward()
    opt.step()
    return loss.item()


def test_tied_weight_read_by_a_head_under_a_tensor_condition_trains_as_eager():
    rt.seed(0)
    base = TiedHeads()
    runs = []
    for fn in (step, d2s.to_static(step)):
        model = copy.deepcopy(base)
        runs.append((fn, model, rt.optimizer.Adam(0.05, parameters=model.parameters(),
                                                  weight_decay=0.01)))
    rng = np.random.default_rng(0)
    for sign in (-1.0, 1.0, -1.0, 1.0):
        x = (rng.random((2, 3)) * sign).astype("float32")
        model = copy.deepcopy(runs[0][1])
        w = model.tied.weight.numpy().astype("float64")

        def loss_at(v, model=model, x=x):
            model.tied.weight.set_value(rt.to_tensor(v.astype("float32")))
            return float(model(rt.to_tensor(x)).item())

        want_grad = numeric_grad(loss_at, w, eps=1e-3)  # (a float32 loss)
        outs = [fn(m, o, rt.to_tensor(x)) for fn, m, o in runs]
        assert outs[1] == outs[0] and type(outs[1]) is float
        (_, m1, o1), (_, m2, o2) = runs
        assert_same_model(m2, m1)
        assert_same_optimizer(o2, o1)
        assert grads_none(m2)["second_bias"] is (sign < 0)
        np.testing.assert_allclose(m2.tied.weight.grad.numpy(), want_grad, rtol=2e-2, atol=2e-3)
        for _, _, opt in runs:
            opt.clear_grad(set_to_zero=False)
    assert runs[1][0].get_traced_count() == 1
