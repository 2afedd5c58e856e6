"""Dict key ORDERS decided by tensor `if`s nested in a branch of another (issue 35): a key
first stored under the inner `if` and stored again after both, in a local dict (returned,
`list(d)`) and in a dict the caller reaches (`self.stats`). Where a key's stores in a branch
are all in one block, the first of them runs wherever any does, so its moment is the key's
rank there (`key_ranks._merged`); the caller's dict is sorted by the run's ranks after the
call (`writeback_order`). Before, the local dict was refused and the caller's dict kept the
trace's order, silently. Where a key is first stored in both branches of the inner `if`,
the run picks the moment: a local dict read in order stays refused at the user's line. Eager
vs static vs a NumPy reference over inputs taking each path."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError

from .messages import assert_at_user_line
from .test_dict_keys_in_graph_loops import line_of

INPUTS = ([2.0, 1.0], [0.5, 1.0], [-1.0, -2.0], [-1.0, 2.0], [2.0, -1.5])


def head_outputs(x):
    """Outputs of optional heads: 'aux' only for confident positive batches, then the main
    outputs, then 'aux' on every batch (eager: first where the inner `if` ran, else last)."""
    out = {}
    if x.mean() > 0:
        if x[0] > 1:
            out["aux"] = x * 2.0
        out["pos"] = x.abs()
    out["main"] = x + 1.0
    out["aux"] = out.get("aux", x * 0.0) - 1.0
    return out, list(out)


def head_outputs_ref(x):
    out = {}
    if x.mean() > 0:
        if x[0] > 1:
            out["aux"] = x * 2.0
        out["pos"] = np.abs(x)
    out["main"] = x + 1.0
    out["aux"] = out.get("aux", x * 0.0) - 1.0
    return out, list(out)


def two_branches(x):
    d = {}
    if x.mean() > 0:
        d["c"] = x
        if x[0] > 1:
            d["a"] = x * 2.0
            d["e"] = x
    else:
        if x[1] > 0:
            d["e"] = x * 2.0
        d["a"] = x
    d["b"] = x + 1.0
    d["a"] = x - 1.0
    d["e"] = x - 1.0
    return d


two_branches_ref = two_branches  # (NumPy arrays take the same code: Python `if`s)


@pytest.mark.parametrize("fn,ref", [(head_outputs, head_outputs_ref),
                                    (two_branches, two_branches_ref)])
def test_local_dicts_follow_the_run(fn, ref):
    static = d2s.to_static(fn)
    for xv in INPUTS:
        x = np.array(xv, "float32")
        eager, got, want = fn(rt.to_tensor(x)), static(rt.to_tensor(x)), ref(x)
        e, g, w = (v[0] if isinstance(v, tuple) else v for v in (eager, got, want))
        assert list(g) == list(e) == list(w), (xv, list(g), list(e), list(w))
        if isinstance(eager, tuple):
            assert got[1] == eager[1] == want[1]
        for k in w:
            np.testing.assert_allclose(g[k].numpy(), e[k].numpy())
            np.testing.assert_allclose(g[k].numpy(), w[k], rtol=1e-6)
    assert len(static.program_cache) == 1


class Monitor:
    def __init__(self):
        self.stats = {}

    def observe(self, x):
        if x.mean() > 0:
            if x[0] > 1:
                self.stats["peak"] = x.max()
            self.stats["mean"] = x.mean()
        self.stats["min"] = x.min()
        self.stats["peak"] = x.max() * 2.0
        return x - self.stats["min"]


def test_self_state_follows_the_run():
    for xv in INPUTS:
        eager, converted = Monitor(), Monitor()
        static = d2s.to_static(converted.observe)
        x = rt.to_tensor(np.array(xv, "float32"))
        np.testing.assert_allclose(static(x).numpy(), eager.observe(x).numpy())
        assert list(converted.stats) == list(eager.stats), (xv, list(converted.stats))
        for k, v in eager.stats.items():
            np.testing.assert_allclose(converted.stats[k].numpy(), v.numpy())


def both_inner_branches(x):
    d = {"z": x}
    if x.mean() > 0:
        if x[0] > 1:
            d["a"] = x * 2.0
        else:
            d["a"] = x * 3.0
    d["b"] = x + 1.0
    d["a"] = x - 1.0
    return list(d)


def test_a_key_first_stored_in_both_inner_branches_stays_refused_at_the_read():
    with pytest.raises(ConversionError) as info:
        d2s.to_static(both_inner_branches)(rt.to_tensor([2.0, 1.0]))
    text = assert_at_user_line(info.value, __file__,
                               line_of(both_inner_branches, "return list(d)"))
    assert "reads the order of the keys of a dict whose key 'a'" in text
