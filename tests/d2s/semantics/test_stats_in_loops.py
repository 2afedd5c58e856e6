"""Item 11: training through layers with running statistics (BatchNorm1D) inside a tensor
`while`: one program, different trip counts, the same loss, gradients, running statistics and
trained parameters as eager."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class Repeat(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.bn = rt.nn.BatchNorm1D(3)

    def forward(self, x, n):
        x = self.fc(x)
        i = rt.zeros([], "int64")
        while i < n:  # a tensor trip count
            x = rt.tanh(self.bn(self.fc(x)))
            i = i + 1
        return (x * x).mean() + x.sum() * 0.1


@pytest.mark.parametrize("trips", [[2, 0, 3], [1, 1]])
def test_batchnorm_in_tensor_while_trains_like_eager(trips):
    rng = np.random.RandomState(0)
    xs = [rt.to_tensor(rng.randn(4, 3).astype("float32")) for _ in trips]
    nets = []
    for static in (False, True):
        rt.seed(0)
        net = Repeat()
        net.train()
        model = d2s.to_static(net) if static else net
        opt = rt.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
        losses = []
        for x, n in zip(xs, trips):
            loss = model(x, rt.to_tensor(n))
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(loss.item())
        nets.append((net, losses))
    (eager, le), (static, ls) = nets
    np.testing.assert_allclose(ls, le, rtol=1e-5, atol=1e-6)
    for name in ("fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn._mean", "bn._variance"):
        a = eager
        b = static
        for part in name.split("."):
            a, b = getattr(a, part), getattr(b, part)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
