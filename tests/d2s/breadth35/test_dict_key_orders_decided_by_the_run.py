"""Dicts whose key ORDER the run decides (issue 35): a key first set under a tensor `if`
and set again on every path later (at the end on the runs where it was missing), keys
the branches set in another order each, a key set by a helper. Eager code keeps a dict's
keys in the order they were first stored; converted code records, at each store of a
constant key, the moment eager code first stored it (`d2s/operators/key_ranks.py`), so a
returned dict, a `for` over it, `list(d)`, `list(d.keys())` and `list(d.values())` follow
the run. Each program runs eagerly, converted and as a NumPy reference over inputs that
take different paths through one program; key order, values and Python types compared."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError

from .messages import assert_at_user_line, shown
from .test_dict_keys_in_graph_loops import line_of

INPUTS = ([1.0, 2.0, 0.5], [-5.0, 3.0, 0.5], [1.0, 3.0, 0.5], [-3.0, 1.0, 0.25])


def _plain(v):
    """What a user observes of a value: Python numbers as they are, tensors as lists."""
    if isinstance(v, dict):
        return [(type(k).__name__, k, _plain(x)) for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [_plain(x) for x in v]
    if isinstance(v, (bool, int, float, str)):
        return type(v).__name__, v
    if isinstance(v, np.ndarray):
        return "ndarray", np.round(v.astype("float64"), 4).tolist()
    return type(v).__name__, str(v.dtype), np.round(v.numpy().astype("float64"), 4).tolist()


def _check(fn, ref, inputs=INPUTS, programs=1):
    static = d2s.to_static(fn)
    for xv in inputs:
        x = np.array(xv, "float32")
        eager, got = fn(rt.to_tensor(x)), static(rt.to_tensor(x))
        assert _plain(got) == _plain(eager), (xv, _plain(got), _plain(eager))
        want = ref(x)
        assert _order(eager) == _order(want), (xv, eager, want)
    assert len(static.program_cache) == programs


def _order(v):
    if isinstance(v, dict):
        return list(v)
    if isinstance(v, (list, tuple)):
        return [_order(x) for x in v]
    return None


# --- a key on some paths, set again on every path ----------------------------------------

def aux_then_main(x):
    """A loss dict: the aux head runs only when the batch is positive; the aux loss is
    set again after the main one (eager: 'aux' first where the `if` ran, else last)."""
    losses = {}
    if x.mean() > 0:
        losses["aux"] = (x * x).sum()
    losses["main"] = x.sum() * 2.0
    if x.max() > 2:
        losses["aux"] = x.max() - 1.0
    return losses


def aux_then_main_ref(x):
    d = {}
    if x.mean() > 0:
        d["aux"] = (x * x).sum()
    d["main"] = x.sum() * 2.0
    if x.max() > 2:
        d["aux"] = x.max() - 1.0
    return d


def test_a_returned_dict_has_the_order_of_the_run():
    _check(aux_then_main, aux_then_main_ref)


def _total(d, x):
    out = x * 0.0
    for _, v in d.items():
        out = out * 10.0 + v     # order-sensitive: each key's turn weighs differently
    return out


def looped(x):
    d = {}
    if x.mean() > 0:
        d["a"] = x * 2.0
    d["b"] = x + 1.0
    d["a"] = x - 1.0             # at the end where the first `if` did not run
    return _total(d, x), list(d), list(d.keys()), rt.stack(list(d.values()))


def looped_ref(x):
    d = {}
    if x.mean() > 0:
        d["a"] = x * 2.0
    d["b"] = x + 1.0
    d["a"] = x - 1.0
    out = x * 0.0
    for v in d.values():
        out = out * 10.0 + v
    return out, list(d), list(d.keys()), np.stack(list(d.values()))


def test_a_loop_and_lists_of_its_keys_and_values_follow_the_run():
    _check(looped, looped_ref)


class Head(rt.nn.Layer):
    """A Layer whose forward fills a dict through a helper and `self.` state."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.names = ("feat", "logit")

    def _put(self, out, name, value):
        out[name] = value

    def forward(self, x):
        out = {}
        h = self.fc(x)
        if h.sum() > 0:
            self._put(out, self.names[1], h * 0.5)
        out[self.names[0]] = h
        self._put(out, self.names[1], rt.tanh(h))
        scores = []
        for name, v in out.items():
            scores.append(v.sum() * (2.0 if name == "feat" else 3.0))
        return out, scores


