"""Lists of tuples / dicts of tensors whose length depends on a tensor: one tensor array per
part (all of one length), with len, indexing (negative too), for, enumerate, pop, a result
returned as the list eager code returns, and backward."""
import numpy as np
import pytest

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t


class Cell(rt.nn.Layer):
    """An LSTM-like cell unrolled by a tensor-length loop that keeps (h, c) per step."""

    def __init__(self):
        super().__init__()
        self.decay = 0.5

    def step(self, h, c, x):
        c = c * self.decay + x
        return rt.tanh(c) + h * 0.1, c

    def forward(self, x):
        h, c = x * 0.0, x * 0.0
        outs = []
        i = 0
        while i < rt.sum(x):          # a graph loop: `outs` is a tensor array per part
            h, c = self.step(h, c, x * (i + 1))
            outs.append((h, c))
            i += 1
        hs = []
        for o in outs:                # a graph for over the array of tuples
            hs.append(o[0] * 2.0)
        acc = x * 0.0
        for k, (hh, cc) in enumerate(outs):
            acc = acc + hh * k + cc
        return rt.stack(hs).sum(0) + outs[-1][1] + len(outs) + acc


def ref_cell(x):
    h, c, outs = x * 0.0, x * 0.0, []
    for i in range(int(np.ceil(x.sum()))):
        c = c * 0.5 + x * (i + 1)
        h = np.tanh(c) + h * 0.1
        outs.append((h, c))
    acc = sum((hh * k + cc for k, (hh, cc) in enumerate(outs)), x * 0.0)
    return np.stack([o[0] * 2.0 for o in outs]).sum(0) + outs[-1][1] + len(outs) + acc


def test_tuples_appended_in_a_graph_loop_then_for_enumerate_index_len():
    model, sf = Cell(), d2s.to_static(Cell())
    for v in ([1.0, 2.0], [0.5, 0.25], [2.0, 2.5]):
        want = ref_cell(np.asarray(v, np.float32))
        np.testing.assert_allclose(model(t(v)).numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sf(t(v)).numpy(), want, rtol=1e-5, atol=1e-6)
    assert len(sf.forward.program_cache) == 1


def dict_stack(x):
    """Dicts pushed under a tensor `if` in a graph loop onto a pre-filled list, then popped."""
    items = [{"h": x, "n": x * 0.0}]
    i = 0
    while i < rt.sum(x):
        if rt.mean(x) > i:
            items.append({"h": x * i, "n": x + i})
        i += 1
    s = x * 0.0
    while len(items) > 1:
        d = items.pop()
        s = s * 0.5 + d["h"] * d["n"]
    return s + items[0]["h"] + len(items)


def ref_dict_stack(x):
    items = [{"h": x, "n": x * 0.0}]
    for i in range(int(np.ceil(x.sum()))):
        if x.mean() > i:
            items.append({"h": x * i, "n": x + i})
    s = x * 0.0
    while len(items) > 1:
        d = items.pop()
        s = s * 0.5 + d["h"] * d["n"]
    return s + items[0]["h"] + len(items)


def test_dicts_pushed_under_a_tensor_if_and_popped_in_another_graph_loop():
    check(dict_stack, ref_dict_stack, [([1.0, 2.0],), ([0.5, 0.5],), ([3.0, 1.0],)])


def pairs_by_branch(x):
    pairs = [(x, x * 2.0)]
    if rt.mean(x) > 0:               # a different number of appends per branch
        pairs.append((x * 3.0, rt.tanh(x)))
        pairs.append((x * 4.0, x))
    total = x * 0.0
    for a, b in pairs:
        total = total + a * b
    return total + len(pairs) + pairs[-1][0]


def ref_pairs_by_branch(x):
    pairs = [(x, x * 2.0)] + ([(x * 3.0, np.tanh(x)), (x * 4.0, x)] if x.mean() > 0 else [])
    return sum((a * b for a, b in pairs), x * 0.0) + len(pairs) + pairs[-1][0]


def test_list_of_tuples_whose_length_depends_on_a_tensor_if():
    check(pairs_by_branch, ref_pairs_by_branch, [([1.0, 2.0],), ([-0.5, -0.5],), ([3.0, -1.0],)])


def nested_items(x, n):
    """Nested structures (a tuple holding a dict and a list), from an empty start."""
    log = []
    i = rt.zeros([], "int64")
    while i < n:
        log.append((x * i.astype("float32"), {"sq": x * x, "parts": [x + 1.0, x - 1.0]}))
        i = i + 1
    first = log[0]
    last = log[-1]
    return first[1]["parts"][0] + last[0] * 3.0 + last[1]["sq"] + log[1:][0][1]["parts"][1]


