"""In-place tensor writes through another reference, under tensor if / while."""
import numpy as np

import runtime as rt

from .helpers import check

POS, NEG = ([1.0, 2.0, 3.0],), ([-1.0, -2.0, 0.5],)


def zero_first(t):
    t[0] = 0.0


def alias_under_if(x):
    y = x * 1.0
    view = y
    if rt.mean(x) > 0:
        view[0] = 0.0
    return y


def ref_alias_under_if(x):
    y = x.copy()
    if x.mean() > 0:
        y[0] = 0.0
    return y


def test_write_through_alias_under_tensor_if():
    check(alias_under_if, ref_alias_under_if, [POS, NEG])


def helper_under_if(x):
    y = x * 2.0
    if rt.sum(x) > 0:
        zero_first(y)
    else:
        y[2] = -1.0
    return y


def ref_helper_under_if(x):
    y = x * 2.0
    if x.sum() > 0:
        y[0] = 0.0
    else:
        y[2] = -1.0
    return y


def test_write_in_a_helper_under_tensor_if():
    check(helper_under_if, ref_helper_under_if, [POS, NEG])


def alias_in_while(x):
    out = x * 1.0
    buf = out
    i = rt.zeros([])
    while i < rt.abs(x[0]) + 0.5:
        buf[1] = buf[1] + 1.0
        zero_first(out)
        i = i + 1.0
    return out


def ref_alias_in_while(x):
    out = x.copy()
    i = 0.0
    while i < abs(x[0]) + 0.5:
        out[1] += 1.0
        out[0] = 0.0
        i += 1.0
    return out


def test_writes_through_aliases_in_tensor_while():
    check(alias_in_while, ref_alias_in_while, [POS, NEG, ([2.5, 0.0, 0.0],)])


def closure_write(x):
    acc = x * 0.0

    def add_first(v):
        acc[0] = acc[0] + v[0]

    j = rt.zeros([])
    while j < 3:
        if rt.mean(x) > 0:
            add_first(x)
        j = j + 1.0
    return acc


def ref_closure_write(x):
    acc = np.zeros_like(x)
    if x.mean() > 0:
        acc[0] = 3 * x[0]
    return acc


def test_in_place_write_by_a_closure_in_loop_and_branch():
    check(closure_write, ref_closure_write, [POS, NEG])
