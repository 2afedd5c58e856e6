"""Optional settings read with `getattr(obj, "name", default)` and `hasattr(obj, "name")`, as
model code reads an options object or a lazily made cache: whether the attribute exists is
part of what the trace read. The program traced while `opts.scale` was missing kept the
default after the caller set it (silent: the scale was ignored); one traced while it existed
kept reading it after `del`. Eager vs static vs NumPy over the object's four states, and a
Layer whose cache `getattr(self, "_cache", None)` finds on the second call."""
import numpy as np

import d2s
import runtime as rt
from runtime import nn

from .helpers import assert_same_leaves


class Options:
    pass


def apply(x, opts):
    scale = getattr(opts, "scale", 1.0)
    if hasattr(opts, "bias"):
        x = x + opts.bias
    if x.sum() > 0:                                   # a tensor if: one program per state
        x = x * scale
    return x


def test_settings_added_and_removed_between_calls():
    static = d2s.to_static(apply)
    opts, x = Options(), np.array([1.0, -0.5], "float32")
    for change in (None, ("scale", 2.0), ("bias", 5.0), ("scale", None), ("bias", None)):
        if change is not None:
            name, value = change
            if value is None:
                delattr(opts, name)
            else:
                setattr(opts, name, value)
        scale, bias = getattr(opts, "scale", 1.0), getattr(opts, "bias", 0.0)
        want = (x + bias) * (scale if (x + bias).sum() > 0 else 1.0)
        got_eager = apply(rt.to_tensor(x), opts)
        np.testing.assert_allclose(got_eager.numpy(), want)
        assert_same_leaves(static(rt.to_tensor(x), opts), got_eager)


class Cached(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        cache = getattr(self, "_cache", None)
        if cache is None:
            self._cache = rt.zeros([2])
            cache = self._cache
        self._cache = cache + x.sum(0)
        return self.fc(x) + self._cache


def test_a_cache_made_on_the_first_call():
    rt.seed(0)
    eager, static = Cached(), Cached()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    for i in range(3):
        x = rt.to_tensor(np.full((1, 2), i + 1.0, "float32"))
        assert_same_leaves(static(x), eager(x))
        assert_same_leaves(static._cache, eager._cache)
