"""Found by the dict-keys generator extended with the items of a dict on the object passed in
(`o.meter`, seed 27101, 200 examples) in session 27:

- `o.meter["t"] += h.sum()` (a Python float item made a tensor, no loop) left a Python float in
  the caller's dict where eager code leaves the tensor (a silent wrong result: the item was
  fed as a Python number, `side_effects.scan`); it is now the tensor, and a call that starts
  from a tensor there traces a program of its own;
- a dict item a graph loop makes a tensor (`m["t"] += h.sum()`, a local dict too) beside a
  store under a computed key of another dict in the other branch of a tensor `if`
  (`d[int(x[0] > 0.5)] = h * 0.25`) raised an internal "Variable ... created inside a
  cond/while/switch_case block" (the loop, traced again with the item's flags, found the
  other dict holding the discarded trace's values: `graph_while.build` puts them back);
- an int item a tensor `if` made a float on one path only (`m["n"] += 0.5` in one branch),
  then grown by a graph loop: after zero trips on the path that kept the int the call gave
  the float 0.0 (a silent wrong type: the loop dropped the item's type flags, which it now
  carries, `loop_number_items`).

Eager vs converted over inputs through one program, the caller's dict after each call."""

import numpy as np
import pytest

import d2s
import runtime as rt


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, rt.Tensor):
        return ("tensor", str(v.dtype), round(float(v), 5))
    return (type(v).__name__, v)


class Box:
    def __init__(self):
        self.meter = {"sum": 0.0, "t": 0.0}


def accumulate(x, o):
    o.meter["t"] += x.sum()
    o.meter["sum"] += x.sum().item()
    return x * 2


def test_a_number_item_made_a_tensor_outside_loops():
    static = d2s.to_static(accumulate)
    eager_box, static_box = Box(), Box()
    for xs in ([1.25, 0.25, 0.25], [-2.75, -2.25, -1.25], [1.0, 1.0, 1.0]):
        accumulate(rt.to_tensor(xs), eager_box)
        static(rt.to_tensor(xs), static_box)
        assert _plain(static_box.meter) == _plain(eager_box.meter)
    for box in (eager_box, static_box):
        box.meter["t"] = 5.0  # (a number again: the program that starts from one)
    accumulate(rt.to_tensor([1.0, 1.0, 1.0]), eager_box)
    static(rt.to_tensor([1.0, 1.0, 1.0]), static_box)
    assert _plain(static_box.meter) == _plain(eager_box.meter) == {
        "sum": ("float", 1.5), "t": ("tensor", "rt.float32", 8.0)}


def beside_computed_key(x, o):
    h = x * 1.0
    d = {}
    m = {"t": 0.0}
    for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        if rt.mean(x) > 0.0:
            d[int(x[0] > 0.5)] = h * 0.25
        else:
            m["t"] += h.sum()
            o.meter["t"] += h.sum()
    return h, len(d), m


@pytest.mark.parametrize("xs", [[0.25, 2.75, 0.25], [-2.25, -1.25, -1.25],
                                [1.25, 1.25, 1.25], [-0.5, -2.0, -1.0]])
def test_an_item_made_a_tensor_beside_a_computed_key(xs):
    static = d2s.to_static(beside_computed_key)
    eager_box, static_box = Box(), Box()
    want = beside_computed_key(rt.to_tensor(xs), eager_box)
    got = static(rt.to_tensor(xs), static_box)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    assert got[1] == want[1]
    assert _plain(got[2]) == _plain(want[2])
    assert _plain(static_box.meter) == _plain(eager_box.meter)


def half_steps(x, y):
    h = x * 1.0
    m = {"n": 0}
    if y[1] > x[2]:
        h = h + 1.0
    else:
        m["n"] += 0.5
    for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        m["n"] += 0.5
    return h, m


def test_an_item_whose_type_a_tensor_if_decided_grown_in_a_graph_loop():
    static = d2s.to_static(half_steps)
    for xs, ys in (([1.25, 0.75, 0.25], [2.25, 0.75, 0.75]),
                   ([-1.25, -2.75, -0.75], [-0.25, 0.25, 2.25]),  # (the int: no trip)
                   ([-2.25, 1.75, -0.25], [-1.25, -1.25, 2.25]),
                   ([-1.25, -2.75, -0.75], [-0.25, -2.0, 2.25])):
        n = 0 if ys[1] > xs[2] else 0.5
        for _ in range(int(np.clip(np.float32(xs[1]) + 1.0, 0.0, 3.0))):
            n += 0.5
        want = n
        for fn in (half_steps, static):
            _, m = fn(rt.to_tensor(xs), rt.to_tensor(ys))
            assert type(m["n"]) is type(want) and m["n"] == want
    assert static.program_cache.traces == 1
