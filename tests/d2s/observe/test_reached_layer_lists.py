"""Which parameters get a gradient when a layer of a `LayerList` is picked by a tensor index
(`self.layers[i](h)` in a graph loop, `self.heads[k](h)` with a tensor `k`: one `switch_case`
op over the layers): eager gives a gradient to the layers the call ran only, and `.grad is
None` to the others. One converted Layer takes every path; gradients against finite
differences of a NumPy reference, and a whole converted training step with weight decay moves
exactly the layers eager moves (issue 33)."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe.test_reached_branches_in_loops import _check_gradients, _params64, _run


class Stack(rt.nn.Layer):
    """Runs the first `depth` layers, then the head `k` picks."""

    def __init__(self):
        super().__init__()
        self.layers = rt.nn.LayerList([rt.nn.Linear(3, 3) for _ in range(3)])
        self.heads = rt.nn.LayerList([rt.nn.Linear(3, 1) for _ in range(2)])

    def forward(self, x, depth, k):
        h = x
        for i in range(depth):
            h = rt.tanh(self.layers[i](h))
        return (self.heads[k](h) ** 2).mean()


def _reference(p, x, depth, k):
    h = x
    for i in range(depth):
        h = np.tanh(h @ p[f"layers.{i}.weight"] + p[f"layers.{i}.bias"])
    return ((h @ p[f"heads.{k}.weight"] + p[f"heads.{k}.bias"]) ** 2).mean()


def _used(name, depth, k):
    group, i = name.split(".")[:2]
    return int(i) < depth if group == "layers" else int(i) == k


CALLS = [(1, 0), (3, 1), (0, 1), (2, 0), (0, 0)]  # (depth, head)


def test_only_the_layers_the_call_ran_get_a_gradient():
    rt.seed(7)
    eager, static = Stack(), Stack()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    x = np.random.default_rng(3).standard_normal((2, 3))
    for depth, k in CALLS:
        want = _reference(_params64(eager), x, depth, k)
        for loss in _run(eager, static, x.astype("float32"), np.int64(depth), np.int64(k)):
            np.testing.assert_allclose(loss, want, rtol=1e-5)
        _check_gradients(eager, static,
                         lambda p, depth=depth, k=k: _reference(p, x, depth, k),
                         lambda name, depth=depth, k=k: _used(name, depth, k))
    assert len(static.forward.program_cache) == 1


def train_step(net, opt, x, depth, k):
    loss = net(x, depth, k)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss


def test_converted_step_moves_only_the_layers_the_call_ran():
    rt.seed(7)
    eager, static = Stack(), Stack()
    static.set_state_dict(eager.state_dict())
    eager_opt, static_opt = (rt.optimizer.SGD(0.05, parameters=m.parameters(), weight_decay=0.1)
                             for m in (eager, static))
    converted = d2s.to_static(train_step)
    x = rt.to_tensor(np.random.default_rng(3).standard_normal((2, 3)).astype("float32"))
    for depth, k in CALLS:
        before = {name: p.numpy().copy() for name, p in static.named_parameters()}
        want = train_step(eager, eager_opt, x, rt.to_tensor(depth), rt.to_tensor(k))
        got = converted(static, static_opt, x, rt.to_tensor(depth), rt.to_tensor(k))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
        assert len(eager.parameters()) == len(static.parameters())
        for (name, e), (_, s) in zip(eager.named_parameters(), static.named_parameters()):
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after {depth, k}")
            moved = not np.array_equal(s.numpy(), before[name])
            assert moved == _used(name, depth, k), f"{name} after {depth, k}"
    assert len(converted.program_cache) == 1