def test_a_layer_filling_a_dict_through_a_helper():
    rt.seed(3)
    head = Head()
    static = d2s.to_static(head)
    orders = set()
    for xv in ([1.0, 2.0, 0.5], [-5.0, 3.0, 0.5], [2.0, -1.0, 4.0], [-3.0, -1.0, 0.25]):
        x = rt.to_tensor(np.array([xv], "float32"))
        (ed, es), (sd, ss) = head(x), static(x)
        assert list(sd) == list(ed)
        orders.add(tuple(ed))
        for k in ed:
            np.testing.assert_allclose(sd[k].numpy(), ed[k].numpy(), rtol=1e-6)
        np.testing.assert_allclose([float(v) for v in ss], [float(v) for v in es], rtol=1e-6)
    assert len(orders) == 2  # (the inputs take both paths)


def numbers_and_tensors(x):
    """Python numbers beside tensors: 'n' first set under the `if`, set again later."""
    d = {"x": x.sum()}
    if x[0] > 0:
        d["n"] = 1
    d["m"] = x.max()
    d["n"] = 2
    d["k"] = 3
    return d


def numbers_ref(x):
    d = {"x": x.sum()}
    if x[0] > 0:
        d["n"] = 1
    d["m"] = x.max()
    d["n"] = 2
    d["k"] = 3
    return d


def test_python_numbers_stay_numbers_in_the_run_order():
    _check(numbers_and_tensors, numbers_ref)


# --- keys the branches set in another order each (refused until issue 35) ---------------

def listed(x):
    d = {"n": x.sum()}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    total = x * 0.0
    for k in d:
        total = total * 10.0 + d[k]
    return list(d), total


def listed_ref(x):
    d = {"n": x.sum()}
    if x.sum() > 0:
        d["a"], d["b"] = x, x * 2.0
    else:
        d["b"], d["a"] = x, x * 2.0
    return list(d), None


def test_keys_set_in_another_order_per_branch_are_listed_and_looped_in_the_run_order():
    _check(listed, listed_ref)


def reordered_twice(x):
    d = {}
    if x.sum() > 0:
        d["a"] = x
        d["b"] = x * 2.0
    else:
        d["b"] = x
        d["a"] = x * 2.0
    if x.mean() > 0.1:
        d["c"] = x
        d["e"] = x + 1.0
    else:
        d["e"] = x - 1.0
        d["c"] = x
    return d


def test_a_dict_two_ifs_reorder_is_returned_in_the_run_order():
    _check(reordered_twice, reordered_twice, inputs=INPUTS + ([0.1, 0.05, -0.1],))


# --- what stays refused, at the user's line -----------------------------------------------

def set_in_a_graph_loop(x, n):
    d = {}
    if x.sum() > 0:
        d["c"] = x * 2.0
    d["b"] = x
    for _ in range(n):
        d["c"] = x * 3.0          # the trip the run decides: no known order
    out = x * 0.0
    for v in d.values():
        out = out * 10.0 + v
    return out


def test_a_key_set_again_in_a_graph_loop_follows_the_run():
    """Refused until the loop gave the key it sets the moment it began where the `if` left
    it unset (`key_ranks.after_loop`): 'c' before 'b' where the `if` ran, after it where
    only the loop did, absent where neither did."""
    static = d2s.to_static(set_in_a_graph_loop)
    for xv, n in (([-1.0], 2), ([1.0], 0), ([-1.0], 0), ([2.0], 1)):
        args = (rt.to_tensor(xv), rt.to_tensor(n))
        want, got = set_in_a_graph_loop(*args), static(*args)
        x = np.float32(xv[0])
        ref = [x * 2.0, x] if x > 0 else [x, x * 3.0] if n > 0 else [x]
        if x > 0 and n > 0:
            ref = [x * 3.0, x]
        out = np.float32(0.0)
        for v in ref:
            out = out * 10.0 + v
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), [out], rtol=1e-6)
    assert len(static.program_cache) == 1


