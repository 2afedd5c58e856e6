"""A list reached through another name than a local one — a closure variable, `self.hist` on
a Layer, a list inside a dict — whose length depends on a tensor (a tensor `if`, a graph loop)
becomes a tensor array at that place when the place is its only reference; after the call it
holds the list of Tensors eager code leaves (the same list object when it existed before the
call). With another reference it is refused, naming it."""
import re

import numpy as np
import pytest

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t, variables_reachable


def recorder(x):
    log = [x * 1.0]

    def record(v):                     # a closure: appends to the enclosing function's list
        log.append(v)

    def step(h):
        if rt.mean(h) > 0:             # one append on this path, two on the other
            record(h * 2.0)
        else:
            log.append(h - 1.0)
            log.append(rt.tanh(h))
        return h + 1.0

    y = step(x)
    return rt.stack(log).sum(0) + len(log) + y


def ref_recorder(x):
    log = [x * 1.0] + ([x * 2.0] if x.mean() > 0 else [x - 1.0, np.tanh(x)])
    return np.stack(log).sum(0) + len(log) + x + 1.0


def test_a_closure_appends_a_different_number_of_times_per_branch():
    check(recorder, ref_recorder, [([1.0, 2.0],), ([-1.0, -0.5],), ([0.5, -0.25],)])


def cached_outputs(x):
    cache = {"outs": [], "n": 0}
    h = x
    i = rt.zeros([])
    while i < rt.sum(rt.abs(x)):       # a graph loop grows a list inside a dict
        h = rt.tanh(h + 1.0)
        cache["outs"].append(h)
        i = i + 1.0
    outs = cache["outs"]
    return rt.stack(outs).sum(0) * 1.0 + len(outs) + outs[-1]


def ref_cached_outputs(x):
    outs, h = [], x
    for _ in range(int(np.ceil(np.abs(x).sum()))):
        h = np.tanh(h + 1.0)
        outs.append(h)
    return np.stack(outs).sum(0) + len(outs) + outs[-1]


def test_a_list_inside_a_dict_grown_in_a_graph_loop():
    check(cached_outputs, ref_cached_outputs, [([1.0, 0.5],), ([0.25, 0.25],), ([2.0, 1.5],)])


def test_gradient_through_a_list_inside_a_dict_matches_finite_differences():
    sf = d2s.to_static(cached_outputs)
    x0 = np.array([0.7, 0.4], np.float64)
    x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
    sf(x).sum().backward()
    want = numeric_grad(lambda v: ref_cached_outputs(v).sum(), x0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


class History(rt.nn.Layer):
    """A Layer that keeps the hidden states of every call (`self.hist` outlives the call)."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)
        self.hist = []

    def forward(self, x):
        h = self.fc(x)
        self.hist.append(h)
        if rt.mean(x) > 0:             # one more item on this path
            self.hist.append(rt.tanh(h))
        return rt.stack(self.hist).sum(0)


def test_self_hist_appended_under_a_tensor_if_is_written_back_as_eager_leaves_it():
    rt.seed(0)
    eager = History()
    static = History()
    static.set_state_dict(eager.state_dict())
    sf = d2s.to_static(static)
    hist = static.hist                 # the list object itself keeps its identity
    for v in ([1.0, 2.0], [-1.0, -3.0], [0.5, 0.5], [-2.0, 1.0]):
        want = eager(t(v)).numpy()
        got = sf(t(v)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert static.hist is hist and len(hist) == len(eager.hist)
        for a, b in zip(hist, eager.hist, strict=True):
            assert isinstance(a, rt.Tensor)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert not variables_reachable(static)


class Unrolled(rt.nn.Layer):
    """`self.steps` rebuilt on each call and grown by a helper method in a graph loop."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def push(self, h):
        self.steps.append(h)

    def forward(self, x, n):
        self.steps = []
        h = x
        i = 0
        while i < n:
            h = h * 0.5 + 1.0
            self.push(h)
            i += 1
        return rt.stack(self.steps).sum(0) + len(self.steps)


def test_self_steps_reset_then_grown_by_a_method_in_a_graph_loop():
    eager, static = Unrolled(), Unrolled()
    sf = d2s.to_static(static)
    for v, n in (([1.0, 2.0], 3), ([0.0, -1.0], 1), ([4.0, 2.0], 5)):
        h, want = np.asarray(v, np.float32), []
        for _ in range(n):
            h = h * 0.5 + 1.0
            want.append(h)
        ref = np.stack(want).sum(0) + n
        e = eager(t(v), rt.to_tensor(n)).numpy()
        s = sf(t(v), rt.to_tensor(n)).numpy()
        np.testing.assert_allclose(e, ref, rtol=1e-5)
        np.testing.assert_allclose(s, ref, rtol=1e-5)
        assert [a.numpy().tolist() for a in static.steps] == [a.tolist() for a in want]
    assert not variables_reachable(static)


SEEN = []


class Aliased(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.hist = SEEN                 # the same list as a module global: another reference

    def forward(self, x):
        if rt.mean(x) > 0:
            self.hist.append(x)
        return x + 1.0


def test_a_list_with_another_reference_is_refused_naming_it():
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(Aliased())(t([1.0]))
    msg = str(info.value)
    # (named by whichever of its places the walk met first, the other named as well)
    assert re.search(r"the list (self\.hist|SEEN) has a length that depends on a tensor "
                     r"condition", msg), msg
    assert ("the global 'SEEN'" in msg or "held by SEEN, self.hist" in msg) and \
        "if rt.mean(x) > 0:" in msg
