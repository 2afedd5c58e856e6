"""Config fields read from each item of a container (`for st in self.stages: st.mult`,
`for name, t in self.terms.items(): t.w`, `for i, h in enumerate(cfg.heads)`) or through a
computed attribute name (`getattr(cfg, name)`, `vars(cfg)`), changed by the caller between
calls: each call must read the new values, as eager code does. The guards followed only
chains written out in the source, so the program kept the old values (silent). Eager vs
static vs the values computed from the config, one tensor `if` in each function."""
from types import SimpleNamespace as NS

import numpy as np

import d2s
import runtime as rt
from runtime import nn

from .helpers import assert_same_leaves


class Pipeline(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stages = [NS(mult=2.0), NS(mult=3.0)]
        self.terms = {"a": NS(w=1.0), "b": NS(w=0.5)}

    def forward(self, x, cfg):
        for st in self.stages:
            x = x * st.mult
        total = x * 0
        for name, t in self.terms.items():
            total = total + t.w * x
        for i, h in enumerate(cfg.heads):
            total = total + h.bias * (i + 1)
        for name in cfg.order:
            total = total * getattr(cfg.gains, name)
        if total.sum() > 0:                                 # a tensor if
            total = total + sum(v for v in vars(cfg.extra).values())
        return total


def _reference(m, x, cfg):
    for st in m.stages:
        x = x * st.mult
    total = sum(t.w * x for t in m.terms.values())
    total = total + sum(h.bias * (i + 1) for i, h in enumerate(cfg.heads))
    for name in cfg.order:
        total = total * getattr(cfg.gains, name)
    return total + sum(vars(cfg.extra).values()) if total.sum() > 0 else total


def test_fields_of_items_and_computed_attributes_follow_the_caller():
    cfg = NS(heads=[NS(bias=0.5), NS(bias=-1.0)], order=("p", "q"), gains=NS(p=1.0, q=2.0),
             extra=NS(a=1.0))
    eager, static = Pipeline(), d2s.to_static(Pipeline())
    edits = [lambda m: None, lambda m: setattr(m.stages[0], "mult", 10.0),
             lambda m: setattr(m.terms["b"], "w", 4.0),
             lambda m: setattr(cfg.heads[1], "bias", 3.0),
             lambda m: setattr(cfg.gains, "q", -1.0),
             lambda m: setattr(cfg.extra, "b", 7.0)]
    x = np.array([1.0, 0.5], "float32")
    for edit in edits:
        edit(eager)
        edit(static)
        want = eager(rt.to_tensor(x), cfg)
        np.testing.assert_allclose(want.numpy(), _reference(eager, x, cfg), rtol=1e-6)
        assert_same_leaves(static(rt.to_tensor(x), cfg), want)


LOSS_WEIGHTS = {"ce": 1.0, "aux": 0.5}


class Scheduled(nn.Layer):
    def __init__(self):
        super().__init__()
        self.table = [[1.0, 2.0], [3.0, 4.0]]           # a schedule table read by index
        self.bias = {"a": 0.0, "b": 1.0}

    def forward(self, x, stage: int, names=("ce", "aux")):
        terms = [LOSS_WEIGHTS[n] * x.sum() for n in names]  # a global dict, computed keys
        total = sum(terms) * self.table[stage][1]
        for k in ("a", "b"):
            total = total + self.bias[k]
        gains = [h.gain for h in self.heads]                # a comprehension over objects
        return total * sum(gains) if total > 0 else total


def test_items_read_by_computed_keys_and_in_comprehensions_follow_the_caller():
    eager, static = Scheduled(), d2s.to_static(Scheduled())
    for m in (eager, static):
        m.heads = [NS(gain=1.0), NS(gain=2.0)]
    edits = [lambda m: None, lambda m: LOSS_WEIGHTS.__setitem__("aux", 2.0),
             lambda m: m.table[1].__setitem__(1, 40.0), lambda m: m.bias.update(b=-3.0),
             lambda m: setattr(m.heads[0], "gain", 5.0)]
    x = rt.to_tensor(np.array([1.0, 0.5], "float32"))
    try:
        for edit in edits:
            edit(eager)
            edit(static)
            want = eager(x, 1)
            t = (LOSS_WEIGHTS["ce"] + LOSS_WEIGHTS["aux"]) * 1.5 * eager.table[1][1] + sum(
                eager.bias.values())
            ref = t * sum(h.gain for h in eager.heads) if t > 0 else t
            np.testing.assert_allclose(want.numpy(), ref, rtol=1e-6)
            assert_same_leaves(static(x, 1), want)
    finally:
        LOSS_WEIGHTS["aux"] = 0.5
