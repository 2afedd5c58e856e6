"""`stop_gradient` that only the run decides: each item of a list grown in a graph loop has
eager's own flag (`outs.append(h if i % 2 == 0 else h.detach())`), and so has a tensor that
one branch of a tensor `if` detaches or a loop that ran zero times leaves detached. Several
trip counts and both branches run through ONE converted program; values against a NumPy
reference, gradients against eager's (issue 33)."""
import numpy as np
import pytest

import d2s
import runtime as rt


class TruncatedUnroll(rt.nn.Layer):
    """Unrolls a cell `steps` times and keeps every state, detaching every other one (as
    truncated backpropagation through time does)."""

    def __init__(self):
        super().__init__()
        self.cell = rt.nn.Linear(3, 3)

    def forward(self, x, steps):
        states = []
        h = x
        for i in range(steps):
            h = rt.tanh(self.cell(h))
            states.append(h if i % 2 == 0 else h.detach())
        return states


def _unroll_reference(layer, x, steps):
    w, b = layer.cell.weight.numpy(), layer.cell.bias.numpy()
    h, out = x, []
    for _ in range(steps):
        h = np.tanh(h @ w + b)
        out.append(h)
    return out


def _pair(cls):
    rt.seed(11)
    eager, static = cls(), cls()
    static.set_state_dict(eager.state_dict())
    return eager, d2s.to_static(static)


def _same_flags_and_values(got, want):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.stop_gradient == w.stop_gradient, f"item {k}"
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, err_msg=f"item {k}")


def test_each_item_of_a_list_grown_in_a_loop_keeps_its_own_stop_gradient():
    eager, static = _pair(TruncatedUnroll)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    for steps in (0, 1, 3, 4, 1):
        want = eager(rt.to_tensor(x), rt.to_tensor(steps))
        got = static(rt.to_tensor(x), rt.to_tensor(steps))
        assert [t.stop_gradient for t in want] == [i % 2 == 1 for i in range(steps)]
        _same_flags_and_values(got, want)
        reference = _unroll_reference(eager, x, steps)
        assert len(reference) == len(got)
        for g, r in zip(got, reference):
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-5, atol=1e-6)
        if steps:  # the kept states' gradient reaches the cell, the detached ones' does not
            for layer, states in ((eager, want), (static, got)):
                layer.clear_gradients()
                sum(s.sum() for s in states if not s.stop_gradient).backward()
            np.testing.assert_allclose(static.cell.weight.grad.numpy(),
                                       eager.cell.weight.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert len(static.forward.program_cache) == 1


def grow_by_branches(x, w, n):
    outs = []
    for i in range(n):
        if i % 3 == 0:
            outs.append(x.detach() * 2)
        else:
            outs.append(x * w + i)
    return outs, outs[0]


def detach_on_one_branch(x, w):
    y = x * w if x.sum() > 0 else x.detach()
    return y, y * 0  # (the second computed from the first: its own path, as eager)


def detached_start(x, w, n):
    h = x.detach()
    for _ in range(n):
        h = h * w
    return h


CASES = [
    (grow_by_branches, [((1.0, 2.0), n) for n in (1, 2, 4, 5)]),
    (detach_on_one_branch, [((1.0, 2.0),), ((-1.0, -2.0),)]),
    (detached_start, [((1.0, 2.0), n) for n in (0, 1, 3)]),
]


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _leaves(o)]
    return [out]


@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_stop_gradient_of_results_follows_the_path_taken(fn, calls):
    converted = d2s.to_static(fn)
    w = rt.to_tensor([0.5, -1.5], stop_gradient=False)
    for x, *n in calls:
        args = (rt.to_tensor(x, stop_gradient=False), w, *map(rt.to_tensor, n))
        want, got = _leaves(fn(*args)), _leaves(converted(*args))
        _same_flags_and_values(got, want)
    assert len(converted.program_cache) == 1


class Experts(rt.nn.Layer):
    """Picks an expert by a tensor index (one `switch_case`); the second one is frozen."""

    def __init__(self):
        super().__init__()
        self.experts = rt.nn.LayerList([rt.nn.Linear(3, 2) for _ in range(3)])
        for p in self.experts[1].parameters():
            p.stop_gradient = True

    def forward(self, x, i):
        return self.experts[i](x)


def test_a_frozen_expert_picked_by_a_tensor_index_gives_no_gradient_path():
    eager, static = _pair(Experts)
    x = rt.to_tensor(np.random.default_rng(2).standard_normal((2, 3)).astype("float32"))
    for i in (0, 1, 2, 1):
        want, got = eager(x, rt.to_tensor(i)), static(x, rt.to_tensor(i))
        assert want.stop_gradient == (i == 1)
        _same_flags_and_values([got], [want])
    assert len(static.forward.program_cache) == 1
