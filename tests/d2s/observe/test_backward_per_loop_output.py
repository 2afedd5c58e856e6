"""Two outputs a graph loop computes each take their own graph, as eagerly: a backward()
without retain_graph through one frees the body ops that computed it, so a second backward()
through an output the loop computed apart from it runs (and accumulates into `.grad`), one
through an output that shares a body op raises eager's "already freed" error. A recurrent
cell on `self.`, a running statistic beside it; zero, one and three trips through one
converted program, each checked against a NumPy reference."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

X0 = np.array([[0.5, -1.0, 2.0]], "float32")


class Recurrent(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(3, 3)
        self.scale = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.5))

    def forward(self, x, n):
        h, stat, seen = x, x.mean() * self.scale, rt.zeros([])
        i = 0
        while i < n:
            h = rt.tanh(self.cell(h))
            stat = stat * 0.9 + x.mean() * self.scale  # (computed apart from h)
            seen = seen + h.sum()  # (shares h's ops)
            i += 1
        return h, stat, seen


def _np_forward(net, x, n):
    w, b, s = (p.numpy().astype("float64") for p in (net.cell.weight, net.cell.bias,
                                                      net.scale))
    h, stat, seen = x.astype("float64"), x.mean() * s, 0.0
    for _ in range(n):
        h = np.tanh(h @ w + b)
        stat = stat * 0.9 + x.mean() * s
        seen = seen + h.sum()
    return h, stat, seen


def _error(t):
    try:
        t.sum().backward()
    except RuntimeError as e:
        return str(e).splitlines()[0]
    return None


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_outputs_of_one_loop_free_their_own_graphs(trips):
    rt.seed(0)
    eager = Recurrent()
    layer = Recurrent()
    layer.set_state_dict(eager.state_dict())
    static = d2s.to_static(layer)
    expected = _np_forward(eager, X0, trips)
    seen_errors, grads = [], []
    for net, fn in ((eager, eager), (layer, static)):
        x = rt.to_tensor(X0, stop_gradient=False)
        h, stat, seen = fn(x, rt.to_tensor(trips))
        for got, ref in zip((h, stat, seen), expected, strict=True):
            np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-6)
        h.sum().backward()
        stat.sum().backward()  # (its ops are its own: runs)
        seen_errors.append(_error(seen) if not seen.stop_gradient else "no graph")
        grads.append([None if p.grad is None else p.grad.numpy() for p in net.parameters()]
                     + [x.grad.numpy(), net.scale.grad.numpy()])
    assert seen_errors[0] == seen_errors[1]
    assert (seen_errors[0] is not None and "already freed" in seen_errors[0]) == (trips > 0)
    assert len(grads[0]) == len(grads[1])
    for e, s in zip(*grads, strict=True):
        assert (e is None) == (s is None)
        if e is not None:
            np.testing.assert_allclose(s, e, rtol=1e-5, atol=1e-6)
    # d(stat)/d(scale): the mean of x times 0.9**trips + the sum of 0.9**k for k < trips
    scale_grad = X0.mean() * (0.9 ** trips + sum(0.9 ** k for k in range(trips)))
    np.testing.assert_allclose(grads[1][-1], [scale_grad], rtol=1e-5)
