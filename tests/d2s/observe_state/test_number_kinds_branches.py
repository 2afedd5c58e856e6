"""A Python number that is a `bool` on one path of a tensor `if` and an `int` or `float` on
the other (issue 33): the program holds the wider number and a run-time "is a bool" flag
(`Variable.bool_when`) beside it, so the call gives eager's Python type and value on each
path: returned alone, inside tuples, lists and dicts, stored on a Layer attribute or an
argument object, through nested `if`s and conditional expressions, and from a saved model.
Each test runs inputs that take every path through ONE converted program and compares eager,
static and a plain-Python reference, leaf by leaf, type and value (it came back as a 0-d
Tensor, and through nested `if`s as an int 1 for eager's `True`)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def same_leaves(got, want):
    """Equal structure, Python types and values of every leaf (lists by length first)."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same_leaves(g, w)
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), (got, want)
        for k in want:
            same_leaves(got[k], want[k])
    else:
        assert got == want, (got, want)


def keep_flag_or_count(x):
    keep = bool(x.sum() > 100)
    if x.mean() > 0:
        keep = 3
    return keep, [keep, 1], {"keep": keep}


def keep_flag_or_score(x):
    best = False
    if x.max() > 1.0:
        best = float(x.max()) * 0.5  # `best = False`, then `best = score`
    return best, best + 1, not best


def nested(x):
    keep = True
    if x.mean() > 0:
        if x.sum() > 2:
            keep = 3
        else:
            keep = 1.5
    return keep


def chosen_by_expression(x):
    flag = True if x.sum() > 0 else 3
    step = 0.5 if x.max() > 1.0 else 2
    return flag, step


def reference(fn, data):
    """The same function on the Python numbers of `data` (the reference)."""
    total, mean, top = sum(data), sum(data) / len(data), max(data)
    if fn is keep_flag_or_count:
        keep = 3 if mean > 0 else total > 100
        return keep, [keep, 1], {"keep": keep}
    if fn is keep_flag_or_score:
        best = float(np.float32(top)) * 0.5 if top > 1.0 else False
        return best, best + 1, not best
    if fn is nested:
        return (3 if total > 2 else 1.5) if mean > 0 else True
    return (True if total > 0 else 3), (0.5 if top > 1.0 else 2)


INPUTS = [[1.0, 2.0, 0.5], [-1.0, -2.0, -0.5], [0.25, 0.5, 0.25], [3.0, -2.0, -2.0]]


@pytest.mark.parametrize("fn", [keep_flag_or_count, keep_flag_or_score, nested,
                                chosen_by_expression])
def test_each_path_gives_its_python_type(fn):
    static = d2s.to_static(fn)
    kinds = set()
    for data in INPUTS:
        x = rt.to_tensor(np.array(data, "float32"))
        want = reference(fn, data)
        same_leaves(fn(x), want)
        same_leaves(static(x), want)
        kinds.add(type(want[0] if isinstance(want, tuple) else want))
    assert bool in kinds and len(kinds) > 1  # (the inputs take both kinds of paths)
    assert len(static.program_cache) == 1


class Gate(rt.nn.Layer):
    """Keeps whether the last batch was confident (a bool) or its rank (an int) on `self`,
    and the same on an argument object."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)
        self.last = None

    def forward(self, x, box):
        h = self.fc(x)
        self.last = bool(h.sum() > 1e6)
        box.seen = False
        if h.mean() > 0:
            self.last = 2
            box.seen = 0.25
        return h


class Box:
    pass


def test_attributes_and_argument_objects_keep_the_paths_type():
    rt.seed(3)
    eager_net = Gate()
    static_net = Gate()
    static_net.set_state_dict(eager_net.state_dict())
    static = d2s.to_static(static_net)
    seen = set()
    for sign in (1.0, -1.0, 1.0):
        x = rt.to_tensor(np.full([1, 3], sign, "float32"))
        positive = float(eager_net.fc(x).mean()) > 0
        eager_box, static_box = Box(), Box()
        eager_net(x, eager_box)
        static(x, static_box)
        want_last, want_seen = (2, 0.25) if positive else (False, False)
        for net, box in ((eager_net, eager_box), (static_net, static_box)):
            same_leaves(net.last, want_last)
            same_leaves(box.seen, want_seen)
        seen.add(positive)
    assert seen == {True, False}


def test_a_saved_model_gives_the_paths_type(tmp_path):
    static = d2s.to_static(keep_flag_or_count, input_spec=[d2s.InputSpec([3], "float32")])
    static(rt.to_tensor(np.ones(3, "float32")))
    d2s.save(static, str(tmp_path / "keep"))
    loaded = d2s.load(str(tmp_path / "keep"))
    for data in INPUTS:
        same_leaves(loaded(rt.to_tensor(np.array(data, "float32"))),
                    reference(keep_flag_or_count, data))


def best_so_far(x, stats):
    seen = {"best": False, "count": 0}
    if x.max() > 1.0:
        seen["best"] = float(x.max())
        seen["count"] = True
        stats["last"] = 2
    return seen


def test_dict_entries_keep_the_paths_type():
    static = d2s.to_static(best_so_far)
    kept = {best_so_far: {}, static: {}}  # (one dict per side, as a caller keeps it: a dict
    # the function writes at constant keys is keyed by identity, function_spec.py)
    for data in ([1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]):
        x = rt.to_tensor(np.array(data, "float32"))
        hit = max(data) > 1.0
        want = {"best": max(data), "count": True} if hit else {"best": False, "count": 0}
        want_stats = {"last": 2 if hit else False}
        for fn in (best_so_far, static):
            stats = kept[fn]
            stats.clear()
            stats["last"] = False
            same_leaves(fn(x, stats), want)
            same_leaves(stats, want_stats)
    assert len(static.program_cache) == 1
