"""`key in container` that the trace decides as Python, of a dict or set the function
reaches through `self`, a global or a closure (a cache, a registry of seen names, a stats
dict), is guarded by its result: a later call that finds the key added or removed traces
anew, as eager code decides the other way. Before, the first call's answer was baked into
the program (eager 1, 2, 2 against static 1, 1, 1; found by h35dicts)."""
import numpy as np

import d2s
import runtime as rt

SEEN = set()


class Stats(rt.nn.Layer):
    """A warm-up flag kept as a key: the first call takes the other path."""

    def __init__(self):
        super().__init__()
        self.stats = {}

    def forward(self, x):
        if "last" in self.stats:           # no read of self.stats["last"] at all
            y = x * 2.0
        else:
            y = x + 1.0
        self.stats["last"] = 1.0
        return y


class Cached(rt.nn.Layer):
    """A per-name cache of Python numbers, filled on first use of each name."""

    def __init__(self):
        super().__init__()
        self.cache = {}
        self.fc = rt.nn.Linear(2, 2)

    def forward(self, x, name="a"):
        bonus = 10.0 if name in self.cache else 0.0
        if name not in SEEN:
            bonus = bonus + 100.0
        out = self.fc(x) + bonus
        if out.sum() > 0:                   # a tensor if in the same program
            out = out * 0.5
        self.cache[name] = 3
        SEEN.add(name)
        return out


def run(make, calls):
    """Eager and static twins over `calls` ((input, args)); the global set SEEN evolves
    as the eager calls leave it, each static call starting from the same state."""
    rt.seed(1)
    eager = make()
    static = make()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    SEEN.clear()
    outs = []
    for xv, args in calls:
        x = rt.to_tensor(np.array(xv, "float32"))
        start = set(SEEN)
        want = eager(x, *args).numpy()
        after = set(SEEN)
        SEEN.clear()
        SEEN.update(start)
        got = static(x, *args).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert SEEN == after
        outs.append(got)
    return eager, static, outs


def test_a_key_tested_with_in_on_self_is_guarded():
    calls = [([[1.0, -2.0]], ()), ([[1.0, -2.0]], ()), ([[3.0, 1.0]], ())]
    eager, static, outs = run(Stats, calls)
    np.testing.assert_allclose(outs[0], [[2.0, -1.0]])   # x + 1, then x * 2
    np.testing.assert_allclose(outs[1], [[2.0, -4.0]])
    assert static.stats == eager.stats == {"last": 1.0}


def test_names_in_a_cache_and_a_global_set_decide_as_eager():
    calls = [([[1.0, 2.0]], ("a",)), ([[1.0, 2.0]], ("a",)), ([[-1.0, 0.5]], ("b",)),
             ([[-1.0, 0.5]], ("b",)), ([[2.0, 2.0]], ("a",))]
    eager, static, _ = run(Cached, calls)
    assert static.cache == eager.cache == {"a": 3, "b": 3}


class Warm(rt.nn.Layer):
    """`.get` with a default of a key the first call sets."""

    def __init__(self):
        super().__init__()
        self.stats = {}

    def forward(self, x):
        y = x + self.stats.get("last", 0.0) * 2.0 + 1.0
        if y.sum() > 0:
            y = y * 3.0
        self.stats["last"] = 1.0
        return y


def test_get_with_a_default_of_a_key_set_later_is_guarded():
    calls = [([[1.0, -2.0]], ()), ([[1.0, -2.0]], ()), ([[-3.0, 1.0]], ())]
    eager, static, outs = run(Warm, calls)
    np.testing.assert_allclose(outs[0], [[6.0, -3.0]])   # 0.0 default on the first call
    np.testing.assert_allclose(outs[1], [[12.0, 3.0]])
    assert static.stats == eager.stats == {"last": 1.0}
