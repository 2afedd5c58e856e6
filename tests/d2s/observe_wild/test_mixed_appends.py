"""A list the caller can reach that one call appends a computed number to and then a Python
value (`m.hist.append(loss.item())`, then `m.hist.append("epoch end")`): the Python values were
replayed after each run as the trace left the list, over what the program wrote back, so the
caller's list held static `Variable`s. Each item is now eager's (a float, the Python value)."""
import numpy as np
import pytest

import d2s
import runtime as rt


class Meter:
    def __init__(self):
        self.n = 0
        self.hist = []


def log_step(x, m):
    m.n += 1
    m.hist.append(x.mean().item())
    m.hist.append("after")
    if x.sum() < 0:
        raise ValueError("negative input")
    m.hist.append(m.n)
    return x + 1


def log_into(x, hist):
    hist.append(x.max().item())
    hist.append(("tag", 7))
    return x * 2


def _run(fn, values):
    m, outcomes = Meter(), []
    for v in values:
        try:
            fn(rt.to_tensor(np.array([v, v * 0.5], "float32")), m)
            outcomes.append("ok")
        except ValueError as e:
            outcomes.append(str(e).splitlines()[0])
    return m, outcomes


@pytest.mark.parametrize("fn", [log_step, log_into])
def test_python_items_beside_computed_numbers_are_eagers(fn):
    values = [1.0, 2.0, -1.0, 3.0, -2.0]
    if fn is log_into:
        def fn(x, m, f=log_into):  # (the list passed in, as an argument)
            return f(x, m.hist)
    want_m, want = _run(fn, values)
    got_m, got = _run(d2s.to_static(fn), values)
    assert got == want
    assert len(got_m.hist) == len(want_m.hist) > len(values)
    for g, w in zip(got_m.hist, want_m.hist, strict=True):
        assert type(g) is type(w), (g, w)
        assert g == pytest.approx(w) if isinstance(w, float) else g == w
    assert got_m.n == want_m.n
