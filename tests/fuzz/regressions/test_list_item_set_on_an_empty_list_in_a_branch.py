"""Found by the state generator (session 21, seed 33001: 4 internal errors in 650): `lst[-1] =
v` on a list popped empty, inside a tensor `if` of code after an early `return` that eager
takes. Eager returns early (or raises IndexError where it reaches the line); the converted
call raised IndexError while tracing on every input, because the list item write went
through `_d2s.set_item`, whose frame did not count as the user's code, so the branch did not
become a run-time raise on its path as `lst.pop()` on an empty list does."""
import numpy as np
import pytest

import d2s
import runtime as rt


def refill_last(x, y):
    lst = [x * 1.0, y * 1.0]
    for i in range(2):
        lst.pop(0)
    if rt.mean(x) > 0.0:
        return lst
    for i in range(2):
        if rt.max(y) < 1.5:
            lst[-1] = y - 1.0
    return lst


def _t(v):
    return rt.to_tensor(np.array(v, "float32"))


def test_an_item_write_eager_never_reaches_converts():
    static = d2s.to_static(refill_last)
    y = _t([0.75, 1.25, 0.75])
    assert refill_last(_t([1.0, 2.0, 3.0]), y) == static(_t([1.0, 2.0, 3.0]), y) == []
    for f in (refill_last, static):                  # the same program, the other path
        with pytest.raises(IndexError, match="list assignment index out of range"):
            f(_t([-1.0, -2.0, -3.0]), y)
    big = _t([2.0, 2.0, 2.0])                        # the inner if not taken: eager runs
    got, want = static(_t([-1.0, -2.0, -3.0]), big), refill_last(_t([-1.0, -2.0, -3.0]), big)
    assert type(got) is type(want) is list and got == want == []
    assert len(static.program_cache) == 1
