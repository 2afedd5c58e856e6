"""Found by the observe-sets generator (seed 25101) at the end of session 19: a set given a
computed element under nested tensor `if`s, then intersected with a literal set and its
`len()` used, gave the converted call a value 1 lower than eager's on inputs that take both
branches (Python's `&` compared the trace's objects; issue 33's containers of traced values).
Now the `&` is refused at the user's line, naming what counts the common items instead, and
that rewrite gives eager's values on every path of one program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


class Opts:
    scale = 1.0


def mark(s, item):
    s.add(item)


def f(x, y, o):
    h = x * o.scale
    seen = {(0, 1)}
    if rt.sum(h) > 1.0:  # noqa: SIM102  (nested tensor ifs, as the fuzzer wrote them)
        if rt.mean(x) > 0.0:
            mark(seen, (int(x[0] > 0.0), 1))
            h = h + len(seen & {(0, 1), (1, 1)})
            return h
    return h


def counted(x, y, o):
    h = x * o.scale
    seen = {(0, 1)}
    if rt.sum(h) > 1.0:  # noqa: SIM102  (nested tensor ifs, as the fuzzer wrote them)
        if rt.mean(x) > 0.0:
            mark(seen, (int(x[0] > 0.0), 1))
            h = h + sum(p in seen for p in {(0, 1), (1, 1)})
            return h
    return h


def reference(xv):
    x = np.array(xv, "float32")
    if x.sum() > 1.0 and x.mean() > 0.0:
        return x + len({(0, 1), (int(x[0] > 0.0), 1)})
    return x


INPUTS = ([1.25, 0.25, 1.25], [-1.25, 0.75, 1.75], [-1.25, -0.75, -1.25])


def test_intersection_with_a_computed_element_is_refused_at_the_users_line():
    x = rt.to_tensor(np.array(INPUTS[0], "float32"))
    y = rt.to_tensor(np.zeros(3, "float32"))
    f(x, y, Opts())  # eager runs
    with pytest.raises(ConversionError) as info:
        d2s.to_static(f)(x, y, Opts())
    msg = str(info.value)
    assert "test_set_intersection_of_traced_elements.py\", line 29" in msg
    assert "seen & {(0, 1), (1, 1)}" in msg and "sum(p in s for p in t)" in msg
    assert "Variable" not in msg and "_retval" not in msg


def test_counting_common_items_with_in_agrees_with_eager_on_every_path():
    o, static = Opts(), d2s.to_static(counted)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        y = rt.to_tensor(np.zeros(3, "float32"))
        want = reference(xv)
        np.testing.assert_allclose(counted(x, y, o).numpy(), want)
        np.testing.assert_allclose(static(x, y, o).numpy(), want)
    assert static._cache.traces == 1
