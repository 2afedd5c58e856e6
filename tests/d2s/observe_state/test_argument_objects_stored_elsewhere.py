"""An argument dict the converted call writes numbers into and also stores elsewhere (`BOX["last"]
= metrics`, `self.log.append(metrics)` then `len(self.log)`, `s.meta["last"] = t`): after the
call the other place holds that very object, as eagerly. Before, where the dict held a value
the program computes (a counter kept as program state), the place got a rebuilt copy of it
after each run: `BOX["last"] is metrics` was False and later writes to the caller's dict were
not seen there (silently)."""
import dataclasses

import numpy as np

import d2s
import runtime as rt

BOX = {}


def step_keeping_last(x, metrics):
    metrics["n"] = metrics.get("n", 0) + 1  # a counter: program state where it holds one
    BOX["last"] = metrics
    return x + 1.0 if x.sum() > 0 else x - 1.0


def _x(i):
    return rt.to_tensor(np.array([1.0 if i % 2 else -1.0, 2.0 * i], "float32"))


def test_a_global_keeps_the_argument_dict_itself():
    static = d2s.to_static(step_keeping_last)
    for fn in (step_keeping_last, static):
        BOX.clear()
        shared = {}
        for i in range(6):
            m = shared if i % 2 else {}
            want = (_x(i).numpy() + 1.0) if _x(i).numpy().sum() > 0 else _x(i).numpy() - 1.0
            np.testing.assert_allclose(fn(_x(i), m).numpy(), want)
            assert BOX["last"] is m, (fn, i)
            assert m["n"] == (i + 1) // 2 if i % 2 else m["n"] == 1
        assert shared == {"n": 3}


class Logger(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.stats = {"n": 0}
        self.log = []

    def forward(self, x, m):
        m["n"] = m.get("n", 0) + 1
        self.stats["n"] += 1
        self.log.append(m)
        m["seen"] = len(self.log)  # reads the list: it is written back whole
        return x * 2.0 if x.sum() > 0 else x


def test_a_layer_log_holds_the_argument_dicts_themselves():
    """Fresh dicts, the Layer's own `stats` dict and a dict starting at 3 in turn."""
    results = []
    for convert in (False, True):
        model = Logger()
        if convert:
            model.forward = d2s.to_static(model.forward)
        seen = []
        for i, kind in enumerate(["fresh", "fresh", "self", "fresh", "three", "self"]):
            m = model.stats if kind == "self" else {} if kind == "fresh" else {"n": 3}
            y = model(_x(i), m)
            assert model.log[-1] is m and all(a is b for a, b in zip(model.log, seen))
            seen.append(m)
            results.append((y.numpy().tolist(), dict(m), dict(model.stats)))
    half = len(results) // 2
    assert results[half:] == results[:half]


@dataclasses.dataclass
class Holder:
    hist: list
    meta: dict


def step_into_holder(x, h, t):
    h.hist.append(float(x.sum()))
    t["k"] = t.get("k", 0) + 1
    h.meta["last"] = t
    return x + float(len(h.hist))


def test_a_dataclass_field_keeps_the_other_argument_itself():
    static = d2s.to_static(step_into_holder)
    results = []
    for fn in (step_into_holder, static):
        shared = {}
        for i in range(6):
            t = {} if i % 2 else shared
            h = Holder([], {"t": t}) if i % 3 == 0 else Holder([], {})
            y = fn(_x(i), h, t)
            assert h.meta["last"] is t
            results.append((y.numpy().tolist(), h.hist, dict(t)))
    assert results[6:] == results[:6]
