"""Which parameters get a gradient when a parameter is read only on a branch of a tensor `if`
nested in another one (an `if` / `elif` / `else` chain choosing a head, at the top level and
inside a graph loop's body): eager leaves `.grad is None` for every head this input did not
reach. One converted Layer takes every path; gradients are checked against finite differences
of a NumPy reference, and a whole converted training step with weight decay moves exactly the
heads eager moves (issue 33)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe.test_reached_branches_in_loops import _check_gradients, _params64, _run


class Router(rt.nn.Layer):
    """Sends its features to one of three heads, as their sum and maximum say."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 3)
        self.a = rt.nn.Linear(3, 3)
        self.b = rt.nn.Linear(3, 3)
        self.c = rt.nn.Linear(3, 3)

    def forward(self, x, steps):
        h = self.embed(x)
        if h.sum() > 0:
            h = self.a(h)
        elif h.max() > 0:
            h = self.b(h)
        else:
            h = self.c(h)
        return (h * h).mean()


class LoopedRouter(Router):
    """Routes the state on each trip of the loop."""

    def forward(self, x, steps):
        h = self.embed(x)
        for _ in range(steps):
            if h.sum() > 0:
                h = rt.tanh(self.a(h))
            elif h.max() > 0:
                h = rt.tanh(self.b(h))
            else:
                h = rt.tanh(self.c(h))
        return (h * h).mean()


def _route(p, h, looped):
    """(the head name, its output)."""
    assert abs(h.sum()) > 1e-3 and abs(h.max()) > 1e-3  # (finite differences keep the path)
    head = "a" if h.sum() > 0 else "b" if h.max() > 0 else "c"
    out = h @ p[f"{head}.weight"] + p[f"{head}.bias"]
    return head, np.tanh(out) if looped else out


def _reference(p, x, steps, looped):
    """(the loss, the heads the call ran)."""
    h = x @ p["embed.weight"] + p["embed.bias"]
    ran = []
    for _ in range(steps if looped else 1):
        head, h = _route(p, h, looped)
        ran.append(head)
    return (h * h).mean(), ran


# (input, trips of the loop): heads b, a, c, c, b, c; the loop runs b; a a; c b a; c; none;
# c c b
INPUTS = [([[-1.6, -2.6, -0.5], [0.8, 2.3, 0.2]], 1), ([[-1.1, -1.6, 1.5], [3.3, 0.5, -2.5]], 2),
          ([[-3.4, 3.9, 1.8], [-1.9, 1.8, 2.7]], 3), ([[-1.9, -0.2, 2.2], [-1.2, 0.8, 1.7]], 1),
          ([[-1.6, -2.6, -0.5], [0.8, 2.3, 0.2]], 0), ([[-1.9, -0.2, 2.2], [-1.2, 0.8, 1.7]], 3)]


@pytest.mark.parametrize("cls", [Router, LoopedRouter], ids=lambda c: c.__name__)
def test_each_head_has_a_gradient_only_when_a_route_reached_it(cls):
    rt.seed(4)
    eager, static = cls(), cls()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    looped = cls is LoopedRouter
    seen = set()
    for x, steps in INPUTS:
        x = np.array(x)
        want, ran = _reference(_params64(eager), x, steps, looped)
        seen.update(ran)
        for loss in _run(eager, static, x.astype("float32"), np.int64(steps)):
            np.testing.assert_allclose(loss, want, rtol=1e-5)
        _check_gradients(eager, static,
                         lambda p, x=x, steps=steps: _reference(p, x, steps, looped)[0],
                         lambda name, ran=ran: name.split(".")[0] not in {"a", "b", "c"} - set(
                             ran))
    assert seen == {"a", "b", "c"}
    assert len(static.forward.program_cache) == 1


def train_step(net, opt, x, steps):
    loss = net(x, steps)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss


@pytest.mark.parametrize("cls", [Router, LoopedRouter], ids=lambda c: c.__name__)
def test_converted_step_moves_only_the_heads_eager_moves(cls):
    rt.seed(4)
    eager, static = cls(), cls()
    static.set_state_dict(eager.state_dict())
    eager_opt, static_opt = (rt.optimizer.SGD(0.05, parameters=m.parameters(), weight_decay=0.1)
                             for m in (eager, static))
    converted = d2s.to_static(train_step)
    moved = set()
    for k, (x, steps) in enumerate(INPUTS):
        x = rt.to_tensor(np.array(x, "float32"))
        before = {name: p.numpy().copy() for name, p in static.named_parameters()}
        want = train_step(eager, eager_opt, x, rt.to_tensor(steps))
        got = converted(static, static_opt, x, rt.to_tensor(steps))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
        assert len(eager.parameters()) == len(static.parameters())
        heads = set()
        for (name, e), (_, s) in zip(eager.named_parameters(), static.named_parameters()):
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {k}")
            if not np.array_equal(s.numpy(), before[name]):
                heads.add(name.split(".")[0])
        assert len(heads & {"a", "b", "c"}) <= (steps if cls is LoopedRouter else 1)
        moved |= heads
    assert len(moved & {"a", "b", "c"}) >= 2
    assert len(converted.program_cache) == 1
