"""Config fields read through a local alias (`hc = cfg.model.head`, then `hc.scale`), through
a chain deeper than four names (`cfg.a.b.c.d.e`), or by a helper given a sub-object of
`self` (`scaled(x, self.opts)`), changed by the caller between calls: each call must read the
new value, as eager code does. The guards covered only chains written out from an argument,
`self`, a global or a closure, up to four names, and a helper's parameters only where the
traced call itself was passed the object: the program kept the old value (silent). Eager vs
static vs the value computed from the config, one tensor `if` in each function."""
from types import SimpleNamespace as NS

import numpy as np

import d2s
import runtime as rt
from runtime import nn

from .helpers import assert_same_leaves


def head(x, cfg):
    hc = cfg.model.head
    clamp = hc.clamp
    y = x * hc.scale
    if y.sum() > 0:
        y = y + hc.shift
    return y.clip(clamp.lo, clamp.hi) * cfg.a.b.c.d.e


def _reference(x, cfg):
    hc = cfg.model.head
    y = x * hc.scale
    y = y + hc.shift if y.sum() > 0 else y
    return np.clip(y, hc.clamp.lo, hc.clamp.hi) * cfg.a.b.c.d.e


def test_fields_read_through_aliases_and_deep_chains_follow_the_caller():
    cfg = NS(model=NS(head=NS(scale=2.0, shift=1.0, clamp=NS(lo=-1.0, hi=2.5))),
             a=NS(b=NS(c=NS(d=NS(e=1.0)))))
    static = d2s.to_static(head)
    x = np.array([1.0, -0.25], "float32")
    edits = [lambda: None, lambda: setattr(cfg.model.head, "scale", 3.0),
             lambda: setattr(cfg.model.head, "shift", -4.0),
             lambda: setattr(cfg.model.head.clamp, "hi", 10.0),
             lambda: setattr(cfg.a.b.c.d, "e", 5.0)]
    for edit in edits:
        edit()
        want = head(rt.to_tensor(x), cfg)
        np.testing.assert_allclose(want.numpy(), _reference(x, cfg), rtol=1e-6)
        assert_same_leaves(static(rt.to_tensor(x), cfg), want)


def scaled(x, opts):
    return x * opts.k if x.sum() > 0 else x - opts.k


class Scaler(nn.Layer):
    def __init__(self):
        super().__init__()
        self.opts = NS(k=2.0)

    def forward(self, x):
        o = self.opts
        return scaled(x, o)


def test_a_helper_given_a_sub_object_of_self_reads_its_new_fields():
    eager, static = Scaler(), d2s.to_static(Scaler())
    for k in (2.0, 4.0, 0.5):
        eager.opts.k = static.opts.k = k
        for v in ([1.0], [-1.0]):
            x = rt.to_tensor(np.float32(v))
            assert_same_leaves(static(x), eager(x))
            np.testing.assert_allclose(eager(x).numpy(), [v[0] * k if v[0] > 0 else v[0] - k])
