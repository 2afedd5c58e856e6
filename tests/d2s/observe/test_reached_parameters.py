"""Which parameters get a gradient: one read only on the branch of a tensor `if` that this
input did not take (or only through an input a sublayer ignores) keeps `.grad is None` after
`backward()`, exactly as eager, so optimizers with weight decay and momentum leave it where
eager leaves it. Both branches run through ONE converted Layer; gradients are checked against
finite differences of a NumPy reference."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


class Ignores(rt.nn.Layer):
    def forward(self, x, context):
        return x * 2  # `context` is not used: what made it gets no gradient


class TwoHeads(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = rt.nn.Linear(3, 3)
        self.head_a = rt.nn.Linear(3, 1)
        self.head_b = rt.nn.Linear(3, 1)
        self.context = rt.nn.Linear(3, 3)
        self.mix = Ignores()

    def forward(self, x):
        h = self.mix(self.body(x), self.context(x))
        if h.mean() > 0:
            out = self.head_a(h)
        else:
            out = self.head_b(h)
        return (out * out).mean()


def _pair(seed=0):
    rt.seed(seed)
    eager = TwoHeads()
    static = d2s.to_static(TwoHeads())
    static.set_state_dict(eager.state_dict())
    return eager, static


def _reference_loss(params, x):
    h = (x @ params["body.weight"] + params["body.bias"]) * 2
    head = "head_a" if h.mean() > 0 else "head_b"
    out = h @ params[f"{head}.weight"] + params[f"{head}.bias"]
    return (out * out).mean()


POSITIVE = np.full((2, 3), 1.0, "float32")
NEGATIVE = np.full((2, 3), -1.0, "float32")


@pytest.mark.parametrize("x", [POSITIVE, NEGATIVE], ids=["head_a", "head_b"])
def test_untaken_branch_parameters_have_no_gradient(x):
    eager, static = _pair()
    taken = "head_a" if ((x @ eager.body.weight.numpy() + eager.body.bias.numpy()) * 2
                         ).mean() > 0 else "head_b"
    params64 = {k: v.numpy().astype("float64") for k, v in eager.state_dict().items()}
    for layer in (eager, static):
        for _ in range(2):  # the slow call path, then the cached program
            layer.clear_gradients()
            layer(rt.to_tensor(x)).backward()
            for name, p in layer.named_parameters():
                used = name.startswith(("body.", taken + "."))
                assert (p.grad is not None) == used, name
                if used:
                    def loss_of(v, name=name):
                        return _reference_loss({**params64, name: v}, x.astype("float64"))
                    want = numeric_grad(loss_of, params64[name])
                    np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-3, atol=1e-5)


def test_both_branches_through_one_program():
    eager, static = _pair()
    for x in (POSITIVE, NEGATIVE, POSITIVE):
        for layer in (eager, static):
            layer.clear_gradients()
            layer(rt.to_tensor(x)).backward()
        for (name, p), (_, q) in zip(eager.named_parameters(), static.named_parameters(),
                                     strict=True):
            assert (p.grad is None) == (q.grad is None), name
            if p.grad is not None:
                np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-5)
    assert len(static.forward.program_cache) == 1


@pytest.mark.parametrize("make", [
    lambda ps: rt.optimizer.SGD(0.1, parameters=ps, weight_decay=0.1),
    lambda ps: rt.optimizer.Momentum(0.1, momentum=0.9, parameters=ps, weight_decay=0.1),
    lambda ps: rt.optimizer.Adam(0.05, parameters=ps, weight_decay=0.1),
], ids=["sgd", "momentum", "adam"])
def test_optimizer_steps_leave_untaken_heads_as_eager(make):
    eager, static = _pair(seed=1)
    opts = [make(eager.parameters()), make(static.parameters())]
    for step in range(6):
        x = POSITIVE if step % 3 else NEGATIVE  # one head, then the other
        for layer, opt in zip((eager, static), opts, strict=True):
            layer(rt.to_tensor(x) * (1 + step / 10)).backward()
            opt.step()
            opt.clear_grad()
        for (name, p), (_, q) in zip(eager.named_parameters(), static.named_parameters(),
                                     strict=True):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {step}")