def added_on_some_trips(x, n):
    d = {"b": x}
    for i in range(n):
        if x[i] > 0:
            d["pos"] = x[i] * 2.0   # the trip the run decides, before another key the loop
        d["last"] = x[i]            # adds: no known order
    out = x[0] * 0.0
    for v in d.values():
        out = out * 10.0 + v
    return out


def test_keys_a_graph_loop_adds_in_an_order_the_run_decides_stay_refused_at_the_read():
    with pytest.raises(ConversionError) as info:
        d2s.to_static(added_on_some_trips)(rt.to_tensor([-1.0, 2.0]), rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__,
                               line_of(added_on_some_trips, "for v in d.values()"))
    assert "reads the order of the keys of a dict whose key 'pos'" in shown(info.value), text


def set_by_setdefault(x):
    d = {}
    if x.sum() > 0:
        d["c"] = x * 2.0
    d["b"] = x
    d.setdefault("c", x * 3.0)     # at the end where the `if` did not set it
    return d


def set_by_setdefault_ref(x):
    d = {}
    if x.sum() > 0:
        d["c"] = x * 2.0
    d["b"] = x
    d.setdefault("c", x * 3.0)
    return d


def test_a_key_set_again_by_setdefault_follows_the_run():
    _check(set_by_setdefault, set_by_setdefault_ref)


def set_by_update(x):
    d = {}
    if x.sum() > 0:
        d["c"] = x * 2.0
    d["b"] = x
    d.update(c=x * 3.0)            # not a store `key_ranks` follows: no known order
    return d


def test_a_key_set_again_by_update_stays_refused():
    set_by_update(rt.to_tensor([-1.0]))
    with pytest.raises(ConversionError) as info:
        d2s.to_static(set_by_update)(rt.to_tensor([-1.0]))
    assert "reads the order of the keys" in shown(info.value)


def test_a_saved_model_keeps_the_key_order_the_run_decides(tmp_path):
    # (it refused to save; the model file keeps each key's rank: model_structure's "ranks")
    static = d2s.to_static(aux_then_main)
    static(rt.to_tensor(np.array(INPUTS[0], "float32")))
    d2s.save(static, str(tmp_path / "m"))
    model = d2s.load(str(tmp_path / "m"))
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        want, got = aux_then_main(x), model(x)
        assert list(got) == list(want)
        for k in want:
            np.testing.assert_allclose(np.asarray(got[k].numpy()), np.asarray(want[k].numpy()),
                                       rtol=1e-6)


def closure_and_names(x):
    """A closure storing into the dict, keys from a tuple of names looped in Python."""
    stats = {}

    def log(name, value):
        stats[name] = value

    if x[0] > 0:
        log("warm", x.max())
    for name in ("mean", "warm"):
        log(name, x.mean() if name == "mean" else x.min())
    return stats, list(stats), rt.stack(list(stats.values()))


def closure_ref(x):
    stats = {}
    if x[0] > 0:
        stats["warm"] = x.max()
    stats["mean"] = x.mean()
    stats["warm"] = x.min()
    return stats, list(stats), None


def test_a_closure_and_python_loops_storing_keys():
    _check(closure_and_names, closure_ref)


def computed_keys_of_two_values(x):
    """Keys `int(x[i] > 0)` (each of 0 and 1 set where the key equals it) beside a str key
    set on some paths and set again: eight orders, one program."""
    d = {}
    if x[0] > 0:
        d["a"] = x * 2.0
    d[int(x[1] > 0)] = x * 0.25
    d["a"] = x - 1.0
    d[int(x[2] > 0)] = x + 3.0
    h = x * 0.0
    for _, v in d.items():
        h = h * 0.5 + v
    return d, h


def computed_keys_ref(x):
    d = {}
    if x[0] > 0:
        d["a"] = x * 2.0
    d[int(x[1] > 0)] = x * 0.25
    d["a"] = x - 1.0
    d[int(x[2] > 0)] = x + 3.0
    return d, None


def test_computed_keys_of_two_values_in_the_run_order():
    signs = [[a, b, c] for a in (1.0, -1.0) for b in (1.0, -1.0) for c in (1.0, -1.0)]
    _check(computed_keys_of_two_values, computed_keys_ref, inputs=signs)
