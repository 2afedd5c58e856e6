"""Config and state objects as model code writes them: an `AttrDict` (a dict subclass whose
attributes are its items), an object with `__slots__`, an `OrderedDict` cache. What converted
code reads from them is guarded (a changed value traces a new program), and what it changes
is replayed or written back with their own type kept."""
from collections import OrderedDict

import numpy as np
import pytest

import d2s
import runtime as rt


class AttrDict(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value


class Slotted:
    __slots__ = ("act", "depth")

    def __init__(self):
        self.act, self.depth = "relu", 1


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.cfg = AttrDict(mode="single", bias=1.0)
        self.arch = Slotted()
        self.stats = AttrDict(steps=0, last=rt.zeros([2]))
        self.cache = OrderedDict(acc=rt.zeros([2]))

    def forward(self, x):
        self.stats.steps += 1                 # a Python number: program state
        y = x * 2.0 if self.cfg.mode == "double" else x
        for _ in range(self.arch.depth):
            y = rt.tanh(y) if self.arch.act == "tanh" else rt.nn.functional.relu(y)
        if y.sum() > 1.0:
            self.stats.last = y               # an eager Tensor kept there: written back
        self.cache["acc"] = self.cache["acc"] + y
        return y + self.cfg.bias


def ref(x, mode, bias, act, depth):
    y = x * 2.0 if mode == "double" else x
    for _ in range(depth):
        y = np.tanh(y) if act == "tanh" else np.maximum(y, 0)
    return y, y + bias


def test_reads_are_guarded_and_changes_kept_with_their_types():
    eager, static = Head(), d2s.to_static(Head())
    x = np.array([0.75, -0.5], "float32")
    settings = [("single", 1.0, "relu", 1), ("double", 1.0, "relu", 1), ("double", 3.0, "relu", 1),
                ("double", 3.0, "tanh", 2), ("single", 1.0, "relu", 1)]
    acc, last = np.zeros(2, "float32"), np.zeros(2, "float32")
    for step, (mode, bias, act, depth) in enumerate(settings, 1):
        y, want = ref(x, mode, bias, act, depth)
        acc = acc + y
        if y.sum() > 1.0:
            last = y
        for m in (eager, static):
            m.cfg.mode, m.cfg.bias = mode, bias
            m.arch.act, m.arch.depth = act, depth
            np.testing.assert_allclose(m(rt.to_tensor(x)).numpy(), want, rtol=1e-6)
            assert m.stats.steps == step and type(m.stats.steps) is int
            np.testing.assert_allclose(m.stats.last.numpy(), last, rtol=1e-6)
            np.testing.assert_allclose(m.cache["acc"].numpy(), acc, rtol=1e-6)
            assert type(m.stats) is AttrDict and type(m.cache) is OrderedDict
    assert len(static.forward.program_cache) == 4  # the last setting reuses the first


def running_sums(x, n):
    sums = OrderedDict(total=x * 0.0, sq=x * 0.0)
    i = 0
    while i < n:
        sums["total"] = sums["total"] + x
        sums["sq"] = sums["sq"] + x * x
        i += 1
    return sums


def test_an_ordered_dict_carried_through_a_graph_loop_keeps_its_type():
    static = d2s.to_static(running_sums)
    x = np.array([1.0, -2.0], "float32")
    for n in (0, 3):
        for fn in (running_sums, static):
            out = fn(rt.to_tensor(x), rt.to_tensor(np.array(n)))
            assert type(out) is OrderedDict and list(out) == ["total", "sq"]
            np.testing.assert_allclose(out["total"].numpy(), x * n)
            np.testing.assert_allclose(out["sq"].numpy(), x * x * n)


def test_a_key_set_in_one_branch_of_an_attr_dict_names_the_key():
    @d2s.to_static
    def f(x, state):
        if x.sum() > 0:
            state.pos = x
        return x

    with pytest.raises(d2s.StateChangeError, match=r"state\['pos'\] is set in the if branch only"):
        f(rt.to_tensor(np.ones(2, "float32")), AttrDict(neg=rt.zeros([2])))
