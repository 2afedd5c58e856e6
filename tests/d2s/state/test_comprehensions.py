"""A comprehension (or a generator in `sum` / `rt.stack`) over a list that is a tensor array
(grown in a graph loop) is one graph loop building an array, as the `for` statement is."""
import numpy as np

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t


class Decoder(rt.nn.Layer):
    """Collect hidden states in a data-dependent loop, then project each one."""

    def __init__(self):
        super().__init__()
        rt.seed(3)
        self.cell = rt.nn.Linear(2, 2)
        self.proj = rt.nn.Linear(2, 1)

    def forward(self, x):
        hs = []
        h = x
        i = 0
        while i < rt.sum(rt.abs(x)):
            h = rt.tanh(self.cell(h))
            hs.append(h)
            i += 1
        logits = [self.proj(v) for v in hs]           # a comprehension over the array
        total = sum(rt.abs(v) for v in logits)        # a generator in sum
        return rt.stack([g * 2.0 for g in logits]).sum() + total.sum() + len(logits)


def test_comprehension_over_hidden_states_of_a_graph_loop_matches_eager():
    eager = Decoder()
    static = Decoder()
    static.set_state_dict(eager.state_dict())
    sf = d2s.to_static(static)
    for v in ([1.0, 0.5], [0.25, 0.25], [2.0, -1.5]):
        np.testing.assert_allclose(sf(t(v)).numpy(), eager(t(v)).numpy(), rtol=1e-5, atol=1e-6)


def pairs_product(x):
    pairs = []
    i = 0
    while i < rt.sum(x):
        pairs.append((x * i, x + i))
        i += 1
    prods = [a * b for a, b in pairs]                 # tuple targets over tuple items
    return rt.stack(prods).sum(0) + rt.stack([p[0] for p in pairs]).sum(0)


def ref_pairs_product(x):
    pairs = [(x * i, x + i) for i in range(int(np.ceil(x.sum())))]
    return np.stack([a * b for a, b in pairs]).sum(0) + np.stack([p[0] for p in pairs]).sum(0)


def test_comprehension_with_tuple_targets_over_a_list_of_tuples():
    check(pairs_product, ref_pairs_product, [([1.0, 0.5],), ([2.0, 1.5],), ([0.5, 0.25],)])


def scaled(x):
    outs = []
    h = x
    i = 0
    while i < 3:                                      # i is a Python int: an unrolled loop
        h = rt.tanh(h * 1.5)
        outs.append(h)
        i += 1
    k = rt.zeros([])
    more = []
    while k < rt.sum(rt.abs(x)):
        more.append(h * k)
        k = k + 1.0
    return rt.stack([v * v for v in outs]).sum() + rt.stack([m + 1.0 for m in more]).sum()


def ref_scaled(x):
    outs, h = [], x
    for _ in range(3):
        h = np.tanh(h * 1.5)
        outs.append(h)
    more = [h * k for k in range(int(np.ceil(np.abs(x).sum())))]
    return sum((v * v).sum() for v in outs) + sum((m + 1.0).sum() for m in more)


def test_python_lists_and_arrays_in_one_function():
    check(scaled, ref_scaled, [([1.0, 0.5],), ([0.2, 0.1],), ([2.0, -1.5],)])


def test_gradient_through_a_comprehension_over_an_array_matches_finite_differences():
    sf = d2s.to_static(scaled)
    x0 = np.array([0.7, -0.4], np.float64)
    x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
    sf(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(ref_scaled, x0), rtol=1e-3,
                               atol=1e-3)
