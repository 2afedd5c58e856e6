"""A `detach()` inside a `rt.static.nn.switch_case` block cuts the gradient path on the runs
that take that block, as eagerly: the parameters before it keep `.grad is None`, and a
Momentum step with weight decay leaves them where eager code does. Indices take every block
(and the default) through one converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn


class Router(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 3)
        self.expert = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x, i):
        h = self.encoder(x)
        h = rt.static.nn.switch_case(i, {0: lambda: self.expert(h).detach(),
                                         1: lambda: self.expert(h) * 2.0},
                                     default=lambda: h.detach() * 3.0)
        return self.head(h).sum()


def _train(static: bool, indices):
    rt.seed(0)
    net = Router()
    fn = d2s.to_static(net) if static else net
    opt = rt.optimizer.Momentum(learning_rate=0.1, momentum=0.9,
                                parameters=net.parameters(), weight_decay=0.01)
    x = rt.to_tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype("float32"))
    missing = []
    for i in indices:
        fn(x, rt.to_tensor(i)).backward()
        missing.append([p.grad is None for p in net.parameters()])
        opt.step()
        opt.clear_grad()
    return missing, [p.numpy().copy() for p in net.parameters()]


# (encoder, expert, head) weight and bias: which a run with each index gives no gradient
NO_GRAD = {0: [True] * 4 + [False] * 2, 1: [False] * 6, 2: [True] * 4 + [False] * 2}


def _expected(indices):
    """`.grad is None` after each step: clear_grad() zeroes a gradient once there is one."""
    out, had = [], [False] * 6
    for i in indices:
        had = [h or not n for h, n in zip(had, NO_GRAD[i])]
        out.append([not h for h in had])
    return out


@pytest.mark.parametrize("indices", [[0, 0, 1], [2, 0, 1], [1, 2, 2]])
def test_detach_in_a_switch_case_block_cuts_the_gradient_as_eagerly(indices):
    eager, static = _train(False, indices), _train(True, indices)
    assert eager[0] == _expected(indices)
    assert static[0] == eager[0]
    assert len(static[1]) == len(eager[1])
    for s, e in zip(static[1], eager[1]):
        np.testing.assert_allclose(s, e, rtol=1e-5, atol=1e-6)
