"""Item 10 (issue 12): a walrus inside `and` / `or` wherever Python allows one: an assignment,
a `return`, a call argument, a conditional expression's test, a `while` test. The `and`/`or`
keeps Python's value, and the name the walrus binds is bound afterwards exactly where Python
binds it: where the operand ran (else unbound, raising `UnboundLocalError` where eager
raises it, or keeping its previous value). Eager vs static over inputs taking each path
through one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def _run(fn, x):
    try:
        out = fn(rt.to_tensor(np.asarray(x, "float32")))
    except UnboundLocalError as e:
        return ("UnboundLocalError", str(e))
    out = out if isinstance(out, tuple) else (out,)
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v, "float64").tolist()
            for v in out]


INPUTS = [[1.0, 2.0], [-1.0, -2.0], [3.0, 4.0], [0.5, 0.2]]


def _same(fn, inputs=INPUTS):
    static = d2s.to_static(fn)
    for x in inputs:
        assert _run(static, x) == _run(fn, x), x
    assert len(static.program_cache) == 1


def assigned(x):
    ok = x.sum() > 0 and (n := x.mean()) < 2
    return ok


def keeps_previous(x):
    n = x.max()
    ok = x.sum() > 0 and (n := x.mean()) < 2  # n: the mean where it ran, else the max
    return ok, n


def returned(x):
    return x.sum() > 0 and (m := x.mean() * 2) < 5


def or_unbound(x):
    ok = x.sum() > 0 or (n := x.mean()) < 5
    return ok, n  # eager: UnboundLocalError where the sum is positive


def in_a_call(x):
    scale = rt.where(x.sum() < 0 or (s := x.mean()) > 1, 2.0 * x, x)
    return scale


def ifexp_test(x):
    y = x * 2 if x.sum() > 0 and (m := x.mean()) < 2 else x - 1
    return y


def ifexp_reads_unbound(x):
    return x * 2 if x.sum() > 0 and (m := x.mean()) < 5 else x - m


@pytest.mark.parametrize("fn", [assigned, keeps_previous, returned, or_unbound, in_a_call,
                                ifexp_test, ifexp_reads_unbound])
def test_walrus_in_later_operand_of_a_value(fn):
    _same(fn)


def while_test(x):
    s = x.sum()
    k = 0.0
    while s > 0 and (m := s - 2) > -1:
        s = m
        k = k + 1
    return s, k


def while_reads_after(x):
    s = x.sum()
    while s > 0 and (m := s - 2) > -1:
        s = m
    return s, m  # eager: unbound when the loop test stopped at `s > 0` on entry


def while_with_continue(x):
    n = x.sum()
    total = rt.zeros([])
    while n > 0 and (h := n * 0.5) > 0.25:
        total = total + h
        n = n - 1
        if total > 4:
            continue
        total = total + 0.1
    return total, n


@pytest.mark.parametrize("fn", [while_test, while_reads_after, while_with_continue])
def test_walrus_in_a_while_test(fn):
    _same(fn)


def test_value_of_mixed_dtypes_is_a_clear_error():
    def mixed(x):
        return x.sum() and (m := x.mean()) > 0
    with pytest.raises(ConversionError, match="result's dtype would depend on data") as info:
        d2s.to_static(mixed)(rt.ones([2]))
    assert "test_walrus_values.py" in str(info.value)


def walrus_in_ifexp_branch(x):
    m = x.sum() * 0
    y = (m := x.sum()) if x.mean() > 0 else x.max()  # m: the sum only where that ran
    return y, m


def walrus_and_in_ifexp_branch(x):
    m = x.sum() * 0
    y = x.max() > 0 if x.mean() > 0 else (x.mean() > -5 and (m := x.sum()) < 0)
    return y, m


@pytest.mark.parametrize("fn", [walrus_in_ifexp_branch, walrus_and_in_ifexp_branch])
def test_walrus_in_a_branch_of_a_conditional_expression(fn):
    """(was a silent wrong result: the branch's lambda bound its own `m`)"""
    _same(fn)


def test_walrus_in_a_conditional_expression_inside_a_comprehension_is_a_clear_error():
    def f(x):
        m = x.sum() * 0
        ys = [(m := v.sum()) if v.mean() > 0 else v.max() for v in (x, -x)]
        return ys[0], m
    with pytest.raises(ConversionError, match="walrus") as info:
        d2s.to_static(f)(rt.ones([2]))
    assert "test_walrus_values.py" in str(info.value)
