"""A backward() that reaches only some outputs of a converted call gives what eager gives: no
gradient through the outputs it did not reach (not a zero seed: zero times an infinite local
gradient, sqrt or log at 0, is NaN), and `.grad` None for what only those outputs read."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def loss_and_log(x):
    return (x * x).sum(), rt.sqrt(x * 0.0), rt.log(x)


@pytest.mark.parametrize("which", [0, 2, "both"])
def test_backward_through_some_outputs_equals_eager_and_numpy(which):
    x0 = np.array([1.0, 2.0, 4.0], "float32")
    expected = {0: 2 * x0, 2: 1 / x0, "both": 2 * x0 + 1 / x0}[which]
    static = d2s.to_static(loss_and_log)
    for fn in (loss_and_log, static, static):  # the second static call reuses the program
        x = rt.to_tensor(x0, stop_gradient=False)
        outs = fn(x)
        target = outs[0] + outs[2].sum() if which == "both" else outs[which].sum()
        target.backward()
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


class TwoHeads(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = rt.nn.Linear(3, 4)
        self.a = rt.nn.Linear(4, 1)
        self.b = rt.nn.Linear(4, 2)

    def forward(self, x):
        h = rt.tanh(self.body(x))
        return self.a(h), self.b(h)


def test_a_head_no_loss_reached_keeps_grad_none_as_eager():
    rt.seed(3)
    eager = TwoHeads()
    static = TwoHeads()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    x = rt.to_tensor(np.random.default_rng(0).normal(size=[5, 3]).astype("float32"))
    for model in (eager, static):
        model.clear_gradients()
        out_a, _ = model(x)
        out_a.mean().backward()
    got = {n: p.grad for n, p in static.named_parameters()}
    for name, p in eager.named_parameters():
        if name.startswith("b."):
            assert p.grad is None and got[name] is None, name
        else:
            np.testing.assert_allclose(got[name].numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-7)


def gated_with_aux_loss(x):
    if x.mean() > 0:  # a tensor `if`: values its branch computes are saved by export
        scaled = x * 2.0
        aux_loss = (scaled * scaled).sum()
        h = rt.tanh(x)
        y = h * h
    else:
        aux_loss = x.sum()
        y = x * 3.0
    return y, aux_loss


def _gated_y_sum(x):
    return (np.tanh(x) ** 2).sum() if x.mean() > 0 else (3.0 * x).sum()


def test_backward_through_one_output_of_a_branch_reads_its_own_saved_values():
    """The backward for the reached outputs saves fewer branch values than the full one; each
    must read its own (it read the full backward's first saved value, 2x, for tanh(x))."""
    static = d2s.to_static(gated_with_aux_loss)
    for x0 in ([0.5, 1.0, -0.25], [-0.5, 0.25, -1.0], [2.0, -1.0, 0.75]):
        x0 = np.array(x0, "float32")
        expected = numeric_grad(_gated_y_sum, x0.astype("float64"))
        for fn in (gated_with_aux_loss, static):
            x = rt.to_tensor(x0, stop_gradient=False)
            y, aux_loss = fn(x)
            y.sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(aux_loss.numpy(), (4 * x0 * x0).sum()
                                       if x0.mean() > 0 else x0.sum(), rtol=1e-6)