def ref_nested(x, n):
    log = [(x * i, {"sq": x * x, "parts": [x + 1.0, x - 1.0]}) for i in range(n)]
    return log[0][1]["parts"][0] + log[-1][0] * 3.0 + log[-1][1]["sq"] + log[1:][0][1][
        "parts"][1]


def test_nested_structures_from_an_empty_start_with_slices():
    sf = d2s.to_static(nested_items)
    for v, n in (([1.0, 2.0], 3), ([0.5, -1.0], 2), ([2.0, 0.0], 5)):
        want = ref_nested(np.asarray(v, np.float32), n)
        np.testing.assert_allclose(nested_items(t(v), rt.to_tensor(n)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(sf(t(v), rt.to_tensor(n)).numpy(), want, rtol=1e-5)
    assert len(sf.program_cache) == 1


def returns_pairs(x):
    outs = []
    i = 0
    while i < rt.sum(x):
        outs.append((x * i, {"a": x + i}))
        i += 1
    return outs


def test_a_returned_list_of_tuples_is_what_eager_returns():
    sf = d2s.to_static(returns_pairs)
    for v in ([1.0, 2.0], [-1.0, 0.0], [0.5, 1.0]):
        got, want = sf(t(v)), returns_pairs(t(v))
        assert type(got) is list and len(got) == len(want)
        for (a, d), (b, e) in zip(got, want, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy())
            np.testing.assert_allclose(d["a"].numpy(), e["a"].numpy())
    assert len(sf.program_cache) == 1


def rnn_pairs(x, w):
    outs = []
    h = x
    i = rt.zeros([])
    while i < 3:
        g = rt.tanh(h * w)
        h = g + h * 0.5
        outs.append({"h": h, "g": g})
        i = i + 1.0
    total = x * 0.0
    for k, o in enumerate(outs):
        total = total + o["h"] * (k + 1) + o["g"] * o["g"]
    return (total + outs[-1]["h"] * 2.0).sum()


def ref_rnn_pairs(x, w):
    h, outs = x, []
    for _ in range(3):
        g = np.tanh(h * w)
        h = g + h * 0.5
        outs.append((h, g))
    total = sum(((hh * (k + 1) + g * g) for k, (hh, g) in enumerate(outs)), x * 0.0)
    return (total + outs[-1][0] * 2.0).sum()


def test_backward_through_an_array_of_dicts_matches_finite_differences():
    sf = d2s.to_static(rnn_pairs)
    w0 = np.asarray([0.7, -1.1], np.float64)
    for xv in ([0.3, -0.2], [1.2, 0.4]):
        x0 = np.asarray(xv, np.float64)
        x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
        out = sf(x, t(w0))
        np.testing.assert_allclose(out.numpy(), ref_rnn_pairs(x0, w0), rtol=1e-5)
        out.backward()
        np.testing.assert_allclose(x.grad.numpy(),
                                   numeric_grad(lambda v: ref_rnn_pairs(v, w0), x0),
                                   rtol=1e-3, atol=1e-4)
    assert len(sf.program_cache) == 1


def comprehension(x):
    outs = []
    i = 0
    while i < rt.sum(x):
        outs.append((x * i, x))
        i += 1
    return rt.stack([o[0] for o in outs]).sum()


def truth(x):
    outs = []
    i = 0
    while i < rt.sum(x):
        outs.append((x * i, x))
        i += 1
    if outs:
        return x
    return x + 1.0


class Keeps(rt.nn.Layer):
    def forward(self, x):
        outs = []
        i = 0
        while i < rt.sum(x):
            outs.append((x * i, x))
            i += 1
        self.outs = outs
        return x


def test_a_comprehension_over_a_list_of_tuples_grown_in_a_graph_loop():
    # (was a TypeError; now one graph loop building an array: tests/d2s/state/
    # test_comprehensions.py)
    sf = d2s.to_static(comprehension)
    for v in ([1.0, 2.0], [0.5, 0.25], [2.0, 2.5]):
        x = np.asarray(v, np.float32)
        want = sum((x * i).sum() for i in range(int(np.ceil(x.sum()))))
        np.testing.assert_allclose(float(sf(t(v))), want, rtol=1e-5)
        np.testing.assert_allclose(float(comprehension(t(v))), want, rtol=1e-5)


def test_the_truth_of_such_a_list_is_its_run_time_length():
    static = d2s.to_static(truth)
    for v in ([1.0, 2.0], [-1.0, 0.5]):                  # a list with items, an empty one
        np.testing.assert_allclose(static(t(v)).numpy(), truth(t(v)).numpy())
    assert len(static.program_cache) == 1


def test_what_cannot_be_exact_is_a_clear_error_never_a_silent_value():
    with pytest.raises(d2s.ConversionError, match="self.outs holds a list of tuples/dicts"):
        d2s.to_static(Keeps())(t([1.0, 2.0]))
