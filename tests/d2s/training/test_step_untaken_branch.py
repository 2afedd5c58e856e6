"""A whole training step converted (`loss.backward(); opt.step(); opt.clear_grad()` inside the
converted function) with a parameter read only on one branch of a tensor `if`: on a run that
takes the other branch, eager autograd leaves its `.grad` as it was (None before its first
use), and Momentum / Adam with weight decay skip it while `.grad` is None. The converted step
does the same, so parameters, `.grad` and optimizer state equal eager's over several steps
whose inputs take either branch (issue 33)."""
import numpy as np
import pytest

import d2s
import runtime as rt


class TwoHeads(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = rt.nn.Linear(3, 3)
        self.head_a = rt.nn.Linear(3, 1)
        self.head_b = rt.nn.Linear(3, 1)

    def forward(self, x):
        h = self.body(x)
        if h.mean() > 0:
            return self.head_a(h)
        return self.head_b(h)


def _optimizer(kind, params):
    if kind == "momentum":
        return rt.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=params,
                                     weight_decay=0.01)
    return rt.optimizer.Adam(learning_rate=0.1, parameters=params, weight_decay=0.01)


def step_clear_to_zero(net, opt, x):
    loss = net(x).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def step_clear_to_none(net, opt, x):
    loss = net(x).mean()
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss


def step_keeping_grads(net, opt, x):
    loss = net(x).mean()
    loss.backward()
    opt.step()
    return loss


def _model(kind):
    rt.seed(0)
    net = TwoHeads()
    return net, _optimizer(kind, net.parameters())


def _batches():
    """Signs chosen so that the runs take head_b first and head_a later."""
    rng = np.random.default_rng(0)
    for sign in (-1, 1, 1, -1, -1):
        yield rt.to_tensor(rng.standard_normal((2, 3)).astype("float32") * sign)


@pytest.mark.parametrize("kind", ["momentum", "adam"])
@pytest.mark.parametrize("step", [step_clear_to_zero, step_clear_to_none, step_keeping_grads])
def test_converted_step_leaves_the_untaken_head_as_eager_does(kind, step):
    (eager, eager_opt), (static, static_opt) = _model(kind), _model(kind)
    head_a_before = static.head_a.weight.numpy().copy()
    converted = d2s.to_static(step)
    heads = []
    for x in _batches():
        heads.append("a" if float(eager.body(x).mean()) > 0 else "b")
        want = step(eager, eager_opt, x)
        got = converted(static, static_opt, x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        pairs = list(zip(eager.named_parameters(), static.named_parameters()))
        assert len(pairs) == len(eager.parameters()) == len(static.parameters())
        for (name, e), (_, s) in pairs:
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-6, atol=1e-7,
                                       err_msg=name)
            assert (s.grad is None) == (e.grad is None), name
            if e.grad is not None:
                np.testing.assert_allclose(s.grad.numpy(), e.grad.numpy(), atol=1e-7,
                                           err_msg=name)
        if heads == ["b"]:  # the first step does not touch head_a (its .grad None there)
            np.testing.assert_array_equal(static.head_a.weight.numpy(), head_a_before)
            assert static.head_a.weight.grad is None
    assert heads[0] == "b" and set(heads) == {"a", "b"}  # (both branches, one program)


def test_a_head_never_taken_keeps_its_initial_values():
    (static, opt) = _model("momentum")
    before = static.head_a.weight.numpy().copy()
    converted = d2s.to_static(step_clear_to_zero)
    for sign in (-1, -1, -1):
        x = rt.to_tensor(np.full((2, 3), 2.0 * sign, "float32"))
        assert float(static.body(x).mean()) <= 0  # (head_b's branch)
        converted(static, opt, x)
    np.testing.assert_array_equal(static.head_a.weight.numpy(), before)
    assert static.head_a.weight.grad is None
    assert static.head_b.weight.grad is not None
